//! The kernel catalogue: one file per kernel.

pub mod bpc;
pub mod cilksort;
pub mod dot;
pub mod fib;
pub mod knapsack;
pub mod matmul;
pub mod mixed_quicksort;
pub mod nqueens;
pub mod pi;
pub mod quicksort;
pub mod reduce_fib;
pub mod reduce_nqueens;
pub mod reduce_uts;
pub mod sparselu;
pub mod sparselu_detached;
pub mod spc;
pub mod treerec;
pub mod treerec_futures;
pub mod uts;
pub mod work;

use crate::bench::Bench;

/// Every kernel, in the order `list` and `suite` show them.
pub fn all() -> Vec<&'static dyn Bench> {
    vec![
        &fib::Fib,
        &nqueens::NQueens,
        &uts::Uts,
        &treerec::TreeRec,
        &matmul::Matmul,
        &cilksort::Cilksort,
        &quicksort::Quicksort,
        &sparselu::SparseLu,
        &spc::Spc,
        &bpc::Bpc,
        &treerec_futures::TreeRecFutures,
        &sparselu_detached::SparseLuDetached,
        &reduce_fib::ReduceFib,
        &reduce_nqueens::ReduceNQueens,
        &reduce_uts::ReduceUts,
        &pi::Pi,
        &knapsack::Knapsack,
        &dot::Dot,
        &mixed_quicksort::MixedQuicksort,
    ]
}

/// The kernel called `name`.
pub fn find(name: &str) -> Option<&'static dyn Bench> {
    all().into_iter().find(|b| b.name() == name)
}
