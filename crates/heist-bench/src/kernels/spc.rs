//! spc: Simple Producer-Consumer — one producer spawns `n` tasks of `t` µs each
//! (BENCHMARKS.md "Load-balancing stress"; seed 000 §2.8 SPC, Table 2.1, and §3.5, where
//! it measures how many consumers a single producer can keep busy).
//!
//! The root task is the producer: it spawns the consumers one at a time in a loop, so
//! the work is flat and every task but the few the producer runs itself must be stolen.
//! That needs a spawn (heist's and rayon's scopes, see [`crate::spawn`]); chili has only
//! `join` and cannot express it. A consumer spins for `t` µs with the calibrated loop of
//! [`super::work`], polling every [`POLL_US`] µs (which only heist's relay scheduler acts
//! on; the elision runs the same chunks), then adds its index to a [`Tally`], which is
//! compared with the closed form for tasks `0..n`.

use super::work;
use crate::bench::{Bench, Instance, SizeClass};
use crate::runtime::{Runtime, RuntimeKind};
use crate::spawn::{self, ScopeTask, Spawner, Tally};
use std::hint::black_box;

/// How often a consumer polls, in µs of its work (the thesis polls about every 1 µs).
pub const POLL_US: f64 = 1.0;

/// Largest task count accepted.
const MAX_N: u64 = 1 << 32;

/// The spc kernel of the catalogue.
pub struct Spc;

impl Bench for Spc {
    fn name(&self) -> &'static str {
        "spc"
    }

    fn about(&self) -> &'static str {
        "one producer spawns n tasks of t µs each (size \"n,t\")"
    }

    fn size(&self, class: SizeClass) -> &'static str {
        match class {
            SizeClass::Test => "1000,1",
            SizeClass::Quick => "100000,10",
            SizeClass::Full => "1000000,10",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        spawn::supports_scope(kind)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let (n, t) = parse_size(size)?;
        Ok(Box::new(SpcInstance::new(n, t)))
    }
}

/// Splits a size like `"d,n,t"` or `"d=1000, n=99, t=1"` into one number per name, in
/// order; every field must be given, the `name=` prefixes are optional.
pub(super) fn parse_fields(kernel: &str, size: &str, names: &[&str]) -> Result<Vec<f64>, String> {
    let example = names.join(",");
    let bad = || format!("{kernel}: size `{size}` is not \"{example}\"");
    let parts: Vec<&str> = size.split(',').map(str::trim).collect();
    if parts.len() != names.len() {
        return Err(bad());
    }
    parts
        .iter()
        .zip(names)
        .map(|(p, name)| {
            let v = p
                .strip_prefix(name)
                .and_then(|r| r.trim_start().strip_prefix('='));
            let v: f64 = v.unwrap_or(p).trim().parse().map_err(|_| bad())?;
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(bad())
            }
        })
        .collect()
}

/// A field that must be a whole number in `lo..=hi`.
pub(super) fn whole(kernel: &str, name: &str, v: f64, lo: u64, hi: u64) -> Result<u64, String> {
    if v.fract() == 0.0 && v >= lo as f64 && v <= hi as f64 {
        Ok(v as u64)
    } else {
        Err(format!(
            "{kernel}: {name} = {v} is not a whole number in {lo}..={hi}"
        ))
    }
}

/// Parses `"n,t"` (tasks, µs per task), e.g. `"100000,10"` or `"n=100000,t=10"`.
fn parse_size(size: &str) -> Result<(u64, f64), String> {
    let v = parse_fields("spc", size, &["n", "t"])?;
    Ok((whole("spc", "n", v[0], 0, MAX_N)?, v[1]))
}

/// One consumer: `t` µs of polled work, then its index into the tally.
#[inline]
pub(super) fn consume<'s, S: Spawner<'s>>(s: &S, t: f64, id: u64, tally: &Tally) {
    black_box(spawn::spin_polling(s, t, POLL_US));
    tally.add(id);
}

/// The producer: spawns consumers `0..n`, one at a time.
struct SpcTask<'a> {
    n: u64,
    t: f64,
    tally: &'a Tally,
}

impl<'a> ScopeTask<'a> for SpcTask<'a> {
    type Output = ();
    fn call<S: Spawner<'a>>(self, s: &S) {
        let SpcTask { n, t, tally } = self;
        for i in 0..n {
            s.spawn(move |s| consume(s, t, i, tally));
        }
    }
}

/// One spc run: the parameters and the tally of the last run.
struct SpcInstance {
    n: u64,
    t: f64,
    tally: Tally,
    ran: bool,
}

impl SpcInstance {
    fn new(n: u64, t: f64) -> Self {
        work::iters_per_micro(); // calibrate outside the timed run
        SpcInstance {
            n,
            t,
            tally: Tally::new(),
            ran: false,
        }
    }
}

impl Instance for SpcInstance {
    fn reset(&mut self) {
        self.tally.set(0);
        self.ran = false;
    }

    fn run(&mut self, rt: &Runtime) {
        let task = SpcTask {
            n: black_box(self.n),
            t: self.t,
            tally: &self.tally,
        };
        spawn::exec_scope(rt, task);
        self.ran = true;
    }

    fn verify(&self) -> Result<(), String> {
        if !self.ran {
            return Err("spc: not run".into());
        }
        self.tally.check(self.n, "spc")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupted_result_fails_verify() {
        let rt = Runtime::new(RuntimeKind::Seq, 1).unwrap();
        let mut inst = SpcInstance::new(100, 0.0);
        assert!(inst.verify().is_err(), "not run yet");
        inst.run(&rt);
        assert_eq!(inst.verify(), Ok(()));
        inst.tally.add(3); // one task counted twice
        assert!(inst.verify().is_err());
        inst.reset();
        inst.run(&rt);
        assert_eq!(inst.verify(), Ok(()));
        inst.tally.set(Tally::expected(99)); // the last task lost
        assert!(inst.verify().is_err());
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("100000,10"), Ok((100_000, 10.0)));
        assert_eq!(parse_size("n=1000000, t=1"), Ok((1_000_000, 1.0)));
        assert_eq!(parse_size("n = 5,t= 0.5"), Ok((5, 0.5)));
        assert!(parse_size("1000").is_err());
        assert!(parse_size("1000,1,1").is_err());
        assert!(parse_size("1.5,1").is_err());
        assert!(parse_size("10,-1").is_err());
        assert!(parse_size("t=1,n=10").is_err());
    }

    #[test]
    fn chili_is_not_supported() {
        assert!(!Spc.supports(RuntimeKind::Chili));
        assert!(Spc.supports(RuntimeKind::Rayon) && Spc.supports(RuntimeKind::HeistRelay));
    }
}
