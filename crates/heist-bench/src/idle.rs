//! How heist behaves when it runs out of work: the CPU its idle workers burn right after a
//! burst of work, and the latency from submitting a task to an idle pool until it starts.
//!
//! CPU time is read from Linux's `/proc`: the per-thread `schedstat` run times (nanoseconds)
//! summed over `/proc/self/task/*`, or, where those are not kept, `utime + stime` of
//! `/proc/self/stat` (clock ticks of 10 ms). The measuring thread sleeps meanwhile, so
//! nearly all of it is the pool's.

use crate::kernels::fib::fib;
use serde::Serialize;
use std::time::{Duration, Instant};

/// What to measure.
#[derive(Debug, Clone, Copy)]
pub struct IdleOptions {
    /// Worker threads of the pool.
    pub workers: usize,
    /// heist's scheduler.
    pub scheduler: heist::Scheduler,
    /// How long the burst that precedes the idle window keeps all workers busy.
    pub burst: Duration,
    /// The idle window over which CPU time is measured.
    pub window: Duration,
    /// Wake-up latency samples.
    pub samples: usize,
    /// The pause before each sample, so that the workers are asleep when it starts.
    pub gap: Duration,
}

impl IdleOptions {
    /// The defaults: 0.2 s burst, 1 s window, 200 samples after 15 ms pauses.
    pub fn new(workers: usize, scheduler: heist::Scheduler) -> IdleOptions {
        IdleOptions {
            workers,
            scheduler,
            burst: Duration::from_millis(200),
            window: Duration::from_secs(1),
            samples: 200,
            gap: Duration::from_millis(15),
        }
    }
}

/// The measurements; the JSON object of `idle --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdleReport {
    /// CPU time of the whole process over the idle window, in % of one core.
    pub idle_cpu_percent: f64,
    /// Median submit-to-start latency of a task on an idle pool, in µs.
    pub wake_p50_us: f64,
    /// 99th percentile of that latency, in µs.
    pub wake_p99_us: f64,
    /// The largest sample, in µs.
    pub wake_max_us: f64,
    /// Worker threads of the pool.
    pub workers: usize,
    /// `lace` or `relay`.
    pub scheduler: String,
    /// Number of latency samples.
    pub samples: usize,
    /// The idle window, in seconds.
    pub idle_window_s: f64,
    /// Where CPU time was read: `schedstat` or `stat`.
    pub cpu_source: &'static str,
}

/// Builds the pool and measures; errors name what failed (pool build, `/proc`).
pub fn measure(opts: &IdleOptions) -> Result<IdleReport, String> {
    if opts.samples == 0 {
        return Err("at least one wake-up sample is needed".into());
    }
    let pool = heist::Pool::builder()
        .workers(opts.workers)
        .scheduler(opts.scheduler)
        .build()
        .map_err(|e| format!("cannot start heist ({:?}): {e:?}", opts.scheduler))?;
    let src = CpuSource::detect();
    burst(&pool, opts.burst);
    let cpu = idle_cpu(src, opts.window)?;
    let mut wake = wake_samples(&pool, opts.samples, opts.gap);
    wake.sort_by(f64::total_cmp);
    Ok(IdleReport {
        idle_cpu_percent: cpu,
        wake_p50_us: percentile(&wake, 50.0),
        wake_p99_us: percentile(&wake, 99.0),
        wake_max_us: wake[wake.len() - 1],
        workers: opts.workers,
        scheduler: format!("{:?}", opts.scheduler).to_lowercase(),
        samples: wake.len(),
        idle_window_s: opts.window.as_secs_f64(),
        cpu_source: src.name(),
    })
}

/// Keeps every worker busy for `dur` with a stream of fork-join trees.
fn burst(pool: &heist::Pool, dur: Duration) {
    let total = pool.run(|w| {
        let f = crate::fork::heist(w);
        let t0 = Instant::now();
        let mut acc = 0u64;
        while t0.elapsed() < dur {
            acc = acc.wrapping_add(fib(f, 25));
        }
        acc
    });
    std::hint::black_box(total);
}

/// CPU time of the process while the calling thread sleeps `window`, in % of one core.
fn idle_cpu(src: CpuSource, window: Duration) -> Result<f64, String> {
    let (c0, t0) = (src.read()?, Instant::now());
    std::thread::sleep(window);
    let (c1, wall) = (src.read()?, t0.elapsed());
    Ok(100.0 * c1.saturating_sub(c0).as_secs_f64() / wall.as_secs_f64())
}

