//! Relay's lifelines (PROTOCOLS.md, "Lifelines"): a sleeping worker parks, so that a
//! push that sees its sign hands it tasks as a victim answers a steal request (the
//! thesis's polling at push, §3.6, for a thief whose request is not at that victim); and
//! a sleeper's lifeline takes half of the private tasks of an owner that did not see the
//! sign. Either way the manager learns first that the worker works (§4.1.1).

use super::termination;
use super::{relay, state, Batch, Relay, Request, Status, StealAmount};
use crate::core::deque::Reach;
use crate::core::sync::lock;
use crate::core::trace::EventKind;
use crate::core::worker::Worker;
use std::sync::atomic::{Ordering::AcqRel, Ordering::Relaxed};

/// `PerWorker::parked`: the worker sleeps and may be handed tasks.
const PARKED: usize = 1;
/// `PerWorker::parked`: its steal request is out.
const PARKED_OUT: usize = 2;

/// The parked word of a worker whose request carries `status` and is out or not.
fn park_word(status: Status, out: bool) -> usize {
    let s = match status {
        Status::Working => 0,
        Status::Idle => 1,
        Status::Registered => 2,
    };
    PARKED | if out { PARKED_OUT } else { 0 } | s << 2
}

/// The status and whether the request is out, from a parked word.
fn parked_status(word: usize) -> (Status, bool) {
    let status = match word >> 2 {
        0 => Status::Working,
        1 => Status::Idle,
        _ => Status::Registered,
    };
    (status, word & PARKED_OUT != 0)
}

/// Hands private tasks to parked sleepers (PROTOCOLS.md, "Lifelines"), one batch each,
/// while both last; the sign stays up while sleepers are left. Under the owner's hold.
pub(super) fn serve_parked(w: &Worker) {
    let relay = relay(w);
    while relay.parked.load(Relaxed) > 0 && w.owner().private_len() > 0 {
        let n = w.workers();
        let start = w.next_random() as usize % n;
        let Some((v, word)) = (0..n)
            .map(|i| (start + i) % n)
            .filter(|&v| v != w.index())
            .find_map(|v| claim_parked(relay, v).map(|word| (v, word)))
        else {
            return;
        };
        hand_to_parked(w, v as u32, word);
    }
    if relay.parked.load(Relaxed) > 0 {
        w.registry().infos[w.index()].deque.raise_limit();
    }
}

/// Claims worker `v`'s parked word, if it is parked.
fn claim_parked(relay: &Relay, v: usize) -> Option<usize> {
    let parked = &relay.workers[v].parked;
    let word = parked.load(Relaxed);
    if word & PARKED == 0 || parked.compare_exchange(word, 0, AcqRel, Relaxed).is_err() {
        return None;
    }
    relay.parked.fetch_sub(1, Relaxed);
    Some(word)
}

/// Hands half of `w`'s private tasks to `thief`, which was parked with `word`, as a
/// victim answers a request: the manager first learns that the thief works, and its
/// request, if out, goes home when it reaches a victim (`took_offer`).
fn hand_to_parked(w: &Worker, thief: u32, word: usize) {
    let (status, out) = parked_status(word);
    if out {
        relay(w).workers[thief as usize]
            .took_offer
            .store(true, Relaxed);
    }
    if status != Status::Working {
        let req = Request {
            thief,
            failed: 0,
            amount: StealAmount::One,
            status: Status::Registered,
            update: false,
        };
        termination::reactivated(w, req);
    }
    let k = w.owner().private_len().div_ceil(2);
    let first = w.owner().hand_out(k);
    crate::core::trace::with_depth(w, EventKind::Answer, Some(thief as usize), k as usize);
    for i in 0..k as usize {
        // SAFETY: the `k` slots from `first` were just handed out and are live.
        unsafe { &*first.add(i) }.hand_to(thief as usize);
    }
    lock(&relay(w).workers[thief as usize].handed).push(Batch {
        first,
        count: k,
        from: w.index() as u32,
        jobs: std::ptr::null_mut(),
    });
    w.registry().sleep.wake(thief as usize);
}

/// `w` is about to sleep: parks it, so that a pusher may hand it tasks.
pub(super) fn park(w: &Worker) {
    let relay = relay(w);
    let l = state(w);
    // Tasks it holds already are found by the last look; a second batch would have
    // nowhere to go.
    if l.lifeline.get().is_some() || handed_something(w) {
        return;
    }
    let word = park_word(l.status.get(), l.outstanding());
    relay.workers[w.index()].parked.store(word, Relaxed);
    relay.parked.fetch_add(1, Relaxed);
}

/// `w` is awake: withdraws its parked word unless a pusher claimed it (the tasks it hands
/// over are then taken at the next search).
pub(super) fn unpark(w: &Worker) {
    let relay = relay(w);
    let parked = &relay.workers[w.index()].parked;
    let word = parked.load(Relaxed);
    if word & PARKED != 0 && parked.compare_exchange(word, 0, Relaxed, Relaxed).is_ok() {
        relay.parked.fetch_sub(1, Relaxed);
    }
}

/// Whether a pusher has handed `w` tasks (a sleeper's last look).
pub(super) fn handed_something(w: &Worker) -> bool {
    !lock(&relay(w).workers[w.index()].handed).is_empty()
}

/// A batch a pusher handed `w` while it was parked, if any.
pub(super) fn take_handed(w: &Worker) -> Option<Batch> {
    lock(&relay(w).workers[w.index()].handed).pop()
}

/// Takes half of the victim's private tasks as a batch, run at the next search. The
/// manager learns first that this worker works (as a taker of an offer tells it), and
/// a request of ours that is out goes home when it reaches a victim.
pub(super) fn lifeline(relay: &Relay, w: &Worker, victim: usize) -> bool {
    let l = state(w);
    if l.lifeline.get().is_some() {
        return true;
    }
    let mark = &relay.workers[w.index()].took_offer;
    let marked = mark.load(Relaxed);
    let dq = &w.registry().infos[victim].deque;
    let got = dq.lifeline(w.index(), Reach::Take, || {
        if l.outstanding() {
            mark.store(true, Relaxed);
        }
        if l.status.get() != Status::Working {
            termination::leave(w);
        }
    });
    let Some((first, count)) = got else {
        if !marked {
            mark.store(false, Relaxed);
        }
        return false;
    };
    for i in 0..count as usize {
        // SAFETY: the lifeline gave us the `count` slots from `first`, live in the
        // victim's deque, which the registry keeps.
        unsafe { &*first.add(i) }.hand_to(w.index());
    }
    l.lifeline.set(Some(Batch {
        first,
        count,
        from: victim as u32,
        jobs: std::ptr::null_mut(),
    }));
    true
}
