//! The loops' clock: their pace ("Embracing Explicit Communication in Work-Stealing
//! Runtime Systems", §5.3; `par/engine/pace.rs`) reads it a few times per piece, so a
//! read's cost is part of every small loop's. `Instant::now` costs about 25 ns here; the
//! time-stamp counter about 10. Readings are nanoseconds from the clock's origin (the
//! first pool's build): the counter scaled by a factor measured against `Instant` over
//! the first [`CALIBRATION`] or more, where the counter is invariant (x86-64 with CPUID's
//! invariant-TSC bit); `Instant` elsewhere, and until then.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long, at least, the calibration watches both clocks: long enough that
/// `Instant`'s own read cost is a few parts in 10^4 of it.
const CALIBRATION: Duration = Duration::from_micros(200);

/// The process's clock once calibrated.
struct Clock {
    origin: Instant,
    /// The counter at `origin` and nanoseconds per tick as a 32.32 fixed-point factor;
    /// `None` without an invariant counter.
    tsc: Option<(u64, u64)>,
}

static CLOCK: OnceLock<Clock> = OnceLock::new();

/// The origin: an `Instant` and, where the counter is invariant, the counter with it.
static ORIGIN: OnceLock<(Instant, Option<u64>)> = OnceLock::new();

/// Fixes the clock's origin (the pool's build calls it). The calibration costs no one a
/// wait: the first reading at least `CALIBRATION` later takes the factor, and the
/// readings before it come from `Instant`.
pub(crate) fn start() {
    origin();
}

/// Nanoseconds since the clock's origin.
#[inline]
pub(crate) fn now_ns() -> u64 {
    match CLOCK.get() {
        Some(c) => c.read(),
        None => uncalibrated(),
    }
}

/// A duration in whole nanoseconds, saturated.
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Clock {
    #[inline]
    fn read(&self) -> u64 {
        match self.tsc {
            Some((t0, factor)) => {
                // Saturating: another core's counter may lag the origin's core's by a few
                // ticks, and a reading just after the origin must not wrap to the far
                // future.
                let ticks = u128::from(tsc::read().saturating_sub(t0));
                u64::try_from((ticks * u128::from(factor)) >> 32).unwrap_or(u64::MAX)
            }
            None => nanos(self.origin.elapsed()),
        }
    }
}

fn origin() -> (Instant, Option<u64>) {
    *ORIGIN.get_or_init(|| {
        if tsc::invariant() {
            let (at, t0) = pair();
            (at, Some(t0))
        } else {
            (Instant::now(), None)
        }
    })
}

/// A reading before the clock is calibrated, from `Instant`; the first one at least
/// `CALIBRATION` after the origin calibrates it with the counter read beside it.
#[cold]
#[inline(never)]
fn uncalibrated() -> u64 {
    let (origin, t0) = origin();
    let Some(t0) = t0 else {
        return CLOCK.get_or_init(|| Clock { origin, tsc: None }).read();
    };
    let (now, t1) = pair();
    let ns = nanos(now.duration_since(origin));
    if ns >= nanos(CALIBRATION) {
        let ticks = t1.saturating_sub(t0).max(1);
        let factor = u64::try_from((u128::from(ns) << 32) / u128::from(ticks)).unwrap_or(u64::MAX);
        // Another thread may have calibrated meanwhile: its factor serves as well.
        let _ = CLOCK.set(Clock {
            origin,
            tsc: Some((t0, factor)),
        });
    }
    ns
}

/// An `Instant` and a counter reading taken together: retried (a few times) while
/// something, a preemption or a trap to a hypervisor, came between them.
fn pair() -> (Instant, u64) {
    let mut best: Option<(Duration, Instant, u64)> = None;
    for _ in 0..8 {
        let before = Instant::now();
        let t = tsc::read();
        let gap = before.elapsed();
        if gap < Duration::from_micros(1) {
            return (before, t);
        }
        if best.is_none_or(|(g, ..)| gap < g) {
            best = Some((gap, before, t));
        }
    }
    let (_, before, t) = best.expect("eight tries");
    (before, t)
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod tsc {
    use std::arch::x86_64::{__cpuid, _rdtsc};

    /// Whether the counter ticks at a constant rate in every power state (CPUID leaf
    /// 0x8000_0007, EDX bit 8).
    pub(super) fn invariant() -> bool {
        // SAFETY: CPUID exists on every x86-64 processor; leaf 0x8000_0000 gives the
        // highest extended leaf, and 0x8000_0007 is read only if it is within it. (Newer
        // toolchains call `__cpuid` safe; the workspace's rust-version does not.)
        #[allow(unused_unsafe)]
        unsafe {
            __cpuid(0x8000_0000).eax >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
        }
    }

    #[inline(always)]
    pub(super) fn read() -> u64 {
        // SAFETY: RDTSC exists on every x86-64 processor and has no preconditions.
        unsafe { _rdtsc() }
    }
}

#[cfg(not(all(target_arch = "x86_64", not(miri))))]
mod tsc {
    pub(super) fn invariant() -> bool {
        false
    }

    pub(super) fn read() -> u64 {
        0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{nanos, now_ns};
    use std::time::{Duration, Instant};

    #[test]
    fn the_clock_keeps_pace_with_instant() {
        // Calibrated first, so that both reads below take the counter where there is one.
        now_ns();
        std::thread::sleep(super::CALIBRATION * 2);
        now_ns();
        let t0 = Instant::now();
        let a = now_ns();
        let t1 = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let t2 = Instant::now();
        let b = now_ns();
        let t3 = Instant::now();
        // Between what `Instant` saw inside and outside the two reads (however long a
        // preemption between reads was), give or take the calibration's error.
        let (least, most) = (nanos(t2 - t1), nanos(t3 - t0));
        let ours = b - a;
        assert!(
            ours >= least - least / 100 && ours <= most + most / 100,
            "{ours} ns, against Instant's {least} to {most}"
        );
    }
}
