//! The hand-off latency (issue "coarse tasks run in parallel"): the time from a worker
//! making one task available to that task's start on another worker, while the owner
//! computes outside the runtime. The task is the second branch of a `join` whose first
//! branch spins until the task has started, so the owner never helps: an idle worker must
//! take the task by itself (PROTOCOLS.md, "Lifelines").
//!
//! Two states of the other worker are measured on heist-lace and heist-relay:
//!
//! - `asleep`: the pool was idle for [`SETTLE`] before the sample, so its other worker
//!   sleeps; the push must wake it (the sleeper's sign makes the push share and wake);
//! - `spinning`: the root first joins two spins of [`BUSY`] and [`BUSY`] minus [`GAP`];
//!   the other worker runs the shorter one and looks for work for about `GAP` before
//!   the measured push, which finds it still spinning (its spin phase lasts longer).
//!
//! The floor is a condition-variable wake-up between two plain threads, measured the
//! same way (the time from before `notify_one` to the sleeper's return from `wait`), with
//! the sleeper asleep for `SETTLE` first. The kernel most often starts such a sleeper on
//! the waker's own CPU, ahead of the waker; a worker that wakes another keeps it off its
//! CPU instead, so that the two run side by side. The second floor row does the same:
//! the sleeper may not use the waker's CPU while it is woken. The variants are
//! interleaved sample by sample.

use crate::affinity;
use crate::idle::percentile;
use crate::kernels::work::spin;
use serde::Serialize;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering::Acquire, Ordering::Release};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Idle time before an `asleep` sample, so that the other worker has gone to sleep.
const SETTLE: Duration = Duration::from_millis(3);
/// The longer branch of the warm-up join of a `spinning` sample, in µs.
const BUSY: f64 = 200.0;
/// How much shorter the other branch is, in µs: the other worker's idle time before the
/// measured push.
const GAP: f64 = 20.0;

/// One variant's latencies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandoffResult {
    /// `condvar`, `heist-lace/asleep`, `heist-relay/spinning`, ...
    pub variant: String,
    /// Median latency in µs.
    pub p50_us: f64,
    /// 99th percentile in µs.
    pub p99_us: f64,
    /// Smallest sample in µs.
    pub min_us: f64,
    /// Largest sample in µs.
    pub max_us: f64,
    /// Timed samples.
    pub samples: usize,
}

/// The measurement; the JSON object of `handoff --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandoffReport {
    /// Worker threads of each pool.
    pub workers: usize,
    /// One entry per variant.
    pub results: Vec<HandoffResult>,
}

/// The other worker's state at the push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Asleep,
    Spinning,
}

/// One hand-off on `pool`: nanoseconds from before the push to the task's start.
fn heist_sample(pool: &heist::Pool, state: State) -> u64 {
    if state == State::Asleep {
        std::thread::sleep(SETTLE);
    }
    let started = AtomicBool::new(false);
    let at = AtomicU64::new(0);
    let base = Instant::now();
    let t0 = pool.run(|w| {
        if state == State::Spinning {
            w.join(|_| black_box(spin(BUSY)), |_| black_box(spin(BUSY - GAP)));
        }
        let t0 = base.elapsed().as_nanos() as u64;
        w.join(
            |_| {
                while !started.load(Acquire) {
                    std::hint::spin_loop();
                }
            },
            |_| {
                at.store(base.elapsed().as_nanos() as u64, Release);
                started.store(true, Release);
            },
        );
        t0
    });
    at.load(Acquire).saturating_sub(t0)
}

/// The floor's sleeper: waits on `cv` for a flag, records when it woke, forever.
struct Floor {
    state: Arc<(Mutex<Option<Instant>>, Condvar, AtomicU64)>,
    base: Instant,
    /// The sleeper's thread id.
    tid: Arc<AtomicI32>,
}

impl Floor {
    fn start() -> Floor {
        let state = Arc::new((
            Mutex::new(None::<Instant>),
            Condvar::new(),
            AtomicU64::new(0),
        ));
        let s = Arc::clone(&state);
        let base = Instant::now();
        let tid = Arc::new(AtomicI32::new(0));
        let t = Arc::clone(&tid);
        std::thread::spawn(move || {
            t.store(affinity::thread_id(), Release);
            let (m, cv, woke) = &*s;
            let mut g = m.lock().unwrap();
            loop {
                while g.is_none() {
                    g = cv.wait(g).unwrap();
                }
                woke.store(base.elapsed().as_nanos() as u64, Release);
                *g = None;
            }
        });
        Floor { state, base, tid }
    }

