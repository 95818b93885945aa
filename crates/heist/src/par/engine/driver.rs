//! The loop driver: one task over a splittable range, folded by its owner in blocks that
//! grow exponentially (the batch growth of On Lock-Free Work-stealing Iterators for
//! Parallel Data Structures, §5) and split only when a thief asks (the lazy splitting of
//! Embracing Explicit Communication in Work-Stealing Runtime Systems, §5.3). A split
//! pushes the upper part through [`Worker::join`], so a loop nobody steals from runs with
//! no split, no join and no allocation.
//!
//! A loop called outside any worker runs on the pool's workers, as in rayon; with
//! `PoolBuilder::caller_helps` it starts on the calling thread instead (see
//! `par/engine/from_outside.rs`). On
//! relay, a split cuts the rest into one piece per waiting steal request plus one
//! (Embracing Explicit Communication, Fig. 5.13). While the owner folds a block it cannot
//! bound in time, a thief may take the rest without it (`par/engine/standing.rs`).
//!
//! The protocol is public, for library authors: a collection that can hand out a
//! [`Producer`] becomes a parallel iterator (see [`Producer`]'s example).

use crate::par::engine::demand::{self, split_demanded};
use crate::par::engine::from_outside;
use crate::par::engine::pace::{Blocks, MIN_SPLIT};
use crate::par::engine::seam::stat;
use crate::par::engine::seam::worker::{self, Worker};
use crate::par::engine::seam::{global_or_panic, Pool};
use crate::par::engine::standing;
use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// A splittable sequence of items: what a running loop holds, whether its iterator is
/// indexed or not (public as `iter::plumbing::UnindexedProducer`; an indexed iterator's
/// is also an [`IndexedProducer`], public as rayon's `iter::plumbing::Producer`).
///
/// **Difference from rayon:** rayon's `UnindexedProducer` splits in halves of its own
/// choosing and folds into a `Folder`; this one splits at an index, as rayon's
/// `Producer` does, and the driver folds its blocks.
///
/// The driver folds a producer in blocks: it splits off the first `n` items with
/// [`split_at`](Producer::split_at) and folds them through
/// [`into_iter`](Producer::into_iter), a plain sequential iterator, so the inner loop
/// is the producer's own. When a thief asks, it splits the rest and hands the upper part
/// over. [`len`](Producer::len) guides where to cut; it must be exact only for an
/// [`IndexedProducer`].
///
/// # Example: a collection of one's own
///
/// ```
/// use heist::iter::plumbing::{bridge, Kernel, UnindexedProducer};
/// use heist::prelude::*;
///
/// /// The squares of `lo..hi`, produced lazily.
/// struct Squares { lo: u64, hi: u64 }
///
/// impl UnindexedProducer for Squares {
///     type Item = u64;
///     type IntoIter = std::iter::Map<std::ops::Range<u64>, fn(u64) -> u64>;
///     fn len(&self) -> usize { (self.hi - self.lo) as usize }
///     fn split_at(self, i: usize) -> (Self, Self) {
///         let mid = self.lo + i as u64;
///         (Squares { lo: self.lo, hi: mid }, Squares { lo: mid, hi: self.hi })
///     }
///     fn into_iter(self) -> Self::IntoIter { (self.lo..self.hi).map(|x| x * x) }
/// }
///
/// impl ParallelIterator for Squares {
///     type Item = u64;
///     fn drive<K: Kernel<u64>>(self, kernel: K) -> K::Output { bridge(self, &kernel) }
/// }
///
/// let s: u64 = Squares { lo: 0, hi: 1000 }.filter(|x| x % 2 == 0).sum();
/// assert_eq!(s, (0..1000u64).map(|x| x * x).filter(|x| x % 2 == 0).sum::<u64>());
/// ```
// rayon's trait has no `is_empty`; the name and shape follow it.
#[allow(clippy::len_without_is_empty)]
pub trait Producer: Send + Sized {
    /// What it produces.
    type Item;
    /// The sequential iterator over a block.
    type IntoIter: Iterator<Item = Self::Item>;
    /// How many items are left (an estimate, unless this is an [`IndexedProducer`]).
    fn len(&self) -> usize;
    /// Splits into the first `index` items and the rest (`index <= len()`).
    fn split_at(self, index: usize) -> (Self, Self);
    /// The items, in order.
    fn into_iter(self) -> Self::IntoIter;
    /// Folds the first `n` items (`n <= len()`) into `acc` and returns the rest. The
    /// default splits them off and folds them through `into_iter`; a producer over a
    /// sequential-access structure folds them in place instead.
    fn fold_block<K: Kernel<Self::Item>>(
        self,
        n: usize,
        kernel: &K,
        acc: K::Acc,
    ) -> (K::Acc, Self) {
        let (head, rest) = self.split_at(n);
        (kernel.fold(acc, head.into_iter()), rest)
    }
    /// The smallest part a split may leave (`with_min_len`).
    fn min_len(&self) -> usize {
        1
    }
    /// The largest block the owner folds at once (`with_max_len`).
    fn max_len(&self) -> usize {
        usize::MAX
    }
    /// Whether [`cut`](Producer::cut) works, with the proof that this producer may be
    /// shared between threads while it is cut ([`Cuts::SHARED`], which asks that it be
    /// `Sync`): then a loop over this producer can be shared through one progress word
    /// (loops started outside the pool, and
    /// [`thief_splitting`](crate::iter::ThiefSplitting::thief_splitting)), and a thief
    /// can take part of it while its owner is inside a long item (the owner's standing
    /// offers). Ranges and slices can; the default is no.
    ///
    /// ```
    /// use heist::iter::plumbing::{Cuts, UnindexedProducer};
    ///
    /// /// The numbers `lo..hi`.
    /// struct Numbers { lo: u64, hi: u64 }
    ///
    /// impl UnindexedProducer for Numbers {
    ///     type Item = u64;
    ///     type IntoIter = std::ops::Range<u64>;
    ///     fn len(&self) -> usize { (self.hi - self.lo) as usize }
    ///     fn split_at(self, i: usize) -> (Self, Self) {
    ///         let mid = self.lo + i as u64;
    ///         (Numbers { lo: self.lo, hi: mid }, Numbers { lo: mid, hi: self.hi })
    ///     }
    ///     fn into_iter(self) -> Self::IntoIter { self.lo..self.hi }
    ///     const CUTS: Option<Cuts<Self>> = Cuts::SHARED;
    ///     unsafe fn cut(&self, from: usize, to: usize) -> Self {
    ///         Numbers { lo: self.lo + from as u64, hi: self.lo + to as u64 }
    ///     }
    /// }
    /// ```
    ///
    /// A producer that is not `Sync` cannot say so: pieces are cut out of one `&self`
    /// on several threads at once.
    ///
    /// ```compile_fail,E0277
    /// use heist::iter::plumbing::{Cuts, UnindexedProducer};
    /// use std::cell::Cell;
    ///
    /// /// The numbers `lo..hi`, counting its cuts in a `Cell` (`Send`, not `Sync`).
    /// struct Counted { lo: u64, hi: u64, cuts: Cell<u32> }
    ///
    /// impl UnindexedProducer for Counted {
    ///     type Item = u64;
    ///     type IntoIter = std::ops::Range<u64>;
    ///     fn len(&self) -> usize { (self.hi - self.lo) as usize }
    ///     fn split_at(self, i: usize) -> (Self, Self) {
    ///         let mid = self.lo + i as u64;
    ///         let cuts = Cell::new(0);
    ///         (Counted { lo: self.lo, hi: mid, cuts: self.cuts }, Counted { lo: mid, hi: self.hi, cuts })
    ///     }
    ///     fn into_iter(self) -> Self::IntoIter { self.lo..self.hi }
    ///     const CUTS: Option<Cuts<Self>> = Cuts::SHARED;
    ///     unsafe fn cut(&self, from: usize, to: usize) -> Self {
    ///         self.cuts.set(self.cuts.get() + 1); // a data race, were this allowed
    ///         Counted { lo: self.lo + from as u64, hi: self.lo + to as u64, cuts: Cell::new(0) }
    ///     }
    /// }
    /// ```
    const CUTS: Option<Cuts<Self>> = None;
    /// The items `from..to` (`from <= to <= len()`), cut out of a producer that stays
    /// whole: how a thief takes part of a loop without its owner.
    ///
    /// # Safety
    /// Only if `CUTS` is `Some`. The caller cuts disjoint ranges only, possibly from
    /// several threads at once (the producer is `Sync`: [`Cuts`]), and neither splits nor
    /// iterates `self` while a piece lives. An implementation may rely on this; safe code
    /// in it cannot cause undefined behaviour whatever it returns. The default panics.
    unsafe fn cut(&self, from: usize, to: usize) -> Self {
        let _ = (from, to);
        unreachable!("heist: `Producer::cut` on a producer whose `CUTS` is `None`")
    }
}

