//! The measuring harness: interleaved timed runs of one kernel instance on several
//! runtimes, their summary (median, min, max, speedup vs `seq`, ratio vs `rayon`), and the
//! table and JSON reports built from it.
//!
//! Every timed run is preceded by an untimed [`Instance::reset`] and followed by an
//! untimed [`Instance::verify`]. Runtimes are interleaved round by round (`A B C A B C`)
//! so that slow drifts of the machine (frequency, other load) hit all of them alike.

use crate::bench::{Bench, Instance, SizeClass};
use crate::runtime::{Runtime, RuntimeKind};
use crate::summary::{fmt_ratio, fmt_spread, fmt_time, Summary};
use serde::Serialize;
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::time::Instant;

/// How many runs to make, and what to collect besides the times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Timed runs per runtime.
    pub runs: usize,
    /// Untimed warm-up runs per runtime, made before the first timed round.
    pub warmup: usize,
    /// Collect heist's per-worker counters around each timed run (heist runtimes only).
    pub stats: bool,
    /// Measure how far each timed run raises the peak resident set (see [`crate::rss`]).
    pub rss: bool,
}

/// A `--size` argument: a named class, or a value handed to the kernel as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeArg {
    /// `test`, `small`, `quick` or `full`.
    Class(SizeClass),
    /// Anything else, e.g. `30` for fib.
    Value(String),
}

impl SizeArg {
    /// Parses a `--size` argument; only the empty string is rejected.
    pub fn parse(s: &str) -> Result<SizeArg, String> {
        if s.is_empty() {
            return Err("empty size".into());
        }
        Ok(SizeClass::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .map_or_else(|| SizeArg::Value(s.to_string()), SizeArg::Class))
    }

    /// The size string `bench` is built with.
    pub fn resolve(&self, bench: &dyn Bench) -> String {
        match self {
            SizeArg::Class(c) => bench.size(*c).to_string(),
            SizeArg::Value(v) => v.clone(),
        }
    }
}

/// heist's per-worker event counters (summed over the timed runs of one runtime).
pub type Counters = heist::WorkerStats;

/// Serialises counters as a JSON object `{name: value}`, plus `block_sizes`: the loop
/// driver's histogram (entry b: blocks of 2^b to 2^(b+1) - 1 items).
fn ser_counters<S: serde::Serializer>(c: &Counters, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(Counters::NAMES.len() + 1))?;
    for (k, v) in Counters::NAMES.iter().zip(c.values()) {
        m.serialize_entry(k, &v)?;
    }
    m.serialize_entry("block_sizes", &c.block_sizes)?;
    m.end()
}

/// Serialises a list of counters as a JSON array of objects.
fn ser_counters_list<S: serde::Serializer>(c: &[Counters], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    struct One<'a>(&'a Counters);
    impl serde::Serialize for One<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            ser_counters(self.0, s)
        }
    }
    let mut q = s.serialize_seq(Some(c.len()))?;
    for x in c {
        q.serialize_element(&One(x))?;
    }
    q.end()
}

/// The raw outcome of one runtime in one benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The runtime.
    pub runtime: RuntimeKind,
    /// Seconds of each completed timed run.
    pub times: Vec<f64>,
    /// The first failure (failed verification or panic); no runs are made after it.
    pub error: Option<String>,
    /// Per-worker counters summed over the timed runs, when collected.
    pub stats: Option<Vec<Counters>>,
    /// `rayon-best`: the median seconds of each `with_max_len` swept, in [`MAX_LENS`]
    /// order; the fastest is the one its timed runs used.
    pub sweep: Option<Vec<(usize, f64)>>,
    /// With `--rss`: the largest rise of the peak resident set over a timed run, in KiB.
    pub rss_growth_kib: Option<u64>,
}

impl Measured {
    /// No runs yet.
    pub fn new(runtime: RuntimeKind) -> Measured {
        Measured {
            runtime,
            times: Vec::new(),
            error: None,
            stats: None,
            sweep: None,
            rss_growth_kib: None,
        }
    }

