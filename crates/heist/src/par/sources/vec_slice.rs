//! Sources: slices, `Vec` and arrays as indexed parallel iterators (ranges are in
//! `par/sources/ranges.rs`). Each hands the driver a producer over its index range (the
//! index stealers of On Lock-Free Work-stealing Iterators for Parallel Data Structures,
//! §4, with the owner rather than the thief doing the split).

use crate::par::engine::driver::{bridge_exact, Cuts, IndexedProducer, Kernel, Producer};
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::{
    AsIndexed, IndexedOrNot, IndexedParallelIterator, ParallelIterator, ProducerCallback,
};
use std::mem;
use std::ptr;

/// A parallel iterator over `&T` of a slice.
#[derive(Debug)]
pub struct Iter<'a, T> {
    slice: &'a [T],
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter { slice: self.slice }
    }
}

impl<'a, T: Sync> Iter<'a, T> {
    fn len_(&self) -> usize {
        self.slice.len()
    }
    fn producer(self) -> SliceProducer<'a, T> {
        SliceProducer(self.slice)
    }
}

source!(['a, T: Sync + 'a] Iter<'a, T>, Item = &'a T);

/// The producer of a slice's `&T`.
#[derive(Debug)]
pub struct SliceProducer<'a, T>(pub(crate) &'a [T]);

impl<'a, T: Sync> Producer for SliceProducer<'a, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn len(&self) -> usize {
        self.0.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.0.split_at(index);
        (SliceProducer(l), SliceProducer(r))
    }
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
    const CUTS: Option<Cuts<Self>> = Cuts::SHARED;
    unsafe fn cut(&self, from: usize, to: usize) -> Self {
        SliceProducer(&self.0[from..to])
    }
}

impl<T: Sync> IndexedProducer for SliceProducer<'_, T> {}

/// A parallel iterator over `&mut T` of a slice.
#[derive(Debug)]
pub struct IterMut<'a, T> {
    slice: &'a mut [T],
}

impl<'a, T: Send> IterMut<'a, T> {
    fn len_(&self) -> usize {
        self.slice.len()
    }
    fn producer(self) -> SliceMutProducer<'a, T> {
        SliceMutProducer(self.slice)
    }
}

source!(['a, T: Send + 'a] IterMut<'a, T>, Item = &'a mut T);

/// The producer of a slice's `&mut T`.
#[derive(Debug)]
pub struct SliceMutProducer<'a, T>(&'a mut [T]);

impl<'a, T: Send> Producer for SliceMutProducer<'a, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn len(&self) -> usize {
        self.0.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.0.split_at_mut(index);
        (SliceMutProducer(l), SliceMutProducer(r))
    }
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

impl<T: Send> IndexedProducer for SliceMutProducer<'_, T> {}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a [T] {
    type Iter = Iter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter { slice: self }
    }
}

impl<'a, T: Send + 'a> IntoParallelIterator for &'a mut [T] {
    type Iter = IterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> IterMut<'a, T> {
        IterMut { slice: self }
    }
}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a Vec<T> {
    type Iter = Iter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter { slice: self }
    }
}

impl<'a, T: Send + 'a> IntoParallelIterator for &'a mut Vec<T> {
    type Iter = IterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> IterMut<'a, T> {
        IterMut { slice: self }
    }
}

impl<'a, T: Sync + 'a, const N: usize> IntoParallelIterator for &'a [T; N] {
    type Iter = Iter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter { slice: self }
    }
}

impl<'a, T: Send + 'a, const N: usize> IntoParallelIterator for &'a mut [T; N] {
    type Iter = IterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> IterMut<'a, T> {
        IterMut { slice: self }
    }
}

/// A parallel iterator that moves the items out of a `Vec`.
#[derive(Debug, Clone)]
pub struct IntoIter<T> {
    vec: Vec<T>,
}

impl<T: Send> IntoParallelIterator for Vec<T> {
    type Iter = IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter { vec: self }
    }
}

