//! fib-install: fib(n) through the free `join` of each runtime, as code ported from rayon
//! writes it (issue "the fast path is reachable from everywhere").
//!
//! On heist every call is `heist::join` inside `Pool::run`, which finds its worker through
//! a thread-local instead of receiving it; compare with the `fib` kernel, whose `w.join`
//! is handed the worker. On rayon it is `rayon::join` inside `install`, which is exactly
//! rayon's `fib`. chili has no free `join`. Checked against an iterative Fibonacci.

use super::fib::fib;
use super::fib_futures::FibRun;
use crate::bench::{Bench, Instance, Sizes};
use crate::fork::{Fork, SEQ};
use crate::runtime::{Runtime, RuntimeKind, Task};

/// The fib-install kernel of the catalogue.
pub struct FibInstall;

impl Bench for FibInstall {
    fn name(&self) -> &'static str {
        "fib-install"
    }

    fn about(&self) -> &'static str {
        "fib(n) through the free join (heist::join / rayon::join), no cut-off"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "20",
            small: "28",
            quick: "30",
            full: "36",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        kind != RuntimeKind::Chili && !kind.opt_in()
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        FibRun::boxed(self.name(), size, run)
    }
}

/// fib(n) with `heist::join`.
pub fn fib_heist_join(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = heist::join(move || fib_heist_join(n - 1), move || fib_heist_join(n - 2));
    a + b
}

/// rayon's fib: the `fib` kernel with rayon's context, whose join is `rayon::join`.
struct RayonFib(u32);

impl Task for RayonFib {
    type Output = u64;
    fn call<F: Fork>(self, f: F) -> u64 {
        fib(f, self.0)
    }
}

fn run(rt: &Runtime, n: u32) -> u64 {
    match (rt.kind(), rt.heist_pool()) {
        (RuntimeKind::Seq, _) => fib(SEQ, n),
        (_, Some(pool)) => pool.run(|_| fib_heist_join(n)),
        (RuntimeKind::Rayon, None) => rt.exec(RayonFib(n)),
        (kind, None) => panic!("fib-install: {kind} has no free join"),
    }
}
