//! Standing offers: one slot per worker in which the owner of a running loop offers part
//! of its rest while it folds a block it cannot bound in time, so that a thief need not
//! wait for the block's end. Both schedulers ask for work only between an owner's blocks
//! (Lace's split request, relay's steal request), so a block of one long item would keep
//! a thief waiting for all of it; the thesis's loops poll inside their iterations for this
//! reason (Embracing Explicit Communication in Work-Stealing Runtime Systems, §5.4.1), and
//! the work-stealing iterators let a thief cut a loop by CAS on its progress word (On
//! Lock-Free Work-stealing Iterators for Parallel Data Structures, §3). Here the owner
//! claims nothing per block: before such a block it stands a fixed part of its rest in
//! its slot, and after the block it takes the offer back with one CAS, which a thief's
//! take races with (PROTOCOLS.md, "Standing offers"; loom models in `sched/relay/loom_offer.rs`).
//!
//! A thief takes only an offer it has seen standing for [`STANDING`]: the owner stands
//! one before every piece's first block, whose items it has not timed, and most of those
//! blocks end long before. The slot's word counts the offers, so a thief that read an
//! old offer cannot take a newer one by mistake.

use crate::core::stats::stat;
use crate::core::sync::{AtomicPtr, AtomicU64};
use crate::core::worker::Worker;
use std::cell::Cell;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::time::{Duration, Instant};

/// How long a thief watches an offer stand before it takes it: as long as the loop
/// driver's longest planned block (`par::engine::driver::LONG_BLOCK`), after which an owner that
/// had planned its block would have seen the thief's request.
pub(crate) const STANDING: Duration = Duration::from_micros(20);

/// How often at most an owner that stands an offer wakes a sleeping worker to watch it.
const WAKE_EVERY: Duration = Duration::from_millis(1);

/// What a thief runs: the first field of the offer the owner keeps in its frame. The
/// owner stands a pointer to the whole offer, so that `run` may read all of it.
#[repr(C)]
pub(crate) struct Offer {
    run: unsafe fn(*const Offer, &Worker),
}

impl Offer {
    /// An offer whose taker calls `run` with a pointer to it.
    ///
    /// # Safety
    /// `run` must not unwind, and may use the offer only until it signals the owner that
    /// it is done with it.
    pub(crate) unsafe fn new(run: unsafe fn(*const Offer, &Worker)) -> Offer {
        Offer { run }
    }
}

/// The low bits of a slot's word; the rest counts the offers stood in it.
const STATE: u64 = 3;
const EMPTY: u64 = 0;
const OFFERED: u64 = 1;
const TAKEN: u64 = 2;
const ONE: u64 = STATE + 1;

/// A worker's offer slot, on cache lines of its own (thieves read it while its owner
/// stands offers). Only its owner stands an offer (`EMPTY` or `TAKEN` to a new
/// `OFFERED`, with the count one up) or takes it back (`OFFERED` to `EMPTY`); a thief only
/// takes it (`OFFERED` to `TAKEN`).
#[repr(align(128))]
pub(crate) struct OfferSlot {
    word: AtomicU64,
    offer: AtomicPtr<Offer>,
}

/// The word of an offer its owner stood, to take it back with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ticket(u64);

