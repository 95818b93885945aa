//! loom models of relay's hand-outs (`Slot::hand_to`, `Slot::start_handed`; PROTOCOLS.md,
//! "Hand-outs"), run against the real `Slot`: an owner hands a slot to a thief, sends it
//! the batch, and then, at its sync, starts the slot itself if the thief has not, as
//! `Relay::await_stolen` does; the thief starts what it received, as `run_remote` does.
//!
//! - `loom_handout_started_once`: the owner's take-back races the thief's start. The job
//!   runs exactly once, and the owner reads its result. Both outcomes must occur.
//! - `loom_handout_a_stale_batch_runs_no_private_slot`: the owner takes the slot back
//!   before the thief looks at its batch, runs it, and puts a new job into the same
//!   slot, which it keeps private and pops itself. The stale batch must not start it.
//! - `loom_handout_a_stale_batch_and_a_new_hand_out`: the same, but the reused slot is
//!   handed to another thief: whoever starts it, the job runs once.
//!
//! Jobs run with the empty context `()`, as in `core/loom_deque.rs`.
//!
//! Run with `.ci/loom`.

use crate::core::task::{Slot, DONE};
use loom::sync::atomic::AtomicBool;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// A job of either round: one type, so that the slot is reused with it.
type Job = Box<dyn FnOnce(&()) -> u64 + Send>;

/// Spins of a waiting owner after which the model reports a hang.
const SPIN_LIMIT: usize = 200;

/// Counts of one model across its executions (std atomics, outside the protocol).
type Hits = std::sync::Arc<[AtomicUsize; 2]>;

/// The shared state of one execution: the slot, the "channel" that carries the batch,
/// and how often each job ran (std atomics: bookkeeping, not the protocol).
struct Shared {
    slot: Slot,
    sent: AtomicBool,
    runs: [AtomicUsize; 2],
}

fn job(s: &Arc<Shared>, id: usize) -> impl FnOnce(&()) -> u64 + Send + 'static {
    let s = Arc::clone(s);
    move |_| {
        s.runs[id].fetch_add(1, Relaxed);
        100 + id as u64
    }
}

/// The thief: if the batch has come, start the slot and run it (`run_remote`).
fn thief(s: &Shared, me: usize) -> bool {
    if !s.sent.load(Acquire) || !s.slot.start_handed(me) {
        return false;
    }
    // SAFETY: `start_handed` made `me` the thief of a slot put with `put::<(), _, u64>`.
    unsafe { s.slot.run_stolen(&()) };
    true
}

/// The owner's sync of a handed slot (`Relay::await_stolen`): start it if nobody has,
/// else wait for `DONE`; then the outcome.
fn owner_sync(s: &Shared, me: usize) -> (u64, bool) {
    let took_back = s.slot.start_handed(me);
    if took_back {
        // SAFETY: as in `thief`.
        unsafe { s.slot.run_stolen(&()) };
    }
    let mut spins = 0;
    while s.slot.thief.load(Acquire) != DONE {
        spins += 1;
        assert!(spins < SPIN_LIMIT, "the owner waits for a slot nobody runs");
        thread::yield_now();
    }
    // SAFETY: `DONE` read with acquire; the job was put with result `u64`.
    let out = unsafe { s.slot.take_outcome::<Job, u64>() };
    (out.expect("the job does not panic"), took_back)
}

fn shared() -> Arc<Shared> {
    Arc::new(Shared {
        slot: Slot::new(),
        sent: AtomicBool::new(false),
        runs: [AtomicUsize::new(0), AtomicUsize::new(0)],
    })
}

/// Puts `j` into the slot, as a boxed job (one type for both rounds).
///
/// # Safety
/// The owner has the slot to itself.
unsafe fn put(s: &Shared, j: impl FnOnce(&()) -> u64 + Send + 'static) {
    let b: Job = Box::new(j);
    // SAFETY: the caller's contract; a box fits a slot.
    unsafe { s.slot.put::<(), _, u64>(b) };
}

#[test]
fn loom_handout_started_once() {
    let hits: Hits = Default::default();
    let h = hits.clone();
    loom::model(move || {
        let s = shared();
        // SAFETY: not handed out yet.
        unsafe { put(&s, job(&s, 0)) };
        s.slot.hand_to(1);
        s.sent.store(true, Release);
        let t = {
            let s = Arc::clone(&s);
            thread::spawn(move || thief(&s, 1))
        };
        let (out, took_back) = owner_sync(&s, 0);
        let thief_ran = t.join().unwrap();
        assert_eq!(out, 100);
        assert_eq!(s.runs[0].load(SeqCst), 1, "the job runs exactly once");
        assert_ne!(took_back, thief_ran, "exactly one of them started it");
        h[usize::from(took_back)].fetch_add(1, Relaxed);
    });
    assert!(
        hits.iter().all(|c| c.load(Relaxed) > 0),
        "both outcomes occur"
    );
}

#[test]
fn loom_handout_a_stale_batch_runs_no_private_slot() {
    stale_batch(false);
}

#[test]
fn loom_handout_a_stale_batch_and_a_new_hand_out() {
    stale_batch(true);
}

/// The owner takes its slot back before the thief looks at the batch, then reuses the
/// slot: private (`hand_out_again` false) or handed to another thief.
fn stale_batch(hand_out_again: bool) {
    loom::model(move || {
        let s = shared();
        // SAFETY: not handed out yet.
        unsafe { put(&s, job(&s, 0)) };
        s.slot.hand_to(1);
        assert!(s.slot.start_handed(0));
        // SAFETY: as in `thief`.
        unsafe { s.slot.run_stolen(&()) };
        s.sent.store(true, Release);
        let t = {
            let s = Arc::clone(&s);
            thread::spawn(move || thief(&s, 1))
        };
        // SAFETY: `DONE`, stored by this thread.
        let first = unsafe { s.slot.take_outcome::<Job, u64>() };
        assert_eq!(first.ok(), Some(100));
        // SAFETY: the owner's slot again: the stale batch starts only a hand-out.
        unsafe { put(&s, job(&s, 1)) };
        if hand_out_again {
            s.slot.hand_to(2);
            assert_eq!(owner_sync(&s, 0).0, 101);
        } else {
            // SAFETY: a private pop of the job put above.
            let j = unsafe { s.slot.take::<Job, u64>() };
            assert_eq!(j(&()), 101);
        }
        t.join().unwrap();
        assert_eq!(s.runs[0].load(SeqCst), 1, "the first job runs once");
        assert_eq!(s.runs[1].load(SeqCst), 1, "the second job runs once");
    });
}
