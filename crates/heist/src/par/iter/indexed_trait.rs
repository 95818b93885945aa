//! rayon's `IndexedParallelIterator`: the methods of iterators whose items have
//! indices, which reach the loop's producer (see `par/iter/traits.rs` for the unindexed ones).

use crate::par::collect::from_iter::ParallelExtend;
use crate::par::iter::consumers::{concat, Halves};
use crate::par::iter::groups::{
    Chunks, ExponentialBlocks, FoldChunks, FoldChunksWith, UniformBlocks,
};
use crate::par::iter::indexed::*;
use crate::par::iter::interleave::{Interleave, InterleaveShortest};
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::{ParallelIterator, ProducerCallback};
use std::cmp::Ordering;

/// A parallel iterator whose items have indices (rayon's `IndexedParallelIterator`).
// rayon's trait has no `is_empty`; the name and shape follow it.
#[allow(clippy::len_without_is_empty)]
pub trait IndexedParallelIterator: ParallelIterator {
    /// The exact number of items.
    fn len(&self) -> usize;

    /// Hands this iterator's producer to `callback`.
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output;

    /// Collects the items into `target`, replacing its contents.
    fn collect_into_vec(self, target: &mut Vec<Self::Item>) {
        target.clear();
        target.par_extend(self);
    }

    /// Pairs each item with its index.
    fn enumerate(self) -> Enumerate<Self> {
        Enumerate::new(self)
    }

