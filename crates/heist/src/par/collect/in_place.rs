//! Indexed `collect` writes each item straight into its place in the target `Vec`, as
//! rayon's collect consumer does. A piece of the loop owns a range of the target's spare
//! capacity, cut by the same splits as its items, and writes its items there in order.
//! The pieces' ranges never overlap whatever the producer does, because only this
//! module's `Slots` cuts them. A panic anywhere drops exactly the items written so far.

use crate::par::engine::driver::{bridge, IndexedProducer, Kernel, Producer};
use crate::par::iter::consumers::VecList;
use crate::par::iter::traits::{IndexedOrNot, ParallelIterator};
use std::iter;
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

/// A producer paired with the slots its items go to: `left` slots from `next`. Its
/// items are runs: each block of the base producer is written into its slots as it is
/// folded, and the kernel sees the block as one written run.
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
    type Item = Run<T>;
    type IntoIter = Singles<P::IntoIter, T>;
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
        Singles {
            it: self.base.into_iter(),
            next: self.next,
            left: self.left,
        }
    }
    fn fold_block<K>(self, n: usize, kernel: &K, acc: K::Acc) -> (K::Acc, Self)
    where
        K: Kernel<Run<T>>,
    {
        // The base folds the block itself (a `map_init` below keeps its state), writing
        // each item into the block's next slot.
        let n = n.min(self.left);
        let (block, base) = self.base.fold_block(n, &Fill, Block::at(self.next, n));
        // Checked before the rest's slots are handed on: the next block must start right
        // after this one. The base's `fold_block` is safe code that may hand back any
        // accumulator `Fill` can make: only the block given to it, filled, passes (a
        // fresh one from `Fill::start` has no slots). On this panic `block` drops the
        // items written.
        assert!(
            block.run.start == self.next && block.run.len == n,
            "heist: an indexed producer's fold_block did not fold exactly its block"
        );
        // SAFETY: `n <= left`, so this stays inside the range or one past its end.
        let end = unsafe { self.next.add(n) };
        let rest = Slots {
            base,
            next: end,
            left: self.left - n,
            _target: PhantomData,
        };
        (kernel.fold(acc, iter::once(block.run)), rest)
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

/// The slots of one block as it fills: its run, and how many slots it has. A fresh one
/// from [`Fill::start`] has none, so that items folded into it panic.
struct Block<T> {
    run: Run<T>,
    cap: usize,
}

impl<T> Block<T> {
    fn at(start: *mut T, cap: usize) -> Self {
        Block {
            run: Run { start, len: 0 },
            cap,
        }
    }

    /// Writes `x` into the next slot; panics if the block is full.
    #[inline]
    fn push(&mut self, x: T) {
        assert!(
            self.run.len < self.cap,
            "heist: an indexed producer yielded more items than its length"
        );
        // SAFETY: the block was handed its `cap` slots from `start` for its items alone
        // (`Slots::fold_block`), and slot `len < cap` is not yet written.
        unsafe { ptr::write(self.run.start.add(self.run.len), x) };
        self.run.len += 1;
    }

    /// A copy to fill while one fold runs, handed back when the fold ends or unwinds:
    /// owned by the fold's closure it stays in registers, where a `&mut` held across the
    /// user's calls is stored at every item.
    fn lend(&mut self) -> Lent<'_, T> {
        let mut own = Block::at(self.run.start, self.cap);
        own.run.len = self.run.len;
        Lent { own, to: self }
    }
}

/// A block lent to one fold ([`Block::lend`]).
struct Lent<'b, T> {
    own: Block<T>,
    to: &'b mut Block<T>,
}

impl<T> Drop for Lent<'_, T> {
    fn drop(&mut self) {
        // The lender owns the items written, and the copy owns none.
        self.to.run.len = mem::replace(&mut self.own.run.len, 0);
    }
}

/// The kernel with which a base producer folds a block straight into its slots.
struct Fill;

impl<T: Send> Kernel<T> for Fill {
    type Acc = Block<T>;
    type Output = Run<T>;
    fn start(&self) -> Block<T> {
        Block::at(ptr::null_mut(), 0)
    }
    fn fold<I: Iterator<Item = T>>(&self, mut block: Block<T>, items: I) -> Block<T> {
        let mut lent = block.lend();
        items.for_each(move |x| lent.own.push(x));
        block
    }
    fn finish(&self, block: Block<T>) -> Run<T> {
        block.run
    }
    fn combine(&self, l: Run<T>, r: Run<T>) -> Run<T> {
        Write.combine(l, r)
    }
}

/// A block's items one at a time, each written into its slot and seen as a run of one.
struct Singles<I, T> {
    it: I,
    next: *mut T,
    left: usize,
}

impl<I: Iterator<Item = T>, T> Iterator for Singles<I, T> {
    type Item = Run<T>;
    fn next(&mut self) -> Option<Run<T>> {
        let x = self.it.next()?;
        let mut one = Block::at(self.next, self.left.min(1));
        one.push(x);
        // SAFETY: `push` found a slot left, so this stays inside or one past the end.
        self.next = unsafe { self.next.add(1) };
        self.left -= 1;
        Some(one.run)
    }
}

/// The kernel that joins the written runs of a piece into one.
struct Write;

impl<T: Send> Kernel<Run<T>> for Write {
    type Acc = Run<T>;
    type Output = Run<T>;
    fn start(&self) -> Run<T> {
        Run {
            start: ptr::null_mut(),
            len: 0,
        }
    }
    fn fold<I: Iterator<Item = Run<T>>>(&self, run: Run<T>, blocks: I) -> Run<T> {
        blocks.fold(run, |l, r| self.combine(l, r))
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

impl<T> Drop for Run<T> {
    fn drop(&mut self) {
        // An empty run may have a null start, which `drop_in_place` must not see.
        if self.len != 0 {
            // SAFETY: the run's `len` items from `start` were written and are owned by it.
            unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(self.start, self.len)) };
        }
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
