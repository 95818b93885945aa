//! The pool: one type for heist's names and rayon's (`ThreadPool` is its rayon name),
//! its builder and error (`builder.rs`), its threads (`threads.rs`), the lazily started
//! global pool, and the entry points that hand work to a pool from outside. What its
//! workers share is in `core/registry.rs`; rayon's methods are in `compat/thread_pool.rs`.

mod builder;
mod team_reduce;
pub(crate) mod threads;

use crate::core::frame::Frame;
use crate::core::latch::Latch;
use crate::core::stats::WorkerStats;
use crate::core::task::{self, JobRef, Panic};
use crate::core::worker::{self, Worker};
use std::cell::UnsafeCell;
use std::fmt;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

pub(crate) use crate::core::registry::Registry;
pub use crate::core::schedule::Scheduler;
pub(crate) use builder::MAX_WORKERS;
pub use builder::{BuildError, PoolBuilder, MAX_DEQUE_CAPACITY};

/// A pool of worker threads, under heist's name and rayon's: rayon's name for it is
/// [`ThreadPool`](crate::ThreadPool), and rayon's methods (`install`, `join`, `spawn`,
/// `scope`, `broadcast`, `current_num_threads`, ...) are its own, beside heist's (`run`,
/// `spawn_detached`, `barrier`, `team`, `reduce_tasks`, `stats`, ...).
///
/// # Dropping a pool
///
/// The drop never waits for work: not for detached tasks (`spawn_detached`, `spawn`,
/// `spawn_fifo`, `spawn_broadcast`), which may themselves wait for the dropping thread.
/// The workers run every task still queued and then stop by themselves.
/// [`Pool::barrier`] before the drop is the way to wait for the tasks.
///
/// It waits for the threads to end only where that cannot block: when no task is left
/// (and, under relay, the workers agree the pool is quiet), no
/// [`start_handler`](PoolBuilder::start_handler) or
/// [`exit_handler`](PoolBuilder::exit_handler) is set, and the drop does not run on one
/// of the pool's own workers. The idle workers then stop at once, and the drop joins the
/// threads it started itself (none with a [`spawn_handler`](PoolBuilder::spawn_handler)):
/// nothing of the user's runs there any more but the destructors of thread-locals that
/// tasks set. Otherwise, as rayon's drop always does, it returns at once and the threads
/// end by themselves (rayon's own tests drop pools whose start and exit handlers wait
/// for the dropping thread).
///
/// A detached panic that no barrier re-raised (and no panic handler took) is re-raised
/// by the drop, outside the pool; if the thread is already panicking it is dropped
/// instead. A detached task that panics after the drop, with no panic handler, has
/// nobody to reach: the process aborts with a message.
///
/// ```
/// fn fib(w: &heist::Worker, n: u64) -> u64 {
///     if n < 2 {
///         return n;
///     }
///     let (a, b) = w.join(|w| fib(w, n - 1), |w| fib(w, n - 2));
///     a + b
/// }
/// let pool = heist::Pool::builder().workers(2).build().unwrap();
/// assert_eq!(pool.run(|w| fib(w, 20)), 6765);
/// ```
pub struct Pool {
    registry: Arc<Registry>,
    threads: Vec<JoinHandle<()>>,
    /// See [`PoolBuilder::caller_helps`].
    caller_helps: bool,
    /// No start or exit handler runs on the threads: the drop may join them (see
    /// "Dropping a pool").
    may_join: bool,
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("workers", &self.workers())
            .field("scheduler", &self.scheduler())
            .finish()
    }
}

/// A root task waiting on the caller's stack.
struct Root<F, R> {
    f: UnsafeCell<Option<F>>,
    out: UnsafeCell<Option<Result<R, Panic>>>,
    latch: Latch,
}