impl<T: Send> IntoIter<T> {
    /// Runs `f` with a producer that owns the items; the buffer is freed afterwards,
    /// also if `f` unwinds (items not yet moved out are dropped by their producers).
    fn with_drain<R>(mut self, f: impl FnOnce(DrainProducer<'_, T>) -> R) -> R {
        let len = self.vec.len();
        // SAFETY: the items `0..len` are handed to the producer, which moves out or drops
        // each exactly once; with length 0 the `Vec` only frees its buffer when dropped.
        unsafe { self.vec.set_len(0) };
        // SAFETY: `0..len` were initialised items of the buffer, which lives until `self`
        // drops after `f`; nothing else uses them meanwhile.
        let items = unsafe { std::slice::from_raw_parts_mut(self.vec.as_mut_ptr(), len) };
        f(DrainProducer(items))
    }
}

impl<T: Send> ParallelIterator for IntoIter<T> {
    type Item = T;
    fn drive<K: Kernel<T>>(self, kernel: K) -> K::Output {
        self.with_drain(|p| bridge_exact(p, &kernel))
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.vec.len())
    }
    fn with_producer_or_self<CB: IndexedOrNot<T>>(self, cb: CB) -> CB::Output {
        self.with_producer(AsIndexed(cb))
    }
}

impl<T: Send> IndexedParallelIterator for IntoIter<T> {
    fn len(&self) -> usize {
        self.vec.len()
    }
    fn with_producer<CB: ProducerCallback<T>>(self, cb: CB) -> CB::Output {
        self.with_drain(|p| cb.callback(p))
    }
}

/// Owns the items of a slice: each is moved out by the block iterator or dropped here.
pub(crate) struct DrainProducer<'a, T>(&'a mut [T]);

impl<'a, T> DrainProducer<'a, T> {
    /// A producer that owns `items`: the caller hands over their ownership.
    pub(crate) fn new(items: &'a mut [T]) -> Self {
        DrainProducer(items)
    }
}

// SAFETY: the producer owns its items (moving them, not sharing them), so sending it
// sends `T`s.
unsafe impl<T: Send> Send for DrainProducer<'_, T> {}

impl<'a, T: Send> Producer for DrainProducer<'a, T> {
    type Item = T;
    type IntoIter = Drain<'a, T>;
    fn len(&self) -> usize {
        self.0.len()
    }
    fn split_at(mut self, index: usize) -> (Self, Self) {
        let items = mem::take(&mut self.0);
        let (l, r) = items.split_at_mut(index);
        (DrainProducer(l), DrainProducer(r))
    }
    fn into_iter(mut self) -> Drain<'a, T> {
        Drain(mem::take(&mut self.0).iter_mut())
    }
}

impl<T: Send> IndexedProducer for DrainProducer<'_, T> {}

impl<T> Drop for DrainProducer<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the producer owns these items and nothing has moved them out.
        unsafe { ptr::drop_in_place(mem::take(&mut self.0) as *mut [T]) };
    }
}

/// Moves the items of a block out; drops those left when dropped.
pub(crate) struct Drain<'a, T>(std::slice::IterMut<'a, T>);

impl<T> Iterator for Drain<'_, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        // SAFETY: each item is owned by this iterator and read out once, as the slice
        // iterator passes it.
        self.0.next().map(|x| unsafe { ptr::read(x) })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<T> DoubleEndedIterator for Drain<'_, T> {
    fn next_back(&mut self) -> Option<T> {
        // SAFETY: as in `next`.
        self.0.next_back().map(|x| unsafe { ptr::read(x) })
    }
}

impl<T> ExactSizeIterator for Drain<'_, T> {}

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        let rest = mem::take(&mut self.0).into_slice();
        // SAFETY: the items not yet passed are still owned here.
        unsafe { ptr::drop_in_place(rest as *mut [T]) };
    }
}
