//! btree-fold: a fold over a std `BTreeMap` of n entries (BENCHMARKS.md). heist walks the
//! tree in place; rayon first copies every entry's references into a `Vec`. The body is
//! hash-fold's.

use super::hash_fold::entry;
use super::par_loop::{self, equal, mix, orx, par_versions, LoopInstance};
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};
use std::collections::BTreeMap;
use std::num::Wrapping;

/// The btree-fold kernel of the catalogue.
pub struct BTreeFold;

impl Bench for BTreeFold {
    fn name(&self) -> &'static str {
        "btree-fold"
    }
    fn about(&self) -> &'static str {
        "fold over a std BTreeMap in place (rayon copies it into a Vec first)"
    }
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "10^4",
            small: "10^6",
            quick: "10^7",
            full: "10^7",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, true)
            && !matches!(kind, RuntimeKind::RayonBest | RuntimeKind::HeistClaim)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size("btree-fold", size)?;
        let m: BTreeMap<u64, u64> = (0..n).map(|i| (mix(i), i)).collect();
        Ok(Box::new(LoopInstance::new(
            "btree-fold",
            m,
            seq,
            run,
            equal,
        )))
    }
}

fn seq(m: &BTreeMap<u64, u64>) -> Wrapping<u64> {
    m.iter().map(|(&k, &v)| entry(k, v)).sum()
}

par_versions!(par, |m: &BTreeMap<u64, u64>| -> Wrapping<u64> {
    m.par_iter().map(|(&k, &v)| entry(k, v)).sum()
});

/// orx has no parallel map: its generic path over any iterator (`iter_into_par`).
fn run(rt: &Runtime, m: &BTreeMap<u64, u64>) -> Wrapping<u64> {
    par_loop::on_all(
        rt,
        || seq(m),
        || par::heist(m),
        || par::rayon(m),
        orx!(|t| { par_loop::orx_iter_sum(m.iter(), t, |(&k, &v)| entry(k, v)) }),
    )
}
