//! Detached tasks and the task barrier (thesis §4.1–4.2): `'static` tasks with no handle,
//! and a barrier that returns once every detached task spawned before it, with all of
//! their children, has finished.
//!
//! Under relay, a barrier where the thesis allows one (outside the pool, or at the root
//! of `Pool::run`) is answered by termination detection through the steal requests
//! (`relay/termination.rs`). Elsewhere, and under Lace, the pool counts detached tasks in
//! flight, which is the fastest way there: a task's children (joins, scopes, promises)
//! finish inside it, and detached tasks it spawns are counted before it ends, so the
//! count reaches zero only when all are done. A detached task spawned on a worker is a
//! slot of that worker's deque, counted made there and done where it runs
//! (`crate::spawn::Counts`); one spawned from outside is a heap job counted in `pending`.
//! A barrier inside a task does not wait for the detached tasks that its worker took it
//! up inside of, since they cannot end first.
//!
//! A detached task's panic is never lost: it goes to the builder's panic handler if one
//! is set, else it waits for the next barrier, or for `Pool::drop`.

use crate::frame::{BarrierWait, Frame};
use crate::registry::Registry;
use crate::sched::Schedule;
use crate::sync::lock;
use crate::task::{self, JobRef, Panic};
use crate::worker::{self, Worker};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};
use std::sync::{Arc, Condvar, Mutex};

/// What `PoolBuilder::panic_handler` sets.
pub(crate) type PanicHandler = Box<dyn Fn(Panic) + Send + Sync>;

/// Barrier state of a pool.
#[derive(Default)]
pub(crate) struct Detached {
    pending: std::sync::atomic::AtomicUsize,
    panic: Mutex<Option<Panic>>,
    idle: Condvar,
    /// Receives detached panics instead of the barrier, if set.
    pub(crate) handler: Option<PanicHandler>,
    /// The last handle was dropped inside the pool: its workers stop once `pending` is 0.
    closing: AtomicBool,
    /// Threads outside the pool waiting in a barrier: a detached task that ends then checks
    /// whether all are done. (A worker in a barrier looks for itself while it waits.)
    waiting: std::sync::atomic::AtomicUsize,
}

struct Job<F> {
    f: F,
    registry: Arc<Registry>,
}

/// Runs a detached task. Never unwinds: its panic is handed on (see `hand_on`).
///
/// # Safety
/// `data` is a `Box<Job<F>>` made by `spawn`, executed once.
unsafe fn execute<F: FnOnce(&Worker) + Send + 'static>(data: *const (), w: &Worker) {
    // SAFETY: the contract above.
    let job = unsafe { Box::from_raw(data as *mut Job<F>) };
    let Job { f, registry } = *job;
    crate::spawn::run_draining(w, || run_detached(w, f));
    registry.in_flight.fetch_sub(1, SeqCst);
    if registry.detached.pending.fetch_sub(1, SeqCst) == 1 {
        all_may_be_done(&registry);
    }
}

/// Runs a detached task's body on `w`; its panic is handed on (see `hand_on`).
pub(crate) fn run_detached<F: FnOnce(&Worker)>(w: &Worker, f: F) {
    let detached = w.frames().enter(Frame::Detached);
    let out = panic::catch_unwind(AssertUnwindSafe(|| f(w)));
    drop(detached);
    if let Err(p) = out {
        hand_on(&w.registry().detached, p);
    }
}

/// A detached task in a worker's deque has ended (and was counted done): if a barrier
/// waits or the pool is closing, see whether all are done. Without a fence, so a waiter
/// can miss this; its wait is bounded (see `wait`).
pub(crate) fn deque_task_ended(r: &Registry) {
    let d = &r.detached;
    if d.waiting.load(Relaxed) > 0 || d.closing.load(Relaxed) {
        all_may_be_done(r);
    }
}

/// Whether every detached task has finished.
fn all_done(r: &Registry) -> bool {
    r.detached.pending.load(Acquire) == 0 && r.detached_in_deques() == 0
}

/// Wakes barriers and stops a closing pool if every detached task has finished.
fn all_may_be_done(r: &Registry) {
    if !all_done(r) {
        return;
    }
    let d = &r.detached;
    let g = lock(&d.panic);
    d.idle.notify_all();
    drop(g);
    if d.closing.load(SeqCst) {
        stop_closed(r);
    }
    // A worker waiting in `Worker::barrier` may have gone to sleep.
    r.sleep.wake_all();
}

