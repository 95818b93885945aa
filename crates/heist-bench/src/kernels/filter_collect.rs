//! filter-collect: `filter(..).collect::<Vec<_>>()` over a range, about half kept
//! (BENCHMARKS.md). The result is checked item by item, in order, against the
//! sequential one (by an order-sensitive checksum and the length).

use super::par_loop::{self, equal, mix, orx, par_versions, LoopInstance};
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};

/// The filter-collect kernel of the catalogue.
pub struct FilterCollect;

impl Bench for FilterCollect {
    fn name(&self) -> &'static str {
        "filter-collect"
    }
    fn about(&self) -> &'static str {
        "filter(..).collect::<Vec<_>>() over a range, about half kept"
    }
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "10^5",
            small: "5e6",
            quick: "5e7",
            full: "5e7",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size("filter-collect", size)?;
        Ok(Box::new(LoopInstance::new(
            "filter-collect",
            n,
            seq,
            run,
            equal,
        )))
    }
}

fn keep(x: &u64) -> bool {
    mix(*x) & 1 == 0
}

/// Length and an order-sensitive checksum of the collected items.
fn digest(v: Vec<u64>) -> (usize, u64) {
    let sum = v.iter().fold(0u64, |h, &x| h.rotate_left(7) ^ x);
    (v.len(), sum)
}

fn seq(&n: &u64) -> (usize, u64) {
    digest((0..n).filter(keep).collect())
}

par_versions!(par, |n: u64| -> Vec<u64> {
    range(0, n).filter(keep).collect()
});

fn run(rt: &Runtime, &n: &u64) -> (usize, u64) {
    digest(par_loop::on_all(
        rt,
        || (0..n).filter(keep).collect(),
        || par::heist(n),
        || par::rayon(n),
        orx!(|t| {
            use orx_parallel::*;
            (0..n as usize)
                .into_par()
                .num_threads(t)
                .map(|i| i as u64)
                .filter(keep)
                .collect()
        }),
    ))
}