/// The proof that a [`Producer`] may be shared between threads while pieces are cut out
/// of it ([`Producer::CUTS`]). Only [`Cuts::SHARED`] makes one, and only for a producer
/// that is `Sync`; the loop driver shares `&P` between threads only while it holds one.
/// Invariant in `P`, so that no proof for one type passes for another.
pub struct Cuts<P>(PhantomData<fn(P) -> P>);

impl<P> Clone for Cuts<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Cuts<P> {}

impl<P> std::fmt::Debug for Cuts<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cuts")
    }
}

impl<P: Producer + Sync> Cuts<P> {
    /// What [`Producer::CUTS`] is for a producer that can be cut.
    pub const SHARED: Option<Cuts<P>> = Some(Cuts(PhantomData));
}

/// A producer that pieces may be cut out of from several threads at once: `&P` with the
/// proof that `P` is `Sync`.
pub(super) struct Shared<'a, P> {
    p: &'a P,
    _proof: Cuts<P>,
}

impl<P> Clone for Shared<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Shared<'_, P> {}

// SAFETY: a `Shared` holds a `Cuts<P>`, which only `Cuts::SHARED` makes, for `P: Sync`
// alone; so `&P` may cross threads, and that is all a `Shared` holds.
unsafe impl<P> Send for Shared<'_, P> {}
// SAFETY: as for `Send`.
unsafe impl<P> Sync for Shared<'_, P> {}

