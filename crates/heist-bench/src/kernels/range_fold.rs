//! range-fold: the wrapping sum of a hash-mixed `i` over `0..n` (BENCHMARKS.md
//! "Data-parallel loops"; On Lock-Free Work-stealing Iterators for Parallel Data
//! Structures, Fig. 11B). Nearly all of the time is the loop itself, so this measures
//! the per-element cost of the parallel iterator against a plain loop.

use super::par_loop::{self, equal, mix, orx, par_versions, LoopInstance};
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};
use std::num::Wrapping;

/// The range-fold kernel of the catalogue.
pub struct RangeFold;

impl Bench for RangeFold {
    fn name(&self) -> &'static str {
        "range-fold"
    }
    fn about(&self) -> &'static str {
        "wrapping sum of a hash-mixed i over 0..n (per-element cost of a parallel loop)"
    }
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "10^5",
            small: "10^8",
            quick: "10^9",
            full: "4e9",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size("range-fold", size)?;
        Ok(Box::new(LoopInstance::new(
            "range-fold",
            n,
            seq,
            run,
            equal,
        )))
    }
}

fn seq(&n: &u64) -> Wrapping<u64> {
    (0..n).map(|i| Wrapping(mix(i))).sum()
}

par_versions!(par, |n: u64| -> Wrapping<u64> {
    range(0, n).map(|i| Wrapping(mix(i))).sum()
});

fn run(rt: &Runtime, &n: &u64) -> Wrapping<u64> {
    par_loop::on_all(
        rt,
        || seq(&n),
        || par::heist(n),
        || par::rayon(n),
        orx!(|t| par_loop::orx_range_sum(n, t, |i| Wrapping(mix(i)))),
    )
}
