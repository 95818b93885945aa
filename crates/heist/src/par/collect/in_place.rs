//! Indexed `collect` writes each item straight into its place in the target `Vec`, as
//! rayon's collect consumer does. A piece of the loop owns a range of the target's spare
//! capacity, cut by the same splits as its items, and writes its items there in order.
//! The pieces' ranges never overlap whatever the producer does, because only this
//! module's `Slots` cuts them. A panic anywhere drops exactly the items written so far.

use crate::par::engine::driver::{bridge, IndexedProducer, Kernel, Producer};
use crate::par::iter::consumers::VecList;
use crate::par::iter::traits::{IndexedOrNot, ParallelIterator};
use std::marker::PhantomData;
use std::mem::{self, MaybeUninit};
use std::ptr;

/// Appends the items of `par_iter` to `vec`, in order: in place if the iterator is
/// indexed, else through per-piece `Vec`s.
pub(crate) fn extend_vec<T: Send, I: ParallelIterator<Item = T>>(vec: &mut Vec<T>, par_iter: I) {
    par_iter.with_producer_or_self(Append(vec));
}

/// The callback of [`extend_vec`].
struct Append<'v, T>(&'v mut Vec<T>);

impl<T: Send> IndexedOrNot<T> for Append<'_, T> {
    type Output = ();
    fn indexed<P: IndexedProducer<Item = T>>(self, base: P) {
        let vec = self.0;
        let len = base.len();
        vec.reserve(len);
        let first = vec.spare_capacity_mut()[..len].as_mut_ptr().cast::<T>();
        let slots = Slots {
            base,
            next: first,
            left: len,
            _target: PhantomData,
        };
        let run = bridge(slots, &Write);
        let (start, written) = (run.start, run.len);
        // A producer that yields fewer items than its length leaves a gap: the pieces
        // after it were dropped when the runs did not meet.
        assert!(
            written == len && (len == 0 || start == first),
            "heist: an indexed producer yielded {written} of its {len} items"
        );
        mem::forget(run);
        let old = vec.len();
        // SAFETY: the run covered exactly the `len` slots after `old`, each written once
        // with an item whose ownership the forgotten run handed over.
        unsafe { vec.set_len(old + len) };
    }
    fn unindexed<I: ParallelIterator<Item = T>>(self, iter: I) {
        let pieces = iter.drive(VecList);
        self.0.reserve(pieces.iter().map(Vec::len).sum());
        pieces.into_iter().for_each(|mut p| self.0.append(&mut p));
    }
}

/// Where one item goes: a slot of the target's spare capacity.
struct Slot<T>(*mut T);

// SAFETY: a slot is handed to exactly one item of one piece, which writes a `T` there.
unsafe impl<T: Send> Send for Slot<T> {}

/// A producer paired with the slots its items go to: `left` slots from `next`.
struct Slots<'v, P, T> {
    base: P,
    next: *mut T,
    left: usize,
    _target: PhantomData<&'v mut [MaybeUninit<T>]>,
}

// SAFETY: a `Slots` has its range of the target to itself (only `split_at` cuts ranges,
// into disjoint parts) and writes `T`s there, so it may move to another thread when the
// base producer and `T` may.
unsafe impl<P: Send, T: Send> Send for Slots<'_, P, T> {}

impl<P: IndexedProducer<Item = T>, T: Send> Producer for Slots<'_, P, T> {
    type Item = (Slot<T>, T);
    type IntoIter = SlotIter<P::IntoIter, T>;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.min(self.left);
        let (l, r) = self.base.split_at(index);
        let lo = Slots {
            base: l,
            next: self.next,
            left: at,
            _target: PhantomData,
        };
        let hi = Slots {
            base: r,
            // SAFETY: `at <= left`, so this stays inside the range or one past its end.
            next: unsafe { self.next.add(at) },
            left: self.left - at,
            _target: PhantomData,
        };
        (lo, hi)
    }
    fn into_iter(self) -> Self::IntoIter {
        SlotIter {
            it: self.base.into_iter(),
            cursor: Cursor::new(self.next, self.left),
        }
    }
    fn fold_block<K>(self, n: usize, kernel: &K, acc: K::Acc) -> (K::Acc, Self)
    where
        K: Kernel<(Slot<T>, T)>,
    {
        // The base folds the block itself (a `map_init` below keeps its state), seeing
        // the kernel through `Slotted`.
        let n = n.min(self.left);
        let cursor = Cursor::new(self.next, n);
        let end = cursor.end();
        let ((cursor, acc), base) =
            self.base
                .fold_block(n, &Slotted { inner: kernel }, (cursor, acc));
        // Checked before the rest's slots are handed on: the next block must start right
        // after this one. The base's `fold_block` is safe code that may hand back any
        // accumulator the kernel can make: only the cursor given to it, used up, ends
        // here (a fresh one from `Slotted::start` has no slots). On this panic `acc`
        // drops the items written.
        assert!(
            cursor.left == 0 && cursor.next == end,
            "heist: an indexed producer's fold_block did not fold exactly its block"
        );
        let rest = Slots {
            base,
            next: end,
            left: self.left - n,
            _target: PhantomData,
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

/// The slots of one block: the next one and how many are left. Counted rather than
/// bounded by an end pointer, so that slots of a zero-sized `T` (which all lie at one
/// address) are counted too.
struct Cursor<T> {
    next: *mut T,
    left: usize,
}

impl<T> Cursor<T> {
    fn new(next: *mut T, n: usize) -> Self {
        Cursor { next, left: n }
    }

    /// One past the last slot.
    fn end(&self) -> *mut T {
        // SAFETY: callers pass `n` slots from `next`, all inside the target.
        unsafe { self.next.add(self.left) }
    }

    /// The next slot; panics if a producer yields more items than it said.
    #[inline]
    fn take(&mut self) -> Slot<T> {
        assert!(
            self.left != 0,
            "heist: an indexed producer yielded more items than its length"
        );
        let slot = Slot(self.next);
        // SAFETY: a slot was left, so this stays inside or one past the end.
        self.next = unsafe { self.next.add(1) };
        self.left -= 1;
        slot
    }
}

/// The items of one block paired with their slots (a `Slots` folded by hand).
struct SlotIter<I, T> {
    it: I,
    cursor: Cursor<T>,
}

impl<I: Iterator<Item = T>, T> Iterator for SlotIter<I, T> {
    type Item = (Slot<T>, T);
    fn next(&mut self) -> Option<(Slot<T>, T)> {
        let x = self.it.next()?;
        Some((self.cursor.take(), x))
    }
}

/// A kernel seen through `Slots`, for the base producer's own `fold_block`: the
/// accumulator carries the block's cursor.
struct Slotted<'k, K> {
    inner: &'k K,
}

impl<T, K: Kernel<(Slot<T>, T)>> Kernel<T> for Slotted<'_, K> {
    type Acc = (Cursor<T>, K::Acc);
    type Output = K::Output;
    fn start(&self) -> Self::Acc {
        // No slots: a block folded into a fresh accumulator panics at its first item.
        (Cursor::new(ptr::null_mut(), 0), self.inner.start())
    }
    fn fold<I: Iterator<Item = T>>(&self, (mut cur, acc): Self::Acc, items: I) -> Self::Acc {
        let acc = self.inner.fold(acc, items.map(|x| (cur.take(), x)));
        (cur, acc)
    }
    fn finish(&self, (_, acc): Self::Acc) -> K::Output {
        self.inner.finish(acc)
    }
    combine_and_done!(|acc| &acc.1);
}

