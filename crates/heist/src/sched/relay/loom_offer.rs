//! loom models of standing offers (`core/offer.rs`), run against the real `OfferSlot` and
//! relay's `take_marked`, with an owner and a thief written as `par/engine/standing.rs` and
//! `offer::look` use them (a frame with the taker's outcome and a `done` flag):
//!
//! - `loom_offer_taken_or_kept_once`: an owner stands an offer and takes it back while a
//!   thief takes it; exactly one of them has it. The taker reads the owner's frame and
//!   writes its outcome; the owner, once it has the offer back or has seen `done`, reuses
//!   its whole frame, so a taker still touching it is reported as a race. An owner that
//!   lost the offer stands another meanwhile (a loop inside its block).
//! - `loom_offer_an_old_word_takes_nothing`: the owner takes an offer back and stands a
//!   second one from another frame while the thief takes with the word it read first; it
//!   gets the offer that stands under that word or nothing, never the first frame after
//!   its owner has it back.
//! - `loom_offer_the_owner_sees_the_takers_mark`: relay's thief marks its request
//!   answered before it takes; an owner whose take-back fails sees the mark, and a failed
//!   take leaves it cleared.
//!
//! Each model also checks, across its executions, that both outcomes of its race occurred.
//!
//! Run with `.ci/loom`.

use crate::core::offer::{Offer, OfferSlot};
use crate::core::sync::AtomicBool;
use crate::core::worker::Worker;
use crate::sched::relay::take_marked;
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// Counts, across the executions of one model, how often each outcome occurred. A std
/// atomic outside loom.
type Hits = std::sync::Arc<[std::sync::atomic::AtomicUsize; 2]>;

/// An offer in an owner's frame: what the taker reads, its outcome, and `done`.
#[repr(C)]
struct Frame {
    head: Offer,
    /// What the taker reads of the owner's frame (its producer, its loop).
    base: UnsafeCell<u32>,
    out: UnsafeCell<u32>,
    done: AtomicBool,
}

// SAFETY: the cells are shared by the protocol under test; loom reports any overlap.
unsafe impl Sync for Frame {}
// SAFETY: as above.
unsafe impl Send for Frame {}

/// Never called: the models run the taker's side themselves.
unsafe fn never(_: *const Offer, _: &Worker) {
    unreachable!("the models run the taker's side themselves")
}

impl Frame {
    fn new(base: u32) -> Frame {
        Frame {
            // SAFETY: `never` is never called.
            head: unsafe { Offer::new(never) },
            base: UnsafeCell::new(base),
            out: UnsafeCell::new(0),
            done: AtomicBool::new(false),
        }
    }

    /// The offer to stand: a pointer to the whole frame, which the taker reads.
    fn head(&self) -> *const Offer {
        std::ptr::from_ref(self).cast()
    }

    /// The owner, once the offer is back or its taker done: reuses the frame.
    fn reuse(&self) {
        // SAFETY: nobody else touches the frame now, by the protocol under test.
        self.base.with_mut(|p| unsafe { *p = 0 });
        // SAFETY: as above.
        self.out.with_mut(|p| unsafe { *p = 0 });
    }

    /// The owner whose offer was taken: waits for the taker, reads its outcome.
    fn await_taker(&self) -> u32 {
        while !self.done.load(Acquire) {
            thread::yield_now();
        }
        // SAFETY: `done` was seen: the taker wrote `out` before it and no longer touches it.
        self.out.with(|p| unsafe { *p })
    }
}

/// The taker's side of `par/engine/standing.rs`'s `take`: reads the frame, writes its outcome,
/// sets `done` last.
///
/// # Safety
/// `offer` is the head of a live `Frame` the caller took.
unsafe fn run_taken(offer: *const Offer) -> u32 {
    // SAFETY: the caller's contract; `Frame` is `repr(C)` with the head first.
    let frame = unsafe { &*offer.cast::<Frame>() };
    // SAFETY: the owner does not reuse the frame before `done`.
    let base = frame.base.with(|p| unsafe { *p });
    assert_ne!(base, 0, "the taker read a frame its owner had reused");
    // SAFETY: only the taker writes `out`, before `done`.
    frame.out.with_mut(|p| unsafe { *p = base * 10 });
    frame.done.store(true, Release);
    base
}