impl<'a, P: Producer> Shared<'a, P> {
    /// `p`, if it can be cut (its `CUTS` holds the proof).
    #[inline(always)]
    pub(super) fn new(p: &'a P) -> Option<Self> {
        P::CUTS.map(|proof| Shared { p, _proof: proof })
    }

    /// The producer.
    pub(super) fn get(&self) -> &'a P {
        self.p
    }

    /// [`Producer::cut`].
    ///
    /// # Safety
    /// As for `Producer::cut` (`CUTS` holds, since a `Shared` was made).
    pub(super) unsafe fn cut(&self, from: usize, to: usize) -> P {
        // SAFETY: the caller's contract.
        unsafe { self.p.cut(from, to) }
    }
}

/// The producer of an indexed iterator (public as rayon's `iter::plumbing::Producer`, the
/// one [`with_producer`](crate::iter::IndexedParallelIterator::with_producer) hands out):
/// a [`Producer`] whose `len` is exact, whose `split_at(i)` leaves exactly `i` items on
/// the left, and whose blocks iterate from both ends with an exact length, so that items
/// have indices (enumerate, zip, rev, take, ...).
pub trait IndexedProducer: Producer<IntoIter: DoubleEndedIterator + ExactSizeIterator> {}

/// What a loop computes, in the shape of the work-stealing iterators' kernels
/// (`zero`, `apply`, `combine`): each piece of the loop starts an accumulator, folds
/// its blocks into it and finishes it; finished pieces combine in index order.
pub trait Kernel<T>: Sync {
    /// A piece's running state; it stays on the thread that runs the piece.
    type Acc;
    /// A finished piece.
    type Output: Send;
    /// A fresh accumulator for a piece.
    fn start(&self) -> Self::Acc;
    /// Folds a block of items, in order.
    fn fold<I: Iterator<Item = T>>(&self, acc: Self::Acc, items: I) -> Self::Acc;
    /// Ends a piece.
    fn finish(&self, acc: Self::Acc) -> Self::Output;
    /// Combines two adjacent pieces, `left` before `right`.
    fn combine(&self, left: Self::Output, right: Self::Output) -> Self::Output;
    /// Whether the result is decided, so that pieces may stop at their next block.
    fn done(&self) -> bool {
        false
    }
    /// Whether the loop wants its items from the end (`find_last`): where the producer's
    /// lengths are exact (indexed producers, 128-bit ranges), each piece then folds its
    /// last block first, and a thief takes the lower part of a split. Pieces and blocks
    /// still combine in index order, so the result is the same either way.
    const FROM_BACK: bool = false;
    /// Whether the kernel may decide before it has seen every item (`find_*`, `any`,
    /// `all`, `try_*`).
    const SEARCH: bool = false;
    /// Whether the loop is cut into a few pieces up front (twice the workers, as rayon
    /// starts): where a search waits behind an adapter that holds its items until its
    /// piece ends (`fold`), so that a piece ends early and the search can stop.
    const EAGER: bool = false;
    /// Whether a piece folded from its start needs no more of its items: none after them
    /// can change its output (rayon's `Folder::full`; `find_first` after its find). The
    /// piece stops there. Not asked where `FROM_BACK` holds.
    fn full(&self, acc: &Self::Acc) -> bool {
        let _ = acc;
        false
    }
    /// Whether no item on the side of `out` not yet folded can change it: the items after
    /// it, or before it where `FROM_BACK` holds (`find_last` after its find).
    fn output_full(&self, out: &Self::Output) -> bool {
        let _ = out;
        false
    }
}

