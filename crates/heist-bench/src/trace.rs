//! `run --trace FILE.json`: one extra run of the kernel on each heist runtime, after the
//! timed runs, recorded by heist's `trace` feature (`heist::trace`) and written as Chrome
//! trace-event JSON, which Perfetto (ui.perfetto.dev) and `chrome://tracing` open.
//!
//! Each runtime is a process (`pid`), each of its workers a thread (`tid`, named
//! "worker N"). Spans are complete events (`"ph": "X"`; tasks have the category `task`),
//! steals, shares, answers, lifelines and wake-ups are instants (`"ph": "i"`), and deque
//! depths are counters (`"ph": "C"`, one per worker). Times are in microseconds since
//! heist's trace epoch, shared by every pool of the process.

use crate::bench::Instance;
use crate::runtime::Runtime;
use heist::trace::{Event, EventKind, Shape, Trace};
use serde_json::{json, Value};
use std::io::Write;
use std::panic::AssertUnwindSafe;

/// One traced run: the runtime's name and what its workers recorded.
pub struct TracedRun {
    /// The runtime (`heist-lace`, ...).
    pub runtime: String,
    /// The kernel and size, for the process's name.
    pub what: String,
    /// The events, by worker.
    pub trace: Trace,
}

/// Whether this build records traces; the error to give when it does not.
pub fn check_enabled() -> Result<(), String> {
    if heist::trace::ENABLED {
        return Ok(());
    }
    Err(
        "--trace needs heist's trace events; rebuild with `--features trace` \
         (cargo run --release -p heist-bench --features trace -- run ... --trace FILE.json)"
            .into(),
    )
}

/// Runs `inst` once more on each heist runtime among `rts`, with the trace buffers
/// emptied just before, and takes its trace. The run is verified like a timed one.
pub fn traced_runs(
    inst: &mut dyn Instance,
    what: &str,
    rts: &[&Runtime],
) -> Result<Vec<TracedRun>, String> {
    let mut out = Vec::new();
    for rt in rts {
        let Some(pool) = rt.heist_pool() else {
            continue;
        };
        inst.reset();
        let _ = pool.take_trace();
        let ran = std::panic::catch_unwind(AssertUnwindSafe(|| inst.run(rt)));
        let trace = pool.take_trace();
        ran.map_err(|_| format!("{}: the traced run panicked", rt.kind()))?;
        inst.verify()
            .map_err(|e| format!("{}: the traced run failed verification: {e}", rt.kind()))?;
        out.push(TracedRun {
            runtime: rt.kind().name().to_string(),
            what: what.to_string(),
            trace,
        });
    }
    Ok(out)
}

/// Writes the runs as one Chrome trace-event document, an event at a time (a trace holds
/// an event per task, which for a large run is more than a document in memory should).
pub fn write_chrome_json(runs: &[TracedRun], out: impl Write) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(out);
    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
    let mut first = true;
    let mut put = |v: Value| -> std::io::Result<()> {
        if !first {
            out.write_all(b",\n")?;
        }
        first = false;
        serde_json::to_writer(&mut out, &v).map_err(std::io::Error::from)
    };
    for (pid, run) in runs.iter().enumerate() {
        let pid = pid + 1;
        put(json!({
            "ph": "M", "name": "process_name", "pid": pid,
            "args": {"name": format!("{} ({})", run.runtime, run.what)},
        }))?;
        put(json!({
            "ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid},
        }))?;
        for (tid, list) in run.trace.workers.iter().enumerate() {
            put(json!({
                "ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                "args": {"name": format!("worker {tid}")},
            }))?;
            for e in list {
                put(event(pid, tid, e))?;
            }
        }
    }
    out.write_all(b"]}\n")?;
    out.flush()
}

/// Microseconds, the format's unit.
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// One event as trace-event JSON.
fn event(pid: usize, tid: usize, e: &Event) -> Value {
    let mut v = json!({
        "name": e.kind.name(),
        "pid": pid,
        "tid": tid,
        "ts": us(e.at_ns),
        "args": args(e),
    });
    let m = v.as_object_mut().expect("an object");
    match e.kind.shape() {
        Shape::Span => {
            m.insert("ph".into(), "X".into());
            m.insert("dur".into(), us(e.dur_ns).into());
            let cat = if e.kind.is_task() { "task" } else { "runtime" };
            m.insert("cat".into(), cat.into());
        }
        Shape::Instant => {
            m.insert("ph".into(), "i".into());
            m.insert("s".into(), "t".into());
            m.insert("cat".into(), "runtime".into());
        }
        Shape::Counter => {
            m.insert("ph".into(), "C".into());
            // Counters belong to the process in the format: one per worker by name.
            m.insert(
                "name".into(),
                format!("{} (worker {tid})", e.kind.name()).into(),
            );
        }
    }
    v
}

