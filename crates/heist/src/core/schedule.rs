//! The seam between the shared worker loop and the two schedulers (Lace, "Lace:
//! non-blocking split deque for work-stealing"; relay, "Embracing Explicit Communication
//! in Work-Stealing Runtime Systems"): what the worker, the pool and the loop driver ask
//! of a scheduler. The core knows a pool's scheduler only as a `dyn Schedule`, which
//! `crate::sched` builds; every method is called on a slow path (the gate raised, an idle
//! worker, a job from outside), so the indirect call never reaches the owner's fast path.

use crate::core::deque::{Held, Pop};
use crate::core::offer::{Offer, OfferSlot};
use crate::core::registry::{Injected, Registry};
use crate::core::task::Slot;
use crate::core::worker::{InWorkerSeat, Job, Worker};
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

/// What differs between the schedulers. `w` is always the calling thread's own worker.
pub(crate) trait Schedule: Send + Sync {
    /// Which scheduler this is.
    fn kind(&self) -> Scheduler;

    /// This scheduler as `Any`, for a scheduler's own code to find its state.
    fn as_any(&self) -> &dyn Any;

    /// `w`'s thread has started, before its first task.
    fn start(&self, w: &Worker);

    /// A push found the gate down (the deque is full, all stolen, or a thief asks).
    fn push_slow(&self, w: &Worker);

    /// A pop found the gate down: take the top slot back if it is still ours.
    fn pop_slow(&self, w: &Worker) -> Pop;

    /// Waits until the thief of `slot`, the top slot, has finished it, working
    /// meanwhile, then pops it.
    fn await_stolen(&self, w: &Worker, slot: &Slot);

    /// One attempt to get work from `victim` (`None`: `w` is alone in its pool).
    fn steal(&self, w: &Worker, victim: Option<usize>) -> bool;

    /// Answers thieves waiting for `w`, whose gate is raised.
    fn poll(&self, w: &Worker);

    /// A job submitted from outside the pool that `w` may run now.
    fn take_injected(&self, w: &Worker) -> Option<Job>;

    /// `w` will not push for a while (it runs a spawned task of its own in place, or
    /// spills to its overflow): answers thieves waiting for it, as a push would.
    fn answer_thieves(&self, w: &Worker);

