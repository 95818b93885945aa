//! Loops shared through one atomic progress word: the index stealer of On Lock-Free
//! Work-stealing Iterators for Parallel Data Structures (§3.1, §3.3). The word holds the
//! items nobody has claimed, `{lo, hi}`. The owner claims blocks from the front by CAS;
//! anyone else cuts the upper half off by CAS, without waiting for the owner, even while
//! it is inside a long item. Every claim and cut is a CAS on that one word, so the ranges
//! handed out are disjoint and together cover the loop (PROTOCOLS.md, "Claimed loops";
//! loom models in `par/engine/loom_claim.rs`).
//!
//! Two uses:
//! - **Loops from outside the pool over producers that can be cut** ([`shared`], from
//!   `par/engine/from_outside.rs`). The calling thread, once the rest of its loop looks worth a wake-up,
//!   publishes it and injects one helper job that cuts from the same word on a worker.
//!   Before it returns, the caller closes a door that each helper enters and leaves, and
//!   waits for those inside.
//! - **Thief-side splitting** ([`ThiefSplitting`], an option): a piece keeps one cutter
//!   task pushed, and a thief that takes it cuts the rest in two.

use crate::par::engine::demand::split_demanded;
use crate::par::engine::driver::{
    len_bounds, piece, Cuts, Here, IndexedProducer, Kernel, Loop, Producer, Shared,
};
use crate::par::engine::pace::Blocks;
use crate::par::engine::seam::stat;
use crate::par::engine::seam::task::{self, JobRef, Panic};
use crate::par::engine::seam::worker::{self, Worker};
use crate::par::engine::seam::Latch;
use crate::par::engine::seam::Pool;
use crate::par::engine::seam::{AtomicU64, AtomicUsize, RaceCell};
use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator, ProducerCallback};
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::{AcqRel, Relaxed, Release, SeqCst};
use std::sync::Arc;

fn pack(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | (u64::from(hi) << 32)
}

fn unpack(word: u64) -> (usize, usize) {
    (word as u32 as usize, (word >> 32) as usize)
}

/// The items of a shared range that nobody has claimed yet, `{lo, hi}` in one word.
///
/// Every change is a CAS from the value just read, so changes are totally ordered and
/// each hands out items that no earlier one did. The ranges carry no data of their own
/// (the producer was published before the word was shared), so the CASes are relaxed.
pub(crate) struct Progress(AtomicU64);

impl Progress {
    /// The longest range a word can hold.
    pub(crate) const MAX: usize = u32::MAX as usize;

    /// A word holding `0..len` (`len <= MAX`).
    pub(crate) fn new(len: usize) -> Progress {
        let hi = u32::try_from(len).expect("heist: a claimed range holds at most u32::MAX");
        Progress(AtomicU64::new(pack(0, hi)))
    }

    /// How many items are left (a snapshot).
    pub(crate) fn left(&self) -> usize {
        let (lo, hi) = unpack(self.0.load(Relaxed));
        hi - lo
    }

    /// The owner's claim: the next `n` items (`n >= 1`; fewer if fewer are left), or
    /// `None` once all are claimed or cut.
    pub(crate) fn claim(&self, n: usize) -> Option<Range<usize>> {
        let mut word = self.0.load(Relaxed);
        loop {
            let (lo, hi) = unpack(word);
            if lo >= hi {
                return None;
            }
            let end = lo + n.clamp(1, hi - lo);
            match self
                .0
                .compare_exchange_weak(word, pack(end as u32, hi as u32), Relaxed, Relaxed)
            {
                Ok(_) => return Some(lo..end),
                Err(now) => word = now,
            }
        }
    }

    /// The upper end of what is left (a snapshot).
    pub(crate) fn hi(&self) -> usize {
        unpack(self.0.load(Relaxed)).1
    }

    /// A cut: the upper half of what is left (the larger half, if it is odd), if each
    /// half holds at least `min` items (`min >= 1`).
    pub(crate) fn cut(&self, min: usize) -> Option<Range<usize>> {
        self.cut_if(min, |_| true)
    }