    fn add_stats(&mut self, per_worker: &[heist::WorkerStats]) {
        let acc = self.stats.get_or_insert_with(Vec::new);
        if acc.len() < per_worker.len() {
            acc.resize(per_worker.len(), Counters::default());
        }
        for (a, s) in acc.iter_mut().zip(per_worker) {
            *a += *s;
        }
    }
}

/// The `with_max_len`s that `rayon-best` sweeps: {1, 4, 16, ..., 4096}.
pub const MAX_LENS: [usize; 7] = [1, 4, 16, 64, 256, 1024, 4096];

/// Timed runs per swept `with_max_len` (at most; fewer if fewer timed runs are asked for).
const SWEEP_RUNS: usize = 3;

/// Runs `inst` on every runtime: `opts.warmup` untimed rounds, then `opts.runs` timed
/// rounds, each round visiting the runtimes in order. `tick` is called after every run.
/// A `rayon-best` runtime first sweeps [`MAX_LENS`] (see [`sweep_max_len`]).
pub fn measure(
    inst: &mut dyn Instance,
    runtimes: &[&Runtime],
    opts: &Options,
    tick: &mut dyn FnMut(RuntimeKind),
) -> Vec<Measured> {
    let mut out: Vec<Measured> = runtimes.iter().map(|r| Measured::new(r.kind())).collect();
    for (rt, m) in runtimes.iter().zip(&mut out) {
        if rt.kind() == RuntimeKind::RayonBest {
            sweep_max_len(inst, rt, opts.runs.clamp(1, SWEEP_RUNS), m);
        }
    }
    for _ in 0..opts.warmup {
        for (rt, m) in runtimes.iter().zip(&mut out) {
            if m.error.is_none() {
                warmup_run(inst, rt, m);
            }
            tick(rt.kind());
        }
    }
    for _ in 0..opts.runs {
        for (rt, m) in runtimes.iter().zip(&mut out) {
            if m.error.is_none() {
                timed_run(inst, rt, m, *opts);
            }
            tick(rt.kind());
        }
    }
    out
}

/// `rayon-best`'s sweep: for each of [`MAX_LENS`], largest first, up to `runs` verified
/// timed runs (one warm-up before the first); then sets the one with the smallest median
/// on `rt`. A value whose first run takes over twice the best median so far gets no more
/// runs (with `with_max_len(1)` a fine loop can take 60 times longer). The medians go
/// into `m.sweep`, in [`MAX_LENS`] order; a failure into `m.error`.
pub fn sweep_max_len(inst: &mut dyn Instance, rt: &Runtime, runs: usize, m: &mut Measured) {
    let mut sweep = Vec::new();
    let mut best = f64::INFINITY;
    for (i, &len) in MAX_LENS.iter().rev().enumerate() {
        rt.set_max_len(len);
        let mut trial = Measured::new(rt.kind());
        if i == 0 {
            warmup_run(inst, rt, &mut trial);
        }
        for _ in 0..runs {
            if trial.error.is_some() || trial.times.first().is_some_and(|&t| t > 2.0 * best) {
                break;
            }
            timed_run(inst, rt, &mut trial, Options::default());
        }
        if let Some(e) = trial.error {
            m.error = Some(format!("with_max_len({len}): {e}"));
            return;
        }
        let median = Summary::of(&trial.times).expect("runs >= 1").median;
        best = best.min(median);
        sweep.push((len, median));
    }
    sweep.reverse();
    let chosen = sweep
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("MAX_LENS is not empty");
    rt.set_max_len(chosen.0);
    m.sweep = Some(sweep);
}

fn warmup_run(inst: &mut dyn Instance, rt: &Runtime, m: &mut Measured) {
    if let Err(p) = guarded(|| {
        inst.reset();
        inst.run(rt);
    }) {
        m.error = Some(format!("panicked in a warm-up run: {p}"));
    }
}

