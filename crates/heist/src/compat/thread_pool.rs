//! `ThreadPoolBuilder` and `ThreadPool`: rayon's names for heist's builder and pool.

use super::broadcast::{self, BroadcastContext};
use super::free::Yield;
use super::scope_fifo::ScopeFifo;
use crate::pool::{self, BuildError, Pool, Registry, Scheduler};
use crate::scope::Scope;
use crate::worker;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

type PanicHandler = dyn Fn(Box<dyn Any + Send>) + Send + Sync;
type NameFn = Box<dyn FnMut(usize) -> String>;

/// Spawns `func` as a detached task of `registry`; its panic goes to the pool's panic
/// handler, or else to the next barrier.
pub(crate) fn spawn_in<F>(registry: &Arc<Registry>, func: F)
where
    F: FnOnce() + Send + 'static,
{
    crate::barrier::spawn(registry, move |_| func())
}

/// Why a [`ThreadPoolBuilder`] could not build (rayon's `ThreadPoolBuildError`).
#[derive(Debug)]
pub struct ThreadPoolBuildError(Kind);

#[derive(Debug)]
enum Kind {
    GlobalPoolAlreadyInitialized,
    Build(BuildError),
}

impl fmt::Display for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::GlobalPoolAlreadyInitialized => {
                f.write_str("the global thread pool has already been initialized")
            }
            Kind::Build(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ThreadPoolBuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0 {
            Kind::Build(e) => Some(e),
            Kind::GlobalPoolAlreadyInitialized => None,
        }
    }
}

/// Configures a [`ThreadPool`] (rayon's `ThreadPoolBuilder`).
///
/// ```
/// let pool = heist::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .thread_name(|i| format!("my-worker-{i}"))
///     .build()
///     .unwrap();
/// assert_eq!(pool.current_num_threads(), 2);
/// assert_eq!(pool.install(|| heist::current_num_threads()), 2);
/// ```
#[derive(Default)]
pub struct ThreadPoolBuilder {
    num_threads: usize,
    name: Option<NameFn>,
    stack_size: Option<usize>,
    panic_handler: Option<Box<PanicHandler>>,
    scheduler: Option<Scheduler>,
}

impl fmt::Debug for ThreadPoolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &self.num_threads)
            .field("stack_size", &self.stack_size)
            .field("panic_handler", &self.panic_handler.is_some())
            .field("scheduler", &self.scheduler)
            .finish_non_exhaustive()
    }
}

impl ThreadPoolBuilder {
    /// A builder with the defaults.
    pub fn new() -> ThreadPoolBuilder {
        ThreadPoolBuilder::default()
    }

    /// The number of worker threads; 0 (the default) means `HEIST_WORKERS`, else all
    /// cores. **Difference from rayon:** `RAYON_NUM_THREADS` is not read.
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.num_threads = num_threads;
        self
    }

    /// Names worker `i` `closure(i)`.
    pub fn thread_name<F>(mut self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.name = Some(Box::new(closure));
        self
    }

    /// The stack size of each worker thread, in bytes.
    pub fn stack_size(mut self, stack_size: usize) -> Self {
        self.stack_size = Some(stack_size);
        self
    }

    /// Called with the payload of a panic in a task started by `spawn` or `spawn_fifo`,
    /// where there is no caller to re-raise it in. **Difference from rayon:** a panic in
    /// the handler itself does not abort; it is kept for the next
    /// [`Pool::barrier`](crate::Pool::barrier).
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.panic_handler = Some(Box::new(panic_handler));
        self
    }

    /// heist only: the scheduler (default `HEIST_SCHEDULER`, else Lace).
    pub fn scheduler(mut self, scheduler: Scheduler) -> Self {
        self.scheduler = Some(scheduler);
        self
    }

    /// Starts the pool.
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        let mut b = Pool::builder();
        if self.num_threads > 0 {
            b = b.workers(self.num_threads);
        }
        if let Some(s) = self.scheduler {
            b = b.scheduler(s);
        }
        if let Some(name) = self.name {
            b = b.thread_name(name);
        }
        if let Some(s) = self.stack_size {
            b = b.stack_size(s);
        }
        if let Some(h) = self.panic_handler {
            b = b.panic_handler(h);
        }
        let pool = b
            .build()
            .map_err(|e| ThreadPoolBuildError(Kind::Build(e)))?;
        Ok(ThreadPool { pool })
    }

    /// Starts the pool and makes it the global pool, which the free functions
    /// ([`join`](crate::join), [`spawn`](crate::spawn), ...) use off a worker.
    ///
    /// # Errors
    /// If the global pool has started already (set before, or used before: it starts on
    /// first use), or if the pool cannot be built.
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        let pool = self.build()?.pool;
        pool::set_global(pool).map_err(|_| ThreadPoolBuildError(Kind::GlobalPoolAlreadyInitialized))
    }
}