    /// A cut, only if nobody has cut since the upper end was `hi`. Cutters pushed one
    /// after another then cut in that order (a later one finds `hi` moved once an earlier
    /// one has cut, and an earlier one finds it moved once a later one has), so their
    /// ranges lie in the reverse order of their pushes, whoever runs first.
    pub(crate) fn cut_at(&self, hi: usize, min: usize) -> Option<Range<usize>> {
        self.cut_if(min, |now| now == hi)
    }

    fn cut_if(&self, min: usize, ok: impl Fn(usize) -> bool) -> Option<Range<usize>> {
        let mut word = self.0.load(Relaxed);
        loop {
            let (lo, hi) = unpack(word);
            let left = hi.saturating_sub(lo);
            if left < 2 * min.max(1) || !ok(hi) {
                return None;
            }
            let mid = hi - left.div_ceil(2);
            match self
                .0
                .compare_exchange_weak(word, pack(lo as u32, mid as u32), Relaxed, Relaxed)
            {
                Ok(_) => return Some(mid..hi),
                Err(now) => word = now,
            }
        }
    }

    /// Claims everything left, so that nobody takes more (a piece panicked).
    pub(crate) fn close(&self) {
        self.0.store(pack(0, 0), Relaxed);
    }
}

/// A door between a loop's caller and its helpers: how many helpers are inside the
/// caller's frame, and whether the caller has closed it. A helper enters only while it is
/// open; the caller closes it once and then waits for those inside to leave.
pub(crate) struct Door {
    state: AtomicUsize,
    /// Set by the last helper to leave after the door closed.
    empty: Latch,
}

const CLOSED: usize = 1 << (usize::BITS - 1);

/// How many times a caller looks at a latch before it blocks: a helper usually ends its
/// piece about when the caller ends its own. (None under loom, where a spin is a
/// schedule of its own to explore.)
#[cfg(not(loom))]
const CLOSE_SPINS: u32 = 1 << 12;
#[cfg(loom)]
const CLOSE_SPINS: u32 = 0;

/// Waits for `latch` (on a thread outside the pool): a short spin, then blocking.
pub(in crate::par) fn await_latch(latch: &Latch) {
    for _ in 0..CLOSE_SPINS {
        if latch.probe() {
            return;
        }
        std::hint::spin_loop();
    }
    latch.wait();
}

impl Door {
    pub(crate) fn new() -> Door {
        Door {
            state: AtomicUsize::new(0),
            empty: Latch::new(),
        }
    }

