//! The thesis's loop-scheduling benchmarks (Embracing Explicit Communication in
//! Work-Stealing Runtime Systems, §5.4.1, Table 5.1), at this project's sizes
//! (BENCHMARKS.md): one parallel loop whose iterations spin for a calibrated time.
//!
//! - `loop-fg`: n × 1 µs; `loop-cg`: n × 10 ms;
//! - `loop-rg`: n iterations of 1 µs, 10 µs, 100 µs, 1 ms or 10 ms, drawn with shares
//!   5, 4, 3, 2 and 1 in 15 from a fixed-seed generator;
//! - `loop-ig`: iteration i spins 1 + 0.25·i µs; `loop-dg`: the same, reversed.

use super::par_loop::{self, equal, mix, orx, par_versions, LoopInstance};
use super::work::spin;
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};
use std::num::Wrapping;

/// The shapes of Table 5.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Fine-grained: 1 µs each.
    Fine,
    /// Coarse-grained: 10 ms each.
    Coarse,
    /// Random lengths from 1 µs to 10 ms.
    Random,
    /// Increasing: 1 + 0.25·i µs.
    Increasing,
    /// Decreasing: IG reversed.
    Decreasing,
}

/// One loop benchmark of the catalogue.
pub struct Loop(pub Shape);

impl Bench for Loop {
    fn name(&self) -> &'static str {
        match self.0 {
            Shape::Fine => "loop-fg",
            Shape::Coarse => "loop-cg",
            Shape::Random => "loop-rg",
            Shape::Increasing => "loop-ig",
            Shape::Decreasing => "loop-dg",
        }
    }
    fn about(&self) -> &'static str {
        match self.0 {
            Shape::Fine => "thesis loop FG: n iterations of 1 us",
            Shape::Coarse => "thesis loop CG: n iterations of 10 ms",
            Shape::Random => "thesis loop RG: n iterations of 1 us .. 10 ms, random",
            Shape::Increasing => "thesis loop IG: iteration i takes 1 + 0.25 i us",
            Shape::Decreasing => "thesis loop DG: IG reversed",
        }
    }
    fn sizes(&self) -> Sizes {
        let [test, small, quick] = match self.0 {
            Shape::Fine => ["1000", "5e4", "5e5"],
            Shape::Coarse => ["2", "8", "40"],
            Shape::Random => ["20", "100", "1000"],
            Shape::Increasing | Shape::Decreasing => ["100", "600", "2000"],
        };
        Sizes {
            test,
            small,
            quick,
            full: quick,
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true) || crate::peers::supports(kind, true)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size(self.name(), size)?;
        let input = (self.0, n);
        Ok(Box::new(LoopInstance::new(
            self.name(),
            input,
            seq,
            run,
            equal,
        )))
    }
}

/// Microseconds of iteration `i` of `n`.
fn micros(shape: Shape, i: u64, n: u64) -> f64 {
    match shape {
        Shape::Fine => 1.0,
        Shape::Coarse => 10_000.0,
        Shape::Random => match mix(i ^ 42) % 15 {
            0..=4 => 1.0,
            5..=8 => 10.0,
            9..=11 => 100.0,
            12..=13 => 1000.0,
            _ => 10_000.0,
        },
        Shape::Increasing => 1.0 + 0.25 * i as f64,
        Shape::Decreasing => 1.0 + 0.25 * (n - 1 - i) as f64,
    }
}

fn iteration(shape: Shape, i: u64, n: u64) -> Wrapping<u64> {
    Wrapping(spin(micros(shape, i, n)) ^ i)
}

fn seq(&(shape, n): &(Shape, u64)) -> Wrapping<u64> {
    (0..n).map(|i| iteration(shape, i, n)).sum()
}

par_versions!(par, |shape: Shape, n: u64| -> Wrapping<u64> {
    range(0, n).map(|i| iteration(shape, i, n)).sum()
});

fn run(rt: &Runtime, &(shape, n): &(Shape, u64)) -> Wrapping<u64> {
    if let Some(p) = rt.peer() {
        return Wrapping(p.sum(n, &|i| iteration(shape, i, n).0));
    }
    par_loop::on_all(
        rt,
        || seq(&(shape, n)),
        || par::heist(shape, n),
        || par::rayon(shape, n),
        orx!(|t| par_loop::orx_range_sum(n, t, |i| iteration(shape, i, n))),
    )
}