fn timed_run(inst: &mut dyn Instance, rt: &Runtime, m: &mut Measured, opts: Options) {
    let pool = rt.heist_pool().filter(|_| opts.stats);
    let timed = guarded(|| {
        inst.reset();
        if let Some(p) = pool {
            p.reset_stats();
        }
        let mut run = || {
            let t0 = Instant::now();
            inst.run(rt);
            t0.elapsed()
        };
        let (t, rss) = if opts.rss {
            crate::rss::peak_growth(run)
        } else {
            (run(), None)
        };
        (t, rss, pool.map(|p| p.stats()))
    });
    let (t, rss, counters) = match timed {
        Ok(r) => r,
        Err(p) => return m.error = Some(format!("panicked in run: {p}")),
    };
    m.times.push(t.as_secs_f64());
    if let Some(kib) = rss {
        m.rss_growth_kib = Some(m.rss_growth_kib.map_or(kib, |k| k.max(kib)));
    }
    if let Some(c) = counters {
        m.add_stats(&c);
    }
    m.error = match guarded(|| inst.verify()) {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(format!("verification failed: {e}")),
        Err(p) => Some(format!("panicked in verify: {p}")),
    };
}

/// Runs `f`, turning a panic into its message.
fn guarded<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(panic_message)
}

fn panic_message(p: Box<dyn Any + Send>) -> String {
    match (p.downcast_ref::<&str>(), p.downcast_ref::<String>()) {
        (Some(s), _) => s.to_string(),
        (_, Some(s)) => s.clone(),
        _ => "(no message)".into(),
    }
}

/// heist's counters of one runtime: the sum over workers and each worker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsReport {
    /// The sum over all workers.
    #[serde(serialize_with = "ser_counters")]
    pub total: Counters,
    /// One entry per worker, by worker index.
    #[serde(serialize_with = "ser_counters_list")]
    pub workers: Vec<Counters>,
}

/// One row of a report: one runtime's summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeResult {
    /// The runtime's name.
    pub runtime: String,
    /// Median seconds of the timed runs (`null` when none completed).
    pub median_s: Option<f64>,
    /// Fastest timed run.
    pub min_s: Option<f64>,
    /// Slowest timed run.
    pub max_s: Option<f64>,
    /// The 95 % confidence interval of the median (order statistics; from 6 runs on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95_s: Option<(f64, f64)>,
    /// Seconds of every timed run, in run order.
    pub samples_s: Vec<f64>,
    /// Timed runs completed.
    pub runs: usize,
    /// Whether every timed run completed and verified.
    pub verified: bool,
    /// What went wrong, when not verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `seq`'s median divided by this median.
    pub speedup_vs_seq: Option<f64>,
    /// This median divided by `rayon`'s median.
    pub ratio_vs_rayon: Option<f64>,
    /// heist's counters, with `--stats` on a heist runtime.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<StatsReport>,
    /// `rayon-best`: `[with_max_len, median s]` of each value swept; the timed runs used
    /// the fastest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_len_sweep: Option<Vec<(usize, f64)>>,
    /// With `--rss`: the largest rise of the peak resident set over one timed run, in
    /// KiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_growth_kib: Option<u64>,
}

impl RuntimeResult {
    /// The `±` column: the median's confidence interval (or min–max) relative to it.
    pub fn spread(&self) -> Option<f64> {
        let median = self.median_s?;
        let (lo, hi) = self.ci95_s.or(self.min_s.zip(self.max_s))?;
        Some((median - lo).max(hi - median) / median)
    }
}

/// The report of one benchmark: the JSON object of `run --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchReport {
    /// The kernel's name.
    pub bench: String,
    /// The resolved size string.
    pub size: String,
    /// Worker threads per parallel runtime.
    pub workers: usize,
    /// Untimed warm-up runs per runtime.
    pub warmup: usize,
    /// One entry per runtime, in run order.
    pub results: Vec<RuntimeResult>,
    /// With `--rss`: how far building the kernel's input raised the resident set, in KiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_rss_kib: Option<u64>,
}

impl BenchReport {
    /// Summarises `measured`, computing the columns relative to `seq` and `rayon`.
    pub fn new(
        bench: &str,
        size: &str,
        workers: usize,
        warmup: usize,
        measured: &[Measured],
    ) -> Self {
        let median_of = |k: RuntimeKind| {
            let m = measured.iter().find(|m| m.runtime == k)?;
            Summary::of(&m.times).map(|s| s.median)
        };
        let (seq, rayon) = (median_of(RuntimeKind::Seq), median_of(RuntimeKind::Rayon));
        let results = measured.iter().map(|m| result_row(m, seq, rayon)).collect();
        BenchReport {
            bench: bench.to_string(),
            size: size.to_string(),
            workers,
            warmup,
            results,
            input_rss_kib: None,
        }
    }

