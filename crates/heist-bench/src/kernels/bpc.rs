//! bpc: Bouncing Producer-Consumer (BENCHMARKS.md "Load-balancing stress"; Prell's thesis §2.8
//! BPC, Table 2.1, after Dinan et al., and §3.6, where it shows why long tasks must poll).
//!
//! Each producer spawns the next producer (until there are `d` of them) and then `n`
//! consumers of `t` µs each. Because a worker runs its own newest task first, the
//! producer, spawned first, is what thieves find, so production "bounces" from worker
//! to worker and parallelism arrives in bursts of `n` tasks. It needs a spawn (heist's
//! and rayon's scopes, see [`crate::spawn`]); chili cannot express it. Consumers are
//! those of [`super::spc`] (polled busy work, then a [`Tally`] entry); producers count
//! too, so the tally is checked against the closed form for `d·(n+1)` tasks.
//!
//! The sequential elision calls each spawned task at once, so it recurses `d` producers
//! deep; `d` is capped at [`MAX_D`] to keep that within a main thread's stack (the
//! thesis's §3 runs with d = 100 000 would need a larger one).

use super::spc::consume;
use super::work;
use crate::bench::{self, verify, whole, Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};
use crate::spawn::{self, ScopeTask, Spawner, Tally};
use std::hint::black_box;

/// Largest depth accepted (the elision recurses this deep).
pub const MAX_D: u64 = 10_000;
/// Largest consumer count per producer accepted.
const MAX_N: u64 = 1 << 24;

/// The bpc kernel of the catalogue.
pub struct Bpc;

impl Bench for Bpc {
    fn name(&self) -> &'static str {
        "bpc"
    }

    fn about(&self) -> &'static str {
        "producers spawn a producer and n consumers of t µs, d deep (size \"d,n,t\")"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "50,9,1",
            small: "500,99,1",
            quick: "1000,99,1",
            full: "1000,999,10",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        spawn::supports_scope(kind)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let p = parse_size(size)?;
        Ok(Box::new(BpcInstance::new(p)))
    }
}

/// The parameters of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Params {
    /// Producers.
    d: u64,
    /// Consumers per producer.
    n: u64,
    /// µs per consumer.
    t: f64,
}

impl Params {
    /// Every task: `d` producers and `d·n` consumers.
    fn tasks(&self) -> u64 {
        self.d * (self.n + 1)
    }
}

/// Parses `"d,n,t"`, e.g. `"1000,99,1"` or `"d=1000, n=999, t=10"`.
fn parse_size(size: &str) -> Result<Params, String> {
    let [d, n, t] = bench::parse_size("bpc", size, [("d", None), ("n", None), ("t", None)])?;
    Ok(Params {
        d: whole("bpc", "d", d, 1, MAX_D)?,
        n: whole("bpc", "n", n, 0, MAX_N)?,
        t,
    })
}

/// Producer `k` (of `0..d`): spawns producer `k+1`, then its consumers, whose ids are
/// `k·n..(k+1)·n`; its own id is `d·n + k`.
fn producer<'a, S: Spawner<'a>>(s: &S, p: &'a Params, tally: &'a Tally, k: u64) {
    if k + 1 < p.d {
        s.spawn(move |s| producer(s, p, tally, k + 1));
    }
    for j in 0..p.n {
        let id = k * p.n + j;
        s.spawn(move |s| consume(s, p.t, id, tally));
    }
    tally.add(p.d * p.n + k);
}

struct BpcTask<'a> {
    p: &'a Params,
    tally: &'a Tally,
}

impl<'a> ScopeTask<'a> for BpcTask<'a> {
    type Output = ();
    fn call<S: Spawner<'a>>(self, s: &S) {
        producer(s, self.p, self.tally, 0);
    }
}

/// One bpc run: the parameters and the tally of the last run.
struct BpcInstance {
    p: Params,
    tally: Tally,
    ran: bool,
}

impl BpcInstance {
    fn new(p: Params) -> Self {
        work::iters_per_micro(); // calibrate outside the timed run
        BpcInstance {
            p,
            tally: Tally::new(),
            ran: false,
        }
    }
}

impl Instance for BpcInstance {
    fn reset(&mut self) {
        self.tally.set(0);
        self.ran = false;
    }

    fn run(&mut self, rt: &Runtime) {
        let p = black_box(&self.p);
        spawn::exec_scope(
            rt,
            BpcTask {
                p,
                tally: &self.tally,
            },
        );
        self.ran = true;
    }

    fn verify(&self) -> Result<(), String> {
        verify("bpc", self.ran.then_some(()), |()| {
            self.tally.check(self.p.tasks(), "bpc")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check_catches;

    #[test]
    fn corrupted_result_fails_verify() {
        let p = parse_size("20,9,0").unwrap();
        let mut inst = BpcInstance::new(p);
        let twice = |i: &mut BpcInstance| i.tally.add(0); // a consumer counted twice
                                                          // The last producer lost.
        let lost = |i: &mut BpcInstance| i.tally.set(Tally::expected(p.tasks() - 1));
        check_catches(RuntimeKind::Seq, &mut inst, &[&twice, &lost]);
    }

    #[test]
    fn elision_survives_the_deepest_chain() {
        // The elision recurses `MAX_D` producers deep (about 150 B a level optimised,
        // 450 B in a debug build): it must fit the 8 MiB main-thread stack the harness
        // runs it on.
        let h = std::thread::Builder::new().stack_size(8 << 20).spawn(|| {
            let rt = Runtime::new(RuntimeKind::Seq, 1).unwrap();
            let mut inst = BpcInstance::new(Params {
                d: MAX_D,
                n: 1,
                t: 0.0,
            });
            inst.run(&rt);
            inst.verify()
        });
        assert_eq!(h.unwrap().join().unwrap(), Ok(()));
    }

    #[test]
    fn sizes_parse() {
        let p = |d, n, t| Params { d, n, t };
        assert_eq!(parse_size("1000,99,1"), Ok(p(1000, 99, 1.0)));
        assert_eq!(parse_size("d=1000, n=999, t=10"), Ok(p(1000, 999, 10.0)));
        assert!(parse_size("0,9,1").is_err());
        assert!(parse_size("100000,9,1").is_err(), "deeper than MAX_D");
        assert!(parse_size("10,9").is_err());
        assert!(parse_size("10,x,1").is_err());
    }

    #[test]
    fn task_count() {
        assert_eq!(parse_size("1000,99,1").unwrap().tasks(), 100_000);
        assert_eq!(parse_size("1000,999,10").unwrap().tasks(), 1_000_000);
    }
}
