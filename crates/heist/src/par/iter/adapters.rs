//! Adapters that change items but not their places: `map` and its kin work on both the
//! kernel (any iterator) and the producer (indexed iterators keep their indices);
//! `filter`, `flat_map`, `fold`, `map_init`, ... wrap the kernel only.

use crate::par::engine::driver::{IndexedProducer, Kernel, Producer};
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::{
    IndexedOrNot, IndexedParallelIterator, ParallelIterator, ProducerCallback,
};

/// A function applied to each item, shared by every piece of a loop.
pub(crate) trait MapOp<T>: Sync + Send {
    type Out;
    fn call(&self, x: T) -> Self::Out;
}

pub(crate) struct FnOp<F>(F);

impl<T, R, F: Fn(T) -> R + Sync + Send> MapOp<T> for FnOp<F> {
    type Out = R;
    fn call(&self, x: T) -> R {
        (self.0)(x)
    }
}

pub(crate) struct CloneOp;

impl<'a, T: Clone + 'a> MapOp<&'a T> for CloneOp {
    type Out = T;
    fn call(&self, x: &'a T) -> T {
        x.clone()
    }
}

pub(crate) struct CopyOp;

impl<'a, T: Copy + 'a> MapOp<&'a T> for CopyOp {
    type Out = T;
    fn call(&self, x: &'a T) -> T {
        *x
    }
}

pub(crate) struct UpdateOp<F>(F);

impl<T, F: Fn(&mut T) + Sync + Send> MapOp<T> for UpdateOp<F> {
    type Out = T;
    fn call(&self, mut x: T) -> T {
        (self.0)(&mut x);
        x
    }
}

pub(crate) struct InspectOp<F>(F);

impl<T, F: Fn(&T) + Sync + Send> MapOp<T> for InspectOp<F> {
    type Out = T;
    fn call(&self, x: T) -> T {
        (self.0)(&x);
        x
    }
}

impl<T, Op: MapOp<T>> MapOp<T> for &Op {
    type Out = Op::Out;
    fn call(&self, x: T) -> Op::Out {
        (**self).call(x)
    }
}

/// The kernel seen through a map.
pub(crate) struct MapKernel<K, Op> {
    inner: K,
    op: Op,
}

impl<T, K, Op> Kernel<T> for MapKernel<K, Op>
where
    Op: MapOp<T>,
    K: Kernel<Op::Out>,
{
    type Acc = K::Acc;
    type Output = K::Output;
    fn start(&self) -> K::Acc {
        self.inner.start()
    }
    fn fold<I: Iterator<Item = T>>(&self, acc: K::Acc, items: I) -> K::Acc {
        self.inner.fold(acc, items.map(|x| self.op.call(x)))
    }
    fn finish(&self, acc: K::Acc) -> K::Output {
        self.inner.finish(acc)
    }
    combine_and_done!(|acc| acc);
}

/// `inner` seen through a map by `f`.
pub(crate) fn mapped<K, F>(inner: K, f: F) -> MapKernel<K, FnOp<F>> {
    MapKernel { inner, op: FnOp(f) }
}

/// A producer seen through a map.
pub(crate) struct MapProducer<'a, P, Op> {
    base: P,
    op: &'a Op,
}

impl<'a, P: Producer, Op: MapOp<P::Item>> Producer for MapProducer<'a, P, Op> {
    type Item = Op::Out;
    type IntoIter = MapIter<'a, P::IntoIter, Op>;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let op = self.op;
        (MapProducer { base: l, op }, MapProducer { base: r, op })
    }
    fn into_iter(self) -> Self::IntoIter {
        MapIter {
            it: self.base.into_iter(),
            op: self.op,
        }
    }
    fn fold_block<K: Kernel<Op::Out>>(self, n: usize, kernel: &K, acc: K::Acc) -> (K::Acc, Self) {
        let op = self.op;
        let (acc, base) = self
            .base
            .fold_block(n, &MapKernel { inner: kernel, op }, acc);
        (acc, MapProducer { base, op })
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

impl<P: IndexedProducer, Op: MapOp<P::Item>> IndexedProducer for MapProducer<'_, P, Op> {}

/// The sequential iterator of a mapped block.
pub(crate) struct MapIter<'a, I, Op> {
    it: I,
    op: &'a Op,
}

