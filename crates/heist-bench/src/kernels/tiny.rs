//! tiny: a sum of 2000 `f32` squares, called 10^4 times in a row on a worker of the
//! pool (BENCHMARKS.md). Each call is a loop of about 2 µs, so what counts is what a
//! loop costs to start and end. The variant `tiny-outside` makes each call from the
//! harness thread, outside the pool: on heist inside `Pool::enter` (the loop runs on the
//! pool's workers, as rayon's do; with `HEIST_BENCH_CALLER_HELPS=1` the pool is built
//! with `caller_helps` and the loop starts on the calling thread), on rayon through
//! `install` (rayon runs every loop on its pool), on orx from the calling thread.

use super::par_loop::{self, orx, par_versions, LoopInstance};
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};

/// The tiny kernel of the catalogue: calls on a worker (`outside: false`) or from the
/// harness thread (`outside: true`).
pub struct Tiny {
    /// Whether each call comes from outside the pool.
    pub outside: bool,
}

/// Items per call.
const LEN: usize = 2000;

impl Bench for Tiny {
    fn name(&self) -> &'static str {
        if self.outside {
            "tiny-outside"
        } else {
            "tiny"
        }
    }
    fn about(&self) -> &'static str {
        if self.outside {
            "sum of 2000 f32 squares, called n times from outside the pool"
        } else {
            "sum of 2000 f32 squares, called n times on a worker"
        }
    }
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "100",
            small: "10^3",
            quick: "10^4",
            full: "10^5",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let calls = par_loop::parse_size(self.name(), size)?;
        let v: Vec<f32> = (0..LEN).map(|i| (i % 17) as f32 * 0.5).collect();
        let run = if self.outside {
            run_outside
        } else {
            run_inside
        };
        Ok(Box::new(LoopInstance::new(
            self.name(),
            (v, calls),
            seq,
            run,
            same,
        )))
    }
}

/// Each call's sum is exact in `f32` (small multiples of 0.25), so every order agrees.
fn same(a: &f64, b: &f64) -> bool {
    a == b
}

fn squares(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum()
}

fn seq((v, calls): &(Vec<f32>, u64)) -> f64 {
    (0..*calls)
        .map(|_| f64::from(squares(std::hint::black_box(v))))
        .sum()
}

par_versions!(par, |v: &[f32]| -> f32 {
    capped(v.par_iter()).map(|x| x * x).sum()
});

#[cfg_attr(not(feature = "orx"), allow(unused_variables))]
fn orx_squares(v: &[f32], threads: usize) -> f32 {
    orx!(|threads| {
        use orx_parallel::*;
        v.par().num_threads(threads).map(|x| x * x).sum()
    })(threads)
}

/// All calls from a worker of the pool.
fn run_inside(rt: &Runtime, input: &(Vec<f32>, u64)) -> f64 {
    let (v, calls) = input;
    let many = |one: &dyn Fn(&[f32]) -> f32| -> f64 {
        (0..*calls)
            .map(|_| f64::from(one(std::hint::black_box(v))))
            .sum()
    };
    par_loop::on_all(
        rt,
        || seq(input),
        || many(&par::heist),
        || many(&par::rayon),
        |t| many(&|v| orx_squares(v, t)),
    )
}

/// Each call from the harness thread.
fn run_outside(rt: &Runtime, input: &(Vec<f32>, u64)) -> f64 {
    let (v, calls) = input;
    let each = || {
        (0..*calls)
            .map(|_| {
                let v = std::hint::black_box(v);
                f64::from(match rt.heist_pool() {
                    Some(_) => par::heist(v),
                    None => par_loop::on_all(
                        rt,
                        || squares(v),
                        || unreachable!("heist runs on the harness thread"),
                        || par::rayon(v),
                        |t| orx_squares(v, t),
                    ),
                })
            })
            .sum()
    };
    match rt.heist_pool() {
        Some(pool) => pool.enter(each),
        None => each(),
    }
}