impl<T, K: Kernel<T>> Kernel<T> for &K {
    const FROM_BACK: bool = K::FROM_BACK;
    const SEARCH: bool = K::SEARCH;
    const EAGER: bool = K::EAGER;
    fn full(&self, acc: &K::Acc) -> bool {
        (**self).full(acc)
    }
    fn output_full(&self, out: &K::Output) -> bool {
        (**self).output_full(out)
    }
    type Acc = K::Acc;
    type Output = K::Output;
    fn start(&self) -> K::Acc {
        (**self).start()
    }
    fn fold<I: Iterator<Item = T>>(&self, acc: K::Acc, items: I) -> K::Acc {
        (**self).fold(acc, items)
    }
    fn finish(&self, acc: K::Acc) -> K::Output {
        (**self).finish(acc)
    }
    fn combine(&self, left: K::Output, right: K::Output) -> K::Output {
        (**self).combine(left, right)
    }
    fn done(&self) -> bool {
        (**self).done()
    }
}

/// Runs `kernel` over `producer` in parallel: on this thread's worker if it is one (of
/// any pool), else on the workers of the pool given by [`Pool::enter`] (else the global
/// pool), as rayon runs a loop called outside its pool on the pool's threads. A pool
/// built with [`PoolBuilder::caller_helps`](crate::PoolBuilder::caller_helps) runs such
/// a loop on the calling thread instead, and its workers join in once the rest looks long
/// enough.
///
/// # Panics
/// Re-raises a panic of the kernel or the producer, once the other pieces are done; off
/// a worker, panics if the global pool cannot start.
pub fn bridge<P, K>(producer: P, kernel: &K) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    start::<P, K, false>(producer, kernel)
}

/// [`bridge`] for a producer whose lengths are exact (indexed, or a 128-bit range), which
/// a loop may fold from its end (`Kernel::FROM_BACK`).
pub(crate) fn bridge_exact<P, K>(producer: P, kernel: &K) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    start::<P, K, true>(producer, kernel)
}

/// Whether the loop folds from its end is known where it is compiled, so that a loop
/// compiles only the path it takes (a loop is instantiated per iterator type, and the
/// paths are large).
fn start<P, K, const EXACT: bool>(producer: P, kernel: &K) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    if EXACT && K::FROM_BACK {
        begin::<P, K, true>(producer, kernel)
    } else {
        begin::<P, K, false>(producer, kernel)
    }
}

fn begin<P, K, const BACK: bool>(producer: P, kernel: &K) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    // SAFETY: the reference is dropped before this call returns.
    if let Some(w) = unsafe { worker::current() } {
        return run_on::<P, K, BACK>(w, producer, kernel);
    }
    let pool = outside_pool();
    // The caller's own fold has no piece bound (`with_max_len`), nor an end to start at.
    if !BACK && pool.caller_helps() && len_bounds(&producer).1 >= producer.len() {
        return from_outside::outside(pool, producer, kernel);
    }
    pool.run(|w| run_on::<P, K, BACK>(w, producer, kernel))
}