/// A pool of worker threads under rayon's name (rayon's `ThreadPool`): a [`Pool`] with
/// rayon's methods.
///
/// **Difference from rayon:** dropping a `ThreadPool` waits for the tasks started with
/// its `spawn` to finish, as [`Pool`]'s drop does; rayon lets them run on.
pub struct ThreadPool {
    pool: Pool,
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ThreadPool").field(&self.pool).finish()
    }
}

impl ThreadPool {
    /// heist only: the [`Pool`] underneath, for heist's own methods
    /// ([`Pool::run`](crate::Pool::run) hands tasks the worker context).
    pub fn as_pool(&self) -> &Pool {
        &self.pool
    }

    /// Runs `op` in this pool and returns its result: inside `op`, [`join`](crate::join),
    /// [`scope`](crate::scope) and the other free functions use this pool. Called on one
    /// of this pool's workers, `op` simply runs there.
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.pool.run(|_| op())
    }

    /// Runs `oper_a` and `oper_b` in this pool, potentially in parallel.
    pub fn join<A, B, RA, RB>(&self, oper_a: A, oper_b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.pool.run(|w| w.join(|_| oper_a(), |_| oper_b()))
    }

    /// Spawns `op` in this pool and returns at once (see [`spawn`](crate::spawn) for
    /// panics).
    pub fn spawn<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        spawn_in(self.pool.registry(), op)
    }

    /// Like [`ThreadPool::spawn`] (see [`spawn_fifo`](crate::spawn_fifo) on order).
    pub fn spawn_fifo<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.spawn(op)
    }

    /// Runs `op` with a [`Scope`] in this pool; every task spawned in it finishes before
    /// this returns.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.pool.run(|w| w.scope(op))
    }

    /// Like [`ThreadPool::scope`], with a [`ScopeFifo`].
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.pool.run(|w| w.scope(|s| op(ScopeFifo::of(s))))
    }

    /// Runs `op` on the calling thread with a [`Scope`] whose tasks run in this pool.
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        match worker::current_in(self.pool.registry()) {
            // SAFETY: `current_in` returns this thread's live worker, alive for this call.
            Some(w) => unsafe { &*w }.scope(op),
            None => crate::scope::scope_outside(&self.pool, op),
        }
    }

    /// [`ThreadPool::in_place_scope`] with a [`ScopeFifo`].
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        self.in_place_scope(|s| op(ScopeFifo::of(s)))
    }

    /// Runs one pending task of this pool if the caller is one of its workers (see
    /// [`yield_now`](crate::yield_now)); `None` elsewhere.
    pub fn yield_now(&self) -> Option<Yield> {
        self.current_thread_index()?;
        crate::yield_now()
    }

    /// Runs `op` once on every worker of this pool; the results come in worker order (see
    /// [`broadcast`](crate::broadcast)).
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        broadcast::run(self.pool.registry(), op)
    }

    /// The number of workers in this pool.
    pub fn current_num_threads(&self) -> usize {
        self.pool.workers()
    }

    /// The index of the calling thread in this pool, if it is one of its workers.
    pub fn current_thread_index(&self) -> Option<usize> {
        // SAFETY: `current_in` returns this thread's live worker.
        worker::current_in(self.pool.registry()).map(|w| unsafe { &*w }.index())
    }
}
