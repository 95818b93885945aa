//! The pool: its builder and errors, the lazily started global pool, and the entry points
//! that hand work to a pool from outside. What its workers share is in `core/registry.rs`.

mod team_reduce;
pub(crate) mod threads;

use crate::core::frame::Frame;
use crate::core::latch::Latch;
use crate::core::stats::WorkerStats;
use crate::core::task::{self, JobRef, Panic};
use crate::core::worker::{self, Worker};
use std::any::Any;
use std::cell::UnsafeCell;
use std::fmt;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, OnceLock};
use team_reduce::sources;

pub(crate) use crate::core::registry::Registry;
pub use crate::core::schedule::Scheduler;
use std::thread::JoinHandle;

/// The largest deque capacity a builder accepts (slots of 64 bytes: 4 GiB of address
/// space per worker, touched only as deep as the recursion goes).
pub const MAX_DEQUE_CAPACITY: usize = 1 << 26;

/// The most workers a pool may have: team registration words hold worker counts in 16
/// bits (rayon's `max_num_threads`).
pub(crate) const MAX_WORKERS: usize = u16::MAX as usize;

const DEFAULT_DEQUE_CAPACITY: usize = 1 << 14;

impl FromStr for Scheduler {
    type Err = BuildError;
    fn from_str(s: &str) -> Result<Scheduler, BuildError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "lace" => Ok(Scheduler::Lace),
            "relay" => Ok(Scheduler::Relay),
            _ => Err(BuildError::UnknownScheduler(s.to_string())),
        }
    }
}

/// Why a pool could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// `workers(0)`.
    ZeroWorkers,
    /// More workers than [`max_num_threads`](crate::max_num_threads) (65535): team
    /// registration words hold worker counts in 16 bits.
    TooManyWorkers(usize),
    /// A deque capacity of 0 or above [`MAX_DEQUE_CAPACITY`].
    BadCapacity(usize),
    /// `HEIST_WORKERS` is set but not a positive integer.
    BadWorkersVar(String),
    /// `HEIST_SCHEDULER` or a scheduler name is neither `lace` nor `relay`.
    UnknownScheduler(String),
    /// The operating system refused to start a worker thread (the error says which, and
    /// why).
    Spawn(String),
    /// The pool does not fit in memory: the allocation for `what` (`bytes` bytes) failed.
    /// Ask for fewer workers, or for a smaller
    /// [`deque_capacity`](PoolBuilder::deque_capacity).
    OutOfMemory {
        /// What the memory was for.
        what: String,
        /// The size of the allocation that failed.
        bytes: usize,
    },
    /// rayon's `use_current_thread` on a thread that is already a worker of a pool.
    CurrentThreadInPool,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::ZeroWorkers => write!(f, "a pool needs at least one worker, got 0"),
            BuildError::TooManyWorkers(n) => write!(
                f,
                "a pool has at most {} workers, got {n}",
                MAX_WORKERS
            ),
            BuildError::BadCapacity(c) => write!(
                f,
                "deque capacity {c} is out of range (1..={MAX_DEQUE_CAPACITY} slots)"
            ),
            BuildError::BadWorkersVar(v) => write!(
                f,
                "HEIST_WORKERS must be a positive integer, got {v:?}"
            ),
            BuildError::UnknownScheduler(v) => write!(
                f,
                "unknown scheduler {v:?} (HEIST_SCHEDULER and Scheduler names are `lace` or `relay`)"
            ),
            BuildError::Spawn(e) => write!(f, "could not start a worker thread: {e}"),
            BuildError::OutOfMemory { what, bytes } => write!(
                f,
                "out of memory: could not allocate {bytes} bytes for {what} \
                 (ask for fewer workers or a smaller deque capacity)"
            ),
            // rayon's text, word for word.
            BuildError::CurrentThreadInPool => {
                f.write_str("The current thread is already part of another thread pool.")
            }
        }
    }
}

impl std::error::Error for BuildError {}

