//! Data parallelism: parallel iterators with rayon's API over one loop driver. A loop is
//! one task over a range that its owner folds in exponentially growing blocks and splits
//! only when a thief asks (Embracing Explicit Communication in Work-Stealing Runtime
//! Systems, ch. 5: splittable tasks; On Lock-Free Work-stealing Iterators for Parallel
//! Data Structures: batch growth, kernels, per-structure splitting). No grain size to
//! choose.

#[macro_use]
mod macros;

mod adapters;
mod any_order;
mod blocks;
mod bridge;
#[cfg(feature = "hashbrown")]
mod buckets;
mod chain;
mod claim;
mod collect;
mod collect_into;
mod demand;
mod drain;
mod driver;
mod either;
mod indexed;
mod indexed_trait;
mod interleave;
mod into;
mod kernels;
#[cfg(all(test, loom))]
mod loom_claim;
mod maps;
mod more_sources;
mod outside;
mod per_piece;
mod slice_split;
mod slices;
mod sources;
mod str_split;
mod strings;
mod traits;
mod tree_set;
mod tree_stealer;
mod try_op;

/// Parallel iterators: the traits, the adapter and source types, and the driver's
/// protocol ([`iter::plumbing`](crate::iter::plumbing)).
pub mod iter {
    pub use super::adapters::{
        Cloned, Copied, Filter, FilterMap, FlatMap, FlatMapIter, Flatten, FlattenIter, Inspect,
        Map, PanicFuse, Update,
    };
    pub use super::any_order::{SkipAny, SkipAnyWhile, TakeAny, TakeAnyWhile, WhileSome};
    pub use super::blocks::{Chunks, ExponentialBlocks, FoldChunks, FoldChunksWith, UniformBlocks};
    pub use super::bridge::{IterBridge, ParallelBridge};
    #[cfg(feature = "hashbrown")]
    pub use super::buckets::Buckets;
    pub use super::chain::Chain;
    pub use super::claim::{ThiefSplits, ThiefSplitting};
    pub use super::collect::{FromParallelIterator, ParallelExtend};
    pub use super::drain::{Drain, ParallelDrainFull, ParallelDrainRange};
    pub use super::either::Either;
    pub use super::indexed::{Enumerate, MaxLen, MinLen, Rev, Skip, StepBy, Take, Zip, ZipEq};
    pub use super::interleave::{Interleave, InterleaveShortest, Intersperse};
    pub use super::into::{
        IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator,
    };
    pub use super::maps::InPlace;
    pub use super::more_sources::{empty, once, repeat_n, repeatn, DequeIter, OptionIter, RepeatN};
    pub use super::per_piece::{CloneOf, Fold, Identity, MapInit, MapWith, TryFold, TryFoldWith};
    pub use super::sources::{IntoIter, Iter, IterMut, RangeIter};
    pub use super::traits::{IndexedParallelIterator, ParallelIterator};
    pub use super::try_op::Try;

    /// The loop driver's protocol, for making one's own collections parallel.
    pub mod plumbing {
        pub use super::super::driver::{bridge, run, IndexedProducer, Kernel, Producer};
        pub use super::super::sources::{RangeBlock, RangeProducer, SliceProducer};
        pub use super::super::traits::{IndexedOrNot, ProducerCallback};
    }
}

/// Parallel views of slices.
pub mod slice {
    pub use super::slices::{
        ChunkBy, ChunkByMut, Chunks, ChunksExact, ChunksExactMut, ChunksMut, ParallelSlice,
        ParallelSliceMut, RChunks, RChunksExact, RChunksExactMut, RChunksMut, Split,
        SplitInclusive, SplitInclusiveMut, SplitMut, Windows,
    };
}

/// Parallel views of strings.
pub mod str {
    pub use super::strings::{
        Bytes, CharIndices, Chars, EncodeUtf16, Lines, MatchIndices, Matches, ParallelString,
        Pattern, Split, SplitAsciiWhitespace, SplitInclusive, SplitTerminator, SplitWhitespace,
    };
}

/// A balanced tree of heist's own, iterated in parallel by the work-stealing iterators'
/// tree stealer.
pub mod tree {
    pub use super::tree_set::{Iter, TreeSet};
    pub use super::tree_stealer::ParIter;
}

/// Everything a program using parallel iterators needs: `use heist::prelude::*;` in
/// place of `use rayon::prelude::*;`.
pub mod prelude {
    pub use super::bridge::ParallelBridge;
    pub use super::collect::{FromParallelIterator, ParallelExtend};
    pub use super::drain::{ParallelDrainFull, ParallelDrainRange};
    pub use super::into::{
        IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator,
    };
    pub use super::slices::{ParallelSlice, ParallelSliceMut};
    pub use super::strings::ParallelString;
    pub use super::traits::{IndexedParallelIterator, ParallelIterator};
}
