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
//! numbers asked for before it looked, so a detection cannot predate the tasks a barrier
//! waits for. A worker that waited in a barrier sends an update before it goes on, since
//! its own request may have registered it idle (§4.2.1).

use super::{send, Request, Status};
use crate::pool::{lock, Registry};
use crate::worker::{self, Worker};
use std::cell::{Cell, RefCell};
use std::panic;
use std::sync::atomic::{AtomicU64, Ordering::Acquire, Ordering::Release, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex};

/// The manager's worker index.
pub(crate) const MANAGER: u32 = 0;

/// The manager's idle set.
#[derive(Default)]
pub(crate) struct Termination {
    idle: RefCell<Vec<bool>>,
    count: Cell<usize>,
}

/// Barrier numbers asked for and answered, shared by the pool.
#[derive(Default)]
pub(crate) struct Barriers {
    asked: AtomicU64,
    done: AtomicU64,
    lock: Mutex<()>,
    cv: Condvar,
}

/// Whether `w` has nothing to do: it runs no task (beyond the one waiting in a barrier),
/// has none in its deque, none waiting in its task channel and no job in its list (and, for the manager, nothing submitted
/// from outside). A request can come home while its thief runs a task, in a poll.
pub(crate) fn is_idle(w: &Worker) -> bool {
    let r = w.registry();
    w.running() == w.relay.idle_running.get()
        && w.owner().depth() == 0
        // An answer to our own request may be waiting: for the manager, whose own idleness
        // is looked at rather than registered, this is the only sign of it.
        && r.infos[w.index()].channels.no_tasks()
        && r.jobs_len(w.index()) == 0
        && (w.index() as u32 != MANAGER || !r.has_injected())
}

/// Manager: `thief` is idle.
pub(crate) fn register(w: &Worker, thief: u32) {
    set_idle(w, thief, true);
    check(w);
}

/// Manager: `thief` has work again.
pub(crate) fn unregister(w: &Worker, thief: u32) {
    set_idle(w, thief, false);
}

fn set_idle(w: &Worker, thief: u32, idle: bool) {
    debug_assert_eq!(w.index() as u32, MANAGER);
    let t = &w.relay.term;
    let mut set = t.idle.borrow_mut();
    if set.is_empty() {
        set.resize(w.workers(), false);
    }
    let slot = &mut set[thief as usize];
    if *slot != idle {
        *slot = idle;
        t.count.set(if idle {
            t.count.get() + 1
        } else {
            t.count.get() - 1
        });
    }
}

impl Termination {
    fn registered(&self, w: u32) -> bool {
        self.idle.borrow().get(w as usize).copied().unwrap_or(false)
    }
}

/// Manager: an update message arrived.
pub(crate) fn update(w: &Worker, req: Request) {
    unregister(w, req.thief);
}

/// A victim is about to answer the request of a registered thief.
pub(crate) fn reactivated(w: &Worker, req: Request) {
    if w.index() as u32 == MANAGER {
        unregister(w, req.thief);
    } else {
        let update = Request {
            status: Status::Working,
            update: true,
            ..req
        };
        send(w, MANAGER, update);
    }
}

/// Whether some barrier waits for an answer (a hint: idle workers keep stealing).
pub(crate) fn barrier_pending(r: &Registry) -> bool {
    r.barriers.asked.load(Acquire) > r.barriers.done.load(Acquire)
}

/// Manager: declares termination for every barrier asked so far, if all are idle.
pub(crate) fn check(w: &Worker) {
    if w.index() as u32 != MANAGER {
        return;
    }
    let r = w.registry();
    let b = &r.barriers;
    let asked = b.asked.load(SeqCst);
    if asked == b.done.load(Acquire) {
        return;
    }
    // The manager counts itself by looking (§4.1.1), the others by their requests.
    let others = w.relay.term.count.get() - usize::from(w.relay.term.registered(MANAGER));
    if others == w.workers() - 1 && is_idle(w) && r.no_jobs_queued() {
        let _g = lock(&b.lock);
        b.done.store(asked, Release);
        b.cv.notify_all();
    }
}

/// The relay barrier: waits until the manager detects termination for it.
pub(crate) fn barrier(r: &Arc<Registry>) {
    let b = &r.barriers;
    let mine = b.asked.fetch_add(1, SeqCst) + 1;
    r.infos[MANAGER as usize].deque.raise_flag();
    // Sleepers must take part: their requests are how the manager learns they are idle.
    r.sleep.wake_all();
    match worker::current_in(r) {
        // SAFETY: `current_in` returns this thread's live worker.
        Some(w) => unsafe { wait_on_worker(&*w, mine) },
        None => {
            let mut g = lock(&b.lock);
            while b.done.load(Acquire) < mine {
                g = b.cv.wait(g).unwrap_or_else(|e| e.into_inner());
            }
        }
    }
    if let Some(p) = crate::barrier::take_panic(r) {
        panic::resume_unwind(p);
    }
}

fn wait_on_worker(w: &Worker, mine: u64) {
    let b = &w.registry().barriers;
    // The task waiting here counts as idle, or the barrier could never complete.
    let outer = w.relay.idle_running.replace(w.running());
    w.wait_until(|| {
        check(w);
        b.done.load(Acquire) >= mine
    });
    w.relay.idle_running.set(outer);
    // Our request may have registered us idle; we are busy again from here on.
    w.relay.resume_working();
    if w.index() as u32 == MANAGER {
        unregister(w, MANAGER);
    } else {
        let update = Request {
            thief: w.index() as u32,
            failed: 0,
            half: false,
            status: Status::Working,
            update: true,
        };
        send(w, MANAGER, update);
    }
}
