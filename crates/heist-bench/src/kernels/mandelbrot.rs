//! mandelbrot: the escape count of every pixel of a w×w image, up to 1000 iterations
//! (BENCHMARKS.md; On Lock-Free Work-stealing Iterators for Parallel Data Structures,
//! Fig. 15). Pixels inside the set cost the full 1000 iterations, so the load is
//! irregular.

use super::par_loop::{self, equal, orx, par_versions, LoopInstance};
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};

/// The mandelbrot kernel of the catalogue.
pub struct Mandelbrot;

/// Iterations before a pixel counts as inside the set.
const MAX_ITERS: u32 = 1000;

impl Bench for Mandelbrot {
    fn name(&self) -> &'static str {
        "mandelbrot"
    }
    fn about(&self) -> &'static str {
        "escape counts of a w x w image, 1000 iterations, one loop over the pixels"
    }
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "64",
            small: "256",
            quick: "1024",
            full: "2048",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true) || crate::peers::supports(kind, true)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let w = par_loop::parse_size("mandelbrot", size)?;
        if w == 0 || w > 1 << 15 {
            return Err(format!("mandelbrot: width {w} out of 1..=32768"));
        }
        Ok(Box::new(LoopInstance::new(
            "mandelbrot",
            w,
            seq,
            run,
            equal,
        )))
    }
}

/// The escape count of pixel `p` of a `w`×`w` view of [-2, 0.5] × [-1.25, 1.25].
fn escape(p: u64, w: u64) -> u64 {
    let (x, y) = (p % w, p / w);
    let cr = -2.0 + 2.5 * x as f64 / w as f64;
    let ci = -1.25 + 2.5 * y as f64 / w as f64;
    let (mut zr, mut zi) = (0.0f64, 0.0f64);
    let mut k = 0;
    while k < MAX_ITERS && zr * zr + zi * zi <= 4.0 {
        (zr, zi) = (zr * zr - zi * zi + cr, 2.0 * zr * zi + ci);
        k += 1;
    }
    u64::from(k)
}

fn seq(&w: &u64) -> u64 {
    (0..w * w).map(|p| escape(p, w)).sum()
}

par_versions!(par, |w: u64| -> u64 {
    range(0, w * w).map(|p| escape(p, w)).sum()
});

fn run(rt: &Runtime, &w: &u64) -> u64 {
    if let Some(p) = rt.peer() {
        return p.sum(w * w, &|p| escape(p, w));
    }
    par_loop::on_all(
        rt,
        || seq(&w),
        || par::heist(w),
        || par::rayon(w),
        orx!(|t| {
            use orx_parallel::*;
            (0..(w * w) as usize)
                .into_par()
                .num_threads(t)
                .map(|p| escape(p as u64, w))
                .sum()
        }),
    )
}
