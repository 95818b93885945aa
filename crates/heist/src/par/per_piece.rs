//! Adapters whose pieces keep state of their own: `map_init` and `map_with` (a value per
//! piece) and `fold` (one partial per piece, as rayon's `fold` yields).

use super::driver::Kernel;
use super::traits::ParallelIterator;
use std::sync::Mutex;

/// Makes clones of one value, for each piece of a loop that may run anywhere (the
/// identity of [`ParallelIterator::fold_with`]).
pub struct CloneOf<T>(Mutex<T>);

impl<T: Clone> CloneOf<T> {
    pub(crate) fn new(value: T) -> Self {
        CloneOf(Mutex::new(value))
    }

    /// A clone of the value; the lock is taken once per piece.
    pub(crate) fn get(&self) -> T {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// The kernel of `map_init` and `map_with`: each piece makes its own state with `init`.
pub(crate) struct MapInitKernel<K, INIT, F> {
    inner: K,
    init: INIT,
    f: F,
}

impl<T, S, R, K, INIT, F> Kernel<T> for MapInitKernel<K, INIT, F>
where
    K: Kernel<R>,
    INIT: Fn() -> S + Sync,
    F: Fn(&mut S, T) -> R + Sync,
{
    type Acc = (S, K::Acc);
    type Output = K::Output;
    fn start(&self) -> Self::Acc {
        ((self.init)(), self.inner.start())
    }
    fn fold<I: Iterator<Item = T>>(&self, (mut s, acc): Self::Acc, items: I) -> Self::Acc {
        let acc = self.inner.fold(acc, items.map(|x| (self.f)(&mut s, x)));
        (s, acc)
    }
    fn finish(&self, (_, acc): Self::Acc) -> K::Output {
        self.inner.finish(acc)
    }
    combine_and_done!();
}

adapter_struct!(
    /// Items mapped with per-piece state made by a function (see
    /// [`ParallelIterator::map_init`]).
    MapInit<I, INIT, F> { init: INIT, f: F }
);

impl<I, INIT, F, S, R> ParallelIterator for MapInit<I, INIT, F>
where
    I: ParallelIterator,
    INIT: Fn() -> S + Sync + Send,
    F: Fn(&mut S, I::Item) -> R + Sync + Send,
    R: Send,
{
    type Item = R;
    fn drive<K: Kernel<R>>(self, inner: K) -> K::Output {
        self.base.drive(MapInitKernel {
            inner,
            init: self.init,
            f: self.f,
        })
    }
}

adapter_struct!(
    /// Items mapped with a per-piece clone of a value (see [`ParallelIterator::map_with`]).
    MapWith<I, S, F> { init: S, f: F }
);

impl<I, S, F, R> ParallelIterator for MapWith<I, S, F>
where
    I: ParallelIterator,
    S: Send + Clone,
    F: Fn(&mut S, I::Item) -> R + Sync + Send,
    R: Send,
{
    type Item = R;
    fn drive<K: Kernel<R>>(self, inner: K) -> K::Output {
        // Pieces run anywhere; the value to clone is shared through a lock, taken once
        // per piece.
        let proto = Mutex::new(self.init);
        let init = || {
            proto
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone()
        };
        self.base.drive(MapInitKernel {
            inner,
            init,
            f: self.f,
        })
    }
}

/// The kernel of `fold`: each piece folds its items from `identity()` and passes the
/// one partial on to the inner kernel when it ends.
pub(crate) struct FoldKernel<K, ID, F> {
    inner: K,
    identity: ID,
    f: F,
}

impl<T, K, ID, F> Kernel<T> for FoldKernel<K, ID, F>
where
    K: Kernel<ID::Out>,
    ID: Identity,
    F: Fn(ID::Out, T) -> ID::Out + Sync,
{
    type Acc = (ID::Out, K::Acc);
    type Output = K::Output;
    fn start(&self) -> Self::Acc {
        (self.identity.make(), self.inner.start())
    }
    fn fold<I: Iterator<Item = T>>(&self, (u, acc): Self::Acc, items: I) -> Self::Acc {
        (items.fold(u, &self.f), acc)
    }
    fn finish(&self, (u, acc): Self::Acc) -> K::Output {
        self.inner.finish(self.inner.fold(acc, std::iter::once(u)))
    }
    combine_and_done!();
}

adapter_struct!(
    /// One fold per piece of the loop (see [`ParallelIterator::fold`]).
    Fold<I, ID, F> { identity: ID, f: F }
);

/// The start of each piece of a `fold`: a function's result or a clone.
pub trait Identity: Sync + Send {
    /// What a piece starts from.
    type Out;
    /// A fresh start.
    fn make(&self) -> Self::Out;
}

impl<U, ID: Fn() -> U + Sync + Send> Identity for ID {
    type Out = U;
    fn make(&self) -> U {
        self()
    }
}

impl<T: Clone + Send> Identity for CloneOf<T> {
    type Out = T;
    fn make(&self) -> T {
        self.get()
    }
}

impl<I, ID, F> ParallelIterator for Fold<I, ID, F>
where
    I: ParallelIterator,
    ID: Identity,
    F: Fn(ID::Out, I::Item) -> ID::Out + Sync + Send,
    ID::Out: Send,
{
    type Item = ID::Out;
    fn drive<K: Kernel<ID::Out>>(self, inner: K) -> K::Output {
        self.base.drive(FoldKernel {
            inner,
            identity: self.identity,
            f: self.f,
        })
    }
}
