//! fib: the n-th Fibonacci number by binary recursion with no cut-off, so that nearly all
//! of the time is fork-join overhead (BENCHMARKS.md "Fork-join, recursive"; the Lace paper §6
//! `fib`, Prell's thesis ch. 6).
//!
//! Every call with `n ≥ 2` joins `fib(n-1)` and `fib(n-2)`; with [`crate::fork::SEQ`] this
//! is the plain recursive function. The result is checked against an iterative Fibonacci.

use crate::bench::{count, verify_eq, Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::runtime::{Runtime, RuntimeKind, Task};
use std::hint::black_box;

/// Largest `n` whose Fibonacci number fits a `u64`.
const MAX_N: u32 = 93;

/// The fib kernel of the catalogue.
pub struct Fib;

impl Bench for Fib {
    fn name(&self) -> &'static str {
        "fib"
    }

    fn about(&self) -> &'static str {
        "fib(n) by binary recursion, no cut-off (pure fork-join overhead)"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "20",
            small: "32",
            quick: "36",
            full: "40",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        !kind.opt_in() || crate::peers::supports(kind, false)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        Ok(Box::new(FibInstance::new(parse_n(size)?)))
    }
}

/// Parses `n` (0..=93).
fn parse_n(size: &str) -> Result<u32, String> {
    Ok(count("fib", size, "n", 0, MAX_N.into())? as u32)
}

/// fib(n) by binary recursion, both calls joined through `f`.
pub fn fib<F: Fork>(f: F, n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = f.join(move |f| fib(f, n - 1), move |f| fib(f, n - 2));
    a + b
}

/// fib(n) by iteration: the reference answer.
pub fn fib_iterative(n: u32) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        // `b` runs one step ahead and may wrap at n = 93; `a` never does.
        (a, b) = (b, a.wrapping_add(b));
    }
    a
}

struct FibTask(u32);

impl Task for FibTask {
    type Output = u64;
    fn call<F: Fork>(self, f: F) -> u64 {
        fib(f, self.0)
    }
}

/// One fib run: the argument, the expected answer and the last result.
struct FibInstance {
    n: u32,
    expected: u64,
    result: Option<u64>,
}

impl FibInstance {
    fn new(n: u32) -> Self {
        FibInstance {
            n,
            expected: fib_iterative(n),
            result: None,
        }
    }
}

impl Instance for FibInstance {
    fn run(&mut self, rt: &Runtime) {
        let n = black_box(self.n);
        self.result = Some(match rt.peer() {
            Some(p) => p.fib(n),
            None => rt.exec(FibTask(n)),
        });
    }

    fn verify(&self) -> Result<(), String> {
        verify_eq(
            "fib",
            format!("fib({})", self.n),
            self.result,
            self.expected,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check_catches;

    #[test]
    fn reference_matches_known_values() {
        assert_eq!(fib_iterative(0), 0);
        assert_eq!(fib_iterative(1), 1);
        assert_eq!(fib_iterative(20), 6765);
        assert_eq!(fib_iterative(40), 102_334_155);
        assert_eq!(fib_iterative(93), 12_200_160_415_121_876_738);
    }

    #[test]
    fn corrupted_result_fails_verify() {
        let mut inst = FibInstance::new(20);
        check_catches(RuntimeKind::Seq, &mut inst, &[&|i| i.result = Some(6766)]);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_n("36"), Ok(36));
        assert!(parse_n("94").is_err());
        assert!(parse_n("x").is_err());
    }
}
