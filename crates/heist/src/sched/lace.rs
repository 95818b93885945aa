//! Lace ("Lace: non-blocking split deque for work-stealing", van Dijk and van de Pol): the
//! non-blocking split deque (`deque.rs`), stealing from it, and leapfrogging while a
//! stolen task runs (§4.3, with random steals as fallback). Spawned tasks (scope and
//! detached tasks) are slots of the deque like join branches, stolen the same way; those
//! that found the deque full are in the owner's overflow (`crate::spill`), which a thief
//! takes from when the deque has nothing shared.

use crate::core::deque::Steal;
use crate::core::deque::{Held, Pop, Reach};
use crate::core::registry::{Injected, Registry};
use crate::core::schedule::{Schedule, Scheduler};
use crate::core::task::Slot;
use crate::core::trace::EventKind;
use crate::core::worker::InWorkerSeat;
use crate::core::worker::{Job, Worker};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

/// Consecutive failed steals from the thief before a leapfrogging owner tries a random
/// victim (Lace §4.3).
const LEAP_TRIES: u32 = 32;

/// The Lace scheduler: thieves take shared tasks from each other's split deques.
pub(crate) struct Lace;

impl Lace {
    /// One steal from `victim`'s deque.
    fn steal_from(&self, w: &Worker, victim: usize) -> bool {
        let Steal::Taken(slot) = w.registry().infos[victim].deque.steal() else {
            return false;
        };
        slot.thief.store(w.index() + 1, Relaxed);
        crate::core::trace::with_depth(w, EventKind::Steal, Some(victim), 0);
        // SAFETY: the CAS in `steal` gave this worker the slot, and every slot of a
        // worker's deque is put with context `Worker` (`Worker::join`, `crate::tasks::promise`, `crate::core::spawn`).
        w.run_taken(|| unsafe { slot.run_stolen(w) });
        true
    }
}

/// The owner's wake after it shared tasks: traced (`crate::trace`), passing on `more`.
#[inline(always)]
fn shared(more: bool, w: &Worker) -> bool {
    crate::core::trace::with_depth(w, EventKind::Share, None, 0);
    more
}

impl Schedule for Lace {
    fn kind(&self) -> Scheduler {
        Scheduler::Lace
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn start(&self, _w: &Worker) {}

    /// Publishes the first task after everything was stolen, or grows the shared part for
    /// a thief's split request or a sleeper's sign; either way a thief may now find
    /// something, and a sleeper is woken to look here first.
    fn push_slow(&self, w: &Worker) {
        let sleep = &w.registry().sleep;
        w.owner()
            .push_slow(|| shared(sleep.wake_one_for(w.index()), w));
    }

    fn pop_slow(&self, w: &Worker) -> Pop {
        let sleep = &w.registry().sleep;
        w.owner()
            .pop_slow(|| shared(sleep.wake_one_for(w.index()), w))
    }

    /// Leapfrogging: steals from the thief, whose work is what `slot` waits for, and
    /// after `LEAP_TRIES` failures in a row from a random victim (Lace §4.3).
    fn await_stolen(&self, w: &Worker, slot: &Slot) {
        let mut fails = 0u32;
        w.wait_for_thief(slot, |thief| {
            if w.deep() {
                return false;
            }
            let found = if fails < LEAP_TRIES {
                self.steal_from(w, thief)
            } else {
                fails = 0;
                self.steal(w, w.random_victim())
            };
            fails += u32::from(!found);
            found
        });
        w.owner().pop_stolen();
    }

    /// A victim's shared deque part first, then its overflow of spawned tasks (`spill`);
    /// nothing while `w`'s stack is deep (`Worker::deep`).
    fn steal(&self, w: &Worker, victim: Option<usize>) -> bool {
        let v = victim.filter(|_| !w.deep());
        v.is_some_and(|v| self.steal_from(w, v) || crate::core::spill::steal(w, v))
    }

    /// Shares the older half of the private tasks, then steals from this worker's own
    /// deque.
    fn steal_own(&self, w: &Worker) -> bool {
        if w.deep() {
            return false;
        }
        let sleep = &w.registry().sleep;
        w.owner().grow(|| shared(sleep.wake_one_for(w.index()), w));
        self.steal_from(w, w.index())
    }

    /// Thieves ask through the gate itself: nothing to answer.
    fn poll(&self, _w: &Worker) {}

    /// A root taken from outside is where the pool's next work appears: one sleeper is
    /// woken to look at this worker's deque first, so that its wake-up runs while the
    /// root starts rather than after the root's first push has shared a task (relay's
    /// manager does the same).
    fn take_injected(&self, w: &Worker) -> Option<Job> {
        let job = w.registry().take_from_injector(w.roots())?;
        w.registry().sleep.wake_one_for(w.index());
        Some(job)
    }

    /// Shares half of the private tasks if a thief asked (its split request) or a sleeper
    /// did (its sign), and wakes a sleeper.
    fn answer_thieves(&self, w: &Worker) {
        let sleep = &w.registry().sleep;
        w.owner()
            .grow_if_asked(|| shared(sleep.wake_one_for(w.index()), w));
    }

    /// A shared slot comes back by a CAS that lowers `split` to it, unless stolen.
    fn take_back<'w>(&self, w: &'w Worker, slot: &Slot) -> Option<Held<'w, InWorkerSeat>> {
        w.owner().take_back(slot, true)
    }

    /// Shares half of the victim's private tasks; the next search steals them like any
    /// shared task.
    fn lifeline(&self, w: &Worker, victim: usize) -> bool {
        let dq = &w.registry().infos[victim].deque;
        dq.lifeline(w.index(), Reach::Share, || ()).is_some()
    }

    fn injected(&self, r: &Registry, kind: Injected) {
        match kind {
            Injected::Root => r.sleep.wake_for_root(),
            Injected::Job => r.sleep.wake_one(),
        }
    }

    fn sleep_timeout(&self, _w: &Worker, timeout: Option<Duration>) -> Option<Duration> {
        timeout
    }

    /// Anything a thief could take: a shared deque part, a job from outside.
    fn work_visible(&self, w: &Worker) -> bool {
        w.registry().has_visible_work(w.roots())
    }

    fn barrier_pending(&self) -> bool {
        false
    }

    fn barrier_at_root(&self, _r: &Arc<Registry>, _w: Option<&Worker>) -> bool {
        false
    }

    /// Lace raises the gate for a split request and also while the deque is all stolen,
    /// when thieves cannot ask; either way a split is what lets them in (Lazy Binary
    /// Splitting: split when the deque is empty), and afterwards only requests raise it.
    fn split_demanded(&self, _w: &Worker) -> bool {
        true
    }
}