impl<F, R> Root<F, R>
where
    F: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    /// Runs the root and sets its latch. Never unwinds: a panic goes into `out`.
    ///
    /// # Safety
    /// `data` is a `Root<F, R>` whose owner waits on its latch; called once.
    unsafe fn execute(data: *const (), w: &Worker) {
        let root = data.cast::<Root<F, R>>();
        // SAFETY: the contract above; `f` and `out` are touched only here until the latch
        // is set, and the owner reads `out` only after it. The root is reached through the
        // raw pointer only: the owner may free it as soon as the latch is set.
        let f = unsafe { (*(*root).f.get()).take() }.expect("a root runs once");
        let entered = w.frames().enter(Frame::Root);
        let traced = crate::core::trace::span(w, crate::core::trace::EventKind::Root, None, 0);
        let out = panic::catch_unwind(AssertUnwindSafe(|| f(w)));
        traced.end();
        drop(entered);
        // SAFETY: as above.
        unsafe {
            *(*root).out.get() = Some(out);
            Latch::set(&raw const (*root).latch);
        }
        // The caller is most likely yielding for this root on some CPU (`Latch::wait`);
        // if on this one, it runs now rather than after this worker's spin phase.
        std::thread::yield_now();
    }
}

impl Pool {
    /// A builder with the defaults (see its methods); the same as [`PoolBuilder::new`].
    pub fn builder() -> PoolBuilder {
        PoolBuilder::new()
    }

    /// The number of worker threads.
    pub fn workers(&self) -> usize {
        self.registry.workers()
    }

    /// The scheduler this pool runs.
    pub fn scheduler(&self) -> Scheduler {
        self.registry.sched.kind()
    }

    /// Runs `f` on a worker of this pool and returns its result to the calling thread.
    ///
    /// A panic in `f` (or in any task it joins) is re-raised here; the pool stays usable.
    /// Called from one of this pool's own workers, `f` simply runs there. Otherwise `f`
    /// starts on a worker that runs no other task (under relay, the manager), or on one
    /// whose task waits for a `run` of another pool, so that a barrier in `f` does not
    /// wait beneath a task that others wait for.
    pub fn run<F, R>(&self, f: F) -> R
    where
        F: FnOnce(&Worker) -> R + Send,
        R: Send,
    {
        if let Some(w) = worker::current_in(&self.registry) {
            // SAFETY: `current_in` returns the worker running on this thread, which lives
            // at least until the task this call is part of returns.
            return f(unsafe { &*w });
        }
        let root = Root {
            f: UnsafeCell::new(Some(f)),
            out: UnsafeCell::new(None),
            latch: Latch::new(),
        };
        // SAFETY: `root` outlives the job: this frame waits for the latch (and lets the
        // setter leave it) before returning, and the wait cannot unwind (a worker waiting
        // here runs other tasks only under `Worker::run_taken`, which aborts on an unwind, and
        // every task entry catches its panic); `F` and `R` are `Send`.
        let job =
            unsafe { JobRef::new((&root as *const Root<F, R>).cast(), Root::<F, R>::execute) };
        self.registry.in_flight.fetch_add(1, SeqCst);
        self.registry.inject_root(job);
        worker::wait_latch(&root.latch);
        self.registry.in_flight.fetch_sub(1, SeqCst);
        match root
            .out
            .into_inner()
            .expect("the latch is set after the result")
        {
            Ok(r) => r,
            Err(p) => panic::resume_unwind(p),
        }
    }

    /// Each worker's counters (all zero without the `stats` feature).
    pub fn stats(&self) -> Vec<WorkerStats> {
        self.registry
            .infos
            .iter()
            .map(|i| i.counters.snapshot())
            .collect()
    }

