//! exponential: element i costs 2^(i/100) ns of calibrated work, N = 2100 (BENCHMARKS.md;
//! On Lock-Free Work-stealing Iterators for Parallel Data Structures, Fig. 13B). The
//! last hundred elements cost as much as all before them, so the loop must still be
//! cut finely near its end.

use super::par_loop::{self, equal, orx, par_versions, LoopInstance};
use super::work::spin;
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};
use std::num::Wrapping;

/// The exponential kernel of the catalogue.
pub struct Exponential;

impl Bench for Exponential {
    fn name(&self) -> &'static str {
        "exponential"
    }
    fn about(&self) -> &'static str {
        "element i costs 2^(i/100) ns"
    }
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "1200",
            small: "1800",
            quick: "2100",
            full: "2300",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true) || crate::peers::supports(kind, true)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size("exponential", size)?;
        if n > 3000 {
            return Err(format!(
                "exponential: N = {n} would take hours (at most 3000)"
            ));
        }
        Ok(Box::new(LoopInstance::new(
            "exponential",
            n,
            seq,
            run,
            equal,
        )))
    }
}

fn element(i: u64) -> Wrapping<u64> {
    let nanos = (i as f64 / 100.0).exp2();
    Wrapping(spin(nanos / 1000.0) ^ i)
}

fn seq(&n: &u64) -> Wrapping<u64> {
    (0..n).map(element).sum()
}

par_versions!(par, |n: u64| -> Wrapping<u64> {
    range(0, n).map(element).sum()
});

fn run(rt: &Runtime, &n: &u64) -> Wrapping<u64> {
    if let Some(p) = rt.peer() {
        return Wrapping(p.sum(n, &|i| element(i).0));
    }
    par_loop::on_all(
        rt,
        || seq(&n),
        || par::heist(n),
        || par::rayon(n),
        orx!(|t| { par_loop::orx_range_sum(n, t, element) }),
    )
}
