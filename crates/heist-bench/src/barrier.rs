//! The task-barrier measurement (Prell's thesis §4.1–4.2, task barriers built on termination
//! detection, and Fig. 4.9, which compares them with a shared counter): how long after
//! the last detached task finishes does a barrier return?
//!
//! One sample spawns `k` detached tasks of about `t` µs of calibrated work each; every
//! task records when it finished (nanoseconds since the sample began, kept as the maximum
//! in an atomic), and the waiter records when its wait returned. The latency is the
//! return minus the last finish. The waits compared, each on heist-lace and heist-relay:
//!
//! - `heist-<s>`: [`heist::Pool::barrier`] from the measuring thread (not a worker, so it
//!   sleeps until the last task wakes it);
//! - `heist-<s>/worker`: [`heist::Worker::barrier`] inside [`heist::Pool::run`], the
//!   thesis's setting (the root task waits and works meanwhile), tasks spawned from there;
//! - `counter/heist-<s>`: a barrier written here: an atomic count of unfinished tasks,
//!   decremented at each task's end, which the measuring thread spins on (yielding after a
//!   while) until it is zero; the tasks are spawned as for `heist-<s>`.
//!
//! The variants of one pool are interleaved sample by sample; the two pools run one
//! after the other, so that one's idle workers do not disturb the other.

use crate::idle::percentile;
use crate::kernels::work;
use serde::Serialize;
use std::hint::black_box;
use std::sync::atomic::{
    AtomicU64, AtomicUsize, Ordering::AcqRel, Ordering::Acquire, Ordering::Release,
};
use std::sync::Arc;
use std::time::Instant;

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BarrierOptions {
    /// Worker threads of each pool.
    pub workers: usize,
    /// Timed samples per variant.
    pub samples: usize,
    /// Untimed samples per variant before them.
    pub warmup: usize,
    /// Detached tasks per sample.
    pub tasks: usize,
    /// µs of work per task.
    pub task_us: f64,
}

impl BarrierOptions {
    /// The defaults: 200 samples after 20 warm-up ones, `4 × workers` tasks of 50 µs.
    pub fn new(workers: usize) -> BarrierOptions {
        BarrierOptions {
            workers,
            samples: 200,
            warmup: 20,
            tasks: 4 * workers,
            task_us: 50.0,
        }
    }
}

/// One variant's latencies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BarrierResult {
    /// The variant: `heist-lace`, `heist-lace/worker`, `counter/heist-lace`, ...
    pub barrier: String,
    /// Median latency from the last task's end to the barrier's return, in µs.
    pub p50_us: f64,
    /// Its 99th percentile, in µs.
    pub p99_us: f64,
    /// The largest sample, in µs.
    pub max_us: f64,
    /// Timed samples.
    pub samples: usize,
}

/// The measurement; the JSON object of `barrier --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BarrierReport {
    /// Worker threads of each pool.
    pub workers: usize,
    /// Detached tasks per sample.
    pub tasks: usize,
    /// µs of work per task.
    pub task_us: f64,
    /// One entry per variant.
    pub results: Vec<BarrierResult>,
}

/// How a sample waits for its tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// `Pool::barrier` from the measuring thread.
    Pool,
    /// `Worker::barrier` in a root task, which also spawns the tasks.
    Worker,
    /// The counter barrier, from the measuring thread.
    Counter,
}

impl Wait {
    const ALL: [Wait; 3] = [Wait::Pool, Wait::Worker, Wait::Counter];

    fn name(self, pool: &str) -> String {
        match self {
            Wait::Pool => pool.to_string(),
            Wait::Worker => format!("{pool}/worker"),
            Wait::Counter => format!("counter/{pool}"),
        }
    }
}

/// What the tasks of one sample share with its waiter.
struct Clock {
    base: Instant,
    /// The latest finish, in ns since `base`.
    last: AtomicU64,
    /// Tasks not yet finished (the counter barrier).
    left: AtomicUsize,
}