type NameFn = Box<dyn FnMut(usize) -> String>;

/// Configures and starts a [`Pool`].
///
/// ```
/// let pool = heist::Pool::builder().workers(2).build()?;
/// assert_eq!(pool.workers(), 2);
/// # Ok::<(), heist::BuildError>(())
/// ```
pub struct PoolBuilder {
    workers: Option<usize>,
    scheduler: Option<Scheduler>,
    capacity: usize,
    name: Option<NameFn>,
    stack_size: Option<usize>,
    pin: bool,
    panic_handler: Option<crate::core::detached::PanicHandler>,
    caller_helps: bool,
    /// rayon's `use_current_thread`: worker 0 is the building thread.
    adopt: bool,
}

impl PoolBuilder {
    /// The number of worker threads (default: `HEIST_WORKERS`, else all cores).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }

    /// The scheduler (default: `HEIST_SCHEDULER`, else [`Scheduler::Lace`]).
    pub fn scheduler(mut self, s: Scheduler) -> Self {
        self.scheduler = Some(s);
        self
    }

    /// Slots per worker deque (default 16384). On a full deque `join` runs its second
    /// half inline, and a spawned task goes to the worker's overflow (a queue that grows,
    /// and that idle workers take from). The memory is reserved up front and used as deep
    /// as the deque fills.
    pub fn deque_capacity(mut self, slots: usize) -> Self {
        self.capacity = slots;
        self
    }

    /// Names worker `i` `name(i)` (default `heist-i`).
    pub fn thread_name(mut self, name: impl FnMut(usize) -> String + 'static) -> Self {
        self.name = Some(Box::new(name));
        self
    }

    /// The stack size of each worker thread, in bytes.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Pins worker `i` to the `i`-th CPU (wrapping around) of those the building thread
    /// may run on, as Lace does (default: off). Unpinned workers are already woken away
    /// from their waker's CPU, so pinning gains little; it costs when the host slows one
    /// CPU, or when other busy threads or pools share these CPUs. Linux only; elsewhere
    /// ignored.
    pub fn pin_workers(mut self, pin: bool) -> Self {
        self.pin = pin;
        self
    }

    /// Lets a parallel iterator called outside every pool, in [`Pool::enter`] (or on the
    /// global pool), run on the calling thread, with this pool's workers joining in once
    /// what is left looks worth their wake-up (default: off). A short loop then costs
    /// about what it costs sequentially, instead of a round trip to the pool; but its
    /// closures run on a thread that is not a worker (`current_thread_index()` is `None`
    /// there, and the thread's name and thread-locals are the caller's). Off, such a loop
    /// runs on the pool's workers, as in rayon. Loops bounded by `with_max_len`, and
    /// `find_last`, always do.
    pub fn caller_helps(mut self, on: bool) -> Self {
        self.caller_helps = on;
        self
    }

