//! Termination detection through steal requests, and the task barrier built on it
//! (thesis §4.1–4.2). Worker 0 is the manager. A worker whose request comes back after
//! n−1 failures while it has nothing sends it to the manager marked idle; the manager
//! adds the thief to its idle set and passes the request on. A victim that answers a
//! registered thief's request first turns a copy of it into an update to the manager,
//! on the same channel type, so the manager sees the update before any later request of
//! that victim (channel order). When every worker is in the idle set, no job is queued
//! and a barrier is waiting, the manager declares termination for that barrier.
//!
//! Barriers are numbered: `barrier` takes the next number and the manager only answers
//! numbers asked for before it looked, and only with its request channel empty, so a
//! detection cannot predate the tasks a barrier waits for, nor the messages sent before
//! it was asked. A worker that waited in a barrier sends an update before it goes on,
//! since its own request may have registered it idle (§4.2.1).
//!
//! The protocol functions are generic over [`Peer`], so that the loom models
//! (`loom_termination.rs`) run them; `barrier` is the runtime's entry point.

use super::peer::Peer;
use super::{Relay, Request, Status, StealAmount};
use crate::core::frame::Frame;
use crate::core::registry::Registry;
use crate::core::sync::{lock, AtomicU64};
use crate::core::worker::Worker;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{Ordering::Acquire, Ordering::Release, Ordering::SeqCst};
use std::sync::{Condvar, Mutex};

/// The manager's worker index.
pub(crate) const MANAGER: u32 = 0;

/// The manager's idle set.
#[derive(Default)]
pub(crate) struct IdleSet {
    idle: RefCell<Vec<bool>>,
    count: Cell<usize>,
}

impl IdleSet {
    fn registered(&self, w: u32) -> bool {
        self.idle.borrow().get(w as usize).copied().unwrap_or(false)
    }

    /// Puts `thief` in the idle set of a pool of `n`.
    fn insert(&self, n: u32, thief: u32) {
        if !std::mem::replace(&mut *self.member(n, thief), true) {
            self.count.set(self.count.get() + 1);
        }
    }

    /// Takes `thief` out of the idle set of a pool of `n`.
    fn remove(&self, n: u32, thief: u32) {
        if std::mem::replace(&mut *self.member(n, thief), false) {
            self.count.set(self.count.get() - 1);
        }
    }

    /// Whether `thief` is in the set, as a cell to change it through.
    fn member(&self, n: u32, thief: u32) -> std::cell::RefMut<'_, bool> {
        let mut set = self.idle.borrow_mut();
        if set.is_empty() {
            set.resize(n as usize, false);
        }
        std::cell::RefMut::map(set, |s| &mut s[thief as usize])
    }
}