    /// A helper comes in; false if the door is closed, and then it must not touch the
    /// caller's frame.
    pub(crate) fn enter(&self) -> bool {
        let mut s = self.state.load(Relaxed);
        loop {
            if s & CLOSED != 0 {
                return false;
            }
            // Relaxed: the caller's frame was published before the helper's job was
            // queued (the injector's lock orders it).
            match self.state.compare_exchange_weak(s, s + 1, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// A helper goes out; its writes to the caller's frame happen before the caller's
    /// return. The last one out of a closed door wakes the caller.
    ///
    /// # Safety
    /// `this` entered and is live until this call returns (the helper holds a reference
    /// count of the block the door is in).
    pub(crate) unsafe fn leave(this: *const Door) {
        // SAFETY: the contract above.
        let door = unsafe { &*this };
        if door.state.fetch_sub(1, Release) == CLOSED | 1 {
            // SAFETY: the latch lives as long as the door.
            unsafe { Latch::set(&raw const door.empty) };
        }
    }

    /// The caller closes the door and waits until every helper inside has left; no
    /// helper touches its frame afterwards.
    pub(crate) fn close(&self) {
        // AcqRel: acquires the releases of the helpers that left before.
        if self.state.fetch_or(CLOSED, AcqRel) & !CLOSED == 0 {
            return;
        }
        await_latch(&self.empty);
    }
}

/// A loop from outside, published: what its caller and its helper share.
struct Call<'k, P, K: Kernel<P::Item>>
where
    P: Producer,
{
    /// The rest of the loop when it was published; its items are claimed and cut
    /// through `progress`.
    base: P,
    /// The proof that `base` may be cut from two threads (`P: Sync`).
    _cuts: Cuts<P>,
    progress: Progress,
    lp: Loop<'k, K>,
    /// The helper's pieces, combined (written by the helper inside the door).
    helped: RaceCell<Option<K::Output>>,
    /// The helper's panic (written by the helper inside the door).
    panic: RaceCell<Option<Panic>>,
}

// SAFETY: the helper uses a `Call` from another thread only between entering and leaving
// the door: it cuts `base` (`P: Sync`, which the `Cuts` proof in `_cuts` shows: only
// `Cuts::SHARED` makes one, for `Sync` producers alone; the progress word hands out
// disjoint ranges, as `Producer::cut` asks of its callers), reads the kernel (`K: Sync`),
// and writes `helped` and `panic`, which the caller reads only after the door is closed
// and empty. `P: Send` and `K::Output: Send` let the pieces and outputs move between the
// threads.
unsafe impl<P: Producer, K: Kernel<P::Item>> Sync for Call<'_, P, K> {}

/// What a helper job points to: the door, and the caller's `Call` behind it. Reference
/// counted, so that a helper that comes after the caller has left finds the door closed.
struct Help {
    door: Door,
    call: *const (),
}

// SAFETY: `call` is dereferenced only by the helper job, between entering and leaving
// the door, while the caller's `Call` (which is `Sync`) is alive; the door is atomics and
// a latch.
unsafe impl Send for Help {}
// SAFETY: as above.
unsafe impl Sync for Help {}

/// Shares the rest of a loop from outside with one helper and claims blocks of it
/// (`P::CUTS` holds, `cuts`, and the rest fits a progress word).
pub(in crate::par) fn shared<P, K>(
    pool: &Pool,
    p: P,
    cuts: Cuts<P>,
    kernel: &K,
    mut acc: K::Acc,
    mut blocks: Blocks,
) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let call = Call {
        progress: Progress::new(p.len()),
        base: p,
        _cuts: cuts,
        lp: Loop::new(kernel),
        helped: RaceCell::new(None),
        panic: RaceCell::new(None),
    };
    let help = Arc::new(Help {
        door: Door::new(),
        call: (&raw const call).cast(),
    });
    let registry = pool.registry();
    // SAFETY: the job gets a reference count of its own, so `data` stays valid until it
    // has run; it touches `call` only inside the door, which this frame closes and waits
    // for before `call` goes away (also when this frame unwinds: `Leave`); the job
    // catches its panics.
    let job = unsafe { JobRef::new(Arc::into_raw(Arc::clone(&help)).cast(), help_job::<P, K>) };
    registry.in_flight.fetch_add(1, SeqCst);
    registry.inject(job);
    let leave = Leave {
        help: &help,
        progress: &call.progress,
        stop: &call.lp.stop,
        panic: &call.panic,
        pool,
    };
    while !call.lp.stopped() {
        let n = blocks.next(call.progress.left());
        let Some(r) = call.progress.claim(n) else {
            break;
        };
        // SAFETY: `CUTS` holds (`cuts`), and the progress word hands out each item once.
        let items = unsafe { call.base.cut(r.start, r.end) };
        acc = kernel.fold(acc, items.into_iter());
    }
    leave.close();
    // SAFETY: the door is closed and empty: the helper's writes happened before.
    let (helped, panic) = unsafe {
        (
            call.helped.with_mut(|h| (*h).take()),
            call.panic.with_mut(|p| (*p).take()),
        )
    };
    if let Some(p) = panic {
        task::drop_caught(acc)
            .into_iter()
            .for_each(task::drop_panic);
        task::drop_caught(helped)
            .into_iter()
            .for_each(task::drop_panic);
        panic::resume_unwind(p);
    }
    let mine = kernel.finish(acc);
    match helped {
        Some(h) => kernel.combine(mine, h),
        None => mine,
    }
}

/// The caller's exit from a shared loop: `close` on the normal path; dropped before that,
/// the caller unwinds, and then nobody claims more, the door closes, the caller waits for
/// the helper inside and drops the helper's panic. Which way out is taken is this value's
/// own state, not `thread::panicking()`: a loop may run in a destructor while its thread
/// unwinds, and then `close` is its normal way out.
struct Leave<'a> {
    help: &'a Help,
    progress: &'a Progress,
    stop: &'a AtomicBool,
    panic: &'a RaceCell<Option<Panic>>,
    pool: &'a Pool,
}

impl Leave<'_> {
    /// The normal way out: closes the door and waits for the helper inside, which
    /// finishes the pieces it cut.
    fn close(self) {
        self.help.door.close();
        self.pool.registry().in_flight.fetch_sub(1, SeqCst);
        std::mem::forget(self);
    }
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        self.progress.close();
        self.help.door.close();
        self.pool.registry().in_flight.fetch_sub(1, SeqCst);
        // SAFETY: the door is closed and empty: the helper no longer writes it.
        let lost = unsafe { self.panic.with_mut(|p| (*p).take()) };
        // The caller's own panic is unwinding: the helper's is dropped, unable to
        // unwind here.
        lost.into_iter().for_each(task::drop_panic);
    }
}

