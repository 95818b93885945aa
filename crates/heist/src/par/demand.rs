//! Whether a running loop should split now: the one place where the loop driver asks
//! the scheduler. Lace (Lace: A Non-Blocking Split Deque for Work-Stealing, §4) raises a
//! split request when a thief finds nothing shared; Prell's relay scheduler (Embracing
//! Explicit Communication in Work-Stealing Runtime Systems, §5.3.2, Fig. 5.13) has steal
//! requests waiting while the private deque is empty. Both show up as the owner's raised
//! push gate, so the owner's check between blocks is one plain load and compare.

use crate::pool::Scheduler;
use crate::worker::Worker;

/// Whether thieves ask for part of the loop `w` is running: between blocks, one load.
#[inline(always)]
pub(crate) fn split_demanded(w: &Worker) -> bool {
    w.owner().flag_raised() && demanded(w)
}

/// The gate is raised: tell a thief's request from the other reasons for it.
///
/// Lace raises the gate for a split request and also while the deque is all stolen, when
/// thieves cannot ask; either way a split is what lets them in (Lazy Binary Splitting:
/// split when the deque is empty), and afterwards only requests raise it. Relay raises
/// it for waiting steal requests, which take private tasks first; only a request that
/// finds none asks for a split.
#[cold]
#[inline(never)]
fn demanded(w: &Worker) -> bool {
    let r = w.registry();
    if r.workers() < 2 {
        return false;
    }
    match r.scheduler {
        Scheduler::Lace => true,
        Scheduler::Relay => {
            if w.owner().private_len() == 0 && r.infos[w.index()].channels.pending() {
                return true;
            }
            // Private tasks go first; with nothing waiting, this lowers the gate again.
            crate::relay::poll(w);
            false
        }
    }
}

/// The steal requests a split answers: on relay each waiting thief gets one piece of
/// the cut; on Lace thieves take the pushed pieces themselves, so none are held.
pub(crate) use crate::relay::split::Waiting;

/// Takes the steal requests waiting for `w` at a split (the scheduler-specific half of
/// the |S|+1 cut).
#[cold]
pub(crate) fn waiting(w: &Worker) -> Waiting<'_> {
    match w.registry().scheduler {
        Scheduler::Lace => Waiting::default(),
        Scheduler::Relay => Waiting::take(w),
    }
}
