//! dot: the dot product of two `f64` vectors, as ranges that a task halves, pushing the
//! upper half, until a piece holds at most `GRAIN` pairs. The entries are small
//! integers, so every partial sum is exact and the result must equal the sequential
//! sum exactly, whatever the order of the additions.

use crate::bench::{Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::reduction::{self, Checked, Reduce};
use crate::runtime::RuntimeKind;

/// Pairs a task sums itself.
const GRAIN: usize = 8192;

/// The dot kernel of the catalogue.
pub struct Dot;

impl Bench for Dot {
    fn name(&self) -> &'static str {
        "dot"
    }

    fn about(&self) -> &'static str {
        "dot product of two f64 vectors, ranges pushed as tasks"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "100000",
            small: "2000000",
            quick: "10000000",
            full: "100000000",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        reduction::supports(kind, true)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        // Entries below 1024: products below 2^20, sums of up to 2^32 pairs stay exact.
        let n = crate::bench::count("dot", size, "pairs", 1, 1 << 32)? as usize;
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 54) as f64
        };
        let x: Vec<f64> = (0..n).map(|_| next()).collect();
        let y: Vec<f64> = (0..n).map(|_| next()).collect();
        let expected = dot(&x, &y);
        Ok(Checked::boxed(DotRun { x, y }, expected))
    }
}

fn dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

struct DotRun {
    x: Vec<f64>,
    y: Vec<f64>,
}

impl DotRun {
    fn range<F: Fork>(&self, f: F, lo: usize, hi: usize) -> f64 {
        if hi - lo <= GRAIN {
            return dot(&self.x[lo..hi], &self.y[lo..hi]);
        }
        let mid = lo + (hi - lo) / 2;
        let (a, b) = f.join(
            move |f| self.range(f, lo, mid),
            move |f| self.range(f, mid, hi),
        );
        a + b
    }
}

impl Reduce for DotRun {
    /// A range of pairs.
    type Task = (usize, usize);
    type Out = f64;

    fn root(&self) -> (usize, usize) {
        (0, self.x.len())
    }

    fn identity(&self) -> f64 {
        0.0
    }

    fn op(&self, a: f64, b: f64) -> f64 {
        a + b
    }

    fn expand(&self, (lo, mut hi): (usize, usize), push: &mut impl FnMut((usize, usize))) -> f64 {
        while hi - lo > GRAIN {
            let mid = lo + (hi - lo) / 2;
            push((mid, hi));
            hi = mid;
        }
        dot(&self.x[lo..hi], &self.y[lo..hi])
    }

    fn join<F: Fork>(&self, f: F) -> f64 {
        self.range(f, 0, self.x.len())
    }

    fn describe(&self) -> String {
        format!("dot of {} pairs", self.x.len())
    }

    fn on_peer(&self, p: &crate::peers::Peer) -> f64 {
        p.dot(&self.x, &self.y, GRAIN)
    }
}
