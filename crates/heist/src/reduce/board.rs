//! The reductions of a pool that idle workers may join (the pool's board), and how a
//! worker joins one ("Blaze-Tasks", §4.1: every thread runs the task loop until the end
//! of the reduction). A reduction is posted by its caller and taken off before the
//! caller's frame ends; a worker looking for work joins the newest it never took part in.

use super::Participate;
use crate::core::source::Source;
use crate::core::sync::{AtomicUsize, Mutex, MutexGuard};
use crate::core::worker::Worker;
use std::any::Any;
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::sync::PoisonError;

/// A posted reduction, its lifetime erased.
#[derive(Clone, Copy)]
pub(super) struct Posted(pub(super) *const (dyn Participate + 'static));

// SAFETY: the pointer is followed only under the board's lock (to enter) and then by a
// helper counted in the reduction's `helpers`; the reduction is `Sync`, and its caller
// removes it from the board and waits for its helpers before its frame ends.
unsafe impl Send for Posted {}

/// The reductions of one pool that idle workers may join, newest last.
pub(crate) struct Board {
    posted: Mutex<Vec<Posted>>,
    /// `posted.len()`, read without the lock on every search for work.
    len: AtomicUsize,
}

impl Board {
    pub(crate) fn new() -> Board {
        Board {
            posted: Mutex::new(Vec::new()),
            len: AtomicUsize::new(0),
        }
    }

    /// Whether a posted reduction wants worker `me`: one still running that `me` never
    /// took part in ([`help`] would join it). For the sleeper's last look: the caller of
    /// a reduction posts it before it wakes the sleepers.
    pub(crate) fn wants_help(&self, me: usize) -> bool {
        if self.len.load(Relaxed) == 0 {
            return false;
        }
        lock(&self.posted).iter().any(|p| {
            // SAFETY: a posted reduction is alive while it is on the board.
            unsafe { (*p.0).may_enter(me) }
        })
    }

    pub(super) fn post(&self, p: Posted) {
        let mut posted = lock(&self.posted);
        posted.push(p);
        self.len.store(posted.len(), Relaxed);
    }

    fn unpost(&self, red: Posted) {
        let mut posted = lock(&self.posted);
        if let Some(i) = posted.iter().position(|p| std::ptr::addr_eq(p.0, red.0)) {
            posted.remove(i);
        }
        self.len.store(posted.len(), Relaxed);
    }
}

/// Reductions plug into the worker loop as a work source: an idle worker joins one it
/// never took part in; a sleeper's last look covers the wake-ups of posted reductions
/// (PROTOCOLS.md, "Sleep and wake").
impl Source for Board {
    fn help(&self, w: &Worker) -> bool {
        help(w)
    }

    fn wants(&self, me: usize) -> bool {
        self.wants_help(me)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Joins a reduction of `w`'s pool that it never took part in, if there is one, and
/// works on it until it ends. Called when `w` looks for work; true if it joined.
pub(crate) fn help(w: &Worker) -> bool {
    let board = w.registry().source::<Board>();
    if board.len.load(Relaxed) == 0 {
        return false;
    }
    let posted = lock(&board.posted);
    let Some(red) = posted.iter().rev().find_map(|p| {
        // SAFETY: a posted reduction is alive while it is on the board.
        unsafe { (*p.0).enter(w.index()) }.then_some(*p)
    }) else {
        return false;
    };
    drop(posted);
    let _t = crate::core::trace::span(w, crate::core::trace::EventKind::ReduceHelp, None, 0);
    // SAFETY: `enter` counted this worker as a helper, and the caller waits for its
    // helpers after taking the reduction off the board.
    w.run_taken(|| unsafe { (*red.0).help(w) });
    true
}

/// Takes a reduction off the board and waits for its helpers, also when unwinding.
pub(super) struct Unpost<'a> {
    pub(super) red: Posted,
    pub(super) helpers: &'a std::sync::atomic::AtomicUsize,
    pub(super) w: &'a Worker,
}

impl Drop for Unpost<'_> {
    fn drop(&mut self) {
        self.w.registry().source::<Board>().unpost(self.red);
        let mut idle = 0;
        while self.helpers.load(Acquire) != 0 {
            // A helper may wait for a broadcast's share of this worker, or be registered
            // with a team that needs this worker: serve them, or the helper never comes
            // back.
            self.w.poll();
            if self.w.run_mail() || crate::core::source::serve(self.w) {
                idle = 0;
                continue;
            }
            idle += 1;
            super::back_off(idle);
        }
    }
}