    /// Whether every runtime verified.
    pub fn verified(&self) -> bool {
        self.results.iter().all(|r| r.verified)
    }

    /// `(runtime, error)` of each runtime that did not verify.
    pub fn failures(&self) -> Vec<(&str, &str)> {
        let failed = self.results.iter().filter(|r| !r.verified);
        failed
            .map(|r| {
                (
                    r.runtime.as_str(),
                    r.error.as_deref().unwrap_or("no timed run"),
                )
            })
            .collect()
    }
}

fn result_row(m: &Measured, seq: Option<f64>, rayon: Option<f64>) -> RuntimeResult {
    let s = Summary::of(&m.times);
    let median = s.map(|s| s.median);
    let stats = m.stats.as_ref().map(|w| {
        let mut total = Counters::default();
        w.iter().for_each(|c| total += *c);
        StatsReport {
            total,
            workers: w.clone(),
        }
    });
    RuntimeResult {
        runtime: m.runtime.name().to_string(),
        median_s: median,
        min_s: s.map(|s| s.min),
        max_s: s.map(|s| s.max),
        ci95_s: s.and_then(|s| s.ci),
        samples_s: m.times.clone(),
        runs: m.times.len(),
        verified: m.error.is_none() && !m.times.is_empty(),
        error: m.error.clone(),
        speedup_vs_seq: seq.zip(median).map(|(q, t)| q / t),
        ratio_vs_rayon: rayon.zip(median).map(|(r, t)| t / r),
        stats,
        max_len_sweep: m.sweep.clone(),
        peak_rss_growth_kib: m.rss_growth_kib,
    }
}

