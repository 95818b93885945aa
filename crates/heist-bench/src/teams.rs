//! Team microbenchmarks ("Work-stealing for mixed-mode parallelism by deterministic
//! team-building", §3): how long a team of two takes to form, and how long its barrier
//! takes, on heist-lace and heist-relay.
//!
//! - `fresh/asleep`: the coordinator pauses `pause` before each request, long enough for
//!   the last team to have dissolved and the partner to have gone to sleep; the latency
//!   runs from the request to the moment the last member starts the body (so it includes
//!   waking the partner, its registration CAS and the fixing CAS);
//! - `persistent/awake`: requests back to back, so the team of the previous request
//!   persists and its member is spinning: the cost of reusing a team;
//! - `barrier`: a team of two passes `BARRIERS` barriers; one sample is their mean;
//! - `floor/wake-apart` (runtime `std`): the floor under `fresh/asleep` on this machine,
//!   two plain threads on two CPUs (each confined to its own), one asleep on a condvar,
//!   the other pausing `pause` as the coordinator does and then waking it; the latency
//!   runs to the moment the sleeper runs. A team's members must run on two CPUs at once,
//!   so a fresh formation with its partner asleep waits at least this long (the kernel's
//!   and, on a virtual machine, the hypervisor's wake-up of an idle CPU). Left out where
//!   fewer than two CPUs can be listed.
//!
//! Samples are sorted and reported as p50, p90 and p99 in µs. A fresh formation with a partner
//! that is awake but not in a team is not measured: on two workers an idle partner goes
//! to sleep within a fraction of a millisecond, so that state cannot be held.

use crate::idle::percentile;
use serde::Serialize;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Barriers per barrier sample.
const BARRIERS: usize = 1000;

/// One measured variant.
#[derive(Debug, Clone, Serialize)]
pub struct TeamRow {
    /// `heist-lace`, `heist-relay`, or `std` for the floor.
    pub runtime: String,
    /// `fresh/asleep`, `persistent/awake`, `barrier` or `floor/wake-apart`.
    pub variant: String,
    /// Median, µs.
    pub p50_us: f64,
    /// 90th percentile, µs.
    pub p90_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
}

/// Measures every variant on both schedulers with `workers` workers.
pub fn measure(workers: usize, samples: usize, pause: Duration) -> Result<Vec<TeamRow>, String> {
    if workers < 2 {
        return Err("teams: needs at least 2 workers".into());
    }
    let mut rows = Vec::new();
    if let Some(v) = wake_apart(samples, pause) {
        rows.push(summary("std", "floor/wake-apart", v));
    }
    for (name, s) in [
        ("heist-lace", heist::Scheduler::Lace),
        ("heist-relay", heist::Scheduler::Relay),
    ] {
        let pool = heist::Pool::builder()
            .workers(workers)
            .scheduler(s)
            .build()
            .map_err(|e| format!("{name}: {e}"))?;
        let mut row = |variant: &str, v: Vec<f64>| rows.push(summary(name, variant, v));
        let fresh = pool.run(|w| formations(w, samples, Some(pause)));
        row("fresh/asleep", fresh);
        let kept = pool.run(|w| formations(w, samples, None));
        row("persistent/awake", kept);
        let barrier = pool.run(|w| barriers(w, samples));
        row("barrier", barrier);
    }
    Ok(rows)
}

/// The row of `samples` (µs) of `variant` on `runtime`.
fn summary(runtime: &str, variant: &str, mut v: Vec<f64>) -> TeamRow {
    v.sort_by(f64::total_cmp);
    TeamRow {
        runtime: runtime.into(),
        variant: variant.into(),
        p50_us: percentile(&v, 50.0),
        p90_us: percentile(&v, 90.0),
        p99_us: percentile(&v, 99.0),
    }
}

/// `samples` latencies (µs) of a condvar wake-up of a thread asleep on another CPU, each
/// after the waker paused `pause`; `None` with fewer than two CPUs to confine them to.
fn wake_apart(samples: usize, pause: Duration) -> Option<Vec<f64>> {
    let cpus = crate::affinity::allowed_cpus();
    let (waker_cpu, sleeper_cpu) = (*cpus.first()?, *cpus.get(1)?);
    // The waker's instant of each wake-up, taken by the sleeper.
    let bell = Arc::new((Mutex::new(None::<Instant>), Condvar::new()));
    let (tx, rx) = mpsc::channel();
    let sleeper = {
        let bell = bell.clone();
        std::thread::spawn(move || {
            let confined = crate::affinity::confine_to(&[sleeper_cpu]);
            let (lock, cv) = &*bell;
            for _ in 0..=samples {
                let mut rung = lock.lock().unwrap();
                while rung.is_none() {
                    rung = cv.wait(rung).unwrap();
                }
                let t0 = rung.take().expect("rung");
                drop(rung);
                tx.send((confined, t0.elapsed())).unwrap();
            }
        })
    };
    let waker = std::thread::spawn(move || {
        let confined = crate::affinity::confine_to(&[waker_cpu]);
        let (lock, cv) = &*bell;
        let mut v = Vec::with_capacity(samples + 1);
        for _ in 0..=samples {
            std::thread::sleep(pause);
            *lock.lock().unwrap() = Some(Instant::now());
            cv.notify_one();
            let (apart, d) = rx.recv().expect("the sleeper answers");
            if !(confined && apart) {
                return None;
            }
            v.push(d.as_secs_f64() * 1e6);
        }
        Some(v.split_off(1))
    });
    let v = waker.join().expect("the waker does not panic");
    drop(sleeper.join());
    v
}

/// `samples` formation latencies of a team of two, in µs, each after `pause` if given.
fn formations(w: &heist::Worker, samples: usize, pause: Option<Duration>) -> Vec<f64> {
    (0..samples + 1)
        .map(|_| {
            if let Some(p) = pause {
                std::thread::sleep(p);
            }
            let t0 = Instant::now();
            let starts = w.team(2, |_| t0.elapsed());
            let last = starts.into_iter().max().expect("two members");
            last.as_secs_f64() * 1e6
        })
        .skip(1)
        .collect()
}

/// `samples` means of `BARRIERS` barriers of a team of two, in µs.
fn barriers(w: &heist::Worker, samples: usize) -> Vec<f64> {
    (0..samples + 1)
        .map(|_| {
            let times = w.team(2, |t| {
                t.barrier();
                let t0 = Instant::now();
                for _ in 0..BARRIERS {
                    t.barrier();
                }
                t0.elapsed()
            });
            times[0].as_secs_f64() * 1e6 / BARRIERS as f64
        })
        .skip(1)
        .collect()
}

/// The rows as a table.
pub fn render(rows: &[TeamRow]) -> String {
    let mut s = format!(
        "{:<12} {:<18} {:>9} {:>9} {:>9}\n",
        "runtime", "variant", "p50 µs", "p90 µs", "p99 µs"
    );
    for r in rows {
        s += &format!(
            "{:<12} {:<18} {:>9.2} {:>9.2} {:>9.2}\n",
            r.runtime, r.variant, r.p50_us, r.p90_us, r.p99_us
        );
    }
    s
}
