//! loom models of claimed loops (`par/engine/claim.rs`), run against the real `Progress` and `Door`,
//! whose atomics and latch `crate::core::sync` swaps for loom's:
//!
//! - `loom_claim_owner_and_thieves_cover_the_range_once`: an owner claims growing blocks
//!   while two cutters, pushed before and after its first claim, cut; every item is
//!   taken exactly once (each taker writes the item's loom cell, so two takers of one
//!   item are reported as a race), the owner's claims are consecutive from the front, and
//!   if both cutters cut, the later one's range lies below the earlier one's (the order
//!   in which their frames combine).
//! - `loom_claim_closed_door_keeps_the_helper_out`: a caller claims while a helper enters
//!   the door, cuts and writes its result; once `close` returns, the caller reads the
//!   result and reuses its whole frame, so a helper still inside (or entering late) is
//!   reported as a race.
//! - `loom_claim_a_part_is_taken_or_taken_back_once` (`par/engine/from_outside.rs`): a caller hands a
//!   part over while a worker tries to take it; the part is run exactly once, by the
//!   worker or by the caller that took it back, and once the caller has the part back or
//!   has waited for the worker, it reuses its whole frame, so a worker still touching it is
//!   reported as a race.
//!
//! Each model also checks, across its executions, that both outcomes of the race it is
//! about occurred (a thief got something and nothing; the helper got in and was shut out).
//!
//! Run with `.ci/loom`.

use crate::par::engine::claim::{Door, Progress};
use crate::par::engine::from_outside::Ticket;
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering::Relaxed;

/// Items of the modelled loop.
const LEN: usize = 5;

/// Counts, across the executions of one model, how often each outcome occurred. A std
/// atomic outside loom.
type Hits = std::sync::Arc<[std::sync::atomic::AtomicUsize; 2]>;

/// The items of a loop: one loom cell each, counting its takers.
struct Items([UnsafeCell<u8>; LEN]);

// SAFETY: a cell is written only by the taker the progress word handed it to, which is the
// protocol under test; loom reports any overlap.
unsafe impl Sync for Items {}

impl Items {
    fn new() -> Items {
        Items(std::array::from_fn(|_| UnsafeCell::new(0)))
    }

    /// Marks `r` as taken by the caller.
    fn take(&self, r: std::ops::Range<usize>) {
        for i in r {
            // SAFETY: the progress word handed `i` to the caller alone.
            self.0[i].with_mut(|p| unsafe { *p += 1 });
        }
    }

    /// Checks that every item was taken exactly once.
    fn check(&self) {
        for (i, c) in self.0.iter().enumerate() {
            // SAFETY: every taker has been joined.
            let n = c.with(|p| unsafe { *p });
            assert_eq!(n, 1, "item {i} was taken {n} times");
        }
    }
}

/// Explores `f` with at most 3 preemptions unless `LOOM_MAX_PREEMPTIONS` is set.
fn model(f: impl Fn() + Sync + Send + 'static) {
    crate::par::engine::seam::loom_model(3, f);
}

#[test]
fn loom_claim_owner_and_thieves_cover_the_range_once() {
    let hits = Hits::default();
    let h = hits.clone();
    model(move || {
        let items = Arc::new(Items::new());
        let word = Arc::new(Progress::new(LEN));
        // Two cutters, pushed one after the other around the owner's first claim; each
        // remembers the upper end it was pushed at.
        let cutter = |hi: usize| {
            let (items, word, h) = (items.clone(), word.clone(), h.clone());
            thread::spawn(move || {
                let got = word.cut_at(hi, 1);
                h[usize::from(got.is_some())].fetch_add(1, Relaxed);
                if let Some(r) = &got {
                    assert!(r.end <= LEN && r.start < r.end, "a bad cut {r:?}");
                    items.take(r.clone());
                }
                got
            })
        };
        let first = cutter(word.hi());
        let mut r = word
            .claim(1)
            .expect("nothing is cut before the first claim ends");
        assert_eq!(r, 0..1);
        items.take(r.clone());
        let second = cutter(word.hi());
        let mut block = 2;
        while let Some(next) = word.claim(block) {
            assert_eq!(next.start, r.end, "the owner's claims are not consecutive");
            r = next;
            items.take(r.clone());
            block *= 2;
        }
        assert_eq!(word.left(), 0);
        let (a, b) = (first.join().unwrap(), second.join().unwrap());
        if let (Some(a), Some(b)) = (a, b) {
            assert!(
                b.end <= a.start,
                "the later cutter cut above the earlier one"
            );
        }
        items.check();
    });
    assert!(hits[0].load(Relaxed) > 0, "no cutter ever came too late");
    assert!(hits[1].load(Relaxed) > 0, "no cutter ever cut");
}

