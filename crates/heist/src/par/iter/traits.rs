//! rayon's parallel-iterator traits under rayon's names, so that a rayon program moves
//! to heist by changing its `use` line. Every consumer turns into a [`Kernel`] that the
//! loop driver runs (see `par/engine/driver.rs`); every adapter wraps the kernel or the producer.

use crate::par::collect::from_iter::{FromParallelIterator, ParallelExtend};
use crate::par::engine::driver::{bridge_exact, IndexedProducer, Kernel};
use crate::par::iter::adapters::*;
use crate::par::iter::chain::Chain;
use crate::par::iter::consumers::{
    self, Count, FindAny, FindEnd, ForEach, ProductOf, Reduce, ReduceWith, SumOf, TryReduce,
};
use crate::par::iter::either::Either;
use crate::par::iter::fuse::PanicFuse;
use crate::par::iter::intersperse::Intersperse;
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::piece_state::{CloneOf, Fold, MapInit, MapWith, TryFold, TryFoldWith};
use crate::par::iter::take_any::{SkipAny, SkipAnyWhile, TakeAny, TakeAnyWhile, WhileSome};
use crate::par::iter::try_op::Try;
use std::cmp::Ordering;
use std::collections::LinkedList;
use std::iter::{Product, Sum};
use std::marker::PhantomData;
use std::sync::atomic::AtomicBool;

/// Receives the producer of an indexed parallel iterator (see
/// [`IndexedParallelIterator::with_producer`]).
pub trait ProducerCallback<T> {
    /// What the callback returns.
    type Output;
    /// Called with the producer.
    fn callback<P: IndexedProducer<Item = T>>(self, producer: P) -> Self::Output;
}

/// Runs a kernel over an indexed iterator's producer.
pub(crate) struct Bridge<K>(pub(crate) K);

impl<T, K: Kernel<T>> ProducerCallback<T> for Bridge<K> {
    type Output = K::Output;
    fn callback<P: IndexedProducer<Item = T>>(self, producer: P) -> K::Output {
        bridge_exact(producer, &self.0)
    }
}

/// Receives an iterator's producer if the iterator is indexed, or else the iterator
/// itself (see [`ParallelIterator::with_producer_or_self`]): how `collect` writes into
/// its target in place when it can.
#[doc(hidden)]
pub trait IndexedOrNot<T> {
    /// What the callback returns.
    type Output;
    /// Called with the producer of an indexed iterator.
    fn indexed<P: IndexedProducer<Item = T>>(self, producer: P) -> Self::Output;
    /// Called with an iterator that is not indexed.
    fn unindexed<I: ParallelIterator<Item = T>>(self, iter: I) -> Self::Output;
}

/// Hands an indexed iterator's producer to an [`IndexedOrNot`].
pub(crate) struct AsIndexed<CB>(pub(crate) CB);

impl<T, CB: IndexedOrNot<T>> ProducerCallback<T> for AsIndexed<CB> {
    type Output = CB::Output;
    fn callback<P: IndexedProducer<Item = T>>(self, producer: P) -> CB::Output {
        self.0.indexed(producer)
    }
}

/// A parallel iterator (rayon's `ParallelIterator`): items are produced by a loop that
/// is split only when idle workers ask for work.
pub trait ParallelIterator: Sized + Send {
    /// The items.
    type Item: Send;

    /// Runs `kernel` over the items (the one method an implementation provides; see
    /// [`crate::iter::plumbing`]).
    fn drive<K: Kernel<Self::Item>>(self, kernel: K) -> K::Output;

    /// The number of items, if known in advance.
    fn opt_len(&self) -> Option<usize> {
        None
    }

    /// Hands `callback` this iterator's producer if it is indexed, else the iterator
    /// itself. Indexed iterators override it; the default says "not indexed".
    #[doc(hidden)]
    fn with_producer_or_self<CB: IndexedOrNot<Self::Item>>(self, callback: CB) -> CB::Output {
        callback.unindexed(self)
    }

    /// Calls `op` on each item.
    fn for_each<OP>(self, op: OP)
    where
        OP: Fn(Self::Item) + Sync + Send,
    {
        self.drive(ForEach(op))
    }

    /// Calls `op` on each item with a clone of `init` per piece of the loop.
    fn for_each_with<OP, T>(self, init: T, op: OP)
    where
        OP: Fn(&mut T, Self::Item) + Sync + Send,
        T: Send + Clone,
    {
        self.map_with(init, op).for_each(drop)
    }

