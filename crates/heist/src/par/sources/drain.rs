//! `par_drain` (rayon's `ParallelDrainRange` and `ParallelDrainFull`): a `Vec`'s range
//! is moved out in place, by the same producer as `Vec::into_par_iter`, and the tail
//! closes the gap when the loop ends, also if it panics. Other collections move their
//! items out into a `Vec` first, as rayon does for most of them.

use crate::par::engine::driver::Kernel;
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::{
    AsIndexed, IndexedOrNot, IndexedParallelIterator, ParallelIterator, ProducerCallback,
};
use crate::par::sources::vec_slice::{DrainProducer, IntoIter};
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::ops::{Bound, Range, RangeBounds};
use std::ptr;

/// Moves a range of items out of a collection in parallel, leaving the rest.
pub trait ParallelDrainRange<Idx = usize> {
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items.
    type Item: Send;
    /// The items of `range`, moved out; the collection keeps the others, in order.
    ///
    /// # Panics
    /// If the range is out of bounds (or, for a `String`, not on char boundaries).
    fn par_drain<R: RangeBounds<Idx>>(self, range: R) -> Self::Iter;
}

/// Moves every item out of a collection in parallel, leaving it empty.
pub trait ParallelDrainFull {
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items.
    type Item: Send;
    /// Every item, moved out.
    fn par_drain(self) -> Self::Iter;
}

/// The items of a range of a `Vec`, moved out in parallel (see
/// [`ParallelDrainRange::par_drain`]). Dropped without running, it drops them.
#[derive(Debug)]
pub struct Drain<'a, T: Send> {
    vec: &'a mut Vec<T>,
    range: Range<usize>,
}

/// `range` of a collection of `len` items, checked.
fn bounds(range: impl RangeBounds<usize>, len: usize) -> Range<usize> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1).expect("par_drain: range start overflows"),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1).expect("par_drain: range end overflows"),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    assert!(
        start <= end && end <= len,
        "par_drain: range {start}..{end} out of bounds of {len} items"
    );
    start..end
}

impl<'a, T: Send> ParallelDrainRange<usize> for &'a mut Vec<T> {
    type Iter = Drain<'a, T>;
    type Item = T;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> Drain<'a, T> {
        let range = bounds(range, self.len());
        Drain { vec: self, range }
    }
}

/// Closes the gap a drained range left: moves the tail down, when the loop is over.
struct Tail<'a, T> {
    vec: &'a mut Vec<T>,
    start: usize,
    end: usize,
    len: usize,
}

impl<T> Drop for Tail<'_, T> {
    fn drop(&mut self) {
        let tail = self.len - self.end;
        // SAFETY: the vector's length is `start` while the range is drained, so the tail
        // `end..len` is still initialised and owned by nobody else; it moves to
        // `start..`, inside the allocation, and the length then covers it again. The
        // range's items were all moved out or dropped by the producers.
        unsafe {
            let p = self.vec.as_mut_ptr();
            ptr::copy(p.add(self.end), p.add(self.start), tail);
            self.vec.set_len(self.start + tail);
        }
    }
}

impl<T: Send> Drain<'_, T> {
    /// Hands the range's items to `f` as a producer that owns them.
    fn with_drain<R>(self, f: impl FnOnce(DrainProducer<'_, T>) -> R) -> R {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again; its fields move out once.
        let (vec, range) = unsafe { (ptr::read(&this.vec), ptr::read(&this.range)) };
        let len = vec.len();
        // SAFETY: with the length at `range.start`, a leak (say, of `f`'s pieces) leaves
        // only initialised items in the vector; the range goes to the producer and the
        // tail to `Tail`, which restores it.
        unsafe { vec.set_len(range.start) };
        let tail = Tail {
            vec,
            start: range.start,
            end: range.end,
            len,
        };
        // SAFETY: `start..end` are initialised items that nothing else owns now (see
        // above), inside the buffer, which `tail` keeps borrowed until after `f`.
        let items = unsafe {
            let p = tail.vec.as_mut_ptr().add(range.start);
            std::slice::from_raw_parts_mut(p, range.len())
        };
        let out = f(DrainProducer::new(items));
        drop(tail);
        out
    }
}

impl<T: Send> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        self.vec.drain(self.range.clone());
    }
}

impl<T: Send> ParallelIterator for Drain<'_, T> {
    type Item = T;
    fn drive<K: Kernel<T>>(self, kernel: K) -> K::Output {
        self.with_drain(|p| crate::par::engine::driver::bridge_exact(p, &kernel))
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.range.len())
    }
    fn with_producer_or_self<CB: IndexedOrNot<T>>(self, cb: CB) -> CB::Output {
        self.with_producer(AsIndexed(cb))
    }
}

impl<T: Send> IndexedParallelIterator for Drain<'_, T> {
    fn len(&self) -> usize {
        self.range.len()
    }
    fn with_producer<CB: ProducerCallback<T>>(self, cb: CB) -> CB::Output {
        self.with_drain(|p| cb.callback(p))
    }
}

impl<T: Send> ParallelDrainRange<usize> for &mut VecDeque<T> {
    type Iter = IntoIter<T>;
    type Item = T;
    /// Moves the range's items into a `Vec` first.
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> IntoIter<T> {
        self.drain(range).collect::<Vec<_>>().into_par_iter()
    }
}

impl ParallelDrainRange<usize> for &mut String {
    type Iter = IntoIter<char>;
    type Item = char;
    /// Moves the range's chars into a `Vec` first.
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> IntoIter<char> {
        self.drain(range).collect::<Vec<_>>().into_par_iter()
    }
}

/// Implements `ParallelDrainFull` by moving the items into a `Vec` (the collection
/// keeps its capacity).
macro_rules! drain_full {
    ([$($g:tt)*] $coll:ty, $item:ty) => {
        impl<$($g)*> ParallelDrainFull for &mut $coll {
            type Iter = IntoIter<$item>;
            type Item = $item;
            fn par_drain(self) -> IntoIter<$item> {
                self.drain().collect::<Vec<_>>().into_par_iter()
            }
        }
    };
}

drain_full!([T: Send] BinaryHeap<T>, T);
drain_full!([K: Send + Eq + Hash, V: Send, S: BuildHasher] HashMap<K, V, S>, (K, V));
drain_full!([T: Send + Eq + Hash, S: BuildHasher] HashSet<T, S>, T);