impl<I: Iterator, Op: MapOp<I::Item>> Iterator for MapIter<'_, I, Op> {
    type Item = Op::Out;
    fn next(&mut self) -> Option<Op::Out> {
        self.it.next().map(|x| self.op.call(x))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.it.size_hint()
    }
    fn fold<B, G: FnMut(B, Op::Out) -> B>(self, init: B, mut g: G) -> B {
        let op = self.op;
        self.it.fold(init, move |b, x| g(b, op.call(x)))
    }
}

impl<I: DoubleEndedIterator, Op: MapOp<I::Item>> DoubleEndedIterator for MapIter<'_, I, Op> {
    fn next_back(&mut self) -> Option<Op::Out> {
        self.it.next_back().map(|x| self.op.call(x))
    }
    fn rfold<B, G: FnMut(B, Op::Out) -> B>(self, init: B, mut g: G) -> B {
        let op = self.op;
        self.it.rfold(init, move |b, x| g(b, op.call(x)))
    }
}

impl<I: ExactSizeIterator, Op: MapOp<I::Item>> ExactSizeIterator for MapIter<'_, I, Op> {}

struct MapCallback<CB, Op> {
    cb: CB,
    op: Op,
}

impl<T, CB, Op> ProducerCallback<T> for MapCallback<CB, Op>
where
    Op: MapOp<T>,
    CB: ProducerCallback<Op::Out>,
{
    type Output = CB::Output;
    fn callback<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
        self.cb.callback(MapProducer { base, op: &self.op })
    }
}

impl<T, CB, Op> IndexedOrNot<T> for MapCallback<CB, Op>
where
    Op: MapOp<T, Out: Send>,
    CB: IndexedOrNot<Op::Out>,
{
    type Output = CB::Output;
    fn indexed<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
        self.cb.indexed(MapProducer { base, op: &self.op })
    }
    fn unindexed<I: ParallelIterator<Item = T>>(self, base: I) -> CB::Output {
        self.cb.unindexed(Mapped { base, op: self.op })
    }
}

/// An unindexed iterator seen through a map, for [`IndexedOrNot::unindexed`].
struct Mapped<I, Op> {
    base: I,
    op: Op,
}