impl OfferSlot {
    pub(crate) fn new() -> OfferSlot {
        OfferSlot {
            word: AtomicU64::new(EMPTY),
            offer: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Owner: whether an offer of its own still stands here (an outer loop's).
    #[inline]
    pub(crate) fn occupied(&self) -> bool {
        self.word.load(Relaxed) & STATE == OFFERED
    }

    /// Owner: stands `offer` (the slot is not `occupied`). The offer stays valid until
    /// `take_back` returns true or, if it returns false, until the taker is done with it.
    pub(crate) fn stand(&self, offer: *const Offer) -> Ticket {
        // Acquire: a thief's take of the previous offer (its release) happens before the
        // pointer is overwritten, so that its load of the old pointer cannot see this one.
        let old = self.word.load(Acquire);
        debug_assert_ne!(old & STATE, OFFERED, "heist: an offer already stands");
        let word = (old & !STATE) + ONE + OFFERED;
        self.offer.store(offer.cast_mut(), Relaxed);
        // Release: a thief that reads this word reads the pointer stored above.
        self.word.store(word, Release);
        Ticket(word)
    }

    /// Owner: takes the offer of `t` back; false if a thief took it.
    pub(crate) fn take_back(&self, t: Ticket) -> bool {
        // Acquire on failure: what the taker did before its take (relay marks its request
        // answered) is seen after.
        self.word
            .compare_exchange(t.0, t.0 - OFFERED + EMPTY, Relaxed, Acquire)
            .is_ok()
    }

    /// Thief: the word of the offer standing now, if one does.
    #[inline]
    pub(crate) fn standing(&self) -> Option<u64> {
        let w = self.word.load(Relaxed);
        (w & STATE == OFFERED).then_some(w)
    }

    /// Thief: takes the offer whose word was `seen`, if it still stands.
    pub(crate) fn take(&self, seen: u64) -> Option<*const Offer> {
        // Acquire: pairs with `stand`'s release, so the pointer is the one stood with
        // `seen`. A pointer stood later comes with a higher count, and the CAS fails.
        if self.word.load(Acquire) != seen {
            return None;
        }
        let offer = self.offer.load(Relaxed);
        // Release: the pointer's load above happens before the owner's next `stand`
        // (which acquires this write) overwrites it.
        self.word
            .compare_exchange(seen, seen - OFFERED + TAKEN, AcqRel, Relaxed)
            .ok()
            .map(|_| offer.cast_const())
    }
}

/// A worker's own side of the offers: when it may next wake a sleeper for one, and the
/// offer it watches as a thief.
#[derive(Default)]
pub(crate) struct Local {
    /// On the loops' clock (`core/clock.rs`), in nanoseconds.
    next_wake: Cell<Option<u64>>,
    watch: Cell<Option<Watch>>,
}

/// An offer a thief has seen standing: whose, its word, since when, and whether the
/// thief cuts its sleep short to look again once it has stood long enough.
#[derive(Clone, Copy)]
struct Watch {
    victim: usize,
    word: u64,
    since: Instant,
    wake: bool,
}

impl Local {
    /// How long until the watched offer has stood long enough (an idle thief sleeps no
    /// longer), if one is watched and worth waking for.
    pub(crate) fn watch_left(&self) -> Option<Duration> {
        let w = self.watch.get().filter(|w| w.wake)?;
        Some(STANDING.saturating_sub(w.since.elapsed()))
    }
}

/// The owner stood an offer at `now` (a read of the loops' clock, `core/clock.rs`):
/// wakes a sleeping worker to watch it, at most every `WAKE_EVERY`. A loop of long items
/// keeps standing offers, so a worker asleep when it started learns of it within that
/// time.
pub(crate) fn wake_watcher(w: &Worker, now: Option<u64>) {
    let Some(now) = now else { return };
    let l = w.offers();
    if l.next_wake.get().is_some_and(|t| now < t) {
        return;
    }
    l.next_wake.set(Some(
        now.saturating_add(crate::core::clock::nanos(WAKE_EVERY)),
    ));
    w.registry().sleep.wake_one_for(w.index());
}

/// A thief that found nothing else looks at the offer of `victim` (or of the victim it
/// watches): one that has stood for `STANDING` since it first saw it, it takes and runs.
pub(crate) fn look(w: &Worker, victim: usize) -> bool {
    let l = w.offers();
    let watched = l.watch.get();
    let v = watched.map_or(victim, |x| x.victim);
    let slot = &w.registry().infos[v].offer;
    let Some(word) = slot.standing() else {
        l.watch.set(None);
        return false;
    };
    let now = Instant::now();
    match watched {
        Some(x) if x.word == word => {
            if now.saturating_duration_since(x.since) < STANDING {
                return false;
            }
        }
        _ => {
            l.watch.set(Some(Watch {
                victim: v,
                word,
                since: now,
                // An owner whose watched offer gave way to the next one stands offers
                // around short blocks: the thief waits for them no longer than for
                // anything else.
                wake: watched.is_none_or(|x| x.victim != v),
            }));
            return false;
        }
    }
    l.watch.set(None);
    let Some(offer) = w.sched().take_offer(w, slot, word) else {
        return false;
    };
    stat!(w.counters(), offers_taken);
    // SAFETY: the take gave this worker the offer, valid until its `run` says it is done
    // (`Offer::new`); `run` does not unwind.
    w.run_taken(|| unsafe { ((*offer).run)(offer, w) });
    true
}