fn run_on<P, K, const BACK: bool>(w: &Worker, producer: P, kernel: &K) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    if BACK {
        let cap = eager_cap::<P, K>(w, &producer);
        bounded(
            w,
            &Loop::new(kernel),
            producer,
            cap,
            true,
            &crate::par::engine::back::leaf,
        )
    } else {
        run(w, producer, kernel)
    }
}

/// Runs `f` on this thread's worker if it is one (of any pool), else on the pool of
/// [`Pool::enter`] or the global pool.
pub(crate) fn on_worker<R: Send>(f: impl FnOnce(&Worker) -> R + Send) -> R {
    let mut f = Some(f);
    let here = worker::with_current(|w| w.map(|w| f.take().expect("unused")(w)));
    match here {
        Some(out) => out,
        None => outside_pool().run(f.take().expect("unused")),
    }
}

thread_local! {
    /// The pool of the innermost `Pool::enter` running on this thread, if any.
    static ENTERED: Cell<*const Pool> = const { Cell::new(std::ptr::null()) };
}

/// The pool that serves this thread's loops outside any worker.
fn outside_pool() -> &'static Pool {
    let p = ENTERED.with(Cell::get);
    if p.is_null() {
        return global_or_panic();
    }
    // SAFETY: `ENTERED` is non-null only inside `Pool::enter`, whose `&self` outlives the
    // call that reads it here (the reference does not escape this loop's call: `outside`
    // and `run` return before `enter` does). The `'static` is a lie kept local to that
    // call.
    unsafe { &*p }
}

impl Pool {
    /// Runs `f` on this thread with this pool serving the parallel iterators it calls
    /// outside any worker (instead of the global pool). Such a loop starts on this thread
    /// at once, with no round trip; this pool's workers are woken to help only once what
    /// is left of it looks worth their wake-up. `join` and `scope` called outside a
    /// worker still use the global pool.
    ///
    /// ```
    /// use heist::prelude::*;
    /// let pool = heist::Pool::builder().workers(2).build()?;
    /// let v: Vec<u64> = (0..10_000).collect();
    /// let s: u64 = pool.enter(|| v.par_iter().map(|x| x * x).sum());
    /// assert_eq!(s, v.iter().map(|x| x * x).sum());
    /// # Ok::<(), heist::BuildError>(())
    /// ```
    pub fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        /// Restores the outer pool, also when `f` unwinds.
        struct Restore(*const Pool);
        impl Drop for Restore {
            fn drop(&mut self) {
                ENTERED.with(|c| c.set(self.0));
            }
        }
        let _restore = Restore(ENTERED.with(|c| c.replace(self)));
        f()
    }
}

/// Runs `kernel` over `producer` with `w` as the owner of the first piece.
pub fn run<P, K>(w: &Worker, producer: P, kernel: &K) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let cap = eager_cap::<P, K>(w, &producer);
    let leaf = |w: &Worker, lp: &Loop<'_, K>, p: P| {
        let blocks = Blocks::new(&p);
        piece(w, lp, p, lp.kernel.start(), blocks)
    };
    bounded(w, &Loop::new(kernel), producer, cap, false, &leaf)
}

/// The most items a piece of a loop starts with: a share of twice the workers where
/// `Kernel::EAGER` asks for pieces up front, else no bound.
fn eager_cap<P: Producer, K: Kernel<P::Item>>(w: &Worker, p: &P) -> usize {
    if K::EAGER {
        p.len().div_ceil(2 * w.workers()).max(1)
    } else {
        usize::MAX
    }
}

