//! Adapters whose pieces keep state of their own: `map_init` and `map_with` (a value per
//! piece), and `fold` and `try_fold` (one partial per piece, as rayon's yield).

use crate::par::engine::driver::{IndexedProducer, Kernel, Producer};
use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator, ProducerCallback};
use crate::par::iter::try_op::Try;
use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::sync::Mutex;

/// Makes clones of one value, for each piece of a loop that may run anywhere (the
/// identity of [`ParallelIterator::fold_with`]).
pub struct CloneOf<T>(Mutex<T>);

impl<T: Clone> Clone for CloneOf<T> {
    fn clone(&self) -> Self {
        CloneOf::new(self.get())
    }
}

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

/// The kernel of `map_init` and `map_with`: each piece makes its own state with `init`
/// and keeps it across its blocks.
pub(crate) struct MapInitKernel<'a, K, ID, F> {
    inner: K,
    init: &'a ID,
    f: &'a F,
}

impl<T, R, K, ID, F> Kernel<T> for MapInitKernel<'_, K, ID, F>
where
    K: Kernel<R>,
    ID: Identity,
    F: Fn(&mut ID::Out, T) -> R + Sync,
{
    type Acc = (ID::Out, K::Acc);
    type Output = K::Output;
    fn start(&self) -> Self::Acc {
        (self.init.make(), self.inner.start())
    }
    fn fold<I: Iterator<Item = T>>(&self, (mut s, acc): Self::Acc, items: I) -> Self::Acc {
        let acc = self.inner.fold(acc, items.map(|x| (self.f)(&mut s, x)));
        (s, acc)
    }
    fn finish(&self, (_, acc): Self::Acc) -> K::Output {
        self.inner.finish(acc)
    }
    combine_and_done!(|acc| &acc.1);
}

adapter_struct!(
    /// Items mapped with per-piece state made by a function (see
    /// [`ParallelIterator::map_init`]).
    MapInit<I, INIT, F> { init: INIT, f: F }
);

adapter_struct!(
    /// Items mapped with a per-piece clone of a value (see [`ParallelIterator::map_with`]).
    MapWith<I, S, F> { init: S, f: F }
);

/// Implements both iterator traits for `map_init` and `map_with`, given how each turns
/// its `init` field into an [`Identity`]. Consumers make the state once per piece of the
/// loop. On the indexed path (zip, enumerate, ...) the state rides in the producer from
/// block to block, so there it must be `Send`.
macro_rules! map_init_like {
    ([$($g:ident)?] $ty:ty, |$init:ident| $make:expr, where [$($bounds:tt)*]) => {
        impl<I, $($g,)? F, S, R> ParallelIterator for $ty
        where
            I: ParallelIterator,
            F: Fn(&mut S, I::Item) -> R + Sync + Send,
            R: Send,
            $($bounds)*
        {
            type Item = R;
            fn drive<K: Kernel<R>>(self, inner: K) -> K::Output {
                let $init = self.init;
                let init = $make;
                let f = self.f;
                self.base.drive(MapInitKernel { inner, init: &init, f: &f })
            }
            fn opt_len(&self) -> Option<usize> {
                self.base.opt_len()
            }
        }

        impl<I, $($g,)? F, S, R> IndexedParallelIterator for $ty
        where
            I: IndexedParallelIterator,
            F: Fn(&mut S, I::Item) -> R + Sync + Send,
            R: Send,
            S: Send,
            $($bounds)*
        {
            fn len(&self) -> usize {
                self.base.len()
            }
            fn with_producer<CB: ProducerCallback<R>>(self, cb: CB) -> CB::Output {
                let $init = self.init;
                let init = $make;
                self.base.with_producer(MapInitCallback { cb, init, f: self.f })
            }
        }
    };
}

map_init_like!([INIT] MapInit<I, INIT, F>, |init| init, where [INIT: Fn() -> S + Sync + Send]);
map_init_like!([] MapWith<I, S, F>, |init| CloneOf::new(init), where [S: Clone + Send]);

