//! array-fold: the sum of a `Vec<f64>` (BENCHMARKS.md "Data-parallel loops"; On
//! Lock-Free Work-stealing Iterators for Parallel Data Structures, Fig. 12C). Memory
//! bound: two cores share one memory bus.

use super::par_loop::{self, close, mix, orx, par_versions, LoopInstance};
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};

/// The array-fold kernel of the catalogue.
pub struct ArrayFold;

impl Bench for ArrayFold {
    fn name(&self) -> &'static str {
        "array-fold"
    }
    fn about(&self) -> &'static str {
        "sum of a Vec<f64> (memory bound)"
    }
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "10^5",
            small: "10^7",
            quick: "10^8",
            full: "10^8",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size("array-fold", size)?;
        let v: Vec<f64> = (0..n).map(|i| (mix(i) % 1000) as f64 * 0.25).collect();
        Ok(Box::new(LoopInstance::new(
            "array-fold",
            v,
            seq,
            run,
            close,
        )))
    }
}

// `LoopInstance` passes its input as `&I`, here `&Vec<f64>`.
#[allow(clippy::ptr_arg)]
fn seq(v: &Vec<f64>) -> f64 {
    v.iter().sum()
}

par_versions!(par, |v: &[f64]| -> f64 { capped(v.par_iter()).sum() });

#[allow(clippy::ptr_arg)]
fn run(rt: &Runtime, v: &Vec<f64>) -> f64 {
    par::on_all(rt, v, || seq(v), orx!(|t| orx_version(v, t)))
}

#[cfg(feature = "orx")]
fn orx_version(v: &[f64], t: usize) -> f64 {
    use orx_parallel::*;
    v.par().num_threads(t).copied().sum()
}
