//! Detached tasks and the task barrier (thesis §4.1–4.2): `'static` tasks with no handle,
//! and a barrier that returns once every detached task spawned before it, with all of
//! their children, has finished.
//!
//! Under relay, a barrier where the thesis allows one (outside the pool, or at the root
//! of `Pool::run`) is answered by termination detection through the steal requests
//! (`relay/termination.rs`). Elsewhere, and under Lace, the pool counts detached tasks in
//! flight, which is the fastest way there: a task's children (joins, scopes, futures)
//! finish inside it, and detached tasks it spawns are counted before it ends, so the
//! count reaches zero only when all are done. A barrier inside a task does not wait for
//! the detached tasks that its worker took it up inside of, since they cannot end first.
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
use std::sync::atomic::Ordering::{Acquire, SeqCst};
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
    let detached = w.frames().enter(Frame::Detached);
    let out = panic::catch_unwind(AssertUnwindSafe(|| f(w)));
    drop(detached);
    let d = &registry.detached;
    if let Err(p) = out {
        hand_on(d, p);
    }
    registry.in_flight.fetch_sub(1, SeqCst);
    if d.pending.fetch_sub(1, SeqCst) == 1 {
        let _g = lock(&d.panic);
        d.idle.notify_all();
        drop(_g);
        if d.closing.load(SeqCst) {
            stop_closed(&registry);
        }
        // A worker waiting in `Worker::barrier` may have gone to sleep.
        registry.sleep.wake_all();
    }
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

/// `Pool::drop` on one of the pool's own workers: the dropping task cannot wait for the
/// detached tasks (it may be one), so the workers run every queued task and stop once
/// none is left (see `stop_closed`).
pub(crate) fn close_inside(r: &Registry) {
    r.detached.closing.store(true, SeqCst);
    if r.detached.pending.load(SeqCst) == 0 {
        stop_closed(r);
    }
}

/// Stops the workers of a pool whose last handle was dropped inside it, once its detached
/// tasks (and so all of its work) are done. A panic kept for the barrier has nobody left
/// to reach: rather than lose it, the process aborts.
fn stop_closed(r: &Registry) {
    if let Some(p) = take_panic(r) {
        std::mem::forget(p);
        eprintln!(
            "heist: a detached task panicked in a pool whose last handle was dropped inside \
             the pool, so no barrier can re-raise it; aborting (a panic handler set with \
             PoolBuilder::panic_handler would receive it)"
        );
        std::process::abort();
    }
    r.terminate.store(true, SeqCst);
    r.sleep.wake_all();
}

pub(crate) fn spawn<F: FnOnce(&Worker) + Send + 'static>(registry: &Arc<Registry>, f: F) {
    registry.detached.pending.fetch_add(1, SeqCst);
    registry.in_flight.fetch_add(1, SeqCst);
    let job = Box::new(Job {
        f,
        registry: Arc::clone(registry),
    });
    // SAFETY: the box lives until `execute` takes it back, once; `F` is `Send + 'static`.
    let job = unsafe { JobRef::new(Box::into_raw(job) as *const (), execute::<F>) };
    match worker::current_in(registry) {
        // SAFETY: `current_in` returns this thread's live worker.
        Some(w) => unsafe { (*w).push_job(job) },
        None => registry.inject(job),
    }
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
        Some(w) => w.wait_until(|| d.pending.load(Acquire) <= how.detached_left()),
        None => {
            let mut g = lock(&d.panic);
            while d.pending.load(Acquire) != 0 {
                g = d.idle.wait(g).unwrap_or_else(|e| e.into_inner());
            }
        }
    }
    if let Some(p) = take_panic(registry) {
        panic::resume_unwind(p);
    }
}

impl Worker {
    /// Spawns a detached task on this worker's pool (see [`Pool::spawn_detached`](crate::Pool::spawn_detached)).
    pub fn spawn_detached<F: FnOnce(&Worker) + Send + 'static>(&self, f: F) {
        spawn(self.registry(), f);
    }

    /// Waits for the detached tasks of this worker's pool (see [`Pool::barrier`](crate::Pool::barrier)).
    pub fn barrier(&self) {
        wait(self.registry());
    }
}
