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
mod arrays;
mod back;
mod blocks;
mod bridge;
#[cfg(feature = "hashbrown")]
mod buckets;
mod chain;
mod claim;
mod collect;
mod collect_into;
mod collect_more;
mod demand;
mod drain;
mod driver;
mod either;
mod fuse;
mod indexed;
mod indexed_trait;
mod interleave;
mod intersperse;
mod into;
mod kernels;
#[cfg(all(test, loom))]
mod loom_claim;
mod maps;
mod more_sources;
mod multizip;
mod offered;
mod outside;
mod pace;
mod per_piece;
mod ranges;
mod repeat;
mod slice_split;
mod slices;
mod sort;
mod sources;
mod splitter;
mod str_split;
mod strings;
mod traits;
mod tree_set;
mod tree_stealer;
mod try_op;
mod walk_tree;

/// Parallel iterators: the traits, the adapter and source types, and the driver's
/// protocol ([`iter::plumbing`](crate::iter::plumbing)).
pub mod iter {
    pub use super::adapters::{
        Cloned, Copied, Filter, FilterMap, FlatMap, FlatMapIter, Flatten, FlattenIter, Inspect,
        Map, Update,
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
    pub use super::fuse::PanicFuse;
    pub use super::indexed::{
        Enumerate, MaxLen, MinLen, Positions, Rev, Skip, StepBy, Take, Zip, ZipEq,
    };
    pub use super::interleave::{Interleave, InterleaveShortest};
    pub use super::intersperse::Intersperse;
    pub use super::into::{
        IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator,
    };
    pub use super::maps::InPlace;
    pub use super::more_sources::{DequeIter, OptionIter};
    pub use super::multizip::MultiZip;
    pub use super::per_piece::{CloneOf, Fold, Identity, MapInit, MapWith, TryFold, TryFoldWith};

    /// The folds of `fold_with`: a [`Fold`] from clones of a value (rayon's `FoldWith`).
    pub type FoldWith<I, U, F> = Fold<I, CloneOf<U>, F>;
    pub use super::ranges::RangeIter;
    #[allow(deprecated)]
    pub use super::repeat::repeatn;
    pub use super::repeat::{empty, once, repeat, repeat_n, Empty, Once, Repeat, RepeatN};
    pub use super::sources::{IntoIter, Iter, IterMut};
    pub use super::splitter::{split, Split};
    pub use super::traits::{IndexedParallelIterator, ParallelIterator};
    pub use super::try_op::Try;
    pub use super::walk_tree::{
        walk_tree, walk_tree_postfix, walk_tree_prefix, WalkTree, WalkTreePostfix, WalkTreePrefix,
    };

    /// The loop driver's protocol, for making one's own collections parallel.
    ///
    /// [`Producer`] is rayon's: the producer of an indexed iterator, which
    /// [`with_producer`](super::IndexedParallelIterator::with_producer) hands to a
    /// [`ProducerCallback`]. [`UnindexedProducer`] is the producer of any iterator, the
    /// one a collection of one's own implements. (Inside the crate they are named
    /// `IndexedProducer` and `Producer`, which compiler messages may show.)
    pub mod plumbing {
        pub use super::super::driver::IndexedProducer as Producer;
        pub use super::super::driver::Producer as UnindexedProducer;
        pub use super::super::driver::{bridge, run, Kernel};
        pub use super::super::ranges::{RangeBlock, RangeProducer};
        pub use super::super::sources::SliceProducer;
        pub use super::super::traits::{IndexedOrNot, ProducerCallback};
    }
}

/// Parallel views of slices.
pub mod slice {
    pub use super::slices::{
        ArrayWindows, ChunkBy, ChunkByMut, Chunks, ChunksExact, ChunksExactMut, ChunksMut,
        ParallelSlice, ParallelSliceMut, RChunks, RChunksExact, RChunksExactMut, RChunksMut, Split,
        SplitInclusive, SplitInclusiveMut, SplitMut, Windows,
    };
    pub use super::sources::{Iter, IterMut};
}

/// Parallel iterators over arrays (rayon's `array`).
pub mod array {
    pub use super::arrays::IntoIter;
}

/// Parallel iterators over `Option`'s item (rayon's `option`).
pub mod option {
    use super::more_sources::OptionIter;
    /// Moves the item out of an `Option`.
    pub type IntoIter<T> = OptionIter<T>;
    /// Borrows the item of an `Option`.
    pub type Iter<'a, T> = OptionIter<&'a T>;
    /// Borrows the item of an `Option` mutably.
    pub type IterMut<'a, T> = OptionIter<&'a mut T>;
}

/// Parallel iterators over `Result`'s `Ok` item (rayon's `result`).
pub mod result {
    use super::more_sources::OptionIter;
    /// Moves the `Ok` item out of a `Result`.
    pub type IntoIter<T> = OptionIter<T>;
    /// Borrows the `Ok` item of a `Result`.
    pub type Iter<'a, T> = OptionIter<&'a T>;
    /// Borrows the `Ok` item of a `Result` mutably.
    pub type IterMut<'a, T> = OptionIter<&'a mut T>;
}

/// Parallel iterators over ranges `a..b` (rayon's `range`). An integer literal's type is
/// inferred from what the items must be, as with rayon:
///
/// ```
/// use heist::prelude::*;
///
/// let none = (10..10).into_par_iter().sum::<usize>();
/// let p = (0..25usize)
///     .into_par_iter()
///     .zip(0..25)
///     .filter(|&(x, y)| x % 5 == 0 || y % 5 == 0)
///     .map(|(x, y)| x * y)
///     .sum::<usize>();
/// assert_eq!((none, p), (0, (0..25usize).filter(|x| x % 5 == 0).map(|x| x * x).sum()));
/// ```
pub mod range {
    /// The iterator of a range `a..b` of integers or `char`s.
    pub type Iter<T> = super::ranges::RangeIter<T>;
}

/// Parallel iterators over ranges `a..=b` (rayon's `range_inclusive`).
pub mod range_inclusive {
    /// The iterator of a range `a..=b` of integers or `char`s.
    pub type Iter<T> = super::ranges::RangeIter<T>;
}

/// Parallel iterators over a `Vec` (rayon's `vec`).
pub mod vec {
    pub use super::drain::Drain;
    pub use super::sources::IntoIter;
}

/// Parallel iterators over a `String` (rayon's `string`).
pub mod string {
    /// The chars of a range of a `String`, moved out (into a `Vec` first).
    pub type Drain<'a> = super::sources::IntoIter<char>;
}

/// Parallel iterators over the standard collections (rayon's `collections`). Borrowing
/// iterators walk the collection in place; the others move or borrow its items into a
/// `Vec` first, as rayon does.
pub mod collections {
    /// Parallel iterators over a `BinaryHeap`.
    pub mod binary_heap {
        use crate::par::{maps::InPlace, sources::IntoIter as Owned};
        /// The items, moved out.
        pub type IntoIter<T> = Owned<T>;
        /// The items, borrowed.
        pub type Iter<'a, T> = InPlace<std::collections::binary_heap::Iter<'a, T>>;
        /// The items, drained.
        pub type Drain<'a, T> = Owned<T>;
    }