/// Hands on the producer of a `map_init` or `map_with`.
struct MapInitCallback<CB, ID, F> {
    cb: CB,
    init: ID,
    f: F,
}

impl<T, R, CB, ID, F> ProducerCallback<T> for MapInitCallback<CB, ID, F>
where
    CB: ProducerCallback<R>,
    ID: Identity<Out: Send>,
    F: Fn(&mut ID::Out, T) -> R + Sync + Send,
{
    type Output = CB::Output;
    fn callback<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
        self.cb.callback(MapInitProducer {
            base,
            init: &self.init,
            f: &self.f,
            state: None,
        })
    }
}

/// A producer seen through `map_init`: the owner's state goes with the lower part of a
/// split and from block to block.
struct MapInitProducer<'a, P, ID: Identity, F> {
    base: P,
    init: &'a ID,
    f: &'a F,
    state: Option<ID::Out>,
}

impl<'a, P, ID, F, R> Producer for MapInitProducer<'a, P, ID, F>
where
    P: IndexedProducer,
    ID: Identity<Out: Send>,
    F: Fn(&mut ID::Out, P::Item) -> R + Sync,
{
    type Item = R;
    type IntoIter = MapInitIter<'a, P::IntoIter, ID::Out, F>;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let (init, f) = (self.init, self.f);
        let lo = MapInitProducer {
            base: l,
            init,
            f,
            state: self.state,
        };
        let hi = MapInitProducer {
            base: r,
            init,
            f,
            state: None,
        };
        (lo, hi)
    }
    fn into_iter(self) -> Self::IntoIter {
        let init = self.init;
        MapInitIter {
            it: self.base.into_iter(),
            state: self.state.unwrap_or_else(|| init.make()),
            f: self.f,
        }
    }
    fn fold_block<K: Kernel<R>>(self, n: usize, kernel: &K, acc: K::Acc) -> (K::Acc, Self) {
        let (init, f) = (self.init, self.f);
        let state = self.state.unwrap_or_else(|| init.make());
        let k = MapInitKernel {
            inner: kernel,
            init,
            f,
        };
        let ((state, acc), base) = self.base.fold_block(n, &k, (state, acc));
        let rest = MapInitProducer {
            base,
            init,
            f,
            state: Some(state),
        };
        (acc, rest)
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

impl<P, ID, F, R> IndexedProducer for MapInitProducer<'_, P, ID, F>
where
    P: IndexedProducer,
    ID: Identity<Out: Send>,
    F: Fn(&mut ID::Out, P::Item) -> R + Sync,
{
}

/// The items of one block, mapped with the state.
struct MapInitIter<'a, I, S, F> {
    it: I,
    state: S,
    f: &'a F,
}

impl<I: Iterator, S, R, F: Fn(&mut S, I::Item) -> R> Iterator for MapInitIter<'_, I, S, F> {
    type Item = R;
    fn next(&mut self) -> Option<R> {
        let x = self.it.next()?;
        Some((self.f)(&mut self.state, x))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.it.size_hint()
    }
    fn fold<B, G: FnMut(B, R) -> B>(self, init: B, mut g: G) -> B {
        let (f, mut state) = (self.f, self.state);
        self.it.fold(init, move |b, x| g(b, f(&mut state, x)))
    }
}

impl<I, S, R, F> DoubleEndedIterator for MapInitIter<'_, I, S, F>
where
    I: DoubleEndedIterator,
    F: Fn(&mut S, I::Item) -> R,
{
    fn next_back(&mut self) -> Option<R> {
        let x = self.it.next_back()?;
        Some((self.f)(&mut self.state, x))
    }
}

impl<I, S, R, F> ExactSizeIterator for MapInitIter<'_, I, S, F>
where
    I: ExactSizeIterator,
    F: Fn(&mut S, I::Item) -> R,
{
}

