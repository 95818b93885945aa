//! loom models of relay's gate pairing (thesis §3.3: a victim polls its request channel
//! when it pushes or pops), run against the real code: `post_then_raise_gate` (a sender's
//! `send`) and `lower_gate_then_fence` (the start of the owner's `poll`), over a real relay-mode
//! `Owner` of a real `Deque` and real `Channels`.
//!
//! The owner only polls when its gate is raised, so the pairing must not lose a request:
//! either the owner's drain after `lower_gate_then_fence` receives it, or the sender's raise lands
//! after the owner's lowering, so that the owner's next push polls again. The models
//! check exactly that once the senders have finished: every request has been received,
//! or the gate is still raised. Without the two fences the store-buffering outcome (the
//! owner's drain misses the request, its lowering lands after the raise) loses it.
//!
//! - `loom_gate_one_sender`: one sender, an owner that polls whenever its push gate is
//!   raised.
//! - `loom_gate_two_senders`: two senders on the same channel.
//!
//! Each model also checks, across its executions, that both outcomes occurred: a request
//! received by a poll while a sender ran, and one left behind a raised gate.
//!
//! Run with `.ci/loom`. The preemption bound is given per model unless
//! `LOOM_MAX_PREEMPTIONS` is set.

use super::{lower_gate_then_fence, post_then_raise_gate, Channels, Request, Status, StealAmount};
use crate::core::stats::Counters;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering::Relaxed;

/// Counts, across the executions of one model, how often each outcome occurred. A std
/// atomic outside loom, so it adds nothing to the explored state.
type Hits = std::sync::Arc<[std::sync::atomic::AtomicUsize; 2]>;

/// Rounds of the owner's loop while the senders run.
const ROUNDS: usize = 2;

/// A deque with its relay-mode owner beside it, as a worker's seat keeps them, and the
/// owner's channels.
type Place = crate::core::loom_deque::Place<Channels<()>>;

fn request(thief: u32) -> Request {
    Request {
        thief,
        failed: 0,
        amount: StealAmount::One,
        status: Status::Working,
        update: false,
    }
}

/// One execution: `senders` threads each send one request; the owner, on the main
/// thread, polls whenever its push gate is raised.
fn run(senders: u32, hits: &Hits) {
    let place = Arc::new(Place::new(2, Channels::new(4)));
    let counters = Counters::default();
    // SAFETY: the only owner of this new place, used on this thread alone; `place` and
    // `counters` outlive every use of it, which ends with this function.
    let owner = unsafe { place.seat_owner(&counters) };
    owner.start_private();
    // `Owner::new` leaves the gate raised, so the owner's first round polls in any case.
    let handles: Vec<_> = (0..senders)
        .map(|i| {
            let place = place.clone();
            thread::spawn(move || post_then_raise_gate(&place.extra, &place.dq, request(i + 1)))
        })
        .collect();
    let mut got = 0;
    for _ in 0..ROUNDS {
        if owner.gate_raised() {
            let held = owner.hold();
            lower_gate_then_fence(owner);
            while place.extra.requests.recv().is_some() {
                got += 1;
            }
            drop(held);
        }
    }
    if got > 0 {
        hits[0].fetch_add(1, Relaxed);
    }
    handles.into_iter().for_each(|h| h.join().unwrap());
    if got < senders {
        assert!(
            owner.gate_raised(),
            "a request is queued but the owner's gate is lowered: it would not poll"
        );
        hits[1].fetch_add(1, Relaxed);
    }
    while place.extra.requests.recv().is_some() {
        got += 1;
    }
    assert_eq!(got, senders, "a request was lost");
}

fn model(senders: u32, bound: usize) {
    let hits = Hits::default();
    let h = hits.clone();
    let mut b = loom::model::Builder::new();
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        b.preemption_bound = Some(bound);
    }
    b.check(move || run(senders, &h));
    assert!(hits[0].load(Relaxed) > 0, "no poll received a request");
    assert!(
        hits[1].load(Relaxed) > 0,
        "no request was left to a raised gate"
    );
}

#[test]
fn loom_gate_one_sender() {
    model(1, 3);
}

#[test]
fn loom_gate_two_senders() {
    model(2, 2);
}
