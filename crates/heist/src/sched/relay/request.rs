//! Steal requests (thesis §3.3 and Fig. 4.4): what a worker does with a request that
//! reaches it. A victim with tasks answers the thief, first sending the manager an update
//! if the thief was registered idle; a victim without forwards the request to a random
//! other worker (never back to the thief) until n−1 have failed, when it goes home. A
//! thief whose request comes home while it has nothing marks it idle and sends it to the
//! manager, which registers the thief in its idle set and forwards it like any other.
//!
//! Generic over [`Peer`], so that the loom models run this very code.

use super::peer::Peer;
use super::termination::{self, MANAGER};
use super::{Request, Status};
use crate::core::stats::stat;

/// Handles every steal request waiting for `p`, then (on the manager) checks for
/// termination.
#[inline]
pub(crate) fn handle_waiting<P: Peer>(p: &P) {
    while let Some(req) = p.next_request() {
        handle(p, req);
    }
    termination::check(p);
}

/// One request that reached `p` (Fig. 4.4): an update for the manager, our own request
/// come home, or a thief's to answer or forward.
pub(super) fn handle<P: Peer>(p: &P, mut req: Request) {
    if req.update {
        termination::update(p, req);
        return;
    }
    if req.thief == p.me() {
        own_returned(p, req);
        return;
    }
    if p.took_offer(req.thief) {
        // Its thief has work from a loop's offer (`crate::core::offer`): the request goes home.
        // `Idle` means it is on its way to the manager, which is here and has not
        // registered the thief: it is working.
        if req.status == Status::Idle {
            req.status = Status::Working;
        }
        stat!(p.counters(), requests_returned);
        p.send(req.thief, req);
        return;
    }
    if try_give(p, &req) || p.hold(req) {
        return;
    }
    if p.me() == MANAGER && req.status == Status::Idle {
        req.status = Status::Registered;
        termination::register(p, req.thief);
    }
    forward(p, req);
}

/// Answers `req` with tasks if `p` has any. A registered thief is reactivated first, so
/// that the manager's update is on its way before the thief can send anything else.
fn try_give<P: Peer>(p: &P, req: &Request) -> bool {
    let Some(tasks) = p.take_tasks(req.amount) else {
        return false;
    };
    if req.status == Status::Registered {
        termination::reactivated(p, *req);
    }
    p.give(req.thief, tasks);
    true
}

/// Passes `req` on after a failure: to a random worker, or home after n−1 failures.
fn forward<P: Peer>(p: &P, mut req: Request) {
    req.failed += 1;
    if req.failed < p.n() - 1 {
        stat!(p.counters(), requests_forwarded);
        let to = random_other(p, req.thief);
        p.send(to, req);
    } else {
        stat!(p.counters(), requests_returned);
        p.send(req.thief, req);
    }
}

/// Our own request came back after n−1 failures. If we have nothing, it goes to the
/// manager as "idle" (once per idle period); once registered, we back off before the
/// next one.
fn own_returned<P: Peer>(p: &P, mut req: Request) {
    let l = p.state();
    l.outstanding.set(false);
    p.request_home();
    if l.revoked.replace(false) {
        req.status = Status::Working;
    }
    l.status.set(req.status);
    if req.status == Status::Registered {
        // Only a worker the manager counts idle backs off (thesis §4.2).
        l.back_off(p.new_work_epoch());
    }
    if req.status == Status::Working && p.is_idle() {
        req.status = Status::Idle;
        req.failed = 0;
        l.outstanding.set(true);
        if p.me() == MANAGER {
            req.status = Status::Registered;
            l.status.set(Status::Registered);
            termination::register(p, req.thief);
            forward(p, req);
        } else {
            l.status.set(Status::Idle);
            p.send(MANAGER, req);
        }
    }
}

/// A random worker other than `p` and `thief` (there are at least three workers
/// whenever this is called, since `failed < n − 1`).
fn random_other<P: Peer>(p: &P, thief: u32) -> u32 {
    let n = u64::from(p.n());
    let me = p.me();
    let (lo, hi) = if me < thief { (me, thief) } else { (thief, me) };
    let mut v = (p.random() % (n - 2)) as u32;
    if v >= lo {
        v += 1;
    }
    if v >= hi {
        v += 1;
    }
    v
}

/// Sends a new steal request of `p` to `victim`. It carries the status our last request
/// came home with, so that a registered thief stays registered.
pub(crate) fn ask<P: Peer>(p: &P, victim: u32) {
    let l = p.state();
    debug_assert!(!l.outstanding.get(), "relay: one request out at a time");
    let req = Request {
        thief: p.me(),
        failed: 0,
        amount: l.amount.get(),
        status: l.status.get(),
        update: false,
    };
    l.outstanding.set(true);
    stat!(p.counters(), requests_sent);
    p.send(victim, req);
}
