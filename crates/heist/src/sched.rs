//! The seam between the shared worker loop and the two schedulers: what the worker, the
//! pool and the loop driver ask of a scheduler, and the one place that dispatches on
//! which scheduler a pool runs.
//!
//! Everything the schedulers share (the task slot, the owner's fast push and pop through
//! the gate, spawned tasks in the deque, sleep) is outside this seam; everything in which Lace ("Lace:
//! non-blocking split deque for work-stealing") and the relay scheduler ("Embracing
//! Explicit Communication in Work-Stealing Runtime Systems") differ goes through
//! [`Schedule`]. Dispatch is an enum, matched here and nowhere else: every method below
//! is called on a slow path (the gate down, an idle worker, a job from outside), where
//! the match is one predictable branch, and the owner's fast path never reaches it.

use crate::lace::Lace;
use crate::offer::{Offer, OfferSlot};
use crate::pool::Scheduler;
use crate::registry::{Injected, Registry};
use crate::relay::Relay;
use crate::task::Slot;
use crate::worker::{Job, Worker};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The task store both schedulers keep: Lace's split deque, whose owner pushes and pops
/// through the gate; under relay no thief touches it (`Owner::start_private`).
pub(crate) use crate::lace::deque::{Deque, Held, Home, Owner, Pop, Reach};
pub(crate) use crate::relay::split::Waiting;
use crate::worker::InWorkerSeat;

/// What differs between the schedulers. `w` is always the calling thread's own worker.
pub(crate) trait Schedule {
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
    /// fills a batch): answers thieves waiting for it, as a push would.
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

    /// The loop driver's question once `w`'s gate is raised: does a thief want part of
    /// the running loop?
    fn split_demanded(&self, w: &Worker) -> bool;

    /// The steal requests a split made now answers (relay's |S|+1 cut); none on Lace,
    /// where thieves take the pushed pieces themselves.
    fn waiting_requests<'w>(&self, _w: &'w Worker) -> Waiting<'w> {
        Waiting::default()
    }

    /// `w` has stood an offer (`crate::offer`) after reading the clock at `now`: wakes a
    /// sleeper to watch it, at most once a millisecond (sleepers do not look at offers,
    /// and a loop of long items would otherwise wait for a thief to pass by).
    fn offer_stood(&self, w: &Worker, now: Option<Instant>) {
        crate::offer::wake_watcher(w, now);
    }

    /// `w`, a thief, takes the offer whose word is `seen` from `slot` (`crate::offer`),
    /// if it still stands.
    fn take_offer(&self, _w: &Worker, slot: &OfferSlot, seen: u64) -> Option<*const Offer> {
        slot.take(seen)
    }
}

/// The scheduler of one pool.
pub(crate) enum Sched {
    Lace(Lace),
    Relay(Relay),
}

/// Calls `$call` on the pool's scheduler, whichever it is: the one dispatch.
macro_rules! dispatch {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            Sched::Lace($s) => $call,
            Sched::Relay($s) => $call,
        }
    };
}

impl Sched {
    /// The scheduler `kind` for a pool of `workers`.
    pub(crate) fn new(kind: Scheduler, workers: usize) -> Sched {
        match kind {
            Scheduler::Lace => Sched::Lace(Lace),
            Scheduler::Relay => Sched::Relay(Relay::new(workers)),
        }
    }

    /// Which scheduler this is.
    pub(crate) fn kind(&self) -> Scheduler {
        match self {
            Sched::Lace(_) => Scheduler::Lace,
            Sched::Relay(_) => Scheduler::Relay,
        }
    }

    /// The relay scheduler, for relay's own code (re-entered from a task it handed out).
    pub(crate) fn as_relay(&self) -> Option<&Relay> {
        match self {
            Sched::Relay(r) => Some(r),
            Sched::Lace(_) => None,
        }
    }
}

impl Schedule for Sched {
    #[inline]
    fn start(&self, w: &Worker) {
        dispatch!(self, s => s.start(w))
    }

    #[inline]
    fn push_slow(&self, w: &Worker) {
        dispatch!(self, s => s.push_slow(w))
    }

    #[inline]
    fn pop_slow(&self, w: &Worker) -> Pop {
        dispatch!(self, s => s.pop_slow(w))
    }

    #[inline]
    fn await_stolen(&self, w: &Worker, slot: &Slot) {
        dispatch!(self, s => s.await_stolen(w, slot))
    }

    #[inline]
    fn steal(&self, w: &Worker, victim: Option<usize>) -> bool {
        dispatch!(self, s => s.steal(w, victim))
    }

    #[inline]
    fn poll(&self, w: &Worker) {
        dispatch!(self, s => s.poll(w))
    }

    #[inline]
    fn take_injected(&self, w: &Worker) -> Option<Job> {
        dispatch!(self, s => s.take_injected(w))
    }

    #[inline]
    fn answer_thieves(&self, w: &Worker) {
        dispatch!(self, s => s.answer_thieves(w))
    }

    #[inline]
    fn take_back<'w>(&self, w: &'w Worker, slot: &Slot) -> Option<Held<'w, InWorkerSeat>> {
        dispatch!(self, s => s.take_back(w, slot))
    }

    #[inline]
    fn lifeline(&self, w: &Worker, victim: usize) -> bool {
        dispatch!(self, s => s.lifeline(w, victim))
    }

    #[inline]
    fn injected(&self, r: &Registry, kind: Injected) {
        dispatch!(self, s => s.injected(r, kind))
    }

    #[inline]
    fn sleep_timeout(&self, w: &Worker, timeout: Option<Duration>) -> Option<Duration> {
        dispatch!(self, s => s.sleep_timeout(w, timeout))
    }

    #[inline]
    fn work_visible(&self, w: &Worker) -> bool {
        dispatch!(self, s => s.work_visible(w))
    }

    #[inline]
    fn parking(&self, w: &Worker, asleep: bool) {
        dispatch!(self, s => s.parking(w, asleep))
    }

    #[inline]
    fn barrier_pending(&self) -> bool {
        dispatch!(self, s => s.barrier_pending())
    }

    #[inline]
    fn barrier_at_root(&self, r: &Arc<Registry>, w: Option<&Worker>) -> bool {
        dispatch!(self, s => s.barrier_at_root(r, w))
    }

    #[inline]
    fn split_demanded(&self, w: &Worker) -> bool {
        dispatch!(self, s => s.split_demanded(w))
    }

    #[inline]
    fn waiting_requests<'w>(&self, w: &'w Worker) -> Waiting<'w> {
        dispatch!(self, s => s.waiting_requests(w))
    }

    #[inline]
    fn offer_stood(&self, w: &Worker, now: Option<Instant>) {
        dispatch!(self, s => s.offer_stood(w, now))
    }

    #[inline]
    fn take_offer(&self, w: &Worker, slot: &OfferSlot, seen: u64) -> Option<*const Offer> {
        dispatch!(self, s => s.take_offer(w, slot, seen))
    }
}
