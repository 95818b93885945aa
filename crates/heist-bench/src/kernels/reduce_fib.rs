//! reduce-fib: fib(n) as a reduction over tasks (Blaze-Tasks §5.1): a task for `n`
//! pushes `n − 2` and goes on as `n − 1` until it reaches a leaf of value 1, and the
//! leaves' ones are summed (fib(n) tasks, as in Blaze's formulation). The `join` version is the catalogue's [`fib`](super::fib::fib). Checked
//! against the iterative Fibonacci.

use crate::bench::{Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::reduction::{self, Checked, Reduce};
use crate::runtime::RuntimeKind;
use std::hint::black_box;

/// The reduce-fib kernel of the catalogue.
pub struct ReduceFib;

impl Bench for ReduceFib {
    fn name(&self) -> &'static str {
        "reduce-fib"
    }

    fn about(&self) -> &'static str {
        "fib(n) as tasks that push n-2 and continue as n-1; leaves summed"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "20",
            small: "32",
            quick: "40",
            full: "40",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        reduction::supports(kind, true)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = crate::bench::count("reduce-fib", size, "n", 0, 90)? as u32;
        Ok(Checked::boxed(FibRun { n }, super::fib::fib_iterative(n)))
    }
}

struct FibRun {
    n: u32,
}

impl Reduce for FibRun {
    type Task = u32;
    type Out = u64;

    fn root(&self) -> u32 {
        black_box(self.n)
    }

    fn identity(&self) -> u64 {
        0
    }

    fn op(&self, a: u64, b: u64) -> u64 {
        a + b
    }

    /// Blaze's continuation loop: push `n − 2`, go on as `n − 1`, down to a leaf; no
    /// task of value 0 is made below the root (`fib(2) = fib(1)`).
    #[inline]
    fn expand(&self, mut n: u32, push: &mut impl FnMut(u32)) -> u64 {
        if n < 2 {
            return u64::from(n);
        }
        while n > 2 {
            push(n - 2);
            n -= 1;
        }
        1
    }

    fn join<F: Fork>(&self, f: F) -> u64 {
        super::fib::fib(f, black_box(self.n))
    }

    fn describe(&self) -> String {
        format!("reduce-fib({})", self.n)
    }

    fn on_peer(&self, p: &crate::peers::Peer) -> u64 {
        p.reduce_fib(black_box(self.n))
    }
}