/// The helper job of a loop from outside: if the caller is still there, cut the upper
/// half of what is left and run it as a piece on this worker (where other workers can
/// split it further), until nothing worth cutting is left.
///
/// # Safety
/// `data` is an `Arc<Help>` made by `shared` for a `Call<P, K>`; called once.
unsafe fn help_job<P, K>(data: *const (), w: &Worker)
where
    P: Producer,
    K: Kernel<P::Item>,
{
    // SAFETY: the contract above: this job owns one reference count.
    let help = unsafe { Arc::from_raw(data.cast::<Help>()) };
    if help.door.enter() {
        // SAFETY: inside the door the caller's `Call` is alive (see `shared`).
        let call = unsafe { &*help.call.cast::<Call<'_, P, K>>() };
        let out = panic::catch_unwind(AssertUnwindSafe(|| cut_pieces(w, call)));
        // SAFETY: only the helper writes these, inside the door; the caller reads them
        // after the door is closed and empty.
        unsafe {
            match out {
                Ok(h) => call.helped.with_mut(|c| *c = h),
                Err(p) => call.panic.with_mut(|c| *c = Some(p)),
            }
            Door::leave(&raw const help.door);
        }
    }
    drop(help);
}

/// Cuts pieces off the back of a published loop and runs them on `w`; their outputs
/// combine in index order (each cut lies before the one made earlier).
fn cut_pieces<P, K>(w: &Worker, call: &Call<'_, P, K>) -> Option<K::Output>
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let kernel = call.lp.kernel;
    let min = call.base.min_len().max(1);
    let mut out: Option<K::Output> = None;
    while !call.lp.stopped() {
        let Some(r) = call.progress.cut(min) else {
            break;
        };
        stat!(w.counters(), splits);
        // SAFETY: `CUTS` holds (the call's `_cuts`), and the range was handed out once.
        let items = unsafe { call.base.cut(r.start, r.end) };
        let blocks = Blocks::new(&items);
        let o = piece(w, &call.lp, items, kernel.start(), blocks);
        out = Some(match out {
            None => o,
            Some(later) => kernel.combine(o, later),
        });
    }
    out
}

/// Thief-side splitting (On Lock-Free Work-stealing Iterators, §3): a loop whose thieves
/// cut its rest themselves, through one atomic progress word, instead of waiting for the
/// owner to split between blocks. It helps where single items are long (a thief need not
/// wait for the owner to finish one) and costs one CAS per block.
///
/// Each piece keeps a cutter task in its worker's deque. Lace's thieves take it as soon
/// as it is shared: at once when the loop starts at the bottom of a worker's stack, else
/// when the owner answers a split request. Relay's thieves get it only when the owner
/// answers a steal request, between blocks, so there this option changes little.
/// Producers that cannot be cut (see [`Producer::CUTS`]) ignore it.
///
/// ```
/// use heist::iter::ThiefSplitting;
/// use heist::prelude::*;
/// let pool = heist::Pool::builder().workers(2).build()?;
/// let s: u64 = pool.run(|_| (0..100_000u64).into_par_iter().thief_splitting().sum());
/// assert_eq!(s, (0..100_000u64).sum());
/// # Ok::<(), heist::BuildError>(())
/// ```
pub trait ThiefSplitting: IndexedParallelIterator {
    /// This loop, split by its thieves.
    fn thief_splitting(self) -> ThiefSplits<Self> {
        ThiefSplits { base: self }
    }
}

impl<I: IndexedParallelIterator> ThiefSplitting for I {}

/// A loop that thieves split themselves (see [`ThiefSplitting`]).
#[must_use = "iterator adapters are lazy"]
#[derive(Clone, Debug)]
pub struct ThiefSplits<I> {
    base: I,
}

impl<I: IndexedParallelIterator> ParallelIterator for ThiefSplits<I> {
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, kernel: K) -> K::Output {
        self.base.with_producer(Claimed(kernel))
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.base.len())
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for ThiefSplits<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, cb: CB) -> CB::Output {
        self.base.with_producer(cb)
    }
}

