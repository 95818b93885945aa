//! step: a loop whose last 3 % of elements cost 100× the others, 20 ns against 2 µs of
//! calibrated work (BENCHMARKS.md; On Lock-Free Work-stealing Iterators for Parallel
//! Data Structures, Fig. 13A). A pre-split loop leaves the expensive tail to one worker.

use super::par_loop::{self, equal, orx, par_versions, LoopInstance};
use super::work::{iters_per_micro, spin_iters};
use crate::bench::{Bench, Instance, Sizes};
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
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "10^4",
            small: "1e6",
            quick: "5e6",
            full: "5e6",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true) || crate::peers::supports(kind, true)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size("step", size)?;
        let iters = |micros: f64| (micros * iters_per_micro()).round() as u64;
        let s = Shape {
            n,
            cheap: iters(0.02),
            dear: iters(2.0),
        };
        Ok(Box::new(LoopInstance::new("step", s, seq, run, equal)))
    }
}

/// The loop's length and its two costs in spin iterations, fixed before the runs. An
/// element that converted its cost from microseconds itself (a load of the calibration
/// and a rounding, in a 20 ns element) ran 1–12 % slower on heist's worker thread than on
/// the main thread or rayon's worker, from run to run; with the counts fixed, every
/// runtime runs the elements at seq's speed on one worker.
#[derive(Clone, Copy)]
struct Shape {
    n: u64,
    cheap: u64,
    dear: u64,
}

/// Element `i`: 20 ns of work, or 2 µs in the last 3 %.
#[inline(always)]
fn element(i: u64, s: Shape) -> Wrapping<u64> {
    let iters = if i * 100 >= s.n * 97 { s.dear } else { s.cheap };
    Wrapping(spin_iters(iters) ^ i)
}

fn seq(&s: &Shape) -> Wrapping<u64> {
    (0..s.n).map(|i| element(i, s)).sum()
}

par_versions!(par, |s: Shape| -> Wrapping<u64> {
    range(0, s.n).map(|i| element(i, s)).sum()
});

/// [`spin_iters`] for the C++ peers, which compute `element`'s count themselves.
extern "C" fn spin_ffi(iters: u64) -> u64 {
    spin_iters(iters)
}

fn run(rt: &Runtime, &s: &Shape) -> Wrapping<u64> {
    if let Some(p) = rt.peer() {
        return Wrapping(p.step(s.n, s.cheap, s.dear, spin_ffi));
    }
    par_loop::on_all(
        rt,
        || seq(&s),
        || par::heist(s),
        || par::rayon(s),
        orx!(|t| { par_loop::orx_range_sum(s.n, t, |i| element(i, s)) }),
    )
}
