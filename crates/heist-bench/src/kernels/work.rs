//! Calibrated busy work: "spin for t µs of CPU work", the leaf work of treerec and the
//! task body of the load-balancing stress kernels (BENCHMARKS.md: "t µs of work is a
//! calibrated busy loop, not a sleep"; Prell's thesis §2.8, SPC, BPC and Treerec).
//!
//! The loop is calibrated once per process (the first call of [`iters_per_micro`]): it
//! is timed several times and the fastest trial sets the rate, so that a loaded machine
//! during calibration does not inflate later spins. Every iteration passes its state
//! through [`std::hint::black_box`], so the loop can be neither vectorised nor folded
//! into a closed form.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Instant;

/// Iterations of the calibration trial (about 0.1–0.5 ms on current machines).
const TRIAL_ITERS: u64 = 200_000;
/// Trials of the calibration; the fastest counts.
const TRIALS: usize = 15;

static ITERS_PER_MICRO: OnceLock<f64> = OnceLock::new();

/// Runs `iters` iterations of the busy loop and returns a value that depends on all of
/// them (pass it to `black_box` or fold it into a result).
#[inline(never)]
pub fn spin_iters(iters: u64) -> u64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15_u64);
    for i in 0..iters {
        x = black_box(x.rotate_left(5) ^ i);
    }
    x
}

/// How many iterations of [`spin_iters`] take one microsecond of CPU time on this
/// machine; measured on the first call, then cached for the process.
pub fn iters_per_micro() -> f64 {
    *ITERS_PER_MICRO.get_or_init(calibrate)
}

/// Times the loop `TRIALS` times and converts the fastest trial to iterations per µs.
fn calibrate() -> f64 {
    black_box(spin_iters(TRIAL_ITERS)); // warm up caches and the clock
    let best = (0..TRIALS)
        .map(|_| {
            let start = Instant::now();
            black_box(spin_iters(black_box(TRIAL_ITERS)));
            start.elapsed()
        })
        .min()
        .expect("at least one trial");
    let micros = (best.as_secs_f64() * 1e6).max(1e-3);
    TRIAL_ITERS as f64 / micros
}

/// Spins for about `micros` microseconds of CPU work (not a sleep) and returns the loop's
/// value, which the caller should use so that the work stays observable.
#[inline]
pub fn spin(micros: f64) -> u64 {
    let iters = (micros.max(0.0) * iters_per_micro()).round() as u64;
    spin_iters(iters)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn calibration_is_positive_and_stable() {
        let rate = iters_per_micro();
        assert!(rate.is_finite() && rate > 0.0, "rate {rate}");
        assert_eq!(rate, iters_per_micro(), "calibrated once");
    }

    #[test]
    fn spin_takes_at_least_roughly_the_asked_time() {
        iters_per_micro();
        let start = Instant::now();
        black_box(spin(2000.0));
        // The calibration takes the fastest trial, so a spin is never much shorter than
        // asked; it may be longer on a loaded machine, which is not checked here.
        assert!(
            start.elapsed() >= Duration::from_micros(1000),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn spin_depends_on_iteration_count() {
        assert_ne!(spin_iters(10), spin_iters(11));
    }
}
