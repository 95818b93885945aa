//! par-sort: `par_sort_unstable` of n pseudo-random `u64`s (BENCHMARKS.md); seq is std's
//! `sort_unstable`, tbb's `parallel_sort`. The input is restored before every run and the output compared
//! with the sequentially sorted copy.

use super::par_loop::{self, mix};
use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};

/// The par-sort kernel of the catalogue.
pub struct ParSort;

impl Bench for ParSort {
    fn name(&self) -> &'static str {
        "par-sort"
    }
    fn about(&self) -> &'static str {
        "par_sort_unstable of pseudo-random u64 (seq: sort_unstable)"
    }
    fn sizes(&self) -> Sizes {
        Sizes {
            test: "10^5",
            small: "10^6",
            quick: "10^7",
            full: "10^8",
        }
    }
    fn supports(&self, kind: RuntimeKind) -> bool {
        kind == RuntimeKind::Tbb
            || par_loop::supports(kind, false)
                && !matches!(kind, RuntimeKind::RayonBest | RuntimeKind::HeistClaim)
    }
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = par_loop::parse_size("par-sort", size)?;
        let input: Vec<u64> = (0..n).map(mix).collect();
        let mut sorted = input.clone();
        sorted.sort_unstable();
        Ok(Box::new(SortInstance {
            data: input.clone(),
            input,
            sorted,
        }))
    }
}

struct SortInstance {
    input: Vec<u64>,
    data: Vec<u64>,
    sorted: Vec<u64>,
}

impl Instance for SortInstance {
    fn reset(&mut self) {
        self.data.copy_from_slice(&self.input);
    }

    fn run(&mut self, rt: &Runtime) {
        let data = &mut self.data;
        match rt.kind() {
            RuntimeKind::HeistLace | RuntimeKind::HeistRelay => {
                rt.install(|| heist::prelude::ParallelSliceMut::par_sort_unstable(&mut data[..]))
            }
            RuntimeKind::Rayon => {
                rt.install(|| rayon::prelude::ParallelSliceMut::par_sort_unstable(&mut data[..]))
            }
            RuntimeKind::Seq | RuntimeKind::Chili => data.sort_unstable(),
            RuntimeKind::Tbb => {
                let peer = rt.peer().expect("tbb is a peer");
                assert!(peer.par_sort(data), "tbb has parallel_sort");
            }
            RuntimeKind::HeistJoin
            | RuntimeKind::RayonTls
            | RuntimeKind::RayonBest
            | RuntimeKind::HeistClaim
            | RuntimeKind::Orx
            | RuntimeKind::Omp
            | RuntimeKind::OmpGuided
            | RuntimeKind::Gomp => {
                unreachable!("{} does not run par-sort (Bench::supports)", rt.kind())
            }
        }
    }

    fn verify(&self) -> Result<(), String> {
        match self.data.iter().zip(&self.sorted).position(|(a, b)| a != b) {
            None => Ok(()),
            Some(i) => Err(format!(
                "par-sort: item {i} is {}, expected {}",
                self.data[i], self.sorted[i]
            )),
        }
    }
}
