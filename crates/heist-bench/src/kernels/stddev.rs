//! stddev: the standard deviation of a `Vec<f64>`, as two parallel loops (the mean, then
//! the sum of squared deviations; BENCHMARKS.md; On Lock-Free Work-stealing Iterators
//! for Parallel Data Structures, Fig. 14).

use super::par_loop::{self, close, mix, orx, par_versions, LoopInstance};
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};

/// The stddev kernel of the catalogue.
pub struct StdDev;

impl Bench for StdDev {
    fn name(&self) -> &'static str {
        "stddev"
    }
    fn about(&self) -> &'static str {
        "standard deviation of a Vec<f64>: mean, then sum of squared deviations"
    }
    fn sizes(&self) -> Sizes {
        super::array_fold::ArrayFold.sizes()
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size("stddev", size)?;
        if n == 0 {
            return Err("stddev: needs at least one value".into());
        }
        let v: Vec<f64> = (0..n).map(|i| (mix(i) % 10_000) as f64 * 0.01).collect();
        Ok(Box::new(LoopInstance::new("stddev", v, seq, run, close)))
    }
}

// `LoopInstance` passes its input as `&I`, here `&Vec<f64>`.
#[allow(clippy::ptr_arg)]
fn seq(v: &Vec<f64>) -> f64 {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / v.len() as f64;
    var.sqrt()
}

par_versions!(par, |v: &[f64]| -> f64 {
    let mean = capped(v.par_iter()).sum::<f64>() / v.len() as f64;
    let var = capped(v.par_iter())
        .map(|x| (x - mean) * (x - mean))
        .sum::<f64>()
        / v.len() as f64;
    var.sqrt()
});

#[allow(clippy::ptr_arg)]
fn run(rt: &Runtime, v: &Vec<f64>) -> f64 {
    par::on_all(rt, v, || seq(v), orx!(|t| orx_version(v, t)))
}

#[cfg(feature = "orx")]
fn orx_version(v: &[f64], t: usize) -> f64 {
    use orx_parallel::*;
    let mean = v.par().num_threads(t).copied().sum::<f64>() / v.len() as f64;
    let var = v
        .par()
        .num_threads(t)
        .map(|x| (x - mean) * (x - mean))
        .sum::<f64>()
        / v.len() as f64;
    var.sqrt()
}