/// A caller's frame: the loop's items, the helper's result, and the door.
struct Frame {
    items: Items,
    helped: UnsafeCell<usize>,
}

// SAFETY: `items` as for `Items`; `helped` is written by the helper inside the door and
// read by the caller after `close`, which is the protocol under test.
unsafe impl Sync for Frame {}

#[test]
fn loom_claim_closed_door_keeps_the_helper_out() {
    let hits = Hits::default();
    let h = hits.clone();
    model(move || {
        let frame = Arc::new(Frame {
            items: Items::new(),
            helped: UnsafeCell::new(0),
        });
        let word = Arc::new(Progress::new(LEN));
        let door = Arc::new(Door::new());
        let helper = {
            let (frame, word, door, h) = (frame.clone(), word.clone(), door.clone(), h.clone());
            thread::spawn(move || {
                let inside = door.enter();
                h[usize::from(inside)].fetch_add(1, Relaxed);
                if inside {
                    let mut n = 0;
                    while let Some(r) = word.cut(1) {
                        n += r.len();
                        frame.items.take(r);
                    }
                    // SAFETY: the caller reads `helped` only after `close`.
                    frame.helped.with_mut(|p| unsafe { *p = n });
                    // SAFETY: the door lives in an `Arc` this thread holds.
                    unsafe { Door::leave(&*door) };
                }
            })
        };
        let mut mine = 0;
        while let Some(r) = word.claim(1) {
            mine += r.len();
            frame.items.take(r);
        }
        door.close();
        // SAFETY: the door is closed and empty: the helper's writes happened before, and
        // it writes nothing more.
        let helped = frame.helped.with(|p| unsafe { *p });
        assert_eq!(mine + helped, LEN, "the caller missed the helper's items");
        frame.items.check();
        // The frame is reused: a helper still touching it is a race.
        for c in &frame.items.0 {
            // SAFETY: as above.
            c.with_mut(|p| unsafe { *p = 0 });
        }
        // SAFETY: as above.
        frame.helped.with_mut(|p| unsafe { *p = usize::MAX });
        helper.join().unwrap();
    });
    assert!(hits[0].load(Relaxed) > 0, "the helper was never shut out");
    assert!(hits[1].load(Relaxed) > 0, "the helper never got in");
}

/// A caller's frame for one hand-off: the part (counting its runs) and its outcome.
struct Handoff {
    part: UnsafeCell<u8>,
    out: UnsafeCell<usize>,
}

// SAFETY: the worker touches the frame only after winning the ticket and until `finish`;
// the caller after taking the part back or waiting: the protocol under test.
unsafe impl Sync for Handoff {}

#[test]
fn loom_claim_a_part_is_taken_or_taken_back_once() {
    let hits = Hits::default();
    let h = hits.clone();
    model(move || {
        let frame = Arc::new(Handoff {
            part: UnsafeCell::new(0),
            out: UnsafeCell::new(0),
        });
        let ticket = Arc::new(Ticket::new());
        let worker = {
            let (frame, ticket) = (frame.clone(), ticket.clone());
            thread::spawn(move || {
                if ticket.take() {
                    // SAFETY: taken: the caller waits for `finish`.
                    frame.part.with_mut(|p| unsafe { *p += 1 });
                    // SAFETY: as above.
                    frame.out.with_mut(|p| unsafe { *p = 7 });
                    // SAFETY: this thread won the ticket and holds a reference count.
                    unsafe { Ticket::finish(&*ticket) };
                }
            })
        };
        let back = ticket.take_back();
        h[usize::from(back)].fetch_add(1, Relaxed);
        if back {
            // SAFETY: taken back: the worker never touches the frame.
            frame.part.with_mut(|p| unsafe { *p += 1 });
        } else {
            ticket.wait();
            assert!(ticket.finished());
            // SAFETY: finished: the worker's writes happened before.
            assert_eq!(frame.out.with(|p| unsafe { *p }), 7);
        }
        // SAFETY: as above: the frame is the caller's alone now.
        let runs = frame
            .part
            .with_mut(|p| unsafe { std::mem::replace(&mut *p, 0) });
        assert_eq!(runs, 1, "the part ran {runs} times");
        // SAFETY: as above.
        frame.out.with_mut(|p| unsafe { *p = usize::MAX });
        worker.join().unwrap();
    });
    assert!(hits[0].load(Relaxed) > 0, "the part was never taken");
    assert!(hits[1].load(Relaxed) > 0, "the part was never taken back");
}