/// Lays out a text table: the first `left` columns left-aligned, the rest right-aligned.
pub fn render_table(headers: &[&str], rows: &[Vec<String>], left: usize) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let header: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    let mut out = String::new();
    for row in std::iter::once(&header).chain(rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, &w))| {
                if i < left {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The columns of a kernel's table: `±` is the half-width of the median's 95 %
/// confidence interval relative to the median, or of min–max below 6 runs.
pub const COLUMNS: [&str; 8] = [
    "runtime", "median", "min", "max", "±", "vs seq", "vs rayon", "verified",
];

/// The cells of a runtime's row, under [`COLUMNS`].
pub fn row_cells(r: &RuntimeResult) -> Vec<String> {
    vec![
        r.runtime.clone(),
        fmt_time(r.median_s),
        fmt_time(r.min_s),
        fmt_time(r.max_s),
        fmt_spread(r.spread()),
        fmt_ratio(r.speedup_vs_seq),
        fmt_ratio(r.ratio_vs_rayon),
        if r.verified { "yes" } else { "FAILED" }.into(),
    ]
}

/// A kernel's table heading: its name, size, workers and runs.
pub fn heading(r: &BenchReport) -> String {
    let runs = r.results.iter().map(|x| x.runs).max().unwrap_or(0);
    format!(
        "{} (size {}, {} workers, {} timed runs after {} warm-up)\n",
        r.bench, r.size, r.workers, runs, r.warmup
    )
}

/// The human report of `run`: a heading, the table, and the counters when collected.
pub fn render_run(r: &BenchReport) -> String {
    let rows: Vec<Vec<String>> = r.results.iter().map(row_cells).collect();
    let mut out = heading(r) + &render_table(&COLUMNS, &rows, 1);
    for res in &r.results {
        if let Some(sweep) = &res.max_len_sweep {
            out += &render_sweep(&res.runtime, sweep);
        }
    }
    out += &render_rss(r);
    for res in &r.results {
        if let Some(s) = &res.stats {
            out += &format!(
                "\n{} counters, summed over {} timed runs:\n",
                res.runtime, res.runs
            );
            out += &render_stats(s);
        }
    }
    out
}

/// With `--rss`: each runtime's largest rise of the peak RSS over a run, in MiB and as
/// a share of the input's resident size.
fn render_rss(r: &BenchReport) -> String {
    let rows: Vec<String> = r
        .results
        .iter()
        .filter_map(|res| {
            let kib = res.peak_rss_growth_kib?;
            let share = r
                .input_rss_kib
                .filter(|&i| i > 0)
                .map_or(String::new(), |i| {
                    format!(" ({:.2} % of the input)", 100.0 * kib as f64 / i as f64)
                });
            Some(format!(
                "  {}: {:.1} MiB, {kib} KiB{share}\n",
                res.runtime,
                kib as f64 / 1024.0
            ))
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let input = r.input_rss_kib.map_or("unknown".into(), |i| {
        format!("{:.1} MiB", i as f64 / 1024.0)
    });
    format!(
        "\npeak RSS growth during one run (largest over the timed runs; input {input}):\n{}",
        rows.concat()
    )
}

/// The loop driver's block sizes (all workers), one line, if any block was counted:
/// `size range: count` from the smallest size to the largest seen.
pub fn render_block_sizes(t: &Counters) -> String {
    let h = &t.block_sizes;
    let Some(hi) = h.iter().rposition(|&n| n > 0) else {
        return String::new();
    };
    let lo = h.iter().position(|&n| n > 0).unwrap_or(hi);
    let cells: Vec<String> = (lo..=hi)
        .map(|b| match b {
            0 => format!("1: {}", h[b]),
            b if b == h.len() - 1 => format!("{}+: {}", 1u64 << b, h[b]),
            b => format!("{}-{}: {}", 1u64 << b, (1u64 << (b + 1)) - 1, h[b]),
        })
        .collect();
    format!("block sizes (items: blocks): {}\n", cells.join(", "))
}

/// One line: each swept `with_max_len` with its median, and the one chosen.
pub fn render_sweep(runtime: &str, sweep: &[(usize, f64)]) -> String {
    let best = sweep.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let cells: Vec<String> = sweep
        .iter()
        .map(|&(m, t)| format!("{m}: {}", fmt_time(Some(t))))
        .collect();
    format!(
        "{runtime}: with_max_len sweep (median) {}; chose {}\n",
        cells.join(", "),
        best.map_or("-".into(), |b| b.0.to_string())
    )
}

/// The counters as a table: one row per counter, columns `total`, `w0`, `w1`, ...
pub fn render_stats(s: &StatsReport) -> String {
    let mut headers = vec!["counter".to_string(), "total".to_string()];
    headers.extend((0..s.workers.len()).map(|i| format!("w{i}")));
    let columns: Vec<[u64; Counters::NAMES.len()]> = std::iter::once(&s.total)
        .chain(&s.workers)
        .map(Counters::values)
        .collect();
    let rows: Vec<Vec<String>> = Counters::NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let vals = columns.iter().map(|c| c[i].to_string());
            std::iter::once(name.to_string()).chain(vals).collect()
        })
        .collect();
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut out = render_table(&headers, &rows, 1);
    out += &render_block_sizes(&s.total);
    let t = &s.total;
    let answered = t.steal_half + t.steal_one;
    if answered > 0 {
        out += &format!(
            "relay: {:.1} % of answered requests were steal-half, {:.2} tasks per steal, \
             {:.1} µs mean wait for an answer\n",
            100.0 * t.steal_half as f64 / answered as f64,
            t.tasks_stolen as f64 / answered as f64,
            t.reply_wait_ns as f64 / 1e3 / answered as f64
        );
    }
    out
}

/// The lines that name each failed runtime of `r` and its error.
pub fn render_failures(r: &BenchReport) -> String {
    let lines = r
        .failures()
        .into_iter()
        .map(|(rt, e)| format!("FAILED: {} (size {}) on {rt}: {e}\n", r.bench, r.size));
    lines.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fork::Fork;
    use crate::runtime::Task;

    #[test]
    fn size_arg_parses_classes_and_values() {
        assert_eq!(
            SizeArg::parse("quick"),
            Ok(SizeArg::Class(SizeClass::Quick))
        );
        assert_eq!(SizeArg::parse("full"), Ok(SizeArg::Class(SizeClass::Full)));
        assert_eq!(
            SizeArg::parse("small"),
            Ok(SizeArg::Class(SizeClass::Small))
        );
        assert_eq!(SizeArg::parse("30"), Ok(SizeArg::Value("30".into())));
        assert!(SizeArg::parse("").is_err());
    }

    fn measured(kind: RuntimeKind, times: &[f64], error: Option<&str>) -> Measured {
        Measured {
            runtime: kind,
            times: times.to_vec(),
            error: error.map(String::from),
            stats: None,
            sweep: None,
            rss_growth_kib: None,
        }
    }

    fn synthetic() -> BenchReport {
        let m = [
            measured(RuntimeKind::Seq, &[1.0, 1.2, 0.8], None),
            measured(RuntimeKind::HeistLace, &[0.5, 0.4, 0.6], None),
            measured(RuntimeKind::Rayon, &[0.25, 0.25, 0.3], None),
            measured(
                RuntimeKind::Chili,
                &[0.3],
                Some("verification failed: wrong"),
            ),
        ];
        BenchReport::new("fib", "36", 2, 1, &m)
    }

    #[test]
    fn report_relative_columns() {
        let r = synthetic();
        let lace = &r.results[1];
        assert_eq!(lace.median_s, Some(0.5));
        assert_eq!(lace.min_s, Some(0.4));
        assert_eq!(lace.max_s, Some(0.6));
        assert_eq!(lace.speedup_vs_seq, Some(2.0));
        assert_eq!(lace.ratio_vs_rayon, Some(2.0));
        assert_eq!(r.results[0].speedup_vs_seq, Some(1.0));
        assert!(!r.verified());
        assert_eq!(r.failures(), vec![("chili", "verification failed: wrong")]);
    }

    #[test]
    fn report_without_seq_or_rayon_has_no_ratios() {
        let m = [measured(RuntimeKind::HeistRelay, &[0.5], None)];
        let r = BenchReport::new("fib", "36", 2, 1, &m);
        assert_eq!(r.results[0].speedup_vs_seq, None);
        assert_eq!(r.results[0].ratio_vs_rayon, None);
        let text = render_run(&r);
        let row = text.lines().find(|l| l.starts_with("heist-relay")).unwrap();
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>()[9..],
            ["-", "-", "yes"]
        );
    }

    #[test]
    fn report_json_shape() {
        let v = serde_json::to_value(synthetic()).unwrap();
        assert_eq!(v["bench"], "fib");
        assert_eq!(v["size"], "36");
        assert_eq!(v["workers"], 2);
        let res = v["results"].as_array().unwrap();
        assert_eq!(res.len(), 4);
        assert_eq!(res[0]["runtime"], "seq");
        assert_eq!(res[0]["median_s"], 1.0);
        assert_eq!(res[0]["runs"], 3);
        assert_eq!(res[0]["verified"], true);
        assert!(res[0].get("error").is_none());
        assert_eq!(res[3]["verified"], false);
        assert_eq!(res[3]["error"], "verification failed: wrong");
    }

    #[test]
    fn tables_render() {
        let r = synthetic();
        let text = render_run(&r);
        assert!(text.starts_with("fib (size 36, 2 workers"));
        assert!(text.contains("median"));
        let row = text.lines().find(|l| l.starts_with("heist-lace")).unwrap();
        let cells: Vec<_> = row.split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "heist-lace",
                "500.0",
                "ms",
                "400.0",
                "ms",
                "600.0",
                "ms",
                "±20.0",
                "%",
                "2.00x",
                "2.00x",
                "yes"
            ]
        );
        assert!(text
            .lines()
            .any(|l| l.starts_with("chili") && l.ends_with("FAILED")));
        assert!(render_failures(&r).contains("FAILED: fib (size 36) on chili: verification"));
    }

    #[test]
    fn stats_table() {
        let mut w = [Counters::default(); 2];
        w[0].steals = 3;
        w[1].steals = 4;
        let mut m = measured(RuntimeKind::HeistLace, &[0.1], None);
        m.stats = Some(w.to_vec());
        let r = BenchReport::new("fib", "36", 2, 0, &[m]);
        let s = r.results[0].stats.as_ref().unwrap();
        assert_eq!(s.total.steals, 7);
        let text = render_run(&r);
        let row = text.lines().find(|l| l.starts_with("steals")).unwrap();
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            ["steals", "7", "3", "4"]
        );
    }

    /// A throwaway kernel: parallel sum of 1..=n, optionally wrong on one runtime.
    struct Sum {
        n: u64,
        wrong_on: Option<RuntimeKind>,
        last: Option<u64>,
        resets: usize,
    }

    struct SumTask(u64, u64);

    impl Task for SumTask {
        type Output = u64;
        fn call<F: Fork>(self, f: F) -> u64 {
            let SumTask(lo, hi) = self;
            if hi - lo <= 64 {
                return (lo..hi).sum();
            }
            let mid = lo + (hi - lo) / 2;
            let (a, b) = f.join(|f| SumTask(lo, mid).call(f), |f| SumTask(mid, hi).call(f));
            a + b
        }
    }

    impl Instance for Sum {
        fn reset(&mut self) {
            self.last = None;
            self.resets += 1;
        }
        fn run(&mut self, rt: &Runtime) {
            let bad = u64::from(self.wrong_on == Some(rt.kind()));
            self.last = Some(rt.exec(SumTask(1, self.n + 1)) + bad);
        }
        fn verify(&self) -> Result<(), String> {
            let want = self.n * (self.n + 1) / 2;
            match self.last {
                Some(got) if got == want => Ok(()),
                got => Err(format!("sum is {got:?}, expected {want}")),
            }
        }
    }

    #[test]
    fn measure_interleaves_verifies_and_reports_failures() {
        let kinds = [RuntimeKind::Seq, RuntimeKind::HeistLace, RuntimeKind::Rayon];
        let rts: Vec<Runtime> = kinds.iter().map(|&k| Runtime::new(k, 2).unwrap()).collect();
        let rts: Vec<&Runtime> = rts.iter().collect();
        let mut inst = Sum {
            n: 10_000,
            wrong_on: Some(RuntimeKind::Rayon),
            last: None,
            resets: 0,
        };
        let opts = Options {
            runs: 3,
            warmup: 1,
            stats: true,
            rss: true,
        };
        let mut order = Vec::new();
        let m = measure(&mut inst, &rts, &opts, &mut |k| order.push(k));
        assert_eq!(order, [kinds; 4].concat());
        // seq and heist: 1 warm-up + 3 timed; rayon: 1 warm-up + 1 failed timed run.
        assert_eq!(inst.resets, 4 + 4 + 2);
        assert_eq!(m[0].times.len(), 3);
        assert!(m[0].error.is_none() && m[0].stats.is_none());
        assert!(m[1].stats.is_some());
        if cfg!(target_os = "linux") {
            assert!(m[0].rss_growth_kib.is_some() && m[1].rss_growth_kib.is_some());
        }
        assert_eq!(m[2].times.len(), 1);
        assert!(m[2].error.as_deref().unwrap().contains("expected 50005000"));
        let r = BenchReport::new("sum", "10000", 2, 1, &m);
        assert_eq!(r.failures().len(), 1);
        assert!(r.results[1].speedup_vs_seq.is_some());
    }

    struct Panics;

    impl Instance for Panics {
        fn run(&mut self, _: &Runtime) {
            panic!("boom");
        }
        fn verify(&self) -> Result<(), String> {
            Ok(())
        }
    }

    #[test]
    fn panics_become_failures() {
        let rt = Runtime::new(RuntimeKind::Seq, 1).unwrap();
        let opts = Options {
            runs: 2,
            warmup: 0,
            stats: false,
            rss: false,
        };
        let m = measure(&mut Panics, &[&rt], &opts, &mut |_| {});
        assert_eq!(m[0].error.as_deref(), Some("panicked in run: boom"));
        assert!(m[0].times.is_empty());
        let r = BenchReport::new("p", "1", 1, 0, &m);
        assert_eq!(r.results[0].median_s, None);
        assert!(!r.results[0].verified);
    }
}
