//! `panic_fuse` (rayon's): once an item panics, the other pieces of the loop stop at
//! their next block (or item, where a block is iterated by hand) instead of running to
//! their end. Without it, a panic reaches the caller only after every other piece has
//! finished, as in rayon, whose `join` runs both sides whatever one of them does.
//!
//! The fuse is blown explicitly where the fold is in heist's hands (the kernel's, a
//! producer's `fold_block`): a guard set before and forgotten after. A block iterated by
//! hand (`into_iter`, under `rev` or `zip`) is blown by its iterator's drop if a panic
//! began while it lived: one that began before (a loop run by a destructor during
//! unwinding) never blows it.

use crate::par::engine::driver::{IndexedProducer, Kernel, Producer};
use crate::par::iter::traits::{
    IndexedOrNot, IndexedParallelIterator, ParallelIterator, ProducerCallback,
};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

adapter_struct!(
    /// The same items, with a fuse that stops the other pieces soon after a panic (see
    /// [`ParallelIterator::panic_fuse`]).
    PanicFuse<I> {}
);

/// Blows the fuse if dropped: forgotten on the normal path.
struct Blow<'f>(&'f AtomicBool);

impl Drop for Blow<'_> {
    fn drop(&mut self) {
        self.0.store(true, Relaxed);
    }
}

/// Runs `f`, blowing `fuse` if it unwinds.
fn guarded<R>(fuse: &AtomicBool, f: impl FnOnce() -> R) -> R {
    let blow = Blow(fuse);
    let out = f();
    std::mem::forget(blow);
    out
}

/// The kernel of a fused loop: done once the fuse is blown.
struct FuseKernel<'f, K> {
    inner: K,
    fuse: &'f AtomicBool,
}

impl<T, K: Kernel<T>> Kernel<T> for FuseKernel<'_, K> {
    type Acc = K::Acc;
    type Output = K::Output;
    fn start(&self) -> K::Acc {
        self.inner.start()
    }
    fn fold<I: Iterator<Item = T>>(&self, acc: K::Acc, items: I) -> K::Acc {
        guarded(self.fuse, || self.inner.fold(acc, items))
    }
    fn finish(&self, acc: K::Acc) -> K::Output {
        guarded(self.fuse, || self.inner.finish(acc))
    }
    fn combine(&self, l: K::Output, r: K::Output) -> K::Output {
        guarded(self.fuse, || self.inner.combine(l, r))
    }
    fn done(&self) -> bool {
        self.fuse.load(Relaxed) || self.inner.done()
    }
    inner_stops!();
}

/// An iterator seen through a fuse, for the unindexed path (`with_producer_or_self`).
struct Fused<'f, I> {
    base: I,
    fuse: &'f AtomicBool,
}

impl<I: ParallelIterator> ParallelIterator for Fused<'_, I> {
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, inner: K) -> K::Output {
        self.base.drive(FuseKernel {
            inner,
            fuse: self.fuse,
        })
    }
}

impl<I: ParallelIterator> ParallelIterator for PanicFuse<I> {
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, inner: K) -> K::Output {
        let fuse = AtomicBool::new(false);
        self.base.drive(FuseKernel { inner, fuse: &fuse })
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
    fn with_producer_or_self<CB: IndexedOrNot<I::Item>>(self, cb: CB) -> CB::Output {
        let fuse = AtomicBool::new(false);
        self.base.with_producer_or_self(Fuse { cb, fuse: &fuse })
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for PanicFuse<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, cb: CB) -> CB::Output {
        let fuse = AtomicBool::new(false);
        self.base.with_producer(Fuse { cb, fuse: &fuse })
    }
}

/// Hands on a producer seen through a fuse, for both `with_producer` and
/// `with_producer_or_self` (an unindexed iterator goes on through [`Fused`]).
struct Fuse<'f, CB> {
    cb: CB,
    fuse: &'f AtomicBool,
}

impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Fuse<'_, CB> {
    type Output = CB::Output;
    fn callback<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
        let fuse = self.fuse;
        self.cb.callback(FuseProducer { base, fuse })
    }
}

impl<T, CB: IndexedOrNot<T>> IndexedOrNot<T> for Fuse<'_, CB> {
    type Output = CB::Output;
    fn indexed<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
        let fuse = self.fuse;
        self.cb.indexed(FuseProducer { base, fuse })
    }
    fn unindexed<I: ParallelIterator<Item = T>>(self, base: I) -> CB::Output {
        let fuse = self.fuse;
        self.cb.unindexed(Fused { base, fuse })
    }
}

/// A producer seen through a fuse: once it is blown, its blocks are dropped unfolded.
struct FuseProducer<'f, P> {
    base: P,
    fuse: &'f AtomicBool,
}

impl<'f, P: IndexedProducer> Producer for FuseProducer<'f, P> {
    type Item = P::Item;
    type IntoIter = FuseIter<'f, P::IntoIter>;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let fuse = self.fuse;
        (
            FuseProducer { base: l, fuse },
            FuseProducer { base: r, fuse },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        FuseIter {
            it: self.base.into_iter(),
            fuse: self.fuse,
            unwinding: std::thread::panicking(),
        }
    }
    fn fold_block<K: Kernel<P::Item>>(self, n: usize, kernel: &K, acc: K::Acc) -> (K::Acc, Self) {
        let fuse = self.fuse;
        if fuse.load(Relaxed) {
            let (_, rest) = self.base.split_at(n);
            return (acc, FuseProducer { base: rest, fuse });
        }
        let (acc, rest) = guarded(fuse, || self.base.fold_block(n, kernel, acc));
        (acc, FuseProducer { base: rest, fuse })
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

impl<P: IndexedProducer> IndexedProducer for FuseProducer<'_, P> {}

/// A block's items seen through a fuse: it ends once the fuse is blown, and blows it if
/// it is dropped in a panic that began while it lived.
struct FuseIter<'f, I> {
    it: I,
    fuse: &'f AtomicBool,
    /// Whether the thread was already unwinding when the block began.
    unwinding: bool,
}

impl<I: Iterator> Iterator for FuseIter<'_, I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.fuse.load(Relaxed) {
            return None;
        }
        self.it.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.it.size_hint()
    }
}

impl<I: DoubleEndedIterator> DoubleEndedIterator for FuseIter<'_, I> {
    fn next_back(&mut self) -> Option<I::Item> {
        if self.fuse.load(Relaxed) {
            return None;
        }
        self.it.next_back()
    }
}

// The length is the base's, which a blown fuse cuts short: only once a panic is on its
// way to the caller, whose first panic is the one re-raised (a `collect` that counts its
// items then panics too).
impl<I: ExactSizeIterator> ExactSizeIterator for FuseIter<'_, I> {}

impl<I> Drop for FuseIter<'_, I> {
    fn drop(&mut self) {
        if !self.unwinding && std::thread::panicking() {
            self.fuse.store(true, Relaxed);
        }
    }
}
