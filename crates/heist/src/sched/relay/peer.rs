//! What the relay protocol asks of a worker (thesis §3.3 and §4.1–4.2): its index and
//! the worker count, its relay state (and, on the manager, the idle set), the barrier
//! numbers, its request channel, whether it is idle, and the means to give tasks to a
//! thief and to send a steal request on.
//!
//! Steal-request handling (`request.rs`) and termination detection (`termination.rs`)
//! are generic over [`Peer`]. In the runtime the one implementation is `Worker`, so the
//! generic code monomorphises to direct calls; the loom models (`loom_termination.rs`)
//! implement it with abstract tasks over the same channels, so that they check the
//! protocol code itself.

use super::{
    give, give_jobs, relay, send, state, took_offer, Barriers, Request, StealAmount, WorkerState,
    MANAGER,
};
use crate::core::frame::Roots;
use crate::core::stats::Counters;
use crate::core::task::{Slot, DONE};
use crate::core::worker::{Job, Worker};
use std::sync::atomic::Ordering::{Acquire, Relaxed};

/// A worker as the relay protocol sees it.
pub(crate) trait Peer {
    /// What a victim hands a thief in one message.
    type Tasks;

    /// This worker's index (the thesis's i).
    fn me(&self) -> u32;

    /// The number of workers (the thesis's n).
    fn n(&self) -> u32;

    /// This worker's relay state; on the manager it holds the idle set.
    fn state(&self) -> &WorkerState;

    /// The pool's barrier numbers.
    fn barriers(&self) -> &Barriers;

    /// This worker's event counters.
    fn counters(&self) -> &Counters;

    /// The oldest steal request (or update) waiting in this worker's request channel.
    fn next_request(&self) -> Option<Request>;

    /// Whether a steal request (or update) waits in this worker's request channel.
    fn requests_waiting(&self) -> bool;

    /// Whether this worker has nothing to do but handle requests and wait for tasks: it
    /// runs no task, holds none, and no stolen task waits in its task channel.
    fn is_idle(&self) -> bool;

    /// Whether no task that the runtime queues outside the workers' deques (heap jobs,
    /// jobs submitted from outside) is waiting anywhere.
    fn no_jobs_queued(&self) -> bool;

    /// Takes what this worker can give a thief asking for `amount`, if it has any.
    fn take_tasks(&self, amount: StealAmount) -> Option<Self::Tasks>;

    /// Sends `tasks` to `thief`'s task channel.
    fn give(&self, thief: u32, tasks: Self::Tasks);

    /// Queues `req` in worker `to`'s request channel and makes sure `to` will look.
    fn send(&self, to: u32, req: Request);

    /// A pseudo-random number, for victim selection.
    fn random(&self) -> u64;

    /// Whether `thief` has taken a loop's standing offer since it sent its request
    /// (`crate::core::offer`), which then goes home unanswered.
    fn took_offer(&self, _thief: u32) -> bool {
        false
    }

    /// Keeps `req`, which found no tasks here, to handle again at this worker's next
    /// poll, if its thief is the one this worker last gave tasks to and this worker is
    /// about to sync a task it handed out: it pushes again right after, most likely
    /// before that thief's request, failed now, would come back (PROTOCOLS.md, "Relay").
    fn hold(&self, _req: Request) -> bool {
        false
    }

    /// This worker's request came home: whatever offer it took, its next request (or
    /// this one, sent on to the manager) asks afresh.
    fn request_home(&self) {}

    /// The manager has just declared termination: workers that wait in the barrier or
    /// back off should look again.
    fn declared(&self) {}

    /// A count that grows when new work may have come for workers backing off (see
    /// `WorkerState::back_off`).
    fn new_work_epoch(&self) -> u64 {
        0
    }
}

/// What a worker hands a thief: `k` of its oldest private tasks, or heap jobs.
pub(crate) enum Gift {
    Slots(u32),
    Jobs(Vec<Job>),
}