/// `n` submit-to-start latencies in µs, each after a pause of `gap`.
fn wake_samples(pool: &heist::Pool, n: usize, gap: Duration) -> Vec<f64> {
    (0..n)
        .map(|_| {
            std::thread::sleep(gap);
            let t0 = Instant::now();
            let d = pool.run(move |_| t0.elapsed());
            d.as_secs_f64() * 1e6
        })
        .collect()
}

/// The nearest-rank `p`-th percentile of sorted, non-empty `v`.
pub fn percentile(v: &[f64], p: f64) -> f64 {
    let rank = (p / 100.0 * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Where the process's CPU time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CpuSource {
    /// Per-thread nanosecond run times.
    SchedStat,
    /// Whole-process clock ticks.
    Stat,
}

impl CpuSource {
    /// `SchedStat` when the kernel keeps it (non-zero for this running process).
    fn detect() -> CpuSource {
        match schedstat_total() {
            Ok(d) if !d.is_zero() => CpuSource::SchedStat,
            _ => CpuSource::Stat,
        }
    }

    fn name(self) -> &'static str {
        match self {
            CpuSource::SchedStat => "schedstat",
            CpuSource::Stat => "stat",
        }
    }

    fn read(self) -> Result<Duration, String> {
        match self {
            CpuSource::SchedStat => schedstat_total(),
            CpuSource::Stat => stat_total(),
        }
    }
}

/// Sum of the first `schedstat` field (ns on a CPU) over the process's threads.
fn schedstat_total() -> Result<Duration, String> {
    let dir = std::fs::read_dir("/proc/self/task").map_err(|e| format!("/proc/self/task: {e}"))?;
    let mut ns = 0u64;
    for entry in dir.flatten() {
        // A thread may exit between listing and reading; it then simply does not count.
        if let Ok(s) = std::fs::read_to_string(entry.path().join("schedstat")) {
            ns += s
                .split_whitespace()
                .next()
                .and_then(|f| f.parse().ok())
                .unwrap_or(0);
        }
    }
    Ok(Duration::from_nanos(ns))
}

/// `utime + stime` of `/proc/self/stat` (fields 14 and 15), at 100 ticks per second.
fn stat_total() -> Result<Duration, String> {
    let s = std::fs::read_to_string("/proc/self/stat")
        .map_err(|e| format!("cannot read /proc/self/stat (idle needs Linux): {e}"))?;
    parse_stat_ticks(&s)
        .map(|t| Duration::from_millis(t * 10))
        .ok_or_else(|| "cannot parse /proc/self/stat".into())
}

/// `utime + stime` in ticks; fields are counted after the `)` that ends the command name.
fn parse_stat_ticks(s: &str) -> Option<u64> {
    let rest = &s[s.rfind(')')? + 1..];
    let mut f = rest.split_whitespace().skip(11); // field 3 is the first after `)`
    let utime: u64 = f.next()?.parse().ok()?;
    let stime: u64 = f.next()?.parse().ok()?;
    Some(utime + stime)
}

/// The human report.
pub fn render(r: &IdleReport) -> String {
    format!(
        "heist-{} with {} workers\n\
         idle CPU over {:.1} s after a burst: {:.2} % of one core ({})\n\
         wake-up latency over {} samples: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs\n",
        r.scheduler,
        r.workers,
        r.idle_window_s,
        r.idle_cpu_percent,
        r.cpu_source,
        r.samples,
        r.wake_p50_us,
        r.wake_p99_us,
        r.wake_max_us
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let v: Vec<f64> = (1..=200).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 100.0);
        assert_eq!(percentile(&v, 99.0), 198.0);
        assert_eq!(percentile(&v, 100.0), 200.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert_eq!(percentile(&[1.0, 2.0], 0.0), 1.0);
    }

    #[test]
    fn stat_fields() {
        let s = "42 (a b) c) S 1 2 3 4 5 6 7 8 9 10 17 5 0 0 20 0 1";
        assert_eq!(parse_stat_ticks(s), Some(22));
        assert_eq!(parse_stat_ticks("garbage"), None);
    }

    #[test]
    fn cpu_time_is_readable() {
        let src = CpuSource::detect();
        assert!(src.read().is_ok());
    }

    #[test]
    fn measures_quickly() {
        let mut o = IdleOptions::new(2, heist::Scheduler::Lace);
        o.burst = Duration::from_millis(20);
        o.window = Duration::from_millis(50);
        o.samples = 5;
        o.gap = Duration::from_millis(1);
        let r = measure(&o).unwrap();
        assert_eq!((r.samples, r.workers, r.scheduler.as_str()), (5, 2, "lace"));
        assert!(r.wake_p50_us <= r.wake_p99_us && r.wake_p99_us <= r.wake_max_us);
        assert!(render(&r).contains("p99"));
    }
}
