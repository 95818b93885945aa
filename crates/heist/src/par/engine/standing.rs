//! A loop's standing offer (`crate::core::offer`): before a block whose length in time it
//! cannot bound (a fresh piece's first, or one of slow items: `Blocks::slow`), the owner
//! of a piece over a producer that can be cut ([`Producer::CUTS`]) offers all that the
//! block leaves, folds the block through a cut of its own, and takes the offer back. A
//! thief that took it cuts the rest out and runs it as a piece of the same loop; the
//! owner then waits for the thief, as a `join` does, stealing from it meanwhile (the split of Embracing Explicit Communication in Work-Stealing Runtime Systems,
//! §5.3, made by the thief at a point the owner fixed in advance).

use crate::par::engine::driver::{piece, Kernel, Loop, Producer, Shared};
use crate::par::engine::pace::Blocks;
use crate::par::engine::seam::stat;
use crate::par::engine::seam::task::{self, Panic};
use crate::par::engine::seam::worker::Worker;
use crate::par::engine::seam::{AtomicBool, RaceCell};
use crate::par::engine::seam::{Offer, Ticket};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// Whether `w` may stand an offer now: it has someone to take it, and no loop of its own
/// (an outer one, inside whose block this loop runs) has one standing.
#[inline(always)]
pub(in crate::par) fn may_stand(w: &Worker) -> bool {
    w.workers() >= 2 && !w.offer_slot().occupied()
}

/// An offer of items `from..to` of `base`, kept in the owner's frame.
#[repr(C)]
struct LoopOffer<'a, 'k, P: Producer, K: Kernel<P::Item>> {
    /// First, so that the taker's pointer to it is a pointer to the whole.
    head: Offer,
    base: Shared<'a, P>,
    lp: &'a Loop<'k, K>,
    from: usize,
    to: usize,
    /// The owner, woken when the taker is done.
    owner: usize,
    /// Set by the taker when it no longer touches the offer; `out` holds its outcome.
    done: AtomicBool,
    out: RaceCell<Option<std::thread::Result<K::Output>>>,
}

/// Folds the first `n` items of `p` (a block it cannot bound, `may_stand` holds) with an offer of
/// the rest standing. Untaken, gives back the accumulator and the rest;
/// taken, runs the lower half too, waits for the taker and gives the piece's output.
// Out of line: it runs once a piece for most loops, and keeps the piece's loop small.
#[inline(never)]
pub(in crate::par) fn block<P, K>(
    w: &Worker,
    lp: &Loop<'_, K>,
    p: P,
    acc: K::Acc,
    n: usize,
    blocks: Blocks,
) -> Result<(K::Acc, P), K::Output>
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let base = Shared::new(&p).expect("heist: an offer stands only for a loop that can be cut");
    let len = p.len();
    // The whole rest: the owner may stay in this block for good (a coarse item that waits
    // for the others), and then what it kept back would wait with it. Taken, the owner
    // has only its block left, and steals from the taker once it is done.
    let mid = n;
    let offer = LoopOffer {
        // SAFETY: `take` catches the piece's panic, and signals `done` last.
        head: unsafe { Offer::new(take::<P, K>) },
        base,
        lp,
        from: mid,
        to: len,
        owner: w.index(),
        done: AtomicBool::new(false),
        out: RaceCell::new(None),
    };
    let slot = w.offer_slot();
    // A pointer to the whole offer, not to `head` alone: the taker reads all of it.
    let ticket = slot.stand(std::ptr::from_ref(&offer).cast());
    stat!(w.counters(), offers);
    w.sched().offer_stood(w, blocks.last_read());
    let mut standing = Standing {
        w,
        offer: &offer,
        state: State::Standing(ticket),
    };
    // SAFETY: `CUTS` holds (`base` was made); `0..n` and the offer's `mid..len` are
    // disjoint, and `p` is neither split nor iterated while the offer stands.
    let items = unsafe { base.cut(0, n) };
    let acc = lp.kernel.fold(acc, items.into_iter());
    if standing.take_back() {
        drop(standing);
        drop(offer);
        return Ok((acc, p.split_at(n).1));
    }
    // SAFETY: as above: `n..mid` lies below the taker's part.
    let rest = unsafe { base.cut(n, mid) };
    let mine = piece(w, lp, rest, acc, blocks);
    standing.wait();
    drop(standing);
    // SAFETY: `done` was seen (by `Standing::wait`): the taker no longer writes `out`.
    let theirs = unsafe { offer.out.with_mut(|o| (*o).take()) };
    match theirs.expect("heist: a finished offer has an outcome") {
        Ok(t) => Err(lp.kernel.combine(mine, t)),
        Err(p) => {
            task::drop_caught(mine)
                .into_iter()
                .for_each(task::drop_panic);
            panic::resume_unwind(p)
        }
    }
}