    /// Pairs items with those of `zip_op`, up to the shorter length.
    fn zip<Z>(self, zip_op: Z) -> Zip<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        Zip::new(self, zip_op.into_par_iter())
    }

    /// The items gathered into `Vec`s of `chunk_size`, the last possibly shorter.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn chunks(self, chunk_size: usize) -> Chunks<Self> {
        assert!(chunk_size != 0, "chunk_size must not be zero");
        Chunks::new(self, chunk_size)
    }

    /// The items in reverse order.
    fn rev(self) -> Rev<Self> {
        Rev::new(self)
    }

    /// The first `n` items.
    fn take(self, n: usize) -> Take<Self> {
        Take::new(self, n)
    }

    /// All but the first `n` items.
    fn skip(self, n: usize) -> Skip<Self> {
        Skip::new(self, n)
    }

    /// Every `step`-th item, from the first.
    ///
    /// # Panics
    /// If `step` is 0.
    fn step_by(self, step: usize) -> StepBy<Self> {
        assert!(step != 0, "step_by: the step must not be 0");
        StepBy::new(self, step)
    }

    /// Never splits into pieces smaller than `min`.
    fn with_min_len(self, min: usize) -> MinLen<Self> {
        MinLen::new(self, min)
    }

    /// Folds at most `max` items between checks for thieves.
    fn with_max_len(self, max: usize) -> MaxLen<Self> {
        MaxLen::new(self, max)
    }

    /// The index of some item for which `predicate` holds; stops early.
    fn position_any<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate)
            .enumerate()
            .find_any(|&(_, b)| b)
            .map(|(i, _)| i)
    }

    /// The index of the last item for which `predicate` holds.
    fn position_last<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate)
            .enumerate()
            .find_last(|&(_, b)| b)
            .map(|(i, _)| i)
    }

    /// The indices of the items for which `predicate` holds, in order.
    fn positions<P>(self, predicate: P) -> Positions<Self, P>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        Positions::new(self, predicate)
    }

    /// The index of the first item for which `predicate` holds.
    fn position_first<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate)
            .enumerate()
            .find_first(|&(_, b)| b)
            .map(|(i, _)| i)
    }

    /// The index of some item for which `predicate` holds (rayon's deprecated name for
    /// `position_any`).
    #[doc(hidden)]
    #[deprecated(
        note = "parallel `position` does not search in order -- use `position_any`, \\
                `position_first`, or `position_last`"
    )]
    fn position<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.position_any(predicate)
    }

    /// Pairs items with those of `zip_op`, which must have the same length.
    ///
    /// # Panics
    /// If the lengths differ.
    fn zip_eq<Z>(self, zip_op: Z) -> ZipEq<Self, Z::Iter>
    where
        Z: IntoParallelIterator<Iter: IndexedParallelIterator>,
    {
        ZipEq::new(self, zip_op.into_par_iter())
    }

    /// This iterator's items and `other`'s in turn, then the rest of the longer.
    fn interleave<I>(self, other: I) -> Interleave<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item, Iter: IndexedParallelIterator>,
    {
        Interleave::new(self, other.into_par_iter())
    }

    /// This iterator's items and `other`'s in turn, until one runs out.
    fn interleave_shortest<I>(self, other: I) -> InterleaveShortest<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item, Iter: IndexedParallelIterator>,
    {
        InterleaveShortest::new(self, other.into_par_iter())
    }

    /// Runs of `chunk_size` items, each folded from `identity()`; the last run may be
    /// shorter.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn fold_chunks<T, ID, F>(
        self,
        chunk_size: usize,
        identity: ID,
        fold_op: F,
    ) -> FoldChunks<Self, ID, F>
    where
        ID: Fn() -> T + Send + Sync,
        F: Fn(T, Self::Item) -> T + Send + Sync,
        T: Send,
    {
        assert!(chunk_size != 0, "chunk_size must not be zero");
        FoldChunks::new(self, chunk_size, identity, fold_op)
    }

    /// Runs of `chunk_size` items, each folded from a clone of `init`; the last run may
    /// be shorter.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn fold_chunks_with<T, F>(
        self,
        chunk_size: usize,
        init: T,
        fold_op: F,
    ) -> FoldChunksWith<Self, T, F>
    where
        T: Send + Clone,
        F: Fn(T, Self::Item) -> T + Send + Sync,
    {
        assert!(chunk_size != 0, "chunk_size must not be zero");
        FoldChunksWith::new(self, chunk_size, init, fold_op)
    }

    /// Compares the items with `other`'s lexicographically.
    fn cmp<I>(self, other: I) -> Ordering
    where
        I: IntoParallelIterator<Item = Self::Item, Iter: IndexedParallelIterator>,
        Self::Item: Ord,
    {
        let other = other.into_par_iter();
        let by_len = self.len().cmp(&other.len());
        self.zip(other)
            .map(|(x, y)| Ord::cmp(&x, &y))
            .find_first(|&o| o != Ordering::Equal)
            .unwrap_or(by_len)
    }

    /// Compares the items with `other`'s lexicographically, if they are comparable.
    fn partial_cmp<I>(self, other: I) -> Option<Ordering>
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialOrd<I::Item>,
    {
        let other = other.into_par_iter();
        let by_len = self.len().cmp(&other.len());
        self.zip(other)
            .map(|(x, y)| PartialOrd::partial_cmp(&x, &y))
            .find_first(|&o| o != Some(Ordering::Equal))
            .unwrap_or(Some(by_len))
    }

    /// Whether the items equal `other`'s.
    fn eq<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialEq<I::Item>,
    {
        let other = other.into_par_iter();
        self.len() == other.len() && self.zip(other).all(|(x, y)| x.eq(&y))
    }

    /// Whether the items differ from `other`'s.
    fn ne<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialEq<I::Item>,
    {
        !self.eq(other)
    }

    /// Whether the items are lexicographically less than `other`'s.
    fn lt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(Ordering::Less)
    }

    /// Whether the items are lexicographically less than or equal to `other`'s.
    fn le<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            self.partial_cmp(other),
            Some(Ordering::Less | Ordering::Equal)
        )
    }

    /// Whether the items are lexicographically greater than `other`'s.
    fn gt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(Ordering::Greater)
    }

    /// Whether the items are lexicographically greater than or equal to `other`'s.
    fn ge<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            self.partial_cmp(other),
            Some(Ordering::Greater | Ordering::Equal)
        )
    }

    /// Splits pairs into `left` and `right`, replacing their contents.
    fn unzip_into_vecs<A, B>(self, left: &mut Vec<A>, right: &mut Vec<B>)
    where
        Self: IndexedParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
    {
        left.clear();
        right.clear();
        let (a, b) = self.drive(Halves);
        left.par_extend(concat(a));
        right.par_extend(concat(b));
    }

    /// Runs the loop as a sequence of parallel loops over blocks that double, from as
    /// many items as there are workers: a search that finds its item early stops after
    /// the block that holds it.
    fn by_exponential_blocks(self) -> ExponentialBlocks<Self> {
        ExponentialBlocks::new(self)
    }

    /// Runs the loop as a sequence of parallel loops over blocks of `block_size` items.
    ///
    /// # Panics
    /// If `block_size` is 0.
    fn by_uniform_blocks(self, block_size: usize) -> UniformBlocks<Self> {
        assert!(block_size != 0, "block_size must not be zero");
        UniformBlocks::new(self, block_size)
    }
}