    /// Sets every worker's counters to zero.
    pub fn reset_stats(&self) {
        self.registry.infos.iter().for_each(|i| i.counters.reset());
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Whether loops called outside every pool start on the calling thread (see
    /// [`PoolBuilder::caller_helps`]).
    pub(crate) fn caller_helps(&self) -> bool {
        self.caller_helps
    }
}

impl Pool {
    /// Spawns a `'static` task with no handle; [`Pool::barrier`] waits for it (dropping
    /// the pool does not).
    ///
    /// A panic in the task is never lost. It goes to the panic handler if the pool was
    /// built with [`PoolBuilder::panic_handler`](crate::PoolBuilder::panic_handler).
    /// Otherwise the first such panic is re-raised by the next [`Pool::barrier`], or, if
    /// no barrier runs before the pool is dropped, by `Pool::drop`; later ones before that
    /// barrier are dropped. A task that panics once the pool's last handle is dropped, or
    /// on the global pool (see [`global`]), has nobody to re-raise it to, and the process
    /// aborts with a message, as rayon's does.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let pool = heist::Pool::builder().workers(2).build().unwrap();
    /// let n = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..10 {
    ///     let n = Arc::clone(&n);
    ///     pool.spawn_detached(move |_| {
    ///         n.fetch_add(1, Ordering::Relaxed);
    ///     });
    /// }
    /// pool.barrier();
    /// assert_eq!(n.load(Ordering::Relaxed), 10);
    /// ```
    pub fn spawn_detached<F: FnOnce(&Worker) + Send + 'static>(&self, f: F) {
        crate::core::detached::spawn(&self.registry, f);
    }

    /// Waits until every detached task spawned so far, and every detached task those
    /// spawned, has finished; then re-raises the first panic among them, if any.
    ///
    /// Called from a worker of this pool, the worker keeps running tasks while it waits.
    /// Called inside a task, it does not wait for a detached task that its worker was
    /// running when it took this task up while waiting, since that one cannot finish
    /// before the barrier returns. It must not be called inside a detached task (or its
    /// join branches and scope tasks), which it would wait for: on the task's own worker
    /// that panics, elsewhere it hangs. Call it from outside the pool or at the root of
    /// [`Pool::run`] to wait for every detached task.
    pub fn barrier(&self) {
        crate::core::detached::wait(&self.registry);
    }
}

/// See "Dropping a pool" on [`Pool`].
impl Drop for Pool {
    fn drop(&mut self) {
        let threads = mem::take(&mut self.threads);
        let inside = worker::current_in(&self.registry).is_some();
        // Inside one of its own tasks no panic can be re-raised to the owner.
        let kept = crate::core::detached::close(&self.registry, !inside);
        let own_threads = threads.len() == self.registry.workers();
        if !inside
            && self.may_join
            && !threads.is_empty()
            && crate::core::detached::settle(&self.registry, own_threads)
        {
            threads::join(threads);
        }
        // Otherwise the handles are dropped: the threads detach and end by themselves.
        if let Some(p) = kept {
            if std::thread::panicking() {
                task::drop_panic(p);
            } else {
                panic::resume_unwind(p);
            }
        }
    }
}

static GLOBAL: OnceLock<Result<Pool, BuildError>> = OnceLock::new();

/// The global pool, started on first use with `HEIST_WORKERS` workers (all cores if
/// unset) and `HEIST_SCHEDULER` (Lace if unset).
///
/// Nobody drops the global pool, and rayon programs call no barrier: a detached task of
/// the global pool that panics with no panic handler aborts the process, as in rayon.
pub fn global() -> Result<&'static Pool, BuildError> {
    GLOBAL
        .get_or_init(|| Pool::builder().build().inspect(Pool::make_global))
        .as_ref()
        .map_err(Clone::clone)
}

/// Makes `pool` the global pool; gives it back if the global pool exists already.
pub(crate) fn set_global(pool: Pool) -> Result<(), Pool> {
    pool.make_global();
    GLOBAL.set(Ok(pool)).map_err(|p| {
        let p = p.expect("only an `Ok` was offered");
        p.registry.detached.global.store(false, SeqCst);
        p
    })
}

impl Pool {
    /// Marks this pool as the global one, which nobody drops (see `detached::hand_on`).
    fn make_global(&self) {
        self.registry.detached.global.store(true, SeqCst);
    }
}

/// The global pool, or a panic whose message says which setting is wrong.
pub(crate) fn global_or_panic() -> &'static Pool {
    match global() {
        Ok(p) => p,
        Err(e) => panic!("heist: cannot start the global pool: {e}"),
    }
}

/// Runs `f` with the registry of the current worker's pool, or of the global pool.
pub(crate) fn with_registry<R>(f: impl FnOnce(&Arc<Registry>) -> R) -> R {
    let mut f = Some(f);
    let here = worker::with_current(|w| w.map(|w| f.take().expect("unused")(w.registry())));
    match here {
        Some(r) => r,
        None => f.expect("unused")(global_or_panic().registry()),
    }
}