    /// Calls `op` on each item with a value made by `init` once per piece of the loop.
    fn for_each_init<OP, INIT, T>(self, init: INIT, op: OP)
    where
        OP: Fn(&mut T, Self::Item) + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
    {
        self.map_init(init, op).for_each(drop)
    }

    /// Calls `op` on each item until one fails; returns a failure, or success.
    fn try_for_each<OP, R>(self, op: OP) -> R
    where
        OP: Fn(Self::Item) -> R + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        self.map(op).try_reduce(|| (), |(), ()| R::from_output(()))
    }

    /// `try_for_each` with a clone of `init` per piece of the loop.
    fn try_for_each_with<OP, T, R>(self, init: T, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Send + Clone,
        R: Try<Output = ()> + Send,
    {
        self.map_with(init, op)
            .try_reduce(|| (), |(), ()| R::from_output(()))
    }

    /// `try_for_each` with a value made by `init` once per piece of the loop.
    fn try_for_each_init<OP, INIT, T, R>(self, init: INIT, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        self.map_init(init, op)
            .try_reduce(|| (), |(), ()| R::from_output(()))
    }

    /// Applies `map_op` to each item.
    fn map<F, R>(self, map_op: F) -> Map<Self, F>
    where
        F: Fn(Self::Item) -> R + Sync + Send,
        R: Send,
    {
        Map::new(self, map_op)
    }

    /// Applies `map_op` with a clone of `init` per piece of the loop.
    fn map_with<F, T, R>(self, init: T, map_op: F) -> MapWith<Self, T, F>
    where
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Send + Clone,
        R: Send,
    {
        MapWith::new(self, init, map_op)
    }

    /// Applies `map_op` with a value made by `init` once per piece of the loop.
    fn map_init<F, INIT, T, R>(self, init: INIT, map_op: F) -> MapInit<Self, INIT, F>
    where
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
        R: Send,
    {
        MapInit::new(self, init, map_op)
    }

    /// Clones items that are references.
    fn cloned<'a, T>(self) -> Cloned<Self>
    where
        T: 'a + Clone + Send,
        Self: ParallelIterator<Item = &'a T>,
    {
        Cloned::new(self)
    }

    /// Copies items that are references.
    fn copied<'a, T>(self) -> Copied<Self>
    where
        T: 'a + Copy + Send,
        Self: ParallelIterator<Item = &'a T>,
    {
        Copied::new(self)
    }

    /// Calls `inspect_op` on a reference to each item, passing the item on.
    fn inspect<OP>(self, inspect_op: OP) -> Inspect<Self, OP>
    where
        OP: Fn(&Self::Item) + Sync + Send,
    {
        Inspect::new(self, inspect_op)
    }

    /// Keeps the items for which `filter_op` holds.
    fn filter<P>(self, filter_op: P) -> Filter<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        Filter::new(self, filter_op)
    }

    /// Maps each item to an option and keeps the `Some`s.
    fn filter_map<P, R>(self, filter_op: P) -> FilterMap<Self, P>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        FilterMap::new(self, filter_op)
    }

    /// Maps each item to a parallel iterator and flattens them.
    fn flat_map<F, PI>(self, map_op: F) -> FlatMap<Self, F>
    where
        F: Fn(Self::Item) -> PI + Sync + Send,
        PI: IntoParallelIterator,
    {
        FlatMap::new(self, map_op)
    }

    /// Maps each item to a sequential iterator and flattens them.
    fn flat_map_iter<F, SI>(self, map_op: F) -> FlatMapIter<Self, F>
    where
        F: Fn(Self::Item) -> SI + Sync + Send,
        SI: IntoIterator,
        SI::Item: Send,
    {
        FlatMapIter::new(self, map_op)
    }

    /// Flattens items that are parallel iterables.
    fn flatten(self) -> Flatten<Self>
    where
        Self::Item: IntoParallelIterator,
    {
        Flatten::new(self)
    }

    /// Flattens items that are sequential iterables.
    fn flatten_iter(self) -> FlattenIter<Self>
    where
        Self::Item: IntoIterator,
        <Self::Item as IntoIterator>::Item: Send,
    {
        FlattenIter::new(self)
    }

    /// Reduces the items with `op`, starting each piece from `identity()`. `op` must be
    /// associative; pieces are combined in index order.
    fn reduce<OP, ID>(self, identity: ID, op: OP) -> Self::Item
    where
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
        ID: Fn() -> Self::Item + Sync + Send,
    {
        self.drive(Reduce { identity, op })
    }

    /// Reduces the items with `op`; `None` if there are none.
    fn reduce_with<OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        self.drive(ReduceWith(op))
    }

    /// Reduces fallible items; the first failure found ends the loop.
    fn try_reduce<T, OP, ID>(self, identity: ID, op: OP) -> Self::Item
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        Self::Item: Try<Output = T>,
    {
        self.drive(TryReduce::new(identity, op))
    }

    /// Folds each piece of the loop from `identity()`, yielding one partial per piece.
    fn fold<T, ID, F>(self, identity: ID, fold_op: F) -> Fold<Self, ID, F>
    where
        F: Fn(T, Self::Item) -> T + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        T: Send,
    {
        Fold::new(self, identity, fold_op)
    }

    /// Folds each piece of the loop from a clone of `init`, yielding one partial per piece.
    fn fold_with<F, T>(self, init: T, fold_op: F) -> Fold<Self, CloneOf<T>, F>
    where
        F: Fn(T, Self::Item) -> T + Sync + Send,
        T: Send + Clone,
    {
        Fold::new(self, CloneOf::new(init), fold_op)
    }

    /// Changes each item in place through `update_op`, passing it on.
    fn update<F>(self, update_op: F) -> Update<Self, F>
    where
        F: Fn(&mut Self::Item) + Sync + Send,
    {
        Update::new(self, update_op)
    }

    /// The sum of the items.
    fn sum<S>(self) -> S
    where
        S: Send + Sum<Self::Item> + Sum<S>,
    {
        self.drive(SumOf::<S>(PhantomData))
    }

    /// The product of the items.
    fn product<P>(self) -> P
    where
        P: Send + Product<Self::Item> + Product<P>,
    {
        self.drive(ProductOf::<P>(PhantomData))
    }

    /// The smallest item (the first of equals).
    fn min(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.min_by(Ord::cmp)
    }

    /// The smallest item by `f` (the first of equals).
    fn min_by<F>(self, f: F) -> Option<Self::Item>
    where
        F: Sync + Send + Fn(&Self::Item, &Self::Item) -> Ordering,
    {
        self.reduce_with(consumers::min_of(f))
    }

    /// The item with the smallest key (the first of equals).
    fn min_by_key<K, F>(self, f: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Sync + Send + Fn(&Self::Item) -> K,
    {
        self.map(|x| (f(&x), x))
            .min_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, x)| x)
    }

    /// The largest item (the last of equals).
    fn max(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.max_by(Ord::cmp)
    }

    /// The largest item by `f` (the last of equals).
    fn max_by<F>(self, f: F) -> Option<Self::Item>
    where
        F: Sync + Send + Fn(&Self::Item, &Self::Item) -> Ordering,
    {
        self.reduce_with(consumers::max_of(f))
    }

    /// The item with the largest key (the last of equals).
    fn max_by_key<K, F>(self, f: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Sync + Send + Fn(&Self::Item) -> K,
    {
        self.map(|x| (f(&x), x))
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, x)| x)
    }

    /// The number of items.
    fn count(self) -> usize {
        self.drive(Count)
    }

    /// Whether `predicate` holds for some item; stops early.
    fn any<P>(self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate).find_any(|&b| b).is_some()
    }

    /// Whether `predicate` holds for every item; stops early.
    fn all<P>(self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate).find_any(|&b| !b).is_none()
    }

    /// Some item for which `predicate` holds, not necessarily the first; stops early.
    fn find_any<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.drive(FindAny::new(predicate))
    }

    /// The first item in order for which `predicate` holds.
    fn find_first<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.drive(FindEnd::<P, false>(predicate))
    }

    /// The last item in order for which `predicate` holds.
    fn find_last<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.drive(FindEnd::<P, true>(predicate))
    }

    /// Some `Some` that `predicate` maps an item to, not necessarily the first; stops
    /// early.
    fn find_map_any<P, R>(self, predicate: P) -> Option<R>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(predicate).find_any(|_| true)
    }

    /// The first `Some` in order that `predicate` maps an item to.
    fn find_map_first<P, R>(self, predicate: P) -> Option<R>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(predicate).find_first(|_| true)
    }

    /// The last `Some` in order that `predicate` maps an item to.
    fn find_map_last<P, R>(self, predicate: P) -> Option<R>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(predicate).find_last(|_| true)
    }

    /// This iterator's items, then `chain`'s.
    fn chain<C>(self, chain: C) -> Chain<Self, C::Iter>
    where
        C: IntoParallelIterator<Item = Self::Item>,
    {
        Chain::new(self, chain.into_par_iter())
    }

    /// Collects the items, in order, into `C`.
    fn collect<C>(self) -> C
    where
        C: FromParallelIterator<Self::Item>,
    {
        C::from_par_iter(self)
    }

    /// Splits pairs into two collections.
    fn unzip<A, B, FromA, FromB>(self) -> (FromA, FromB)
    where
        Self: ParallelIterator<Item = (A, B)>,
        FromA: Default + Send + ParallelExtend<A>,
        FromB: Default + Send + ParallelExtend<B>,
        A: Send,
        B: Send,
    {
        consumers::extend_both(self.drive(consumers::Halves))
    }

    /// Splits the items by `predicate` into two collections (true goes left).
    fn partition<A, B, P>(self, predicate: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<Self::Item>,
        B: Default + Send + ParallelExtend<Self::Item>,
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.partition_map(|x| {
            if predicate(&x) {
                Either::Left(x)
            } else {
                Either::Right(x)
            }
        })
    }

    /// Maps each item to a left or a right value and collects each side.
    fn partition_map<A, B, P, L, R>(self, predicate: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<L>,
        B: Default + Send + ParallelExtend<R>,
        P: Fn(Self::Item) -> Either<L, R> + Sync + Send,
        L: Send,
        R: Send,
    {
        consumers::extend_both(self.map(predicate).drive(consumers::Sides))
    }

    /// The items up to the first `None` that any piece of the loop finds: which items
    /// before it are kept depends on timing, but they stay in order.
    fn while_some<T>(self) -> WhileSome<Self>
    where
        Self: ParallelIterator<Item = Option<T>>,
        T: Send,
    {
        WhileSome::new(self)
    }

    /// The items with a clone of `element` between each two.
    fn intersperse(self, element: Self::Item) -> Intersperse<Self>
    where
        Self::Item: Clone,
    {
        Intersperse::new(self, element)
    }

    /// Any `n` of the items, in order.
    fn take_any(self, n: usize) -> TakeAny<Self> {
        TakeAny::new(self, n)
    }

    /// All but any `n` of the items, in order.
    fn skip_any(self, n: usize) -> SkipAny<Self> {
        SkipAny::new(self, n)
    }

    /// Items from anywhere, taken until `predicate` fails for one (after which no piece
    /// takes more).
    fn take_any_while<P>(self, predicate: P) -> TakeAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        TakeAnyWhile::new(self, predicate)
    }

    /// Items from anywhere, skipped until `predicate` fails for one (after which no piece
    /// skips more).
    fn skip_any_while<P>(self, predicate: P) -> SkipAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        SkipAnyWhile::new(self, predicate)
    }

    /// The items as a list of `Vec`s, in order.
    fn collect_vec_list(self) -> LinkedList<Vec<Self::Item>> {
        self.drive(consumers::VecList).into_iter().collect()
    }

    /// Reduces fallible items with `op`; `None` if there are none, and the first failure
    /// found ends the loop.
    fn try_reduce_with<T, OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        Self::Item: Try<Output = T>,
    {
        self.drive(consumers::TryReduceWith {
            op,
            failed: AtomicBool::new(false),
            _r: PhantomData,
        })
    }

    /// Folds each piece from `identity()` until `fold_op` fails, yielding one result per
    /// piece.
    fn try_fold<T, R, ID, F>(self, identity: ID, fold_op: F) -> TryFold<Self, R, ID, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        R: Try<Output = T> + Send,
    {
        TryFold::new(self, identity, fold_op, PhantomData)
    }

    /// Folds each piece from a clone of `init` until `fold_op` fails, yielding one result
    /// per piece.
    fn try_fold_with<F, T, R>(self, init: T, fold_op: F) -> TryFoldWith<Self, R, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        R: Try<Output = T> + Send,
        T: Clone + Send,
    {
        TryFoldWith::new(self, init, fold_op)
    }

    /// Some item for which `predicate` holds (rayon's deprecated name for `find_any`).
    #[doc(hidden)]
    #[deprecated(note = "parallel `find` does not search in order -- use `find_any`, \
                         `find_first`, or `find_last`")]
    fn find<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.find_any(predicate)
    }

    /// Stops the other pieces soon after a panic: at their next block, or next item where
    /// a block is iterated by hand. Without it, every other piece runs to its end before
    /// the panic reaches the caller, as in rayon.
    fn panic_fuse(self) -> PanicFuse<Self> {
        PanicFuse::new(self)
    }
}

pub use crate::par::iter::indexed_trait::IndexedParallelIterator;
