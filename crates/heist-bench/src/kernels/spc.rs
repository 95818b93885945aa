//! spc: Simple Producer-Consumer — one producer spawns `n` tasks of `t` µs each
//! (BENCHMARKS.md "Load-balancing stress"; Prell's thesis §2.8 SPC, Table 2.1, and §3.5, where
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
use crate::bench::{parse_size, verify, whole, Bench, Instance, Sizes};
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

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "1000,1",
            small: "10000,10",
            quick: "100000,10",
            full: "1000000,10",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        spawn::supports_scope(kind) || crate::peers::supports(kind, false)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let (n, t) = parse_spc(size)?;
        Ok(Box::new(SpcInstance::new(n, t)))
    }
}

/// Parses `"n,t"` (tasks, µs per task), e.g. `"100000,10"` or `"n=100000,t=10"`.
fn parse_spc(size: &str) -> Result<(u64, f64), String> {
    let [n, t] = parse_size("spc", size, [("n", None), ("t", None)])?;
    Ok((whole("spc", "n", n, 0, MAX_N)?, t))
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
        match rt.peer() {
            Some(p) => p.spawn_all(task.n, &|i| {
                consume(&spawn::SeqScope, task.t, i, task.tally);
                0
            }),
            None => spawn::exec_scope(rt, task),
        }
        self.ran = true;
    }

    fn verify(&self) -> Result<(), String> {
        verify("spc", self.ran.then_some(()), |()| {
            self.tally.check(self.n, "spc")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check_catches;

    #[test]
    fn corrupted_result_fails_verify() {
        let mut inst = SpcInstance::new(100, 0.0);
        let twice = |i: &mut SpcInstance| i.tally.add(3); // one task counted twice
        let lost = |i: &mut SpcInstance| i.tally.set(Tally::expected(99)); // the last task
        check_catches(RuntimeKind::Seq, &mut inst, &[&twice, &lost]);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_spc("100000,10"), Ok((100_000, 10.0)));
        assert_eq!(parse_spc("n=1000000, t=1"), Ok((1_000_000, 1.0)));
        assert_eq!(parse_spc("n = 5,t= 0.5"), Ok((5, 0.5)));
        assert!(parse_spc("1000").is_err());
        assert!(parse_spc("1000,1,1").is_err());
        assert!(parse_spc("1.5,1").is_err());
        assert!(parse_spc("10,-1").is_err());
        assert!(parse_spc("t=1,n=10").is_err());
    }

    #[test]
    fn chili_is_not_supported() {
        assert!(!Spc.supports(RuntimeKind::Chili));
        assert!(Spc.supports(RuntimeKind::Rayon) && Spc.supports(RuntimeKind::HeistRelay));
    }
}