impl Clock {
    fn since_base(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// One task: its work, then its finish time and its count.
fn task(c: &Clock, micros: f64) {
    black_box(work::spin(micros));
    c.last.fetch_max(c.since_base(), AcqRel);
    c.left.fetch_sub(1, Release);
}

/// Spins on `left` until it is zero, yielding after the first few thousand rounds.
fn counter_wait(left: &AtomicUsize) {
    let mut rounds = 0u32;
    while left.load(Acquire) != 0 {
        if rounds < 4096 {
            rounds += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// One sample with `wait`; the latency in µs, or an error if the wait returned while
/// tasks were still unfinished.
fn sample(pool: &heist::Pool, o: &BarrierOptions, wait: Wait) -> Result<f64, String> {
    let c = Arc::new(Clock {
        base: Instant::now(),
        last: AtomicU64::new(0),
        left: AtomicUsize::new(o.tasks),
    });
    let t = o.task_us;
    let returned = match wait {
        Wait::Pool | Wait::Counter => {
            for _ in 0..o.tasks {
                let c = Arc::clone(&c);
                pool.spawn_detached(move |_| task(&c, t));
            }
            if wait == Wait::Pool {
                pool.barrier();
            } else {
                counter_wait(&c.left);
            }
            let at = c.since_base();
            pool.barrier(); // untimed: the next sample starts with nothing in flight
            at
        }
        Wait::Worker => {
            let c2 = Arc::clone(&c);
            pool.run(move |w| {
                for _ in 0..o.tasks {
                    let c = Arc::clone(&c2);
                    w.spawn_detached(move |_| task(&c, t));
                }
                w.barrier();
                c2.since_base()
            })
        }
    };
    let left = c.left.load(Acquire);
    if left != 0 {
        return Err(format!(
            "barrier: {} returned with {left} of {} tasks unfinished",
            wait.name(&format!("{:?}", pool.scheduler()).to_lowercase()),
            o.tasks
        ));
    }
    Ok(returned.saturating_sub(c.last.load(Acquire)) as f64 / 1e3)
}

/// Measures every variant on heist-lace, then on heist-relay.
pub fn measure(o: &BarrierOptions) -> Result<BarrierReport, String> {
    if o.samples == 0 || o.tasks == 0 {
        return Err("barrier: at least one sample and one task are needed".into());
    }
    if !(o.task_us >= 0.0 && o.task_us.is_finite()) {
        return Err(format!("barrier: bad task length {} µs", o.task_us));
    }
    work::iters_per_micro(); // calibrate before the first sample
    let mut results = Vec::new();
    for (name, sched) in [
        ("heist-lace", heist::Scheduler::Lace),
        ("heist-relay", heist::Scheduler::Relay),
    ] {
        let pool = heist::Pool::builder()
            .workers(o.workers)
            .scheduler(sched)
            .build()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        let mut lat: Vec<Vec<f64>> = vec![Vec::with_capacity(o.samples); Wait::ALL.len()];
        for round in 0..o.warmup + o.samples {
            for (wait, l) in Wait::ALL.into_iter().zip(&mut lat) {
                let us = sample(&pool, o, wait)?;
                if round >= o.warmup {
                    l.push(us);
                }
            }
        }
        for (wait, mut l) in Wait::ALL.into_iter().zip(lat) {
            l.sort_by(f64::total_cmp);
            results.push(BarrierResult {
                barrier: wait.name(name),
                p50_us: percentile(&l, 50.0),
                p99_us: percentile(&l, 99.0),
                max_us: l[l.len() - 1],
                samples: l.len(),
            });
        }
    }
    Ok(BarrierReport {
        workers: o.workers,
        tasks: o.tasks,
        task_us: o.task_us,
        results,
    })
}

/// The human report: a heading and one row per variant.
pub fn render(r: &BarrierReport) -> String {
    let samples = r.results.first().map_or(0, |x| x.samples);
    let mut out = format!(
        "barrier latency, last task's end to the barrier's return \
         ({} workers, {} tasks of {} µs, {} samples)\n",
        r.workers, r.tasks, r.task_us, samples
    );
    let rows: Vec<Vec<String>> = r
        .results
        .iter()
        .map(|x| {
            vec![
                x.barrier.clone(),
                format!("{:.1}", x.p50_us),
                format!("{:.1}", x.p99_us),
                format!("{:.1}", x.max_us),
            ]
        })
        .collect();
    out += &crate::harness::render_table(&["barrier", "p50 µs", "p99 µs", "max µs"], &rows, 1);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::Relaxed;

    #[test]
    fn every_variant_waits_for_its_tasks() {
        let o = BarrierOptions {
            samples: 3,
            warmup: 1,
            tasks: 5,
            task_us: 2.0,
            ..BarrierOptions::new(2)
        };
        let r = measure(&o).unwrap();
        let names: Vec<&str> = r.results.iter().map(|x| x.barrier.as_str()).collect();
        assert_eq!(
            names,
            [
                "heist-lace",
                "heist-lace/worker",
                "counter/heist-lace",
                "heist-relay",
                "heist-relay/worker",
                "counter/heist-relay"
            ]
        );
        for x in &r.results {
            assert_eq!(x.samples, 3);
            assert!(x.p50_us <= x.p99_us && x.p99_us <= x.max_us, "{x:?}");
            assert!(x.p50_us >= 0.0);
        }
        assert!(render(&r).contains("counter/heist-relay"));
    }

    #[test]
    fn bad_options_are_refused() {
        let o = BarrierOptions::new(1);
        assert!(measure(&BarrierOptions { samples: 0, ..o }).is_err());
        assert!(measure(&BarrierOptions { tasks: 0, ..o }).is_err());
        assert!(measure(&BarrierOptions { task_us: -1.0, ..o }).is_err());
    }

    #[test]
    fn counter_wait_returns_at_zero() {
        let left = Arc::new(AtomicUsize::new(3));
        let l2 = Arc::clone(&left);
        let h = std::thread::spawn(move || {
            for _ in 0..3 {
                l2.fetch_sub(1, Release);
            }
        });
        counter_wait(&left);
        assert_eq!(left.load(Relaxed), 0);
        h.join().unwrap();
    }
}
