//! treerec-futures: [`super::treerec`] written with promises (the thesis's futures), as the
//! thesis writes it
//! (BENCHMARKS.md "Fork-join, recursive"; Prell's thesis §2.8 Treerec, and §4.3–4.4 / Ch. 6,
//! where "a future for n−1, n−2 computed inline" is the Treerec of every comparison).
//!
//! A task `n ≥ 2` spawns `n-1` as a promise with [`heist::Worker::promises`], computes
//! `n-2` itself, then joins the promise; a leaf spins for `t` µs and counts 1. The
//! elision, direct calls of `n-1` then `n-2`, is exactly [`super::treerec::treerec`] on
//! [`SEQ`]. Promises are heist's own construct, so the kernel runs on `seq`, `heist-lace`
//! and `heist-relay` only. The leaf count is checked against `fib(n+1)`.

use super::treerec::{self, leaves};
use super::work;
use crate::bench::{verify_eq, Bench, Instance, Sizes};
use crate::fork::SEQ;
use crate::runtime::{Runtime, RuntimeKind};
use crate::spawn::{self, exec_heist_only};
use std::hint::black_box;

/// The treerec-futures kernel of the catalogue.
pub struct TreeRecFutures;

impl Bench for TreeRecFutures {
    fn name(&self) -> &'static str {
        "treerec-futures"
    }

    fn about(&self) -> &'static str {
        "treerec with a future for n-1 and n-2 inline (size \"n,t\")"
    }

    fn sizes(&self) -> Sizes {
        treerec::TreeRec.sizes()
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        spawn::heist_only(kind)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let (n, t) = treerec::parse_size(size)?;
        work::iters_per_micro(); // calibrate outside the timed run
        Ok(Box::new(TreeRecFuturesInstance {
            n,
            t,
            expected: leaves(n),
            result: None,
        }))
    }
}

/// Runs the tree of `n` with leaves of `t` µs on heist's promises and returns its number
/// of leaves.
pub fn treerec_futures(w: &heist::Worker, n: u32, t: f64) -> u64 {
    if n < 2 {
        black_box(work::spin(t));
        return 1;
    }
    w.promises(|s| {
        let a = s.spawn(move |w| treerec_futures(w, n - 1, t));
        let b = treerec_futures(w, n - 2, t);
        a.join() + b
    })
}

/// One run: the parameters, the exact leaf count and the last result.
struct TreeRecFuturesInstance {
    n: u32,
    t: f64,
    expected: u64,
    result: Option<u64>,
}

impl Instance for TreeRecFuturesInstance {
    fn reset(&mut self) {
        self.result = None;
    }

    fn run(&mut self, rt: &Runtime) {
        let (n, t) = (black_box(self.n), self.t);
        let r = exec_heist_only(
            rt,
            "treerec-futures",
            || treerec::treerec(SEQ, n, t),
            |w| treerec_futures(w, n, t),
        );
        self.result = Some(r);
    }

    fn verify(&self) -> Result<(), String> {
        let what = format!("treerec-futures({}) leaves", self.n);
        verify_eq("treerec-futures", what, self.result, self.expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check_catches;

    fn instance(size: &str) -> TreeRecFuturesInstance {
        let (n, t) = treerec::parse_size(size).unwrap();
        TreeRecFuturesInstance {
            n,
            t,
            expected: leaves(n),
            result: None,
        }
    }

    #[test]
    fn corrupted_result_fails_verify() {
        let mut inst = instance("12,0");
        let corrupt = |i: &mut TreeRecFuturesInstance| i.result = Some(i.expected + 1);
        check_catches(RuntimeKind::HeistLace, &mut inst, &[&corrupt]);
    }

    #[test]
    fn only_seq_and_heist() {
        let b = TreeRecFutures;
        let yes: Vec<_> = RuntimeKind::ALL
            .into_iter()
            .filter(|&k| b.supports(k))
            .collect();
        assert_eq!(
            yes,
            [
                RuntimeKind::Seq,
                RuntimeKind::HeistLace,
                RuntimeKind::HeistRelay
            ]
        );
    }

    #[test]
    #[should_panic(expected = "treerec-futures: heist-only constructs do not exist on rayon")]
    fn rayon_run_is_refused() {
        let rt = Runtime::new(RuntimeKind::Rayon, 1).unwrap();
        instance("4,0").run(&rt);
    }
}
