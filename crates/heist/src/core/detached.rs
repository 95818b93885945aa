//! Detached tasks and the task barrier (thesis §4.1–4.2): `'static` tasks with no handle,
//! and a barrier that returns once every detached task spawned before it, with all of
//! their children, has finished.
//!
//! Under relay, a barrier where the thesis allows one (outside the pool, or at the root
//! of `Pool::run`) is answered by termination detection through the steal requests
//! (`sched/relay/termination.rs`). Elsewhere, and under Lace, the pool counts detached tasks in
//! flight, which is the fastest way there: a task's children (joins, scopes, promises)
//! finish inside it, and detached tasks it spawns are counted before it ends, so the
//! count reaches zero only when all are done. A detached task spawned on a worker is a
//! slot of that worker's deque, counted made there and done where it runs
//! (`crate::core::spawn::Counts`); one spawned from outside is a heap job counted in `pending`.
//! A barrier inside a task does not wait for the detached tasks that its worker took it
//! up inside of, since they cannot end first.
//!
//! A detached task's panic is never lost: it goes to the builder's panic handler if one
//! is set, else it waits for the next barrier, or for `Pool::drop`. Where neither can
//! come any more (a dropped pool, the global pool, which is never dropped), it aborts the
//! process, as rayon does with every panic of a spawned task that has no handler.
//!
//! Dropping a pool does not wait for its detached tasks (rayon's `ThreadPool` does not):
//! it closes the pool, whose workers run every task still queued and then stop
//! (`close`, `stop_closed`). The barrier is the way to wait for them.

use crate::core::frame::{BarrierWait, Frame};
use crate::core::registry::Registry;
use crate::core::sync::lock;
use crate::core::task::{self, JobRef, Panic};
use crate::core::worker::{self, Worker};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};
use std::sync::atomic::{fence, AtomicBool};
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
    /// The last handle was dropped: its workers stop once every detached task is done,
    /// and a detached panic without a handler aborts (no barrier can come).
    closing: AtomicBool,
    /// The pool is the global pool, which nobody drops: a detached panic without a
    /// handler aborts, as in rayon.
    pub(crate) global: AtomicBool,
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
/// `data` is a `Box<Job<F>>` made by `counted`, executed once.
unsafe fn execute<F: FnOnce(&Worker) + Send + 'static>(data: *const (), w: &Worker) {
    // SAFETY: the contract above.
    let job = unsafe { Box::from_raw(data as *mut Job<F>) };
    let Job { f, registry } = *job;
    crate::core::spawn::run_draining(w, || run_detached(w, f));
    registry.in_flight.fetch_sub(1, SeqCst);
    if registry.detached.pending.fetch_sub(1, SeqCst) == 1 {
        all_may_be_done(&registry);
    }
}

/// Runs a detached task's body on `w`; its panic is handed on (see `hand_on`).
pub(crate) fn run_detached<F: FnOnce(&Worker)>(w: &Worker, f: F) {
    let detached = w.frames().enter(Frame::Detached);
    let _t = crate::core::trace::span(w, crate::core::trace::EventKind::Detached, None, 0);
    let out = panic::catch_unwind(AssertUnwindSafe(|| f(w)));
    drop(detached);
    if let Err(p) = out {
        hand_on(&w.registry().detached, p);
    }
}

/// A detached task in a worker's deque has ended (and was counted done): if a barrier
/// waits or the pool is closing, see whether all are done. Without a fence, so a waiter
/// can miss this; its wait is bounded (see `wait`), and a closing pool that misses it is
/// stopped by the next worker that goes to sleep (`stop_if_closed`).
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

/// Wakes barriers and stops a closing pool if every detached task has finished (and its
/// scheduler is quiet).
fn all_may_be_done(r: &Registry) {
    if !all_done(r) {
        return;
    }
    let d = &r.detached;
    let g = lock(&d.panic);
    d.idle.notify_all();
    drop(g);
    if d.closing.load(SeqCst) && r.sched.quiet() {
        stop_closed(r);
    }
    // A worker waiting in `Worker::barrier` may have gone to sleep.
    r.sleep.wake_all();
}

/// Gives a detached task's panic to the panic handler, or keeps it for the barrier if
/// there is none (or the handler panicked: then its own panic is kept). Kept, with no
/// barrier to come (the pool was dropped, or is the global pool), it aborts the process.
fn hand_on(d: &Detached, p: Panic) {
    let p = match &d.handler {
        Some(h) => match panic::catch_unwind(AssertUnwindSafe(|| h(p))) {
            Ok(()) => return,
            Err(q) => q,
        },
        None => p,
    };
    if d.global.load(Relaxed) {
        unheard(p, "in the global pool, which no barrier or drop waits for");
    }
    if d.closing.load(SeqCst) {
        unheard(p, "in a pool whose last handle was dropped");
    }
    task::record_first(&d.panic, p);
}

/// A detached task's panic that nobody can receive: rather than lose it, the process
/// aborts with a message.
fn unheard(p: Panic, where_: &str) -> ! {
    // Its drop could unwind; nobody receives it.
    std::mem::forget(p);
    eprintln!(
        "heist: a detached task panicked {where_}, with no panic handler to receive it; \
         aborting, as rayon does (set one with PoolBuilder::panic_handler or \
         ThreadPoolBuilder::panic_handler, or wait with Pool::barrier before dropping the \
         pool)"
    );
    std::process::abort()
}

