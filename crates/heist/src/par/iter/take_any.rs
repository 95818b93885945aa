//! Adapters that stop or skip by what the pieces of a loop have seen so far, not by
//! index: `while_some`, `take_any`, `skip_any`, `take_any_while` and `skip_any_while`
//! (rayon's). Which items they keep depends on timing; the kept ones stay in order.
//! Pieces share one word each, so that a stop seen anywhere ends the loop at every
//! piece's next block.

use crate::par::engine::driver::Kernel;
use crate::par::iter::traits::ParallelIterator;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// Claims one of `n` places in `count`; false once all are taken.
fn claim(count: &AtomicUsize, n: usize) -> bool {
    count.load(Relaxed) < n
        && count
            .fetch_update(Relaxed, Relaxed, |c| (c < n).then_some(c + 1))
            .is_ok()
}

adapter_struct!(
    /// The items up to the first `None` found (see [`ParallelIterator::while_some`]).
    WhileSome<I> {}
);

/// The kernel of `while_some`.
pub(crate) struct WhileSomeKernel<K> {
    inner: K,
    stop: AtomicBool,
}

kernel_adapter!(WhileSomeKernel<K>, [T, K: Kernel<T>], T = Option<T>, where [],
    |s, items| items
        .take_while(|_| !s.stop.load(Relaxed))
        .map_while(|x| {
            if x.is_none() {
                s.stop.store(true, Relaxed);
            }
            x
        }),
    done = |s| s.stop.load(Relaxed));

impl<I: ParallelIterator<Item = Option<T>>, T: Send> ParallelIterator for WhileSome<I> {
    type Item = T;
    fn drive<K: Kernel<T>>(self, inner: K) -> K::Output {
        let stop = AtomicBool::new(false);
        self.base.drive(WhileSomeKernel { inner, stop })
    }
}

adapter_struct!(
    /// Any `n` of the items (see [`ParallelIterator::take_any`]).
    TakeAny<I> { n: usize }
);

/// The kernel of `take_any`: items claim places until `n` are taken.
pub(crate) struct TakeAnyKernel<K> {
    inner: K,
    n: usize,
    taken: AtomicUsize,
}

kernel_adapter!(TakeAnyKernel<K>, [T, K: Kernel<T>], T = T, where [],
    |s, items| items.take_while(|_| claim(&s.taken, s.n)),
    done = |s| s.taken.load(Relaxed) >= s.n);

impl<I: ParallelIterator> ParallelIterator for TakeAny<I> {
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, inner: K) -> K::Output {
        let (n, taken) = (self.n, AtomicUsize::new(0));
        self.base.drive(TakeAnyKernel { inner, n, taken })
    }
}

adapter_struct!(
    /// All but any `n` of the items (see [`ParallelIterator::skip_any`]).
    SkipAny<I> { n: usize }
);

/// The kernel of `skip_any`: the first items to claim a place are skipped.
pub(crate) struct SkipAnyKernel<K> {
    inner: K,
    n: usize,
    skipped: AtomicUsize,
}

kernel_adapter!(SkipAnyKernel<K>, [T, K: Kernel<T>], T = T, where [],
    |s, items| items.filter(|_| !claim(&s.skipped, s.n)));

impl<I: ParallelIterator> ParallelIterator for SkipAny<I> {
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, inner: K) -> K::Output {
        let (n, skipped) = (self.n, AtomicUsize::new(0));
        self.base.drive(SkipAnyKernel { inner, n, skipped })
    }
}

adapter_struct!(
    /// Items taken until a predicate fails anywhere (see
    /// [`ParallelIterator::take_any_while`]).
    TakeAnyWhile<I, P> { f: P }
);

/// Whether `f` still holds everywhere, and for `x`; the first failure sets `failed`.
fn holds<T>(failed: &AtomicBool, f: impl Fn(&T) -> bool, x: &T) -> bool {
    let holds = !failed.load(Relaxed) && f(x);
    if !holds {
        failed.store(true, Relaxed);
    }
    holds
}

/// The kernel of `take_any_while`.
pub(crate) struct TakeWhileKernel<K, F> {
    inner: K,
    f: F,
    failed: AtomicBool,
}

kernel_adapter!(TakeWhileKernel<K, F>, [T, K: Kernel<T>, F: Fn(&T) -> bool + Sync], T = T,
    where [], |s, items| items.take_while(|x| holds(&s.failed, &s.f, x)),
    done = |s| s.failed.load(Relaxed));

impl<I: ParallelIterator, P: Fn(&I::Item) -> bool + Sync + Send> ParallelIterator
    for TakeAnyWhile<I, P>
{
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, inner: K) -> K::Output {
        let (f, failed) = (self.f, AtomicBool::new(false));
        self.base.drive(TakeWhileKernel { inner, f, failed })
    }
}

adapter_struct!(
    /// Items skipped until a predicate fails anywhere (see
    /// [`ParallelIterator::skip_any_while`]).
    SkipAnyWhile<I, P> { f: P }
);

/// The kernel of `skip_any_while`.
pub(crate) struct SkipWhileKernel<K, F> {
    inner: K,
    f: F,
    failed: AtomicBool,
}

kernel_adapter!(SkipWhileKernel<K, F>, [T, K: Kernel<T>, F: Fn(&T) -> bool + Sync], T = T,
    where [], |s, items| items.filter(|x| !holds(&s.failed, &s.f, x)));

impl<I: ParallelIterator, P: Fn(&I::Item) -> bool + Sync + Send> ParallelIterator
    for SkipAnyWhile<I, P>
{
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, inner: K) -> K::Output {
        let (f, failed) = (self.f, AtomicBool::new(false));
        self.base.drive(SkipWhileKernel { inner, f, failed })
    }
}
