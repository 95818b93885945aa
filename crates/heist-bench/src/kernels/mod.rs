//! The kernel catalogue: one file per kernel.

pub mod array_fold;
pub mod bpc;
pub mod btree_fold;
pub mod cilksort;
pub mod coarse;
pub mod detached_flat;
pub mod detached_tree;
pub mod dot;
pub mod exponential;
pub mod fib;
pub mod fib_futures;
pub mod fib_install;
pub mod filter_collect;
pub mod hash_fold;
pub mod knapsack;
pub mod loops;
pub mod mandelbrot;
pub mod matmul;
pub mod matvec_tri;
pub mod mixed_quicksort;
pub mod nqueens;
pub mod par_loop;
pub mod par_sort;
pub mod pi;
pub mod pythagoras;
pub mod quicksort;
pub mod range_fold;
pub mod reduce_fib;
pub mod reduce_nqueens;
pub mod reduce_uts;
pub mod sparselu;
pub mod sparselu_detached;
pub mod spawn_bench;
pub mod spawn_flat;
pub mod spawn_tree;
pub mod spc;
pub mod stddev;
pub mod step;
pub mod tiny;
pub mod tree_fold;
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
        &spawn_tree::SPAWN_TREE,
        &spawn_flat::SPAWN_FLAT,
        &detached_flat::DETACHED_FLAT,
        &detached_tree::DETACHED_TREE,
        &fib_futures::FibFutures,
        &fib_install::FibInstall,
        &range_fold::RangeFold,
        &array_fold::ArrayFold,
        &stddev::StdDev,
        &step::Step,
        &exponential::Exponential,
        &mandelbrot::Mandelbrot,
        &filter_collect::FilterCollect,
        &matvec_tri::MatvecTri,
        &pythagoras::Pythagoras,
        &loops::Loop(loops::Shape::Fine),
        &loops::Loop(loops::Shape::Coarse),
        &loops::Loop(loops::Shape::Random),
        &loops::Loop(loops::Shape::Increasing),
        &loops::Loop(loops::Shape::Decreasing),
        &par_sort::ParSort,
        &hash_fold::HashFold,
        &btree_fold::BTreeFold,
        &tree_fold::TreeFold,
        &tiny::Tiny { outside: false },
        &tiny::Tiny { outside: true },
        &reduce_fib::ReduceFib,
        &reduce_nqueens::ReduceNQueens,
        &reduce_uts::ReduceUts,
        &pi::Pi,
        &knapsack::Knapsack,
        &dot::Dot,
        &mixed_quicksort::MixedQuicksort,
        &coarse::Coarse(coarse::Shape::Spawn),
        &coarse::Coarse(coarse::Shape::Join),
        &coarse::Coarse(coarse::Shape::Loop),
        &coarse::Coarse(coarse::Shape::Promise),
        &coarse::Coarse(coarse::Shape::Detached),
        &coarse::Coarse(coarse::Shape::Nested),
    ]
}

/// The kernel called `name`.
pub fn find(name: &str) -> Option<&'static dyn Bench> {
    all().into_iter().find(|b| b.name() == name)
}
