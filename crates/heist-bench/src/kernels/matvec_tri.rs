//! matvec-tri: a lower-triangular n×n matrix times a vector, entries generated on the
//! fly, one parallel loop over the rows (BENCHMARKS.md; On Lock-Free Work-stealing
//! Iterators for Parallel Data Structures, Fig. 18). Row i costs i, so the loop is
//! triangular. Each row is summed in the same order everywhere, so results are exact.

use super::par_loop::{self, equal, mix, orx, par_versions, LoopInstance};
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};

/// The matvec-tri kernel of the catalogue.
pub struct MatvecTri;

impl Bench for MatvecTri {
    fn name(&self) -> &'static str {
        "matvec-tri"
    }
    fn about(&self) -> &'static str {
        "lower-triangular matrix x vector, entries generated (row i costs i)"
    }
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "300",
            small: "1e4",
            quick: "2e4",
            full: "4e4",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true) || crate::peers::supports(kind, true)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size("matvec-tri", size)?;
        let x: Vec<f64> = (0..n).map(|j| (mix(j) % 100) as f64 / 8.0).collect();
        Ok(Box::new(LoopInstance::new(
            "matvec-tri",
            x,
            seq,
            run,
            equal,
        )))
    }
}

/// Entry (i, j) of the matrix.
fn entry(i: u64, j: u64) -> f64 {
    (mix(i * 65_537 + j) % 16) as f64 - 7.5
}

/// Row `i` times `x`.
fn row(i: u64, x: &[f64]) -> f64 {
    x[..=i as usize]
        .iter()
        .zip(0..)
        .map(|(xj, j)| entry(i, j) * xj)
        .sum()
}

// `LoopInstance` passes its input as `&I`, here `&Vec<f64>`.
#[allow(clippy::ptr_arg)]
fn seq(x: &Vec<f64>) -> Vec<f64> {
    (0..x.len() as u64).map(|i| row(i, x)).collect()
}

par_versions!(par, |x: &[f64]| -> Vec<f64> {
    range(0, x.len() as u64).map(|i| row(i, x)).collect()
});

#[allow(clippy::ptr_arg)]
fn run(rt: &Runtime, x: &Vec<f64>) -> Vec<f64> {
    if let Some(p) = rt.peer() {
        let mut out = vec![0.0; x.len()];
        p.fill(&mut out, &|i| row(i, x));
        return out;
    }
    par_loop::on_all(
        rt,
        || seq(x),
        || par::heist(x),
        || par::rayon(x),
        orx!(|t| {
            use orx_parallel::*;
            (0..x.len())
                .into_par()
                .num_threads(t)
                .map(|i| row(i as u64, x))
                .collect()
        }),
    )
}