    /// Parallel iterators over a `BTreeMap`.
    pub mod btree_map {
        use crate::par::{maps::InPlace, sources::IntoIter as Owned};
        /// The entries, moved out.
        pub type IntoIter<K, V> = Owned<(K, V)>;
        /// The entries, borrowed.
        pub type Iter<'a, K, V> = InPlace<std::collections::btree_map::Iter<'a, K, V>>;
        /// The entries, with the values borrowed mutably.
        pub type IterMut<'a, K, V> = Owned<(&'a K, &'a mut V)>;
    }

    /// Parallel iterators over a `BTreeSet`.
    pub mod btree_set {
        use crate::par::{maps::InPlace, sources::IntoIter as Owned};
        /// The items, moved out.
        pub type IntoIter<T> = Owned<T>;
        /// The items, borrowed.
        pub type Iter<'a, T> = InPlace<std::collections::btree_set::Iter<'a, T>>;
    }

    /// Parallel iterators over a `HashMap`.
    pub mod hash_map {
        use crate::par::{maps::InPlace, sources::IntoIter as Owned};
        /// The entries, moved out.
        pub type IntoIter<K, V> = Owned<(K, V)>;
        /// The entries, borrowed.
        pub type Iter<'a, K, V> = InPlace<std::collections::hash_map::Iter<'a, K, V>>;
        /// The entries, with the values borrowed mutably.
        pub type IterMut<'a, K, V> = Owned<(&'a K, &'a mut V)>;
        /// The entries, drained.
        pub type Drain<'a, K, V> = Owned<(K, V)>;
    }

    /// Parallel iterators over a `HashSet`.
    pub mod hash_set {
        use crate::par::{maps::InPlace, sources::IntoIter as Owned};
        /// The items, moved out.
        pub type IntoIter<T> = Owned<T>;
        /// The items, borrowed.
        pub type Iter<'a, T> = InPlace<std::collections::hash_set::Iter<'a, T>>;
        /// The items, drained.
        pub type Drain<'a, T> = Owned<T>;
    }

    /// Parallel iterators over a `LinkedList`.
    pub mod linked_list {
        use crate::par::{maps::InPlace, sources::IntoIter as Owned};
        /// The items, moved out.
        pub type IntoIter<T> = Owned<T>;
        /// The items, borrowed.
        pub type Iter<'a, T> = InPlace<std::collections::linked_list::Iter<'a, T>>;
        /// The items, borrowed mutably.
        pub type IterMut<'a, T> = Owned<&'a mut T>;
    }

    /// Parallel iterators over a `VecDeque`.
    pub mod vec_deque {
        use crate::par::{more_sources::DequeIter, sources::IntoIter as Owned};
        /// The items, moved out.
        pub type IntoIter<T> = Owned<T>;
        /// The items, borrowed.
        pub type Iter<'a, T> = DequeIter<'a, T>;
        /// The items, borrowed mutably: the deque's two slices, chained.
        pub type IterMut<'a, T> =
            crate::par::chain::Chain<crate::iter::IterMut<'a, T>, crate::iter::IterMut<'a, T>>;
        /// A range of the items, drained.
        pub type Drain<'a, T> = Owned<T>;
    }
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
