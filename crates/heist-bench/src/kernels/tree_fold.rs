//! tree-fold: a fold over heist's balanced tree, a `TreeSet` of 2^levels − 1 items
//! (BENCHMARKS.md; On Lock-Free Work-stealing Iterators for Parallel Data Structures,
//! Fig. 12D). heist splits the tree by subtrees with the paper's tree stealer. rayon has
//! no splitter for a tree it does not know, so it runs as a rayon user would: it walks
//! the tree into a `Vec` of references on each run (as it does for std's maps and
//! sets) and folds that. The body is hash-fold's.

use super::hash_fold::entry;
use super::par_loop::{self, equal, mix, LoopInstance};
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};
use heist::tree::TreeSet;
use std::num::Wrapping;

/// The tree-fold kernel of the catalogue.
pub struct TreeFold;

impl Bench for TreeFold {
    fn name(&self) -> &'static str {
        "tree-fold"
    }
    fn about(&self) -> &'static str {
        "fold over a balanced tree split by subtrees (rayon walks it into a Vec first)"
    }
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "levels=10",
            small: "levels=21",
            quick: "levels=24",
            full: "levels=24",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        par_loop::supports(kind, false)
            && !matches!(kind, RuntimeKind::RayonBest | RuntimeKind::HeistClaim)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let levels = crate::bench::count("tree-fold", size, "levels", 1, 40)?;
        let t: TreeSet<u64> = (0..(1u64 << levels) - 1).map(mix).collect();
        assert_eq!(t.height() as u64, levels, "tree-fold: the tree is balanced");
        Ok(Box::new(LoopInstance::new("tree-fold", t, seq, run, equal)))
    }
}

fn seq(t: &TreeSet<u64>) -> Wrapping<u64> {
    t.iter().map(|&x| entry(x, 0)).sum()
}

fn on_heist(t: &TreeSet<u64>) -> Wrapping<u64> {
    use heist::prelude::*;
    t.par_iter().map(|&x| entry(x, 0)).sum()
}

fn on_rayon(t: &TreeSet<u64>) -> Wrapping<u64> {
    use rayon::prelude::*;
    let items: Vec<&u64> = t.iter().collect();
    items.par_iter().map(|&&x| entry(x, 0)).sum()
}

fn run(rt: &Runtime, t: &TreeSet<u64>) -> Wrapping<u64> {
    par_loop::on(rt, || seq(t), || on_heist(t), || on_rayon(t))
}