/// Halves a part longer than `with_max_len` (or `cap`) allows until no piece is, as rayon
/// does, and runs each piece with `leaf`: the other halves are pushed for thieves (the
/// upper ones, or the lower ones if `back`), and each piece (a `fold`'s partial, a
/// `map_init`'s state) holds at most that many items, or fewer than twice
/// `with_min_len`.
fn bounded<P, K, L>(
    w: &Worker,
    lp: &Loop<'_, K>,
    p: P,
    cap: usize,
    back: bool,
    leaf: &L,
) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
    L: Fn(&Worker, &Loop<'_, K>, P) -> K::Output + Sync,
{
    let len = p.len();
    let (min, max) = len_bounds(&p);
    if len <= max.min(cap) || len / 2 < min {
        return leaf(w, lp, p);
    }
    let (lo, hi) = p.split_at(len / 2);
    let (first, then) = if back { (hi, lo) } else { (lo, hi) };
    join_parts(
        w,
        lp.kernel,
        back,
        |w| bounded(w, lp, first, cap, back, leaf),
        |w| bounded(w, lp, then, cap, back, leaf),
    )
}

/// Joins two adjacent parts of a loop, `first` run here and `then` pushed, and combines
/// them in index order: `first` is the lower part, or the upper one if `back` (a loop
/// folded from its end). If `first`'s output decides (`Kernel::output_full`), `then`
/// does not run unless a thief has already taken it: its items cannot change the result
/// (rayon's `find_first` skips such parts too).
pub(super) fn join_parts<T, K, A, B>(
    w: &Worker,
    kernel: &K,
    back: bool,
    first: A,
    then: B,
) -> K::Output
where
    K: Kernel<T>,
    A: FnOnce(&Worker) -> K::Output + Send,
    B: FnOnce(&Worker) -> K::Output + Send,
{
    let decided = AtomicBool::new(false);
    let (a, b) = w.join(
        |w| {
            let a = first(w);
            // A kernel's `output_full` speaks of the side it folds towards; a loop that
            // cannot be folded from its end runs forward even where `FROM_BACK` asks.
            if (back || !K::FROM_BACK) && kernel.output_full(&a) {
                decided.store(true, Relaxed);
            }
            a
        },
        |w| {
            if decided.load(Relaxed) {
                kernel.finish(kernel.start())
            } else {
                then(w)
            }
        },
    );
    if back {
        kernel.combine(b, a)
    } else {
        kernel.combine(a, b)
    }
}

/// One running loop: what its pieces share.
pub(in crate::par) struct Loop<'k, K> {
    pub(in crate::par) kernel: &'k K,
    /// Set to stop the other pieces at their next block, where a caller outside the pool
    /// leaves its loop early (`from_outside.rs`, `claim.rs`) or an owner unwinds with an
    /// offer standing (`standing.rs`). A panic in a piece or its callbacks does not stop the
    /// others, as in rayon, whose `join` runs both sides whatever one does (`panic_fuse`
    /// stops them).
    pub(in crate::par) stop: AtomicBool,
}

impl<'k, K> Loop<'k, K> {
    pub(in crate::par) fn new(kernel: &'k K) -> Self {
        Loop {
            kernel,
            stop: AtomicBool::new(false),
        }
    }

    pub(in crate::par) fn stopped<T>(&self) -> bool
    where
        K: Kernel<T>,
    {
        self.stop.load(Relaxed) || self.kernel.done()
    }
}

/// The smallest part a split may leave and the largest block, at least 1 each.
pub(in crate::par) fn len_bounds<P: Producer>(p: &P) -> (usize, usize) {
    (p.min_len().max(1), p.max_len().max(1))
}

/// The owner's loop over one piece: fold blocks (see [`Blocks`]), and split when asked
/// and what is left is worth it.
pub(in crate::par) fn piece<P, K>(
    w: &Worker,
    lp: &Loop<'_, K>,
    mut p: P,
    mut acc: K::Acc,
    mut blocks: Blocks,
) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    // Its length is read only where traces are recorded.
    let items = if crate::par::engine::seam::trace::ENABLED {
        p.len()
    } else {
        0
    };
    let _t = crate::par::engine::seam::trace::span(
        w,
        crate::par::engine::seam::trace::EventKind::Piece,
        None,
        items,
    );
    let min = blocks.min();
    // A fresh piece's first block is unsure: its items are not timed yet.
    let mut first = const { P::CUTS.is_some() } && blocks.fresh();
    loop {
        let len = p.len();
        if len == 0 || lp.stopped() || (!K::FROM_BACK && lp.kernel.full(&acc)) {
            break;
        }
        // With no thief to serve, fold a block before the next look, so that requests
        // that keep coming without a thief cannot hold the loop up.
        if len / 2 >= min && split_demanded(w) && blocks.worth(len, MIN_SPLIT) {
            if let Some((waiting, ways)) = thieves(w) {
                return cut(w, lp, p, acc, blocks, ways, waiting);
            }
        }
        let n = blocks.next(len);
        // A first block and a slow one are of the fewest items; test that first, as the
        // cheapest.
        let unsure = const { P::CUTS.is_some() } && n == min && (first || blocks.slow());
        first = false;
        if unsure && len - n >= min && standing::may_stand(w) {
            match standing::block(w, lp, p, acc, n, blocks) {
                Ok((a, rest)) => (acc, p) = (a, rest),
                Err(out) => return out,
            }
        } else {
            (acc, p) = fold_block(p, n, lp.kernel, acc);
        }
        stat!(w.counters(), blocks);
        crate::par::engine::seam::block_size(w.counters(), n);
    }
    lp.kernel.finish(acc)
}