/// Gives a detached task's panic to the panic handler, or keeps it for the barrier if
/// there is none (or the handler panicked: then its own panic is kept).
fn hand_on(d: &Detached, p: Panic) {
    let p = match &d.handler {
        Some(h) => match panic::catch_unwind(AssertUnwindSafe(|| h(p))) {
            Ok(()) => return,
            Err(q) => q,
        },
        None => p,
    };
    task::record_first(&d.panic, p);
}

/// `Pool::drop` on one of the pool's own workers (the dropping task cannot wait for the
/// detached tasks: it may be one), or `Pool::release`: the workers run every queued task
/// and stop once none is left (see `stop_closed`).
pub(crate) fn close_inside(r: &Registry) {
    r.detached.closing.store(true, SeqCst);
    all_may_be_done(r);
}

/// Stops the workers of a pool whose last handle was dropped without waiting, once its detached
/// tasks (and so all of its work) are done. A panic kept for the barrier has nobody left
/// to reach: rather than lose it, the process aborts.
fn stop_closed(r: &Registry) {
    if let Some(p) = take_panic(r) {
        std::mem::forget(p);
        eprintln!(
            "heist: a detached task panicked in a pool whose last handle was dropped without \
             waiting (inside the pool, or a rayon-style ThreadPool), so no barrier can \
             re-raise it; aborting (a panic handler set with PoolBuilder::panic_handler \
             would receive it)"
        );
        std::process::abort();
    }
    r.terminate.store(true, SeqCst);
    r.sleep.wake_all();
}

pub(crate) fn spawn<F: FnOnce(&Worker) + Send + 'static>(registry: &Arc<Registry>, f: F) {
    // An adopted worker runs no loop that would take the task up or hand it out: inject.
    if let Some(w) = worker::current_in(registry).filter(|_| !worker::adopted()) {
        // SAFETY: `current_in` returns this thread's live worker.
        return crate::spawn::detached(unsafe { &*w }, f);
    }
    registry.detached.pending.fetch_add(1, SeqCst);
    registry.in_flight.fetch_add(1, SeqCst);
    let job = Box::new(Job {
        f,
        registry: Arc::clone(registry),
    });
    // SAFETY: the box lives until `execute` takes it back, once; `F` is `Send + 'static`.
    let job = unsafe { JobRef::new(Box::into_raw(job) as *const (), execute::<F>) };
    registry.inject(job);
}

/// The first panic of a detached task since the last barrier, if any.
pub(crate) fn take_panic(registry: &Registry) -> Option<Panic> {
    lock(&registry.detached.panic).take()
}

pub(crate) fn wait(registry: &Arc<Registry>) {
    // SAFETY: `current_in` returns this thread's live worker, which outlives this call.
    let w = worker::current_in(registry).map(|w| unsafe { &*w });
    let how = w.map_or(BarrierWait::AtRoot, |w| {
        w.frames().barrier_wait(w.owner().depth())
    });
    // Only the task itself (or a branch it runs inline) is caught here: a barrier in a
    // branch that another worker stole, or in its scope tasks, hangs instead.
    assert!(
        how != BarrierWait::ForItself,
        "heist: barrier() inside a detached task would wait for that task itself"
    );
    let d = &registry.detached;
    match w {
        _ if how == BarrierWait::AtRoot && registry.sched.barrier_at_root(registry, w) => {}
        // The detached tasks this one runs inside (nested on this worker's stack) cannot
        // finish before it does: waiting for them would never end.
        Some(w) => w.wait_until(|| {
            let left = d.pending.load(Acquire) as u64 + registry.detached_in_deques();
            left <= how.detached_left() as u64
        }),
        None => {
            d.waiting.fetch_add(1, SeqCst);
            let mut g = lock(&d.panic);
            while !all_done(registry) {
                // A task in a deque may end unseen (`deque_task_ended`): look again soon.
                let t = std::time::Duration::from_millis(1);
                g = d
                    .idle
                    .wait_timeout(g, t)
                    .map_or_else(|e| e.into_inner().0, |r| r.0);
            }
            drop(g);
            d.waiting.fetch_sub(1, SeqCst);
        }
    }
    if let Some(p) = take_panic(registry) {
        panic::resume_unwind(p);
    }
}

impl Worker {
    /// Spawns a detached task on this worker's pool (see [`Pool::spawn_detached`](crate::Pool::spawn_detached)).
    #[inline]
    pub fn spawn_detached<F: FnOnce(&Worker) + Send + 'static>(&self, f: F) {
        crate::spawn::detached(self, f);
    }

    /// Waits for the detached tasks of this worker's pool (see [`Pool::barrier`](crate::Pool::barrier)).
    pub fn barrier(&self) {
        wait(self.registry());
    }
}
