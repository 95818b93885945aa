//! treerec: a Fibonacci-shaped task tree whose leaves each do `t` µs of busy work
//! (BENCHMARKS.md "Fork-join, recursive"; Prell's thesis §2.8 Treerec).
//!
//! A task `n ≥ 2` joins the tasks `n-1` and `n-2`; a leaf (`n < 2`) spins for `t` µs with
//! the calibrated loop of [`super::work`] and counts 1. The leaf work simulates a
//! sequential cut-off. The result, the number of leaves, is checked against the exact
//! count: `leaves(n) = fib(n+1)`, computed by iteration.

use super::work;
use crate::bench::{self, verify_eq, whole, Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::runtime::{Runtime, Task};
use std::hint::black_box;

/// Largest `n` accepted (the leaf count must fit a `u64`).
const MAX_N: u32 = 90;

/// The treerec kernel of the catalogue.
pub struct TreeRec;

impl Bench for TreeRec {
    fn name(&self) -> &'static str {
        "treerec"
    }

    fn about(&self) -> &'static str {
        "fib-shaped task tree, each leaf busy for t µs (size \"n,t\")"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "16,1",
            small: "22,1",
            quick: "24,1",
            full: "32,1",
        }
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let (n, t) = parse_size(size)?;
        Ok(Box::new(TreeRecInstance::new(n, t)))
    }
}

/// Parses `"n,t"`, also written `"n=24,t=1"` or `"n=24, t=1"`; a lone `"n"` means `t = 1`.
pub(super) fn parse_size(size: &str) -> Result<(u32, f64), String> {
    let [n, t] = bench::parse_size("treerec", size, [("n", None), ("t", Some(1.0))])?;
    Ok((whole("treerec", "n", n, 0, MAX_N.into())? as u32, t))
}

/// The number of leaves of the tree of `n`: fib(n+1), by iteration.
pub fn leaves(n: u32) -> u64 {
    let (mut a, mut b) = (1u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

/// Runs the tree of `n` with leaves of `t` µs and returns its number of leaves.
pub fn treerec<F: Fork>(f: F, n: u32, t: f64) -> u64 {
    if n < 2 {
        black_box(work::spin(t));
        return 1;
    }
    let (a, b) = f.join(move |f| treerec(f, n - 1, t), move |f| treerec(f, n - 2, t));
    a + b
}

struct TreeRecTask {
    n: u32,
    t: f64,
}

impl Task for TreeRecTask {
    type Output = u64;
    fn call<F: Fork>(self, f: F) -> u64 {
        treerec(f, self.n, self.t)
    }
}

/// One treerec run: the parameters, the exact leaf count and the last result.
struct TreeRecInstance {
    n: u32,
    t: f64,
    expected: u64,
    result: Option<u64>,
}

impl TreeRecInstance {
    fn new(n: u32, t: f64) -> Self {
        work::iters_per_micro(); // calibrate outside the timed run
        TreeRecInstance {
            n,
            t,
            expected: leaves(n),
            result: None,
        }
    }
}

impl Instance for TreeRecInstance {
    fn run(&mut self, rt: &Runtime) {
        let task = TreeRecTask {
            n: black_box(self.n),
            t: self.t,
        };
        self.result = Some(rt.exec(task));
    }

    fn verify(&self) -> Result<(), String> {
        let what = format!("treerec({}) leaves", self.n);
        verify_eq("treerec", what, self.result, self.expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check_catches;
    use crate::runtime::RuntimeKind;

    #[test]
    fn leaf_counts() {
        assert_eq!(leaves(0), 1);
        assert_eq!(leaves(1), 1);
        assert_eq!(leaves(2), 2);
        assert_eq!(leaves(16), 1597);
        assert_eq!(leaves(24), 75_025);
    }

    #[test]
    fn corrupted_result_fails_verify() {
        let mut inst = TreeRecInstance::new(10, 0.0);
        let corrupt = |i: &mut TreeRecInstance| i.result = Some(i.expected - 1);
        check_catches(RuntimeKind::Seq, &mut inst, &[&corrupt]);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("24,1"), Ok((24, 1.0)));
        assert_eq!(parse_size("n=32, t=10"), Ok((32, 10.0)));
        assert_eq!(parse_size("n=16,t=1"), Ok((16, 1.0)));
        assert_eq!(parse_size("20"), Ok((20, 1.0)));
        assert!(parse_size("24,1,2").is_err());
        assert!(parse_size("24,-1").is_err());
        assert!(parse_size("x,1").is_err());
    }
}