/// The kernel that writes each item into its slot.
struct Write;

impl<T: Send> Kernel<(Slot<T>, T)> for Write {
    type Acc = Run<T>;
    type Output = Run<T>;
    fn start(&self) -> Run<T> {
        Run {
            start: ptr::null_mut(),
            len: 0,
        }
    }
    fn fold<I: Iterator<Item = (Slot<T>, T)>>(&self, mut run: Run<T>, items: I) -> Run<T> {
        items.for_each(|(slot, x)| run.push(slot, x));
        run
    }
    fn finish(&self, run: Run<T>) -> Run<T> {
        run
    }
    fn combine(&self, mut l: Run<T>, r: Run<T>) -> Run<T> {
        if l.len == 0 {
            return r;
        }
        // SAFETY: `l`'s items are in its range, so one past its last is in bounds.
        if r.len == 0 || unsafe { l.start.add(l.len) } != r.start {
            return l; // `r` drops its items; the final count then fails.
        }
        l.len += r.len;
        mem::forget(r);
        l
    }
}

/// Items written into consecutive slots from `start`; dropped with the run unless it is
/// forgotten (when they join the target or a run to their left).
struct Run<T> {
    start: *mut T,
    len: usize,
}

// SAFETY: a run owns the `T`s it wrote.
unsafe impl<T: Send> Send for Run<T> {}

impl<T> Run<T> {
    /// Writes `x` after the run's items, which is where its slot must be: a piece's
    /// blocks continue where the last ended (`Slots::fold_block` checks it), and a run
    /// starts at its piece's first slot. Checked here too, since the slot decides where
    /// the write goes only through this compare.
    #[inline]
    fn push(&mut self, slot: Slot<T>, x: T) {
        if self.len == 0 {
            self.start = slot.0;
        }
        // `wrapping_add`: only compared; `start + len` is the slot written below.
        let at = self.start.wrapping_add(self.len);
        assert!(
            at == slot.0,
            "heist: an indexed producer's items reached a slot out of order"
        );
        // SAFETY: `Cursor::take` handed `slot` out of the piece's own range for this item
        // alone, and it is `start + len`, a slot of that range not yet written.
        unsafe { ptr::write(at, x) };
        self.len += 1;
    }
}

impl<T> Drop for Run<T> {
    fn drop(&mut self) {
        // SAFETY: the run's `len` items from `start` were written and are owned by it.
        unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(self.start, self.len)) };
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use crate::prelude::*;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    /// Small enough for Miri: an in-place collect and a drain on two workers, with and
    /// without a panic, with owned items whose drops Miri checks.
    #[test]
    fn in_place_writes_and_drains_on_two_workers() {
        let pool = crate::Pool::builder().workers(2).build().unwrap();
        let words: Vec<String> = (0..200).map(|i| i.to_string()).collect();
        let got: Vec<String> = pool.run(|_| words.par_iter().map(|w| w.clone() + "!").collect());
        assert!(got.iter().zip(&words).all(|(g, w)| *g == format!("{w}!")));
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.run(|_| {
                let v: Vec<String> = words
                    .par_iter()
                    .map(|w| if w == "150" { panic!("150") } else { w.clone() })
                    .collect();
                v
            })
        }));
        assert!(r.is_err());
        let mut v = words.clone();
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.run(|_| {
                v.par_drain(50..120).for_each(|w| {
                    if w == "100" {
                        panic!("100");
                    }
                })
            })
        }));
        assert!(r.is_err());
        assert!(v
            .iter()
            .map(String::as_str)
            .eq(words[..50].iter().chain(&words[120..]).map(String::as_str)));
    }
}
