//! rayon's FIFO spawns (`spawn_fifo`, `ScopeFifo::spawn_fifo`). A worker's deque runs its
//! newest task first; to run one thread's FIFO spawns oldest first, each spawn puts its
//! task at the back of a queue of that worker's (its own for the global `spawn_fifo`, the
//! scope's for a `ScopeFifo`) and pushes an ordinary task that runs the front of that
//! queue, as rayon does. A thief that takes such a task takes the oldest one there. Each
//! push adds one task to the queue and one runner to the deque, and a runner is pushed
//! after its task, so a runner always finds a task in its queue.

use super::scope_fifo::ScopeFifo;
use crate::core::detached;
use crate::core::sync::lock;
use crate::core::worker;
use crate::pool::{with_registry, Registry};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// A scope's FIFO task with its lifetime erased (see `spawn_in_scope`).
type ScopeTask = Box<dyn FnOnce(&ScopeFifo<'static>) + Send>;

/// One worker's FIFO queue of a scope.
#[derive(Default)]
pub(crate) struct FifoQueue(Mutex<VecDeque<ScopeTask>>);

/// One worker thread's queue of global FIFO spawns.
type Queue = Arc<Mutex<VecDeque<Box<dyn FnOnce() + Send>>>>;

thread_local! {
    /// This worker thread's queue of `spawn_fifo` tasks.
    static OWN: Queue = Queue::default();
}

/// Spawns `func` on `registry` behind the FIFO queue of the calling worker, if it is one
/// of the registry's; elsewhere as a plain spawn (from outside, the pool's injector is
/// first in, first out already).
pub(crate) fn spawn<F>(registry: &Arc<Registry>, func: F)
where
    F: FnOnce() + Send + 'static,
{
    if worker::current_in(registry).is_none() {
        return detached::spawn(registry, move |_| func());
    }
    let queue = OWN.with(Arc::clone);
    lock(&queue).push_back(Box::new(func));
    detached::spawn(registry, move |_| {
        let task = lock(&queue).pop_front();
        task.expect("heist: a FIFO runner finds its task")();
    });
}

/// `spawn_fifo` on the current pool, or the global pool.
pub(crate) fn spawn_here<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    with_registry(|r| spawn(r, func));
}

/// Spawns `body` in the scope behind the scope's FIFO queue of the calling worker, or as
/// a plain scope task where the caller is not one of the scope's workers.
pub(crate) fn spawn_in_scope<'scope, BODY>(scope: &ScopeFifo<'scope>, body: BODY)
where
    BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
{
    let registry = scope.as_scope().registry();
    let here = match scope.worker() {
        Some(w) => Some(w.index()),
        // SAFETY: `current_in` returns this thread's live worker, read at once.
        None => worker::current_in(registry).map(|w| unsafe { &*w }.index()),
    };
    let Some(i) = here else {
        return scope.as_scope().spawn(move |s| body(ScopeFifo::of(s)));
    };
    let task: Box<dyn FnOnce(&ScopeFifo<'scope>) + Send + 'scope> = Box::new(body);
    // SAFETY: only the lifetime changes (the same trait object). The task is run or
    // dropped before the scope ends, which `'scope` outlives: the runner pushed below
    // with it is a scope task, which the scope waits for, and it takes one task from this
    // queue, whose tasks all belong to this scope.
    let task: ScopeTask = unsafe { std::mem::transmute(task) };
    let workers = registry.workers();
    lock(&scope.as_scope().fifo(i, workers).0).push_back(task);
    scope.as_scope().spawn(move |s| {
        let queue = &s.fifo(i, workers).0;
        let task = lock(queue).pop_front();
        let task = task.expect("heist: a FIFO runner finds its task");
        // SAFETY: the task was made for this scope, whose `'scope` it gets back.
        let task: Box<dyn FnOnce(&ScopeFifo<'scope>) + Send + 'scope> =
            unsafe { std::mem::transmute(task) };
        task(ScopeFifo::of(s));
    });
}