    /// Makes `slot`, a slot of `w`'s deque below its top, private again unless a thief
    /// has it. `Some` if it is private now, with the hold that keeps it so while the
    /// caller takes its job out or claims it.
    fn take_back<'w>(&self, w: &'w Worker, slot: &Slot) -> Option<Held<'w, InWorkerSeat>>;

    /// A lifeline from `w`, about to sleep, to `victim`, an owner with private tasks
    /// that may not come back to the runtime (PROTOCOLS.md, "Lifelines"): true if it
    /// reached work that `w`'s next search finds.
    fn lifeline(&self, w: &Worker, victim: usize) -> bool;

    /// A job was queued from outside the pool: wake whoever takes it.
    fn injected(&self, r: &Registry, kind: Injected);

    /// How long an idle `w` may sleep, given the caller's bound.
    fn sleep_timeout(&self, w: &Worker, timeout: Option<Duration>) -> Option<Duration>;

    /// The scheduler's part of a sleeper's last look: work that could reach `w`.
    fn work_visible(&self, w: &Worker) -> bool;

    /// `w` is about to sleep (`asleep`), or awake again: relay parks it, so that a pusher
    /// may hand it tasks (PROTOCOLS.md, "Lifelines"). Nothing on Lace, whose sleepers
    /// are found through the sleep state.
    fn parking(&self, _w: &Worker, _asleep: bool) {}

    /// Whether a barrier waits for this scheduler's termination detection.
    fn barrier_pending(&self) -> bool;

    /// A barrier at the root (see `Frames::barrier_wait`): waits for every detached task
    /// by the scheduler's own means and returns true, or returns false to leave it to the
    /// pool's count of detached tasks.
    fn barrier_at_root(&self, r: &Arc<Registry>, w: Option<&Worker>) -> bool;

    /// The pool's last handle was dropped (`detached::close`): its workers stop once every
    /// detached task is done and the scheduler is `quiet`.
    fn close(&self, _r: &Registry) {}

    /// Whether the workers of a closed pool may stop once its detached tasks are done:
    /// no task handed out between them waits to be taken. Always, under Lace, where a
    /// thief runs what it takes at once.
    fn quiet(&self) -> bool {
        true
    }

    /// The drop of a closed pool with no detached task left: waits until the scheduler
    /// is `quiet` (`other`: the caller is a worker of another pool, which keeps working)
    /// and returns true, or returns false if it cannot wait (the workers stop by
    /// themselves). `all_started`: every worker's thread has started or was started by
    /// the pool itself (not by a spawn handler, which may never run it).
    fn settle(&self, _r: &Registry, _other: Option<&Worker>, _all_started: bool) -> bool {
        true
    }

    /// `w` waits for a task a thief took from it: takes the oldest task of its own deque
    /// that nobody has taken, as a thief would, and runs it (false if there is none, or
    /// `w`'s stack is deep). Waiting first would leave that task for after the wait,
    /// though a thief would have run it meanwhile.
    fn steal_own(&self, w: &Worker) -> bool;

    /// `w` has run a stolen task and is about to publish that it is done.
    fn finishing_stolen(&self, _w: &Worker) {}

    /// The loop driver's question once `w`'s gate is raised: does a thief want part of
    /// the running loop?
    fn split_demanded(&self, w: &Worker) -> bool;

    /// The steal requests a split made now answers (relay's |S|+1 cut); none on Lace,
    /// where thieves take the pushed pieces themselves.
    fn waiting_requests<'w>(&self, _w: &'w Worker) -> Waiting<'w> {
        Waiting::default()
    }

    /// `w` has stood an offer (`crate::core::offer`) after reading the loops' clock
    /// (`crate::core::clock`) at `now`: wakes a sleeper to watch it, at most once a
    /// millisecond (sleepers do not look at offers, and a loop of long items would
    /// otherwise wait for a thief to pass by).
    fn offer_stood(&self, w: &Worker, now: Option<u64>) {
        crate::core::offer::wake_watcher(w, now);
    }

    /// `w`, a thief, takes the offer whose word is `seen` from `slot` (`crate::core::offer`),
    /// if it still stands.
    fn take_offer(&self, _w: &Worker, slot: &OfferSlot, seen: u64) -> Option<*const Offer> {
        slot.take(seen)
    }
}

/// Which scheduler a pool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheduler {
    /// Lace's split deque with leapfrogging ("Lace: non-blocking split deque for
    /// work-stealing", van Dijk and van de Pol).
    Lace,
    /// Prell's channel-based work stealing: private deques and forwarded steal requests
    /// ("Embracing Explicit Communication in Work-Stealing Runtime Systems").
    Relay,
}

/// A scheduler's steal requests taken for one cut (relay's |S|+1 cut).
pub(crate) trait Requests {
    /// Into how many parts the cut divides the rest (1: none, no thief waits).
    fn ways(&self) -> usize;
    /// Answers every request taken, after the pieces were pushed.
    fn answer(self: Box<Self>);
}

/// The steal requests a split made now answers: relay's |S|+1 cut; none on Lace, whose
/// thieves take the pushed pieces themselves. Answered by `answer`, or when dropped.
#[derive(Default)]
pub(crate) struct Waiting<'w>(Option<Box<dyn Requests + 'w>>);

impl<'w> Waiting<'w> {
    /// Requests a scheduler took from its worker's channel.
    pub(crate) fn taken(requests: Box<dyn Requests + 'w>) -> Waiting<'w> {
        Waiting(Some(requests))
    }

    /// Into how many parts a split cuts the rest: two when no requests are held (Lace,
    /// whose thieves take the pushed part themselves).
    pub(crate) fn ways(&self) -> usize {
        self.0.as_ref().map_or(2, |r| r.ways())
    }

    /// Answers every request taken, after the pieces were pushed.
    pub(crate) fn answer(self) {
        if let Some(r) = self.0 {
            r.answer();
        }
    }
}