/// `Pool::drop`: no handle is left, so no barrier can come, and the drop does not wait
/// for the detached tasks (a task may wait for the dropping thread). The workers run every
/// task still queued and stop once none is left (see `stop_closed`); at once if none is.
/// Returns the panic kept for a barrier so far, if `take` (the drop re-raises it outside
/// the pool); one that comes later aborts (`hand_on`).
pub(crate) fn close(r: &Registry, take: bool) -> Option<Panic> {
    r.detached.closing.store(true, SeqCst);
    r.sched.close(r);
    // Pairs with the fence before a sleeper's last look (`stop_if_closed`): the last
    // detached task ends without a fence, so either this drop sees it counted done, or
    // a worker going to sleep after it sees the pool closing, and stops it.
    fence(SeqCst);
    let kept = if take { take_panic(r) } else { None };
    all_may_be_done(r);
    kept
}

/// `Pool::drop` outside the pool, after `close`: if no detached task is left, waits
/// until the scheduler is quiet (briefly: the pool has no work left but what its workers
/// finish now), stops the workers and returns true, for the drop to join their threads.
/// False if work is left or the scheduler cannot wait: the workers stop by themselves.
/// `own_threads`: the pool started every worker's thread itself.
pub(crate) fn settle(r: &Registry, own_threads: bool) -> bool {
    if r.terminate.load(SeqCst) {
        return true;
    }
    // SAFETY: the reference does not outlive this call, which the worker runs.
    let other = unsafe { worker::current() };
    let _wait = other.map(|o| o.frames().enter(Frame::OtherPool));
    if !all_done(r) || !r.sched.settle(r, other, own_threads) {
        return false;
    }
    all_may_be_done(r);
    r.terminate.load(SeqCst)
}

/// A sleeper's last look (`Worker::back_off`): stops a closing pool whose detached tasks
/// are all done and whose scheduler is quiet, and says whether its workers stop. Pairs
/// with the fence in `close`, and with the wake-up of `declared` (relay's closing
/// barrier answered).
pub(crate) fn stop_if_closed(r: &Registry) -> bool {
    if r.detached.closing.load(Relaxed) && all_done(r) && r.sched.quiet() {
        stop_closed(r);
    }
    r.terminate.load(Relaxed)
}

/// Stops the workers of a pool whose last handle was dropped, once its detached tasks
/// (and so all of its work) are done. A panic kept for the barrier (one that came while
/// the pool was being dropped, or before a drop inside the pool) has nobody left to
/// reach: rather than lose it, the process aborts.
fn stop_closed(r: &Registry) {
    if let Some(p) = take_panic(r) {
        unheard(p, "in a pool whose last handle was dropped");
    }
    r.terminate.store(true, SeqCst);
    r.sleep.wake_all();
}

pub(crate) fn spawn<F: FnOnce(&Worker) + Send + 'static>(registry: &Arc<Registry>, f: F) {
    // An adopted worker runs no loop that would take the task up or hand it out: inject.
    if let Some(w) = worker::current_in(registry).filter(|_| !worker::adopted()) {
        // SAFETY: `current_in` returns this thread's live worker.
        return crate::core::spawn::detached(unsafe { &*w }, f);
    }
    registry.inject(counted(registry, f));
}

/// Posts `f` as a detached task to worker `i` of `registry` alone (its mailbox, first in,
/// first out; `spawn_broadcast`), counted as one from outside.
pub(crate) fn post<F: FnOnce(&Worker) + Send + 'static>(registry: &Arc<Registry>, i: usize, f: F) {
    registry.post(i, counted(registry, f));
}

/// A detached task as a heap job, counted in flight until it ends (see `execute`).
fn counted<F: FnOnce(&Worker) + Send + 'static>(registry: &Arc<Registry>, f: F) -> JobRef<Worker> {
    registry.detached.pending.fetch_add(1, SeqCst);
    registry.in_flight.fetch_add(1, SeqCst);
    let job = Box::new(Job {
        f,
        registry: Arc::clone(registry),
    });
    // SAFETY: the box lives until `execute` takes it back, once; `F` is `Send + 'static`.
    unsafe { JobRef::new(Box::into_raw(job) as *const (), execute::<F>) }
}

/// The first panic of a detached task since the last barrier, if any.
pub(crate) fn take_panic(registry: &Registry) -> Option<Panic> {
    lock(&registry.detached.panic).take()
}

pub(crate) fn wait(registry: &Arc<Registry>) {
    // SAFETY: `current_in` returns this thread's live worker, which outlives this call.
    let w = worker::current_in(registry).map(|w| unsafe { &*w });
    if w.is_none() && worker::with_current(|o| o.map(|o| wait_on_other(o, registry))).is_some() {
        return rethrow(registry);
    }
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
    rethrow(registry);
}

/// A barrier of `registry`'s pool called on `o`, a worker of another pool: what the
/// detached tasks wait for may be this worker's own pool (a task that calls its `install`),
/// so it keeps working on that pool meanwhile, as a wait for another pool's `run` does.
fn wait_on_other(o: &Worker, registry: &Registry) {
    let _wait = o.frames().enter(Frame::OtherPool);
    o.wait_until(|| all_done(registry));
}

/// The end of a barrier: re-raises the first detached panic since the last one.
fn rethrow(registry: &Registry) {
    if let Some(p) = take_panic(registry) {
        panic::resume_unwind(p);
    }
}

impl Worker {
    /// Spawns a detached task on this worker's pool (see [`Pool::spawn_detached`](crate::Pool::spawn_detached)).
    #[inline]
    pub fn spawn_detached<F: FnOnce(&Worker) + Send + 'static>(&self, f: F) {
        crate::core::spawn::detached(self, f);
    }

    /// Waits for the detached tasks of this worker's pool (see [`Pool::barrier`](crate::Pool::barrier)).
    pub fn barrier(&self) {
        wait(self.registry());
    }
}