/// The kernel of `fold`: each piece folds its items from `identity()` and passes the
/// one partial on to the inner kernel when it ends. Before a search (`find_any`, ...),
/// which may stop once it has seen a partial, the loop is cut into a few pieces up front
/// (`Kernel::EAGER`), so that one ends early.
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
    combine_and_done!(holds | acc | &acc.1);
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

/// The kernel of `try_fold`: each piece folds from `identity()` until a failure, and
/// passes its one result on when it ends.
pub(crate) struct TryFoldKernel<K, ID, F, R> {
    inner: K,
    identity: ID,
    f: F,
    _r: PhantomData<fn() -> R>,
}

impl<T, R, K, ID, F> Kernel<T> for TryFoldKernel<K, ID, F, R>
where
    R: Try<Output = ID::Out>,
    K: Kernel<R>,
    ID: Identity,
    F: Fn(ID::Out, T) -> R + Sync,
{
    type Acc = (ControlFlow<R::Residual, ID::Out>, K::Acc);
    type Output = K::Output;
    fn start(&self) -> Self::Acc {
        (
            ControlFlow::Continue(self.identity.make()),
            self.inner.start(),
        )
    }
    fn fold<I: Iterator<Item = T>>(&self, (u, acc): Self::Acc, mut items: I) -> Self::Acc {
        let u = match u {
            ControlFlow::Continue(u) => items.try_fold(u, |u, x| (self.f)(u, x).branch()),
            stop => stop,
        };
        (u, acc)
    }
    fn finish(&self, (u, acc): Self::Acc) -> K::Output {
        let r = match u {
            ControlFlow::Continue(u) => R::from_output(u),
            ControlFlow::Break(e) => R::from_residual(e),
        };
        self.inner.finish(self.inner.fold(acc, std::iter::once(r)))
    }
    combine_and_done!(holds | acc | &acc.1);
}

adapter_struct!(
    /// One fallible fold per piece of the loop (see [`ParallelIterator::try_fold`]).
    TryFold<I, R, ID, F> { identity: ID, f: F, _r: PhantomData<fn() -> R> }
);

/// One fallible fold per piece of the loop, each from a clone of a value (see
/// [`ParallelIterator::try_fold_with`]).
#[must_use = "iterator adapters are lazy"]
pub struct TryFoldWith<I, R: Try, F> {
    base: I,
    init: R::Output,
    f: F,
}

impl<I: Clone, R: Try<Output: Clone>, F: Clone> Clone for TryFoldWith<I, R, F> {
    fn clone(&self) -> Self {
        TryFoldWith::new(self.base.clone(), self.init.clone(), self.f.clone())
    }
}

impl<I: std::fmt::Debug, R: Try<Output: std::fmt::Debug>, F> std::fmt::Debug
    for TryFoldWith<I, R, F>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("TryFoldWith");
        d.field("base", &self.base)
            .field("init", &self.init)
            .finish()
    }
}

impl<I, R: Try, F> TryFoldWith<I, R, F> {
    pub(crate) fn new(base: I, init: R::Output, f: F) -> Self {
        TryFoldWith { base, init, f }
    }
}

impl<I, R, ID, F> ParallelIterator for TryFold<I, R, ID, F>
where
    I: ParallelIterator,
    R: Try<Output = ID::Out> + Send,
    ID: Identity,
    F: Fn(ID::Out, I::Item) -> R + Sync + Send,
{
    type Item = R;
    fn drive<K: Kernel<R>>(self, inner: K) -> K::Output {
        self.base.drive(TryFoldKernel {
            inner,
            identity: self.identity,
            f: self.f,
            _r: PhantomData,
        })
    }
}

impl<I, R, F> ParallelIterator for TryFoldWith<I, R, F>
where
    I: ParallelIterator,
    R: Try<Output: Clone + Send> + Send,
    F: Fn(R::Output, I::Item) -> R + Sync + Send,
{
    type Item = R;
    fn drive<K: Kernel<R>>(self, inner: K) -> K::Output {
        self.base.drive(TryFoldKernel {
            inner,
            identity: CloneOf::new(self.init),
            f: self.f,
            _r: PhantomData,
        })
    }
}