    /// One wake-up of the sleeper: nanoseconds from before the notify to its return. If
    /// `apart`, the sleeper may not use this thread's CPU until it has woken.
    fn sample(&self, apart: bool) -> u64 {
        std::thread::sleep(SETTLE);
        let (m, cv, woke) = &*self.state;
        woke.store(0, Release);
        let _apart = apart
            .then(|| affinity::keep_off_here(self.tid.load(Acquire)))
            .flatten();
        let t0 = self.base.elapsed().as_nanos() as u64;
        *m.lock().unwrap() = Some(Instant::now());
        cv.notify_one();
        let mut t1 = woke.load(Acquire);
        while t1 == 0 {
            std::hint::spin_loop();
            t1 = woke.load(Acquire);
        }
        t1.saturating_sub(t0)
    }
}

fn summarise(variant: String, mut ns: Vec<u64>) -> HandoffResult {
    ns.sort_unstable();
    let us: Vec<f64> = ns.iter().map(|&n| n as f64 / 1000.0).collect();
    HandoffResult {
        variant,
        p50_us: percentile(&us, 50.0),
        p99_us: percentile(&us, 99.0),
        min_us: us.first().copied().unwrap_or(0.0),
        max_us: us.last().copied().unwrap_or(0.0),
        samples: us.len(),
    }
}

/// Measures every variant `samples` times after `warmup` untimed rounds, with pools of
/// `workers` (at least 2).
pub fn measure(workers: usize, samples: usize, warmup: usize) -> Result<HandoffReport, String> {
    if workers < 2 {
        return Err("handoff: needs at least 2 workers (a task goes to another one)".into());
    }
    let pools = [heist::Scheduler::Lace, heist::Scheduler::Relay].map(|s| {
        heist::Pool::builder()
            .workers(workers)
            .scheduler(s)
            .build()
            .map_err(|e| format!("handoff: {e}"))
    });
    let [lace, relay] = pools;
    let pools = [("heist-lace", lace?), ("heist-relay", relay?)];
    // A sleeper each: one kept apart is then woken where the kernel last placed it, which
    // changed the plain one's figures when they shared a thread (p50 2.4 ms: it waited
    // behind the spinning waker for a tick).
    let floors = [Floor::start(), Floor::start()];
    let states = [(State::Asleep, "asleep"), (State::Spinning, "spinning")];
    let mut floor_ns = [Vec::new(), Vec::new()];
    let mut heist_ns = vec![Vec::new(); pools.len() * states.len()];
    for round in 0..warmup + samples {
        let keep = round >= warmup;
        for (apart, (floor, ns)) in floors.iter().zip(&mut floor_ns).enumerate() {
            let f = floor.sample(apart == 1);
            if keep {
                ns.push(f);
            }
        }
        for (p, (_, pool)) in pools.iter().enumerate() {
            for (s, (state, _)) in states.iter().enumerate() {
                let ns = heist_sample(pool, *state);
                if keep {
                    heist_ns[p * states.len() + s].push(ns);
                }
            }
        }
    }
    let [here, apart] = floor_ns;
    let mut results = vec![
        summarise("condvar (floor)".into(), here),
        summarise("condvar, woken apart (floor)".into(), apart),
    ];
    for (p, (name, _)) in pools.iter().enumerate() {
        for (s, (_, state)) in states.iter().enumerate() {
            let ns = std::mem::take(&mut heist_ns[p * states.len() + s]);
            results.push(summarise(format!("{name}/{state}"), ns));
        }
    }
    Ok(HandoffReport { workers, results })
}

/// The report as a text table.
pub fn render(r: &HandoffReport) -> String {
    let samples = r.results.first().map_or(0, |x| x.samples);
    let mut out = format!(
        "hand-off latency, from making a task available to its start on another worker \
         ({} workers, {} samples)\n",
        r.workers, samples
    );
    let rows: Vec<Vec<String>> = r
        .results
        .iter()
        .map(|x| {
            vec![
                x.variant.clone(),
                format!("{:.1}", x.p50_us),
                format!("{:.1}", x.p99_us),
                format!("{:.1}", x.min_us),
                format!("{:.1}", x.max_us),
            ]
        })
        .collect();
    out += &crate::harness::render_table(
        &["variant", "p50 µs", "p99 µs", "min µs", "max µs"],
        &rows,
        1,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_hands_its_task_over() {
        let r = measure(2, 3, 0).unwrap();
        assert_eq!(r.results.len(), 6);
        assert!(r.results.iter().all(|x| x.samples == 3));
        assert!(measure(1, 1, 0).is_err());
    }
}