impl Peer for Worker {
    type Tasks = Gift;

    fn hold(&self, req: Request) -> bool {
        let l = state(self);
        // The top slot is handed out (nothing private is left), to this thief or done.
        let its = |v: usize| v == DONE || (v != 0 && Slot::thief_index(v) == req.thief as usize);
        let keep = !req.update
            && l.held.get().is_none()
            && self
                .owner()
                .top()
                .is_some_and(|t| its(t.thief.load(Acquire)));
        if keep {
            l.held.set(Some(req));
        }
        keep
    }

    #[inline]
    fn me(&self) -> u32 {
        self.index() as u32
    }

    #[inline]
    fn n(&self) -> u32 {
        self.workers() as u32
    }

    #[inline]
    fn state(&self) -> &WorkerState {
        state(self)
    }

    #[inline]
    fn barriers(&self) -> &Barriers {
        &relay(self).barriers
    }

    #[inline]
    fn counters(&self) -> &Counters {
        Worker::counters(self)
    }

    #[inline]
    fn next_request(&self) -> Option<Request> {
        relay(self).channels(self.index()).requests.recv()
    }

    #[inline]
    fn requests_waiting(&self) -> bool {
        !relay(self).channels(self.index()).requests.is_empty()
    }

    /// Beyond the trait's rule: a task waiting in a barrier counts as idle, and so the
    /// manager is idle only with nothing submitted from outside. A request can come home
    /// while its thief runs a task, in a poll.
    fn is_idle(&self) -> bool {
        let r = self.registry();
        self.frames().idle()
            && self.owner().depth() == 0
            // An answer to our own request may be waiting: for the manager, whose own
            // idleness is looked at rather than registered, this is the only sign of it.
            && relay(self).channels(self.index()).no_tasks()
            // Nor tasks a pusher handed it while it was parked, or a lifeline of its own
            // took, both run at its next search.
            && !super::park::handed_something(self)
            && super::state(self).lifeline.get().is_none()
            && r.jobs_len(self.index()) == 0
            && !r.has_mail(self.index())
            && (self.index() as u32 != MANAGER || !r.injector_has(Roots::Excluded))
    }

    #[inline]
    fn no_jobs_queued(&self) -> bool {
        self.registry().no_jobs_queued()
    }

    /// Private tasks (one, or half of them in steal-half mode), else the older half of
    /// the heap jobs (jobs from outside that the manager took in): taking half is what
    /// pays for such flat lists (thesis §3.5).
    fn take_tasks(&self, amount: StealAmount) -> Option<Gift> {
        let avail = self.owner().private_len();
        if avail > 0 {
            return Some(Gift::Slots(match amount {
                StealAmount::One => 1,
                StealAmount::Half => (avail / 2).max(1),
            }));
        }
        let jobs = self.registry().take_older_half(self.index());
        (!jobs.is_empty()).then_some(Gift::Jobs(jobs))
    }

    #[inline]
    fn give(&self, thief: u32, tasks: Gift) {
        match tasks {
            Gift::Slots(k) => give(self, thief, k),
            Gift::Jobs(jobs) => give_jobs(self, thief, jobs),
        }
    }

    #[inline]
    fn send(&self, to: u32, req: Request) {
        send(self, to, req);
    }

    #[inline]
    fn random(&self) -> u64 {
        self.next_random()
    }

    #[inline]
    fn took_offer(&self, thief: u32) -> bool {
        took_offer(self, thief)
    }

    #[inline]
    fn request_home(&self) {
        relay(self).workers[self.index()]
            .took_offer
            .store(false, Relaxed);
    }

    fn declared(&self) {
        relay(self).new_work_epoch.fetch_add(1, Relaxed);
        self.registry().sleep.wake_all();
    }

    #[inline]
    fn new_work_epoch(&self) -> u64 {
        relay(self).new_work_epoch.load(Relaxed)
    }
}
