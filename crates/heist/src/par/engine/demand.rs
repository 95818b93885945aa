//! Whether a running loop should split now: the one place where the loop driver asks
//! the scheduler. Lace (Lace: A Non-Blocking Split Deque for Work-Stealing, §4) raises a
//! split request when a thief finds nothing shared; Prell's relay scheduler (Embracing
//! Explicit Communication in Work-Stealing Runtime Systems, §5.3.2, Fig. 5.13) has steal
//! requests waiting while the private deque is empty. Both show up as the owner's raised
//! push gate, so the owner's check between blocks is one plain load and compare.

use crate::par::engine::seam::worker::Worker;

/// Whether thieves ask for part of the loop `w` is running: between blocks, one load.
#[inline(always)]
pub(crate) fn split_demanded(w: &Worker) -> bool {
    w.owner().gate_raised() && demanded(w)
}

/// The gate is raised: the scheduler tells a thief's request from its other reasons.
#[cold]
#[inline(never)]
fn demanded(w: &Worker) -> bool {
    w.workers() >= 2 && w.sched().split_demanded(w)
}

/// The steal requests a split answers: on relay each waiting thief gets one piece of
/// the cut; on Lace thieves take the pushed pieces themselves, so none are held.
pub(crate) use crate::par::engine::seam::Waiting;

/// Takes the steal requests waiting for `w` at a split (the scheduler-specific half of
/// the |S|+1 cut).
#[cold]
pub(crate) fn waiting(w: &Worker) -> Waiting<'_> {
    w.sched().waiting_requests(w)
}
