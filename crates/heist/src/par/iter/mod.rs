//! Parallel iterators: the traits, the adapter and source types, and the driver's
//! protocol ([`iter::plumbing`](crate::iter::plumbing)).

// This module's files hold rayon's traits (`traits.rs`, `indexed_trait.rs`, `into.rs`),
// the adapters, and the consumers as kernels that the engine folds (`consumers.rs`, the
// kernels of On Lock-Free Work-stealing Iterators for Parallel Data Structures).

pub(crate) mod adapters;
pub(crate) mod chain;
pub(crate) mod consumers;
pub(crate) mod either;
pub(crate) mod fuse;
pub(crate) mod groups;
pub(crate) mod indexed;
pub(crate) mod indexed_trait;
pub(crate) mod interleave;
pub(crate) mod intersperse;
pub(crate) mod into;
pub(crate) mod multizip;
pub(crate) mod piece_state;
pub(crate) mod take_any;
pub(crate) mod traits;
pub(crate) mod try_op;
pub use crate::par::collect::from_iter::{FromParallelIterator, ParallelExtend};
pub use crate::par::engine::claim::{ThiefSplits, ThiefSplitting};
pub use crate::par::iter::adapters::{
    Cloned, Copied, Filter, FilterMap, FlatMap, FlatMapIter, Flatten, FlattenIter, Inspect, Map,
    Update,
};
pub use crate::par::iter::chain::Chain;
pub use crate::par::iter::either::Either;
pub use crate::par::iter::fuse::PanicFuse;
pub use crate::par::iter::groups::{
    Chunks, ExponentialBlocks, FoldChunks, FoldChunksWith, UniformBlocks,
};
pub use crate::par::iter::indexed::{
    Enumerate, MaxLen, MinLen, Positions, Rev, Skip, StepBy, Take, Zip, ZipEq,
};
pub use crate::par::iter::interleave::{Interleave, InterleaveShortest};
pub use crate::par::iter::intersperse::Intersperse;
pub use crate::par::iter::into::{
    IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator,
};
pub use crate::par::iter::multizip::MultiZip;
pub use crate::par::iter::piece_state::{
    CloneOf, Fold, Identity, MapInit, MapWith, TryFold, TryFoldWith,
};
pub use crate::par::iter::take_any::{SkipAny, SkipAnyWhile, TakeAny, TakeAnyWhile, WhileSome};
pub use crate::par::sources::bridge::{IterBridge, ParallelBridge};
#[cfg(feature = "hashbrown")]
pub use crate::par::sources::buckets::Buckets;
pub use crate::par::sources::drain::{Drain, ParallelDrainFull, ParallelDrainRange};
pub use crate::par::sources::maps::InPlace;
pub use crate::par::sources::option_deque::{DequeIter, OptionIter};

/// The folds of `fold_with`: a [`Fold`] from clones of a value (rayon's `FoldWith`).
pub type FoldWith<I, U, F> = Fold<I, CloneOf<U>, F>;
pub use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator};
pub use crate::par::iter::try_op::Try;
pub use crate::par::sources::ranges::RangeIter;
#[allow(deprecated)]
pub use crate::par::sources::repeat::repeatn;
pub use crate::par::sources::repeat::{
    empty, once, repeat, repeat_n, Empty, Once, Repeat, RepeatN,
};
pub use crate::par::sources::user_pieces::{split, Split};
pub use crate::par::sources::vec_slice::{IntoIter, Iter, IterMut};
pub use crate::par::sources::walk_tree::{
    walk_tree, walk_tree_postfix, walk_tree_prefix, WalkTree, WalkTreePostfix, WalkTreePrefix,
};

/// The loop driver's protocol, for making one's own collections parallel.
///
/// [`Producer`](plumbing::Producer) is rayon's: the producer of an indexed iterator,
/// which [`with_producer`](IndexedParallelIterator::with_producer) hands to a
/// [`ProducerCallback`](plumbing::ProducerCallback).
/// [`UnindexedProducer`](plumbing::UnindexedProducer) is the producer of any iterator,
/// the one a collection of one's own implements. (Inside the crate they are named
/// `IndexedProducer` and `Producer`, which compiler messages may show.)
pub mod plumbing {
    pub use crate::par::engine::driver::IndexedProducer as Producer;
    pub use crate::par::engine::driver::Producer as UnindexedProducer;
    pub use crate::par::engine::driver::{bridge, run, Cuts, Kernel};
    pub use crate::par::iter::traits::{IndexedOrNot, ProducerCallback};
    pub use crate::par::sources::ranges::{RangeBlock, RangeProducer};
    pub use crate::par::sources::vec_slice::SliceProducer;
}
