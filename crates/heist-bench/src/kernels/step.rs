//! step: a loop whose last 3 % of elements cost 100× the others, 20 ns against 2 µs of
//! calibrated work (BENCHMARKS.md; On Lock-Free Work-stealing Iterators for Parallel
//! Data Structures, Fig. 13A). A pre-split loop leaves the expensive tail to one worker.

use super::par_loop::{self, equal, orx, par_versions, LoopInstance};
use super::work::spin;
use crate::bench::{Bench, Instance, SizeClass};
use crate::runtime::{Runtime, RuntimeKind};
use std::num::Wrapping;

/// The step kernel of the catalogue.
pub struct Step;

impl Bench for Step {
    fn name(&self) -> &'static str {
        "step"
    }
    fn about(&self) -> &'static str {
        "loop whose last 3 % of elements cost 100x (20 ns / 2 us)"
    }
    fn size(&self, class: SizeClass) -> &'static str {
        match class {
            SizeClass::Test => "10^4",
            SizeClass::Quick => "5e6",
            SizeClass::Full => "5e6",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size("step", size)?;
        Ok(Box::new(LoopInstance::new("step", n, seq, run, equal)))
    }
}

/// Element `i` of `n`: 20 ns of work, or 2 µs in the last 3 %.
fn element(i: u64, n: u64) -> Wrapping<u64> {
    let micros = if i * 100 >= n * 97 { 2.0 } else { 0.02 };
    Wrapping(spin(micros) ^ i)
}

fn seq(&n: &u64) -> Wrapping<u64> {
    (0..n).map(|i| element(i, n)).sum()
}

par_versions!(par, |n: u64| -> Wrapping<u64> {
    range(0, n).map(|i| element(i, n)).sum()
});

fn run(rt: &Runtime, &n: &u64) -> Wrapping<u64> {
    par_loop::on_all(
        rt,
        || seq(&n),
        || par::heist(n),
        || par::rayon(n),
        orx!(|t| { par_loop::orx_range_sum(n, t, |i| element(i, n)) }),
    )
}