    /// Receives the panic of every detached task ([`Pool::spawn_detached`]), on the
    /// worker that ran it, instead of the next [`Pool::barrier`] or `Pool::drop`
    /// (default: none). Should the handler itself panic, its panic is kept for the barrier
    /// instead.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let seen = Arc::new(AtomicUsize::new(0));
    /// let s = Arc::clone(&seen);
    /// let pool = heist::Pool::builder()
    ///     .workers(2)
    ///     .panic_handler(move |_payload| {
    ///         s.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()?;
    /// pool.spawn_detached(|_| panic!("handled"));
    /// pool.barrier();
    /// assert_eq!(seen.load(Ordering::SeqCst), 1);
    /// # Ok::<(), heist::BuildError>(())
    /// ```
    pub fn panic_handler<F>(mut self, handler: F) -> Self
    where
        F: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.panic_handler = Some(Box::new(handler));
        self
    }

    /// rayon's `use_current_thread` (see `ThreadPoolBuilder::use_current_thread`).
    pub(crate) fn adopt_current_thread(mut self) -> Self {
        self.adopt = true;
        self
    }

    /// Starts the pool. Should it fail or panic part-way (a `thread_name` closure that
    /// panics), the workers it has started are stopped first.
    pub fn build(self) -> Result<Pool, BuildError> {
        self.build_with(crate::pool::threads::Threads::default())
    }

    /// `build`, with rayon's start, exit and spawn handlers (`ThreadPoolBuilder`).
    pub(crate) fn build_with(
        mut self,
        mut threads: crate::pool::threads::Threads<'_>,
    ) -> Result<Pool, BuildError> {
        let workers = match self.workers {
            Some(0) => return Err(BuildError::ZeroWorkers),
            Some(n) => n,
            None => workers_from_env()?,
        };
        if workers > MAX_WORKERS {
            return Err(BuildError::TooManyWorkers(workers));
        }
        if self.capacity == 0 || self.capacity > MAX_DEQUE_CAPACITY {
            return Err(BuildError::BadCapacity(self.capacity));
        }
        let scheduler = match self.scheduler {
            Some(s) => s,
            None => scheduler_from_env()?,
        };
        if self.adopt && worker::is_worker() {
            return Err(BuildError::CurrentThreadInPool);
        }
        // A relay worker answers steal requests at its pushes and pops, which an adopted
        // thread makes only inside heist's calls: under relay every worker is started.
        let adopt = self.adopt && scheduler == Scheduler::Lace;
        let out_of_memory = |e: crate::core::mem::OutOfMemory| BuildError::OutOfMemory {
            what: e.what,
            bytes: e.bytes,
        };
        let sched = || crate::sched::build(scheduler, workers);
        let mut registry = Registry::new(workers, sched, self.capacity, sources(workers))
            .map_err(out_of_memory)?;
        registry.detached.handler = self.panic_handler.take();
        registry.lifecycle = std::mem::take(&mut threads.lifecycle);
        let registry = Arc::new(registry);
        let mut started = Started {
            registry: &registry,
            threads: Vec::with_capacity(workers),
        };
        // An adopted worker 0 starts no thread (see `worker::adopt`).
        for i in usize::from(adopt)..workers {
            let name = self.name.as_mut().map(|f| f(i));
            let r = Arc::clone(&registry);
            let pin = self.pin;
            let start = move || {
                if pin {
                    crate::core::affinity::pin_nth(i);
                }
                worker::main(r, i)
            };
            let spawn = threads.spawn.as_deref_mut();
            let spawned = spawn_worker(spawn, i, name, self.stack_size, start)
                .map_err(|e| BuildError::Spawn(format!("worker {i} of {workers}: {e}")))?;
            started.threads.extend(spawned);
        }
        let threads = mem::take(&mut started.threads);
        mem::forget(started);
        if adopt {
            worker::adopt(&registry, 0);
        }
        Ok(Pool {
            registry,
            threads,
            caller_helps: self.caller_helps,
            joins_threads: true,
        })
    }
}

/// Starts worker `i`'s thread running `start`: a `std::thread` named `name` (default
/// `heist-i`), or whatever rayon's `spawn_handler` makes of it, which leaves no handle to
/// join.
fn spawn_worker(
    handler: Option<
        &mut (dyn FnMut(crate::pool::threads::ThreadBuilder) -> std::io::Result<()> + '_),
    >,
    i: usize,
    name: Option<String>,
    stack_size: Option<usize>,
    start: impl FnOnce() + Send + 'static,
) -> std::io::Result<Option<JoinHandle<()>>> {
    let spawned = match handler {
        Some(h) => h(crate::pool::threads::ThreadBuilder::new(
            i,
            name,
            stack_size,
            Box::new(start),
        ))
        .map(|()| None),
        None => {
            let mut b =
                std::thread::Builder::new().name(name.unwrap_or_else(|| format!("heist-{i}")));
            if let Some(s) = stack_size {
                b = b.stack_size(s);
            }
            b.spawn(start).map(Some)
        }
    };
    spawned
}

/// The workers `build` has started; stopped if it returns early or unwinds.
struct Started<'a> {
    registry: &'a Registry,
    threads: Vec<JoinHandle<()>>,
}

