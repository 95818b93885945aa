//! hash-fold: a fold over a std `HashMap` of n entries (BENCHMARKS.md; On Lock-Free
//! Work-stealing Iterators for Parallel Data Structures, §4). heist walks the map in
//! place; rayon first copies every entry's references into a `Vec`. The body spins a
//! little per entry (a mix repeated `SPIN` times) so that the fold is not only memory
//! traffic.

use super::par_loop::{self, equal, mix, orx, par_versions, LoopInstance};
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};
use std::collections::HashMap;
use std::num::Wrapping;

/// The hash-fold kernel of the catalogue.
pub struct HashFold;

/// Rounds of the per-entry mix.
const SPIN: u64 = 4;

impl Bench for HashFold {
    fn name(&self) -> &'static str {
        "hash-fold"
    }
    fn about(&self) -> &'static str {
        "fold over a std HashMap in place (rayon copies it into a Vec first)"
    }
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "10^4",
            small: "2e6",
            quick: "2e7",
            full: "2e7",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true)
            && !matches!(kind, RuntimeKind::RayonBest | RuntimeKind::HeistClaim)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size("hash-fold", size)?;
        let m: HashMap<u64, u64> = (0..n).map(|i| (mix(i), i)).collect();
        Ok(Box::new(LoopInstance::new("hash-fold", m, seq, run, equal)))
    }
}

/// The value of one entry.
pub(crate) fn entry(k: u64, v: u64) -> Wrapping<u64> {
    let mut x = k ^ v;
    for _ in 0..SPIN {
        x = mix(x);
    }
    Wrapping(x)
}

fn seq(m: &HashMap<u64, u64>) -> Wrapping<u64> {
    m.iter().map(|(&k, &v)| entry(k, v)).sum()
}

par_versions!(par, |m: &HashMap<u64, u64>| -> Wrapping<u64> {
    m.par_iter().map(|(&k, &v)| entry(k, v)).sum()
});

/// orx has no parallel map: its generic path over any iterator (`iter_into_par`).
fn run(rt: &Runtime, m: &HashMap<u64, u64>) -> Wrapping<u64> {
    par_loop::on_all(
        rt,
        || seq(m),
        || par::heist(m),
        || par::rayon(m),
        orx!(|t| { par_loop::orx_iter_sum(m.iter(), t, |(&k, &v)| entry(k, v)) }),
    )
}