/// Barrier numbers asked for and answered, shared by the pool.
#[derive(Default)]
pub(crate) struct Barriers {
    asked: AtomicU64,
    done: AtomicU64,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Barriers {
    /// Asks for a new barrier; its number.
    pub(crate) fn ask(&self) -> u64 {
        self.asked.fetch_add(1, SeqCst) + 1
    }

    /// Whether termination has been declared for barrier `mine`.
    pub(crate) fn answered(&self, mine: u64) -> bool {
        self.done.load(Acquire) >= mine
    }

    /// Whether some barrier waits for an answer (a hint: idle workers keep stealing).
    pub(crate) fn pending(&self) -> bool {
        self.asked.load(Acquire) > self.done.load(Acquire)
    }

    /// Declares termination for every barrier up to `asked`, and wakes waiters that are
    /// not workers.
    fn declare(&self, asked: u64) {
        let _g = lock(&self.lock);
        self.done.store(asked, Release);
        self.cv.notify_all();
    }

    /// Blocks a thread that is not a worker until barrier `mine` is answered.
    pub(crate) fn wait(&self, mine: u64) {
        let mut g = lock(&self.lock);
        while !self.answered(mine) {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Manager: `thief` is idle.
pub(crate) fn register<P: Peer>(p: &P, thief: u32) {
    debug_assert_eq!(p.me(), MANAGER);
    p.state().idle_set.insert(p.n(), thief);
    check(p);
}

/// Manager: `thief` has work again.
pub(crate) fn unregister<P: Peer>(p: &P, thief: u32) {
    debug_assert_eq!(p.me(), MANAGER);
    p.state().idle_set.remove(p.n(), thief);
}

/// Manager: an update message arrived.
pub(crate) fn update<P: Peer>(p: &P, req: Request) {
    unregister(p, req.thief);
}

/// A victim is about to answer the request of a registered thief.
pub(crate) fn reactivated<P: Peer>(p: &P, req: Request) {
    if p.me() == MANAGER {
        unregister(p, req.thief);
    } else {
        let update = Request {
            status: Status::Working,
            update: true,
            ..req
        };
        p.send(MANAGER, update);
    }
}

/// Manager: declares termination for every barrier asked so far, if all are idle.
pub(crate) fn check<P: Peer>(p: &P) {
    if p.me() != MANAGER {
        return;
    }
    let b = p.barriers();
    let asked = b.asked.load(SeqCst);
    if asked == b.done.load(Acquire) {
        return;
    }
    // The idle set must be as new as these barriers: whatever was sent to us before one
    // of them was asked must have been handled. A worker that left a barrier sent an
    // update before it asked for the next; were it still waiting in our channel, its
    // old registration would count it idle while it runs the tasks the barrier waits
    // for. Our load of `asked` above orders us after such a send.
    if p.requests_waiting() {
        return;
    }
    // The manager counts itself by looking (§4.1.1), the others by their requests.
    let set = &p.state().idle_set;
    let others = set.count.get() - usize::from(set.registered(MANAGER));
    if others == p.n() as usize - 1 && p.is_idle() && p.no_jobs_queued() {
        b.declare(asked);
        p.declared();
    }
}

/// Whether barrier `mine` is answered; the manager checks for termination first.
pub(crate) fn reached<P: Peer>(p: &P, mine: u64) -> bool {
    check(p);
    p.barriers().answered(mine)
}

/// `p` leaves a barrier it waited in. Its request may have registered it idle; it is
/// busy again from here on, so the manager must know before anything else (§4.2.1).
pub(crate) fn leave<P: Peer>(p: &P) {
    p.state().resume_working();
    if p.me() == MANAGER {
        unregister(p, MANAGER);
    } else {
        let update = Request {
            thief: p.me(),
            failed: 0,
            amount: StealAmount::One,
            status: Status::Working,
            update: true,
        };
        p.send(MANAGER, update);
    }
}

/// The relay barrier, called by `w` (`None`: outside the pool) at the root (see
/// `Frames::barrier_wait`): waits until the manager detects termination for it. Termination
/// needs every worker idle, and a task counts as idle only while it waits in the
/// barrier, which is why the thesis allows barriers in the root task only (§4.2).
pub(crate) fn barrier(relay: &Relay, r: &Registry, w: Option<&Worker>) {
    let mine = ask(relay, r);
    match w {
        Some(w) => wait_on_worker(w, mine),
        None => relay.barriers.wait(mine),
    }
}

/// Asks for a barrier without waiting in it; its number. The manager answers it once
/// every worker is idle and nothing is queued (a closing pool's stop waits for that).
pub(crate) fn ask(relay: &Relay, r: &Registry) -> u64 {
    let mine = relay.barriers.ask();
    r.infos[MANAGER as usize].deque.raise_gate();
    // Sleepers must take part: their requests are how the manager learns they are idle.
    r.sleep.wake_all();
    mine
}

fn wait_on_worker(w: &Worker, mine: u64) {
    // The task waiting here counts as idle, or the barrier could never complete.
    let wait = w.frames().enter(Frame::Barrier);
    w.wait_until(|| reached(w, mine));
    drop(wait);
    leave(w);
}
