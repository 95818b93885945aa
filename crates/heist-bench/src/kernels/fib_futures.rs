//! fib-futures: fib(n) with a promise (the thesis's future) for `n-1` and `n-2` computed
//! inline (issue "futures at join's cost"; Prell's thesis §4.3–4.4, its futures on the
//! finest-grained recursion).
//!
//! Promises are heist's own construct ([`heist::Worker::promises`]), so the kernel runs on
//! `seq` (plain recursion, the elision) and the two heist schedulers; compare it with the
//! `fib` kernel (join) at the same size. The result is checked against an iterative
//! Fibonacci.

use super::fib::{fib, fib_iterative};
use crate::bench::{Bench, Instance, Sizes};
use crate::fork::SEQ;
use crate::runtime::{Runtime, RuntimeKind};
use crate::spawn;
use std::hint::black_box;

/// The fib-futures kernel of the catalogue.
pub struct FibFutures;

impl Bench for FibFutures {
    fn name(&self) -> &'static str {
        "fib-futures"
    }

    fn about(&self) -> &'static str {
        "fib(n) with a promise for n-1, no cut-off (promises' overhead)"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "20",
            small: "30",
            quick: "32",
            full: "36",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        spawn::heist_only(kind)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        FibRun::boxed(self.name(), size, run)
    }
}

/// Parses `n` for the fib variants (0..=93, where fib(n) fits a `u64`).
pub(super) fn parse_n(kernel: &str, size: &str) -> Result<u32, String> {
    Ok(crate::bench::count(kernel, size, "n", 0, 93)? as u32)
}

/// fib(n), the `n-1` call spawned as a promise, written as `Worker::promises` recommends
/// (a `move` closure, the scope's own worker).
pub fn fib_futures(w: &heist::Worker, n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    w.promises(move |s| {
        let a = s.spawn(move |w| fib_futures(w, n - 1));
        let b = fib_futures(s.worker(), n - 2);
        a.join() + b
    })
}

fn run(rt: &Runtime, n: u32) -> u64 {
    match (rt.kind(), rt.heist_pool()) {
        (RuntimeKind::Seq, _) => fib(SEQ, n),
        (_, Some(pool)) => pool.run(|w| fib_futures(w, n)),
        (kind, None) => panic!("fib-futures: heist's promises do not exist on {kind}"),
    }
}

/// One run of a fib variant (this one and [`super::fib_install`]): the argument, the
/// expected answer, the last result, and how the variant runs on a runtime.
pub(super) struct FibRun {
    name: &'static str,
    n: u32,
    expected: u64,
    result: Option<u64>,
    run: fn(&Runtime, u32) -> u64,
}

impl FibRun {
    pub(super) fn boxed(
        name: &'static str,
        size: &str,
        run: fn(&Runtime, u32) -> u64,
    ) -> Result<Box<dyn Instance>, String> {
        let n = parse_n(name, size)?;
        Ok(Box::new(FibRun {
            name,
            n,
            expected: fib_iterative(n),
            result: None,
            run,
        }))
    }
}

impl Instance for FibRun {
    fn reset(&mut self) {
        self.result = None;
    }

    fn run(&mut self, rt: &Runtime) {
        self.result = Some((self.run)(rt, black_box(self.n)));
    }

    fn verify(&self) -> Result<(), String> {
        match self.result {
            None => Err(format!("{}: not run", self.name)),
            Some(r) if r == self.expected => Ok(()),
            Some(r) => Err(format!(
                "{}({}) = {r}, expected {}",
                self.name, self.n, self.expected
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::fib_install::FibInstall;

    #[test]
    fn runtimes_agree_and_a_wrong_result_fails() {
        let all: [&dyn Bench; 2] = [&FibFutures, &FibInstall];
        for b in all {
            for kind in RuntimeKind::ALL.into_iter().filter(|&k| b.supports(k)) {
                let rt = Runtime::new(kind, 2).unwrap();
                let mut inst = b.instance("18").unwrap();
                assert!(inst.verify().is_err(), "not run yet");
                inst.run(&rt);
                assert_eq!(inst.verify(), Ok(()), "{} on {kind}", b.name());
            }
        }
        let mut inst = FibRun {
            name: "t",
            n: 10,
            expected: 56,
            result: None,
            run,
        };
        inst.run(&Runtime::new(RuntimeKind::Seq, 1).unwrap());
        assert!(inst.verify().is_err());
        assert!(!FibFutures.supports(RuntimeKind::Rayon));
        assert!(!FibInstall.supports(RuntimeKind::Chili));
    }
}