impl<I: ParallelIterator, Op: MapOp<I::Item, Out: Send>> ParallelIterator for Mapped<I, Op> {
    type Item = Op::Out;
    fn drive<K: Kernel<Op::Out>>(self, inner: K) -> K::Output {
        self.base.drive(MapKernel { inner, op: self.op })
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}

/// Implements both iterator traits for a map-like adapter with fields `base` and `op`.
macro_rules! map_like {
    ($name:ident<$($p:ident),*>, [$($g:tt),*], $s:ident => $make:expr, Item = $item:ty, where [$($bounds:tt)*]) => {
        impl<$($g),*> ParallelIterator for $name<$($p),*>
        where
            I: ParallelIterator,
            $($bounds)*
        {
            type Item = $item;
            fn drive<K: Kernel<$item>>(self, inner: K) -> K::Output {
                let $s = self;
                let (base, op) = $make;
                base.drive(MapKernel { inner, op })
            }
            fn opt_len(&self) -> Option<usize> {
                self.base.opt_len()
            }
            fn with_producer_or_self<CB: IndexedOrNot<$item>>(self, cb: CB) -> CB::Output {
                let $s = self;
                let (base, op) = $make;
                base.with_producer_or_self(MapCallback { cb, op })
            }
        }

        impl<$($g),*> IndexedParallelIterator for $name<$($p),*>
        where
            I: IndexedParallelIterator,
            $($bounds)*
        {
            fn len(&self) -> usize {
                self.base.len()
            }
            fn with_producer<CB: ProducerCallback<$item>>(self, cb: CB) -> CB::Output {
                let $s = self;
                let (base, op) = $make;
                base.with_producer(MapCallback { cb, op })
            }
        }
    };
}

adapter_struct!(
    /// The items mapped by a function (see [`ParallelIterator::map`]).
    Map<I, F> { op: F }
);

map_like!(Map<I, F>, [I, F, R], s => (s.base, FnOp(s.op)), Item = R,
    where [F: Fn(I::Item) -> R + Sync + Send, R: Send]);

adapter_struct!(
    /// Items passed on after a look (see [`ParallelIterator::inspect`]).
    Inspect<I, F> { op: F }
);

map_like!(Inspect<I, F>, [I, F], s => (s.base, InspectOp(s.op)), Item = I::Item,
    where [F: Fn(&I::Item) + Sync + Send]);

adapter_struct!(
    /// Items changed in place (see [`ParallelIterator::update`]).
    Update<I, F> { op: F }
);

map_like!(Update<I, F>, [I, F], s => (s.base, UpdateOp(s.op)), Item = I::Item,
    where [F: Fn(&mut I::Item) + Sync + Send]);

adapter_struct!(
    /// Clones of referenced items (see [`ParallelIterator::cloned`]).
    Cloned<I> {}
);

map_like!(Cloned<I>, ['a, I, T], s => (s.base, CloneOp), Item = T,
    where [I: ParallelIterator<Item = &'a T>, T: 'a + Clone + Send]);

adapter_struct!(
    /// Copies of referenced items (see [`ParallelIterator::copied`]).
    Copied<I> {}
);

map_like!(Copied<I>, ['a, I, T], s => (s.base, CopyOp), Item = T,
    where [I: ParallelIterator<Item = &'a T>, T: 'a + Copy + Send]);

/// The kernel of `filter`.
pub(crate) struct FilterKernel<K, F> {
    inner: K,
    f: F,
}

kernel_adapter!(FilterKernel<K, F>, [T, K: Kernel<T>, F: Fn(&T) -> bool + Sync], T = T, where [],
    |s, items| items.filter(|x| (s.f)(x)));

/// The kernel of `filter_map`.
pub(crate) struct FilterMapKernel<K, F> {
    inner: K,
    f: F,
}

kernel_adapter!(FilterMapKernel<K, F>, [T, R, K: Kernel<R>, F: Fn(T) -> Option<R> + Sync], T = T,
    where [], |s, items| items.filter_map(&s.f));

/// The kernel of `flat_map_iter`.
pub(crate) struct FlatMapIterKernel<K, F> {
    inner: K,
    f: F,
}

kernel_adapter!(FlatMapIterKernel<K, F>, [T, SI: IntoIterator, K: Kernel<SI::Item>, F: Fn(T) -> SI + Sync],
    T = T, where [], |s, items| items.flat_map(&s.f));

/// Implements `ParallelIterator` for an adapter of `I` with a function `f`: its loop is
/// `I`'s, each piece's kernel wrapped in `$kernel { inner, f }`.
macro_rules! drive_through {
    ([$($g:tt)*] $ty:ty, Item = $item:ty, $kernel:ident, where [$($b:tt)*]) => {
        impl<I: ParallelIterator, $($g)*> ParallelIterator for $ty
        where
            $($b)*
        {
            type Item = $item;
            fn drive<K: Kernel<$item>>(self, inner: K) -> K::Output {
                self.base.drive($kernel { inner, f: self.f })
            }
        }
    };
}

adapter_struct!(
    /// The items for which a predicate holds (see [`ParallelIterator::filter`]).
    Filter<I, P> { f: P }
);

drive_through!([P] Filter<I, P>, Item = I::Item, FilterKernel,
    where [P: Fn(&I::Item) -> bool + Sync + Send]);

adapter_struct!(
    /// Items mapped to options, the `Some`s kept (see [`ParallelIterator::filter_map`]).
    FilterMap<I, P> { f: P }
);

drive_through!([P, R] FilterMap<I, P>, Item = R, FilterMapKernel,
    where [P: Fn(I::Item) -> Option<R> + Sync + Send, R: Send]);

adapter_struct!(
    /// Items mapped to sequential iterators, flattened (see
    /// [`ParallelIterator::flat_map_iter`]).
    FlatMapIter<I, F> { f: F }
);

drive_through!([F, SI] FlatMapIter<I, F>, Item = SI::Item, FlatMapIterKernel,
    where [F: Fn(I::Item) -> SI + Sync + Send, SI: IntoIterator<Item: Send>]);

adapter_struct!(
    /// Sequential iterables, flattened (see [`ParallelIterator::flatten_iter`]).
    FlattenIter<I> {}
);

impl<I> ParallelIterator for FlattenIter<I>
where
    I: ParallelIterator,
    I::Item: IntoIterator,
    <I::Item as IntoIterator>::Item: Send,
{
    type Item = <I::Item as IntoIterator>::Item;
    fn drive<K: Kernel<Self::Item>>(self, inner: K) -> K::Output {
        self.base.drive(FlatMapIterKernel {
            inner,
            f: |x: I::Item| x,
        })
    }
}

/// The kernel of `flat_map`: each item's iterator runs as a nested loop of its own,
/// which may split further; its pieces combine in order with the outer ones. A piece
/// keeps only the combined output of its nested loops: one combine per item.
pub(crate) struct FlatMapKernel<K: Kernel<R>, F, R> {
    inner: K,
    f: F,
    _r: std::marker::PhantomData<fn() -> R>,
}

impl<T, R, PI, K, F> Kernel<T> for FlatMapKernel<K, F, R>
where
    PI: IntoParallelIterator<Item = R>,
    K: Kernel<R>,
    F: Fn(T) -> PI + Sync,
{
    type Acc = Option<K::Output>;
    type Output = K::Output;
    fn start(&self) -> Self::Acc {
        None
    }
    fn fold<I: Iterator<Item = T>>(&self, acc: Self::Acc, mut items: I) -> Self::Acc {
        let mut done = acc;
        // Folded from its start, a piece stops at a nested loop that decides it
        // (`find_first`); one folded from its end needs each block whole.
        while K::FROM_BACK || !done.as_ref().is_some_and(|d| self.inner.output_full(d)) {
            let Some(x) = items.next() else { break };
            let nested = (self.f)(x).into_par_iter().drive(&self.inner);
            done = Some(match done {
                Some(d) => self.inner.combine(d, nested),
                None => nested,
            });
        }
        done
    }
    fn finish(&self, done: Self::Acc) -> K::Output {
        done.unwrap_or_else(|| self.inner.finish(self.inner.start()))
    }
    fn full(&self, done: &Self::Acc) -> bool {
        done.as_ref().is_some_and(|d| self.inner.output_full(d))
    }
    combine_and_done!();
}

adapter_struct!(
    /// Items mapped to parallel iterators, flattened (see [`ParallelIterator::flat_map`]).
    FlatMap<I, F> { f: F }
);

impl<I, F, PI> ParallelIterator for FlatMap<I, F>
where
    I: ParallelIterator,
    F: Fn(I::Item) -> PI + Sync + Send,
    PI: IntoParallelIterator,
{
    type Item = PI::Item;
    fn drive<K: Kernel<PI::Item>>(self, inner: K) -> K::Output {
        self.base.drive(FlatMapKernel {
            inner,
            f: self.f,
            _r: std::marker::PhantomData,
        })
    }
}

adapter_struct!(
    /// Parallel iterables, flattened (see [`ParallelIterator::flatten`]).
    Flatten<I> {}
);

impl<I> ParallelIterator for Flatten<I>
where
    I: ParallelIterator,
    I::Item: IntoParallelIterator,
{
    type Item = <I::Item as IntoParallelIterator>::Item;
    fn drive<K: Kernel<Self::Item>>(self, inner: K) -> K::Output {
        self.base.drive(FlatMapKernel {
            inner,
            f: |x: I::Item| x,
            _r: std::marker::PhantomData,
        })
    }
}