impl Drop for Started<'_> {
    fn drop(&mut self) {
        shut_down(self.registry, mem::take(&mut self.threads));
    }
}

fn workers_from_env() -> Result<usize, BuildError> {
    match std::env::var("HEIST_WORKERS") {
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(BuildError::BadWorkersVar(v)),
        },
        Err(std::env::VarError::NotUnicode(v)) => {
            Err(BuildError::BadWorkersVar(v.to_string_lossy().into_owned()))
        }
        Err(std::env::VarError::NotPresent) => {
            Ok(std::thread::available_parallelism().map_or(1, |n| n.get()))
        }
    }
}

fn scheduler_from_env() -> Result<Scheduler, BuildError> {
    match std::env::var("HEIST_SCHEDULER") {
        Ok(v) => v.parse(),
        Err(std::env::VarError::NotPresent) => Ok(Scheduler::Lace),
        Err(std::env::VarError::NotUnicode(v)) => Err(BuildError::UnknownScheduler(
            v.to_string_lossy().into_owned(),
        )),
    }
}

/// A pool of worker threads.
///
/// Dropping a pool does not wait for its detached tasks (see `Drop`): call
/// [`Pool::barrier`] first to wait for them.
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
    /// Whether the drop, finding no work left, waits for the threads to end (see the
    /// `Drop` impl); off for rayon's `ThreadPool`, whose drop never waits.
    joins_threads: bool,
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
    }
}

impl Pool {
    /// A builder with the defaults (see its methods).
    pub fn builder() -> PoolBuilder {
        PoolBuilder {
            workers: None,
            scheduler: None,
            capacity: DEFAULT_DEQUE_CAPACITY,
            name: None,
            stack_size: None,
            pin: false,
            panic_handler: None,
            caller_helps: false,
            adopt: false,
        }
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

    /// Whether the drop waits for the threads to end when no work is left (rayon's
    /// `ThreadPool` does not: its threads may still be in their start handlers).
    pub(crate) fn set_joins_threads(&mut self, on: bool) {
        self.joins_threads = on;
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

fn shut_down(registry: &Registry, threads: Vec<JoinHandle<()>>) {
    registry.terminate.store(true, SeqCst);
    registry.sleep.wake_all();
    join(threads);
}

/// Waits for stopped workers' threads to end.
fn join(threads: Vec<JoinHandle<()>>) {
    for t in threads {
        let _ = t.join();
    }
}

/// Stops the pool without waiting for its detached tasks, as rayon's `ThreadPool` does:
/// a task may itself wait for the dropping thread. The workers run every task still
/// queued and then stop. With none left, the drop stops the workers at once and waits
/// for the threads it started itself to end (their exit handlers included); otherwise
/// they end by themselves. [`Pool::barrier`] before the drop waits for the tasks. (A
/// [`ThreadPool`](crate::ThreadPool)'s drop, as rayon's, does not wait for the threads.)
///
/// A detached panic that no barrier re-raised (and no panic handler took) is re-raised
/// here, outside the pool; if the thread is already panicking it is dropped instead. A
/// detached task that panics after the drop, with no panic handler, has nobody to reach:
/// the process aborts with a message.
impl Drop for Pool {
    fn drop(&mut self) {
        let threads = mem::take(&mut self.threads);
        let inside = worker::current_in(&self.registry).is_some();
        // Inside one of its own tasks no panic can be re-raised to the owner.
        let kept = crate::core::detached::close(&self.registry, !inside);
        let own_threads = threads.len() == self.registry.workers();
        let wait = !inside && self.joins_threads;
        if wait && crate::core::detached::settle(&self.registry, own_threads) {
            join(threads);
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
    /// Marks this pool as the global one, which nobody drops (see `barrier::hand_on`).
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