/// Folds the next `n` items of `p` out of line, so that the kernel's inner loop is
/// compiled in a function of its own, as in a sequential loop: inlined into the driver's
/// loop, whose own state holds registers across the block, mandelbrot's escape loop
/// reloaded a constant from memory on every iteration. One call per block.
#[inline(never)]
pub(in crate::par) fn fold_block<P, K>(p: P, n: usize, kernel: &K, acc: K::Acc) -> (K::Acc, P)
where
    P: Producer,
    K: Kernel<P::Item>,
{
    p.fold_block(n, kernel, acc)
}

/// Takes the requests waiting now, and gives them with the number of parts to cut the
/// rest into: |S|+1 for |S| relay steal requests (Embracing Explicit Communication,
/// Fig. 5.13), two on Lace, whose thieves take what is pushed themselves. With no thief
/// left to serve (relay: each request was an update, or came from a thief that took an
/// offer since), it answers them and gives `None`: the owner's loop goes on with its
/// piece. Splitting for no one instead would go on in a new frame per empty request,
/// with nothing to bound them. A worker past half its stack does not split either: the
/// owner goes on with its lower part one frame deeper per split, and a tree's uneven
/// splits nested 30 deep overflowed std's 2 MiB stack in a debug build under ASan.
#[cold]
#[inline(never)]
pub(super) fn thieves(w: &Worker) -> Option<(demand::Waiting<'_>, usize)> {
    let waiting = demand::waiting(w);
    let ways = if w.deep() { 1 } else { waiting.ways() };
    stat!(w.counters(), splits, ways >= 2);
    if ways < 2 {
        waiting.answer();
        return None;
    }
    Some((waiting, ways))
}

/// Cuts `p` into `ways` nearly equal parts. The upper parts are pushed as joined
/// branches, the top one first; the owner then hands them to the `waiting` requests,
/// one each, and goes on with the lowest part and the same accumulator. Out of line, as
/// the owner's loop calls it only when thieves wait (see [`thieves`]).
#[cold]
#[inline(never)]
fn cut<P, K>(
    w: &Worker,
    lp: &Loop<'_, K>,
    p: P,
    acc: K::Acc,
    blocks: Blocks,
    ways: usize,
    waiting: demand::Waiting<'_>,
) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let len = p.len();
    let min = p.min_len().max(1);
    if ways < 2 || len / 2 < min {
        waiting.answer();
        return piece(w, lp, p, acc, blocks);
    }
    let (lo, hi) = p.split_at(len - (len / ways).max(min));
    let rest = Here((acc, waiting));
    join_parts(
        w,
        lp.kernel,
        false,
        move |w| {
            let rest = rest;
            let (acc, waiting) = rest.0;
            cut(w, lp, lo, acc, blocks, ways - 1, waiting)
        },
        move |w| {
            let blocks = Blocks::new(&hi);
            piece(w, lp, hi, lp.kernel.start(), blocks)
        },
    )
}

/// A value that stays on its thread although the closure holding it must be `Send`.
pub(in crate::par) struct Here<T>(pub(in crate::par) T);

// SAFETY: `Here` is only moved into the first closure of `Worker::join`, which always
// runs on the calling worker's thread before `join` returns (it is never pushed, stolen
// or sent), so the value never crosses threads.
unsafe impl<T> Send for Here<T> {}
