//! Data parallelism: parallel iterators with rayon's API over one loop driver. A loop is
//! one task over a range that its owner folds in exponentially growing blocks and splits
//! only when a thief asks (Embracing Explicit Communication in Work-Stealing Runtime
//! Systems, ch. 5: splittable tasks; On Lock-Free Work-stealing Iterators for Parallel
//! Data Structures: batch growth, kernels, per-structure splitting). No grain size to
//! choose.

#[macro_use]
mod macros;

pub(crate) mod collect;
pub(crate) mod engine;
pub mod iter;
pub(crate) mod sources;

/// Parallel views of slices.
pub mod slice {
    pub use crate::par::sources::slices::{
        ArrayWindows, ChunkBy, ChunkByMut, Chunks, ChunksExact, ChunksExactMut, ChunksMut,
        ParallelSlice, ParallelSliceMut, RChunks, RChunksExact, RChunksExactMut, RChunksMut, Split,
        SplitInclusive, SplitInclusiveMut, SplitMut, Windows,
    };
    pub use crate::par::sources::vec_slice::{Iter, IterMut};
}

/// Parallel iterators over arrays (rayon's `array`).
pub mod array {
    pub use crate::par::sources::arrays::IntoIter;
}

/// Parallel iterators over `Option`'s item (rayon's `option`).
pub mod option {
    use crate::par::sources::option_deque::OptionIter;
    /// Moves the item out of an `Option`.
    pub type IntoIter<T> = OptionIter<T>;
    /// Borrows the item of an `Option`.
    pub type Iter<'a, T> = OptionIter<&'a T>;
    /// Borrows the item of an `Option` mutably.
    pub type IterMut<'a, T> = OptionIter<&'a mut T>;
}

/// Parallel iterators over `Result`'s `Ok` item (rayon's `result`).
pub mod result {
    use crate::par::sources::option_deque::OptionIter;
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
    pub type Iter<T> = crate::par::sources::ranges::RangeIter<T>;
}

/// Parallel iterators over ranges `a..=b` (rayon's `range_inclusive`).
pub mod range_inclusive {
    /// The iterator of a range `a..=b` of integers or `char`s.
    pub type Iter<T> = crate::par::sources::ranges::RangeIter<T>;
}

/// Parallel iterators over a `Vec` (rayon's `vec`).
pub mod vec {
    pub use crate::par::sources::drain::Drain;
    pub use crate::par::sources::vec_slice::IntoIter;
}

/// Parallel iterators over a `String` (rayon's `string`).
pub mod string {
    /// The chars of a range of a `String`, moved out (into a `Vec` first).
    pub type Drain<'a> = crate::par::sources::vec_slice::IntoIter<char>;
}

/// Parallel iterators over the standard collections (rayon's `collections`). Borrowing
/// iterators walk the collection in place; the others move or borrow its items into a
/// `Vec` first, as rayon does.
pub mod collections {
    /// Parallel iterators over a `BinaryHeap`.
    pub mod binary_heap {
        use crate::par::sources::{maps::InPlace, vec_slice::IntoIter as Owned};
        /// The items, moved out.
        pub type IntoIter<T> = Owned<T>;
        /// The items, borrowed.
        pub type Iter<'a, T> = InPlace<std::collections::binary_heap::Iter<'a, T>>;
        /// The items, drained.
        pub type Drain<'a, T> = Owned<T>;
    }

    /// Parallel iterators over a `BTreeMap`.
    pub mod btree_map {
        use crate::par::sources::{maps::InPlace, vec_slice::IntoIter as Owned};
        /// The entries, moved out.
        pub type IntoIter<K, V> = Owned<(K, V)>;
        /// The entries, borrowed.
        pub type Iter<'a, K, V> = InPlace<std::collections::btree_map::Iter<'a, K, V>>;
        /// The entries, with the values borrowed mutably.
        pub type IterMut<'a, K, V> = Owned<(&'a K, &'a mut V)>;
    }

    /// Parallel iterators over a `BTreeSet`.
    pub mod btree_set {
        use crate::par::sources::{maps::InPlace, vec_slice::IntoIter as Owned};
        /// The items, moved out.
        pub type IntoIter<T> = Owned<T>;
        /// The items, borrowed.
        pub type Iter<'a, T> = InPlace<std::collections::btree_set::Iter<'a, T>>;
    }

    /// Parallel iterators over a `HashMap`.
    pub mod hash_map {
        use crate::par::sources::{maps::InPlace, vec_slice::IntoIter as Owned};
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
        use crate::par::sources::{maps::InPlace, vec_slice::IntoIter as Owned};
        /// The items, moved out.
        pub type IntoIter<T> = Owned<T>;
        /// The items, borrowed.
        pub type Iter<'a, T> = InPlace<std::collections::hash_set::Iter<'a, T>>;
        /// The items, drained.
        pub type Drain<'a, T> = Owned<T>;
    }

    /// Parallel iterators over a `LinkedList`.
    pub mod linked_list {
        use crate::par::sources::{maps::InPlace, vec_slice::IntoIter as Owned};
        /// The items, moved out.
        pub type IntoIter<T> = Owned<T>;
        /// The items, borrowed.
        pub type Iter<'a, T> = InPlace<std::collections::linked_list::Iter<'a, T>>;
        /// The items, borrowed mutably.
        pub type IterMut<'a, T> = Owned<&'a mut T>;
    }

    /// Parallel iterators over a `VecDeque`.
    pub mod vec_deque {
        use crate::par::sources::{option_deque::DequeIter, vec_slice::IntoIter as Owned};
        /// The items, moved out.
        pub type IntoIter<T> = Owned<T>;
        /// The items, borrowed.
        pub type Iter<'a, T> = DequeIter<'a, T>;
        /// The items, borrowed mutably: the deque's two slices, chained.
        pub type IterMut<'a, T> = crate::par::iter::chain::Chain<
            crate::iter::IterMut<'a, T>,
            crate::iter::IterMut<'a, T>,
        >;
        /// A range of the items, drained.
        pub type Drain<'a, T> = Owned<T>;
    }
}

/// Parallel views of strings.
pub mod str {
    pub use crate::par::sources::strings::{
        Bytes, CharIndices, Chars, EncodeUtf16, Lines, MatchIndices, Matches, ParallelString,
        Pattern, Split, SplitAsciiWhitespace, SplitInclusive, SplitTerminator, SplitWhitespace,
    };
}

/// A balanced tree of heist's own, iterated in parallel by the work-stealing iterators'
/// tree stealer.
pub mod tree {
    pub use crate::par::sources::tree_set::{Iter, TreeSet};
    pub use crate::par::sources::tree_stealer::ParIter;
}

/// Everything a program using parallel iterators needs: `use heist::prelude::*;` in
/// place of `use rayon::prelude::*;`.
pub mod prelude {
    pub use crate::par::collect::from_iter::{FromParallelIterator, ParallelExtend};
    pub use crate::par::iter::into::{
        IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator,
    };
    pub use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator};
    pub use crate::par::sources::bridge::ParallelBridge;
    pub use crate::par::sources::drain::{ParallelDrainFull, ParallelDrainRange};
    pub use crate::par::sources::slices::{ParallelSlice, ParallelSliceMut};
    pub use crate::par::sources::strings::ParallelString;
}