/// A thief with one try: it reads the slot and takes the offer standing there, marking
/// `mark` first as relay's thieves do (`None`: Lace's); what `run_taken` read, if it got
/// one.
fn thief(slot: &Arc<OfferSlot>, mark: Option<Arc<AtomicBool>>) -> thread::JoinHandle<Option<u32>> {
    let slot = slot.clone();
    thread::spawn(move || {
        let word = slot.standing()?;
        let offer = take_marked(mark.as_deref(), &slot, word)?;
        // SAFETY: taken: its frame is live until `done`.
        Some(unsafe { run_taken(offer) })
    })
}

/// Explores `f` with at most 3 preemptions unless `LOOM_MAX_PREEMPTIONS` is set.
fn model(f: impl Fn() + Sync + Send + 'static) {
    crate::core::sync::loom_model(3, f);
}

#[test]
fn loom_offer_taken_or_kept_once() {
    let hits = Hits::default();
    let h = hits.clone();
    model(move || {
        let slot = Arc::new(OfferSlot::new());
        let frame = Arc::new(Frame::new(7));
        let ticket = slot.stand(frame.head());
        let thief = thief(&slot, None);
        let kept = slot.take_back(ticket);
        if !kept {
            // A loop inside the owner's block stands an offer of its own meanwhile.
            let inner = Frame::new(8);
            let t = slot.stand(inner.head());
            assert!(slot.take_back(t), "the thief had one try");
            assert_eq!(frame.await_taker(), 70, "the taker's outcome is lost");
        }
        frame.reuse();
        let took = thief.join().unwrap();
        assert_eq!(kept, took.is_none(), "kept {kept}, taken {took:?}");
        assert!(!slot.occupied(), "the slot still holds the offer");
        h[usize::from(kept)].fetch_add(1, Relaxed);
    });
    assert!(
        hits[0].load(Relaxed) > 0,
        "no execution had the offer taken"
    );
    assert!(hits[1].load(Relaxed) > 0, "no execution had the offer kept");
}

#[test]
fn loom_offer_an_old_word_takes_nothing() {
    let hits = Hits::default();
    let h = hits.clone();
    model(move || {
        let slot = Arc::new(OfferSlot::new());
        let (a, b) = (Arc::new(Frame::new(1)), Arc::new(Frame::new(2)));
        let first = slot.stand(a.head());
        let thief = thief(&slot, None);
        let mut taken = None;
        if slot.take_back(first) {
            a.reuse();
            let second = slot.stand(b.head());
            if slot.take_back(second) {
                b.reuse();
            } else {
                assert_eq!(b.await_taker(), 20);
                taken = Some(2);
            }
        } else {
            assert_eq!(a.await_taker(), 10);
            taken = Some(1);
        }
        let took = thief.join().unwrap();
        assert_eq!(
            took, taken,
            "the thief took another offer than the owner lost"
        );
        h[usize::from(taken.is_some())].fetch_add(1, Relaxed);
    });
    assert!(hits[0].load(Relaxed) > 0, "no execution kept both offers");
    assert!(hits[1].load(Relaxed) > 0, "no execution had an offer taken");
}

#[test]
fn loom_offer_the_owner_sees_the_takers_mark() {
    let hits = Hits::default();
    let h = hits.clone();
    model(move || {
        let slot = Arc::new(OfferSlot::new());
        let mark = Arc::new(AtomicBool::new(false));
        let frame = Arc::new(Frame::new(3));
        let ticket = slot.stand(frame.head());
        let thief = thief(&slot, Some(mark.clone()));
        let kept = slot.take_back(ticket);
        if !kept {
            assert!(
                mark.load(Relaxed),
                "the owner lost its offer but not the request"
            );
            frame.await_taker();
        }
        frame.reuse();
        thief.join().unwrap();
        if kept {
            assert!(!mark.load(Relaxed), "a failed take left its request marked");
        }
        h[usize::from(kept)].fetch_add(1, Relaxed);
    });
    assert!(
        hits[0].load(Relaxed) > 0,
        "no execution had the offer taken"
    );
    assert!(hits[1].load(Relaxed) > 0, "no execution had the offer kept");
}