/// Runs a kernel over a producer with thief-side splitting.
struct Claimed<K>(K);

impl<T, K: Kernel<T>> ProducerCallback<T> for Claimed<K> {
    type Output = K::Output;
    fn callback<P: IndexedProducer<Item = T>>(self, p: P) -> K::Output {
        let kernel = &self.0;
        // SAFETY: the reference is dropped before this call returns.
        match unsafe { worker::current() } {
            Some(w) => {
                let lp = Loop::new(kernel);
                let blocks = Blocks::new(&p);
                claimed(w, &lp, p, kernel.start(), blocks)
            }
            None => crate::par::engine::driver::bridge(p, kernel),
        }
    }
}

/// A piece whose rest thieves may cut: the owner claims blocks while a cutter task waits
/// in the deque beside it.
fn claimed<P, K>(w: &Worker, lp: &Loop<'_, K>, p: P, acc: K::Acc, blocks: Blocks) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let shared = Shared::new(&p).filter(|_| p.len() <= Progress::MAX);
    let Some(shared) = shared else {
        return piece(w, lp, p, acc, blocks);
    };
    let word = Progress::new(p.len());
    with_cutter(w, lp, shared, &word, acc, blocks)
}

/// Claims blocks of `p` through `word` with a cutter task pushed beside the owner.
fn with_cutter<P, K>(
    w: &Worker,
    lp: &Loop<'_, K>,
    p: Shared<'_, P>,
    word: &Progress,
    acc: K::Acc,
    blocks: Blocks,
) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let own = Here((acc, p, word));
    let cutter = Cutter(p, word, word.hi());
    let (mine, cut) = w.join(
        move |w| {
            let own = own;
            let (acc, p, word) = own.0;
            own_blocks(w, lp, p, word, acc, blocks)
        },
        move |w| {
            let cutter = cutter;
            let Cutter(p, word, hi) = cutter;
            let r = word.cut_at(hi, p.get().min_len().max(1))?;
            stat!(w.counters(), splits);
            // SAFETY: `CUTS` holds (`p` was made), and the range was handed out once.
            let items = unsafe { p.cut(r.start, r.end) };
            let blocks = Blocks::new(&items);
            Some(claimed(w, lp, items, lp.kernel.start(), blocks))
        },
    );
    match cut {
        Some(c) => lp.kernel.combine(mine, c),
        None => mine,
    }
}

/// What a cutter task holds: the piece's producer (shared: `P: Sync`), its progress
/// word, and the word's upper end when the cutter was pushed (see `Progress::cut_at`: the
/// frames that push cutters combine their outputs in push order). A thief cuts only a
/// range the progress word handed it, while the owner cuts others.
struct Cutter<'a, P>(Shared<'a, P>, &'a Progress, usize);

/// The owner's claims; on a split request it pushes another cutter (its first may have
/// been taken) instead of splitting.
fn own_blocks<P, K>(
    w: &Worker,
    lp: &Loop<'_, K>,
    p: Shared<'_, P>,
    word: &Progress,
    mut acc: K::Acc,
    mut blocks: Blocks,
) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let min = len_bounds(p.get()).0;
    while !lp.stopped() {
        let left = word.left();
        if left / 2 >= min && split_demanded(w) {
            return with_cutter(w, lp, p, word, acc, blocks);
        }
        let Some(r) = word.claim(blocks.next(left)) else {
            break;
        };
        // SAFETY: `CUTS` holds (`p` was made), and the range was handed out once.
        let items = unsafe { p.cut(r.start, r.end) };
        acc = lp.kernel.fold(acc, items.into_iter());
        stat!(w.counters(), blocks);
        crate::par::engine::seam::block_size(w.counters(), r.len());
    }
    lp.kernel.finish(acc)
}
