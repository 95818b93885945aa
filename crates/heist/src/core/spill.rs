//! The overflow of spawned tasks: a scope or detached task spawned on a worker whose deque
//! is full goes, boxed, to the end of that worker's job list, a queue that grows as
//! needed (`Registry::queue_job`), instead of running in the spawner's frame. A search
//! whose tasks spawn their children and return would otherwise turn the breadth of its
//! tree into depth on the stack. rayon's deques grow for the same reason; heist's deque
//! keeps its fixed array, whose owner's push and pop need no atomics, and overflows here,
//! on a slow path with a lock. Only `join` runs its second half inline on a full deque:
//! there the depth is that of the recursion its caller wrote.
//!
//! Spilled tasks are heap jobs like those from outside the pool, and found the same ways.
//! The owner runs its own when it looks for work, newest first (`Worker::find_work`);
//! under Lace an idle worker takes the oldest from a victim whose deque had nothing to
//! steal (`steal`), and its last look before sleeping sees any worker's non-empty list
//! (`Registry::has_visible_work`; the spill wakes a sleeper after queueing, through the
//! sleep handshake); under relay a victim hands the older half of its list to a steal
//! request (`Peer::take_tasks`), and a worker with a non-empty list is not idle, so
//! termination waits for its tasks. No drain finds a spilled task, so each is counted:
//! a scope task in its scope's count, a detached task in the detached counts; and, run
//! from elsewhere, it waits for none of what it spawns (`spawn::run_counting`).

use crate::core::spawn::Then;
use crate::core::stats::stat;
use crate::core::task::JobRef;
use crate::core::worker::Worker;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// A spilled job and the count it holds (see `spill`).
struct Spilled<F> {
    job: F,
    count: Option<*const AtomicUsize>,
}

/// Queues `job` on `w`'s overflow. With `count`, the job holds one of it while it runs
/// (what it spawns is counted by itself: `spawn::run_counting`).
///
/// # Safety
/// What `job` borrows lives until the job has run: `count` is a count that the owner of
/// those borrows waits to fall to zero before it ends (a scope's), or the job's own
/// `Then` releases such a count, or the job is `'static` (a detached task, counted in
/// `spawn::Counts`). With `count`, the job's `Then` is `Nothing`.
pub(crate) unsafe fn spill<F>(w: &Worker, job: F, count: Option<*const AtomicUsize>)
where
    F: FnOnce(&Worker) -> Then + Send,
{
    if let Some(c) = count {
        // SAFETY: the caller's contract: the count is alive until it falls to zero.
        unsafe { (*c).fetch_add(1, Relaxed) };
    }
    let data = Box::into_raw(Box::new(Spilled { job, count }));
    // SAFETY: the box lives until `run_spilled` takes it back, once (every queued job is
    // taken exactly once); what the job borrows outlives it (the caller's contract), and
    // `F: Send` (the count is an atomic); `run_spilled` never unwinds.
    let job = unsafe { JobRef::new(data.cast_const().cast(), run_spilled::<F>) };
    let r = w.registry();
    r.queue_job(w.index(), job);
    stat!(w.counters(), spills);
    // The list is visible work now (a Lace sleeper's last look sees it); the sleeper
    // woken looks here first.
    r.sleep.wake_one_for(w.index());
}

/// Runs a spilled job on `w`, then releases what it holds. Never unwinds: scope and
/// detached tasks catch their panics.
///
/// # Safety
/// `data` is a `Spilled<F>` made by `spill`, run once.
unsafe fn run_spilled<F>(data: *const (), w: &Worker)
where
    F: FnOnce(&Worker) -> Then + Send,
{
    // SAFETY: the contract above.
    let Spilled { job, count } = *unsafe { Box::from_raw(data.cast_mut().cast::<Spilled<F>>()) };
    // The tasks it spawns are counted (`run_counting`), so it holds its own count only
    // while it runs; the `run_taken` around drains what it leaves.
    crate::core::spawn::run_counting(w, |w| match (job(w), count) {
        (then, None) => then,
        (then, Some(c)) => {
            debug_assert!(matches!(then, Then::Nothing));
            Then::Release(c)
        }
    });
}

/// Lace: takes the oldest spilled job of `victim`, whose deque had nothing to steal, and
/// runs it on `w`. False if its overflow is empty.
pub(crate) fn steal(w: &Worker, victim: usize) -> bool {
    let Some(job) = w.registry().take_oldest_job(victim) else {
        return false;
    };
    // SAFETY: every queued `JobRef` is taken exactly once.
    w.run_taken(|| unsafe { job.execute(w) });
    true
}