/// The owner's hold on a stood offer: takes it back, or waits until its taker is done
/// with it. Dropped before either, the owner is unwinding: it stops the loop, then does
/// the same, and drops the taker's outcome.
struct Standing<'s, 'a, 'k, P: Producer, K: Kernel<P::Item>> {
    w: &'s Worker,
    offer: &'s LoopOffer<'a, 'k, P, K>,
    state: State,
}

/// Where a stood offer is.
enum State {
    Standing(Ticket),
    Taken,
    /// Taken back, or its taker is done.
    Over,
}

impl<P: Producer, K: Kernel<P::Item>> Standing<'_, '_, '_, P, K> {
    /// Takes the offer back; false if a thief took it.
    fn take_back(&mut self) -> bool {
        let State::Standing(t) = self.state else {
            unreachable!("heist: an offer is taken back once")
        };
        let kept = self.w.offer_slot().take_back(t);
        self.state = if kept { State::Over } else { State::Taken };
        kept
    }

    /// Waits until the taker of the offer is done with it (it was not taken back).
    fn wait(&mut self) {
        debug_assert!(matches!(self.state, State::Taken));
        let done = &self.offer.done;
        self.w.wait_until(|| done.load(Acquire));
        self.state = State::Over;
    }
}

impl<P: Producer, K: Kernel<P::Item>> Drop for Standing<'_, '_, '_, P, K> {
    fn drop(&mut self) {
        // Not `thread::panicking()`: a loop may run in a destructor while its thread
        // unwinds, and then this is its normal way out.
        if matches!(self.state, State::Over) {
            return;
        }
        self.offer.lp.stop.store(true, Relaxed);
        if matches!(self.state, State::Standing(_)) && self.take_back() {
            return;
        }
        // Taken: the taker uses the producer and the loop until it is done.
        self.wait();
        // SAFETY: done: the taker no longer writes `out`.
        let out = unsafe { self.offer.out.with_mut(|o| (*o).take()) };
        let lost: Option<Panic> = match out {
            Some(Err(p)) => Some(p),
            Some(Ok(o)) => task::drop_caught(o),
            None => None,
        };
        lost.into_iter().for_each(task::drop_panic);
    }
}

/// The taker's side: cuts the offered items out and runs them as a piece of the loop.
///
/// # Safety
/// `head` points to a `LoopOffer<P, K>` (its first field) that this worker took.
unsafe fn take<P, K>(head: *const Offer, w: &Worker)
where
    P: Producer,
    K: Kernel<P::Item>,
{
    // SAFETY: the contract above; the owner keeps the offer until `done`.
    let offer = unsafe { &*head.cast::<LoopOffer<'_, '_, P, K>>() };
    stat!(w.counters(), splits);
    let lp = offer.lp;
    let out = panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `CUTS` holds (the owner made `base`); the take handed out `from..to`
        // alone, and the owner does not split or iterate `base` until `done`.
        let items = unsafe { offer.base.cut(offer.from, offer.to) };
        let blocks = Blocks::new(&items);
        piece(w, lp, items, lp.kernel.start(), blocks)
    }));
    let owner = offer.owner;
    // SAFETY: only the taker writes `out`, before `done`; the owner reads it after.
    unsafe { offer.out.with_mut(|o| *o = Some(out)) };
    // The last touch of the offer: the owner may leave its frame once it sees this.
    offer.done.store(true, Release);
    w.registry().sleep.wake(owner);
}