/// What `peer` and `value` mean for `kind` (see `heist::trace::EventKind`).
fn arg_names(kind: EventKind) -> (Option<&'static str>, Option<&'static str>) {
    match kind {
        EventKind::Steal | EventKind::Lifeline => (Some("victim"), None),
        EventKind::Answer => (Some("thief"), Some("tasks")),
        EventKind::Wake => (Some("woken by"), None),
        EventKind::TeamMember => (Some("coordinator"), None),
        EventKind::Team => (None, Some("size")),
        EventKind::Piece => (None, Some("items")),
        EventKind::Depth => (None, Some("depth")),
        _ => (None, None),
    }
}

fn args(e: &Event) -> Value {
    let (peer, value) = arg_names(e.kind);
    let mut m = serde_json::Map::new();
    if let (Some(k), Some(p)) = (peer, e.peer) {
        m.insert(k.into(), p.into());
    }
    if let Some(k) = value {
        m.insert(k.into(), e.value.into());
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: EventKind, at_ns: u64, dur_ns: u64, peer: Option<u32>, value: u32) -> Event {
        Event {
            kind,
            at_ns,
            dur_ns,
            peer,
            value,
        }
    }

    #[test]
    fn events_become_trace_event_json() {
        let trace = Trace {
            workers: vec![
                vec![
                    ev(EventKind::Join, 1000, 500, None, 0),
                    ev(EventKind::Root, 0, 3000, None, 0),
                ],
                vec![
                    ev(EventKind::Steal, 900, 0, Some(0), 0),
                    ev(EventKind::Depth, 900, 0, None, 3),
                    ev(EventKind::Sleep, 2000, 1500, None, 0),
                    ev(EventKind::Wake, 3500, 0, None, 0),
                ],
            ],
        };
        let runs = [TracedRun {
            runtime: "heist-lace".into(),
            what: "fib 20".into(),
            trace,
        }];
        let mut text = Vec::new();
        write_chrome_json(&runs, &mut text).unwrap();
        let v: Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(v["displayTimeUnit"], "ns");
        let evs = v["traceEvents"].as_array().unwrap();
        let by_ph = |ph: &str| evs.iter().filter(|e| e["ph"] == ph).count();
        // process name and sort index, two thread names; two spans per... see below.
        assert_eq!(by_ph("M"), 4);
        assert_eq!(by_ph("X"), 3);
        assert_eq!(by_ph("i"), 2);
        assert_eq!(by_ph("C"), 1);
        let join = evs.iter().find(|e| e["name"] == "join").unwrap();
        assert_eq!(join["cat"], "task");
        assert_eq!(
            (join["ts"].as_f64(), join["dur"].as_f64()),
            (Some(1.0), Some(0.5))
        );
        assert_eq!(
            (join["pid"].as_u64(), join["tid"].as_u64()),
            (Some(1), Some(0))
        );
        let sleep = evs.iter().find(|e| e["name"] == "sleep").unwrap();
        assert_eq!(sleep["cat"], "runtime");
        let steal = evs.iter().find(|e| e["name"] == "steal").unwrap();
        assert_eq!(steal["args"]["victim"], 0);
        assert_eq!(steal["s"], "t");
        let depth = evs.iter().find(|e| e["ph"] == "C").unwrap();
        assert_eq!(depth["name"], "deque depth (worker 1)");
        assert_eq!(depth["args"]["depth"], 3);
        let names: Vec<&str> = evs
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["worker 0", "worker 1"]);
    }

    #[test]
    fn the_error_without_the_feature_names_it() {
        let checked = check_enabled();
        assert_eq!(checked.is_ok(), heist::trace::ENABLED);
        if let Err(e) = checked {
            assert!(e.contains("--features trace"), "{e}");
        }
    }
}
