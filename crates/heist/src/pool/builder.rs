//! The one builder of a pool, with heist's options and rayon's (`ThreadPoolBuilder` is
//! its rayon name), its one error type (`ThreadPoolBuildError` is rayon's name for it),
//! and the environment variables it reads. It makes the registry and starts the threads
//! (`threads.rs`).

use super::threads::{self, CustomSpawn, DefaultSpawn, Handler, Lifecycle, Spawner};
use super::threads::{ThreadBuilder, ThreadSpawn};
use super::{Pool, Registry, Scheduler};
use crate::core::detached::PanicHandler;
use crate::core::worker;
use std::any::Any;
use std::fmt;
use std::io;
use std::str::FromStr;
use std::sync::Arc;

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

/// Why a pool could not be built (rayon's name for it is
/// [`ThreadPoolBuildError`](crate::ThreadPoolBuildError)).
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
    /// [`use_current_thread`](PoolBuilder::use_current_thread) on a thread that is already
    /// a worker of a pool.
    CurrentThreadInPool,
    /// [`build_global`](PoolBuilder::build_global) once the global pool exists (it was
    /// built before, or started on first use).
    GlobalPoolAlreadyInitialized,
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
            // rayon's texts, word for word.
            BuildError::CurrentThreadInPool => {
                f.write_str("The current thread is already part of another thread pool.")
            }
            BuildError::GlobalPoolAlreadyInitialized => {
                f.write_str("The global thread pool has already been initialized.")
            }
        }
    }
}

impl std::error::Error for BuildError {}

type NameFn = Box<dyn FnMut(usize) -> String>;

/// Configures and starts a [`Pool`]: heist's options and rayon's, on one builder. rayon's
/// name for it is [`ThreadPoolBuilder`](crate::ThreadPoolBuilder).
///
/// [`Pool::builder`] and [`PoolBuilder::new`] give one with the defaults. The type
/// parameter says how threads are started: [`spawn_handler`](PoolBuilder::spawn_handler)
/// changes it, as in rayon.
///
/// ```
/// let pool = heist::Pool::builder().workers(2).build()?;
/// assert_eq!(pool.workers(), 2);
/// # Ok::<(), heist::BuildError>(())
/// ```
///
/// Under rayon's names:
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
pub struct PoolBuilder<S = DefaultSpawn> {
    options: Options,
    spawn: S,
}

/// Every option of a builder but how it starts threads.
struct Options {
    /// `None`: `HEIST_WORKERS`, else all cores.
    workers: Option<usize>,
    scheduler: Option<Scheduler>,
    capacity: usize,
    name: Option<NameFn>,
    stack_size: Option<usize>,
    pin: bool,
    panic_handler: Option<PanicHandler>,
    caller_helps: bool,
    lifecycle: Lifecycle,
    /// rayon's `use_current_thread`: worker 0 is the building thread.
    adopt: bool,
}

impl Default for PoolBuilder {
    fn default() -> Self {
        PoolBuilder {
            options: Options {
                workers: None,
                scheduler: None,
                capacity: DEFAULT_DEQUE_CAPACITY,
                name: None,
                stack_size: None,
                pin: false,
                panic_handler: None,
                caller_helps: false,
                lifecycle: Lifecycle::default(),
                adopt: false,
            },
            spawn: DefaultSpawn,
        }
    }
}

impl<S> fmt::Debug for PoolBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = &self.options;
        f.debug_struct("PoolBuilder")
            .field("workers", &o.workers)
            .field("scheduler", &o.scheduler)
            .field("deque_capacity", &o.capacity)
            .field("stack_size", &o.stack_size)
            .field("pin_workers", &o.pin)
            .field("caller_helps", &o.caller_helps)
            .field("panic_handler", &o.panic_handler.is_some())
            .field("start_handler", &o.lifecycle.start.is_some())
            .field("exit_handler", &o.lifecycle.exit.is_some())
            .field("use_current_thread", &o.adopt)
            .finish_non_exhaustive()
    }
}

impl PoolBuilder {
    /// A builder with the defaults (the same as [`Pool::builder`]).
    pub fn new() -> PoolBuilder {
        PoolBuilder::default()
    }

    /// Builds a pool whose threads are scoped threads of `std::thread::scope`: each starts
    /// by calling `wrapper`, which must call [`ThreadBuilder::run`]; `with_pool` then runs
    /// with the pool, and the pool is dropped and its threads joined before this returns.
    /// Workers may so borrow from the caller's stack (a scoped thread-local, say). From
    /// rayon.
    ///
    /// ```
    /// let data = vec![1, 2, 3];
    /// let sum = heist::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .build_scoped(
    ///         |thread| {
    ///             assert_eq!(data.len(), 3); // borrowed by every worker thread
    ///             thread.run()
    ///         },
    ///         |pool| pool.install(|| data.iter().sum::<i32>()),
    ///     )
    ///     .unwrap();
    /// assert_eq!(sum, 6);
    /// ```
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, BuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&Pool) -> R,
    {
        std::thread::scope(|scope| {
            let wrapper = &wrapper;
            let pool = self
                .spawn_handler(|thread| {
                    let mut b = std::thread::Builder::new();
                    if let Some(name) = thread.name() {
                        b = b.name(name.to_owned());
                    }
                    if let Some(size) = thread.stack_size() {
                        b = b.stack_size(size);
                    }
                    b.spawn_scoped(scope, move || wrapper(thread))?;
                    Ok(())
                })
                .build()?;
            Ok(with_pool(&pool))
        })
    }
}

impl<S> PoolBuilder<S> {
    /// The number of worker threads (default: `HEIST_WORKERS`, else all cores). 0 is an
    /// error of [`build`](Self::build) ([`BuildError::ZeroWorkers`]); rayon's
    /// [`num_threads`](Self::num_threads) takes 0 for the default instead.
    pub fn workers(mut self, n: usize) -> Self {
        self.options.workers = Some(n);
        self
    }

    /// The number of worker threads under rayon's name; 0 (the default) means
    /// `HEIST_WORKERS`, else all cores. **Differences from rayon:** `RAYON_NUM_THREADS` is
    /// not read, and more than [`max_num_threads`](crate::max_num_threads) is an error of
    /// [`build`](Self::build) (rayon starts that many instead).
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.options.workers = (num_threads > 0).then_some(num_threads);
        self
    }

    /// The scheduler (default: `HEIST_SCHEDULER`, else [`Scheduler::Lace`]).
    pub fn scheduler(mut self, scheduler: Scheduler) -> Self {
        self.options.scheduler = Some(scheduler);
        self
    }

    /// Slots per worker deque (default 16384). On a full deque `join` runs its second
    /// half inline, and a spawned task goes to the worker's overflow (a queue that grows,
    /// and that idle workers take from). The memory is reserved up front and used as deep
    /// as the deque fills.
    pub fn deque_capacity(mut self, slots: usize) -> Self {
        self.options.capacity = slots;
        self
    }

    /// Names worker `i` `closure(i)` (default `heist-i`).
    pub fn thread_name<F>(mut self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.options.name = Some(Box::new(closure));
        self
    }

    /// The stack size of each worker thread, in bytes.
    pub fn stack_size(mut self, stack_size: usize) -> Self {
        self.options.stack_size = Some(stack_size);
        self
    }

    /// Pins worker `i` to the `i`-th CPU (wrapping around) of those the building thread
    /// may run on, as Lace does (default: off). Unpinned workers are already woken away
    /// from their waker's CPU, so pinning gains little; it costs when the host slows one
    /// CPU, or when other busy threads or pools share these CPUs. Linux only; elsewhere
    /// ignored.
    pub fn pin_workers(mut self, pin: bool) -> Self {
        self.options.pin = pin;
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
        self.options.caller_helps = on;
        self
    }

    /// Receives the payload of every panic that has no caller to re-raise it in, on the
    /// thread where it happened (default: none): a panic in a detached task
    /// ([`Pool::spawn_detached`], [`spawn`](crate::spawn), [`spawn_fifo`](crate::spawn_fifo),
    /// [`spawn_broadcast`](crate::spawn_broadcast)), or in a start or exit handler.
    /// Without one, a detached task's panic waits for the next [`Pool::barrier`] or the
    /// pool's drop (see [`Pool::spawn_detached`]). Should the handler itself panic on a
    /// detached task's panic, its panic is kept for the barrier instead (**difference
    /// from rayon**, which aborts).
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
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.options.panic_handler = Some(Box::new(panic_handler));
        self
    }

    /// Calls `start_handler(i)` on worker `i`'s thread as the worker starts, before it
    /// takes any task (there `current_thread_index()` is `Some(i)`). A panic in it goes to
    /// the [`panic_handler`](Self::panic_handler), and then the worker starts normally;
    /// with no panic handler, or one that panics in turn, the process aborts, as in rayon.
    /// A pool with a start handler never waits for its threads (see [`Pool`]'s drop).
    pub fn start_handler<H>(mut self, start_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.options.lifecycle.start = Some(Box::new(start_handler) as Handler);
        self
    }

    /// Calls `exit_handler(i)` on worker `i`'s thread as the worker stops, after its last
    /// task; panics as for [`start_handler`](Self::start_handler). Dropping the pool does
    /// not wait for its exit handlers, as in rayon (see [`Pool`]'s drop).
    pub fn exit_handler<H>(mut self, exit_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.options.lifecycle.exit = Some(Box::new(exit_handler) as Handler);
        self
    }

    /// Makes the calling thread worker 0 of the pool, which starts the other
    /// `num_threads - 1` itself (rayon's `use_current_thread`). The calling thread runs no
    /// loop of its own: it works for the pool inside the joins, scopes, loops and
    /// `install`s it calls (which run on it), and tasks it spawns go to the other
    /// workers. The start and exit handlers do not run for it. As in rayon, it stays a
    /// worker of this pool for the rest of its life, even after the pool is dropped (the
    /// pool's shared state is then never freed).
    ///
    /// **Difference from rayon:** under the relay scheduler, whose workers must answer
    /// steal requests between calls, the pool starts all `num_threads` workers itself
    /// instead, and the calling thread stays outside it.
    ///
    /// # Errors
    /// `build` fails ([`BuildError::CurrentThreadInPool`]) if the calling thread is
    /// already a worker of a pool.
    pub fn use_current_thread(mut self) -> Self {
        self.options.adopt = true;
        self
    }

    /// Accepted for rayon's sake, and ignored: heist's workers always run their newest
    /// task first and steal the oldest. Use [`scope_fifo`](crate::scope_fifo) instead, as
    /// rayon advises (but see [`ScopeFifo`](crate::ScopeFifo) on order).
    #[deprecated(note = "use `scope_fifo` and `spawn_fifo` for similar effect")]
    pub fn breadth_first(self) -> Self {
        self
    }

    /// Starts each worker thread with `spawn` instead of `std::thread` (rayon's
    /// `spawn_handler`): it receives a [`ThreadBuilder`] and must arrange for
    /// [`ThreadBuilder::run`] to be called on a thread of its choice, returning an error
    /// if it cannot.
    ///
    /// The pool cannot join threads it did not start: dropping it stops them, but does
    /// not wait for them to end (as in rayon). A worker whose `run` is called late, or
    /// never, does not hold up the drop. Until it runs, what only it can take waits for
    /// it: its share of a [`broadcast`](crate::broadcast), and under the relay scheduler
    /// the steal requests sent to it (so work spreads more slowly), a
    /// [`Pool::barrier`] called outside the pool, and the other workers' stop after the
    /// drop (termination is detected with every worker taking part).
    ///
    /// ```
    /// let pool = heist::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .spawn_handler(|thread| {
    ///         std::thread::spawn(|| thread.run());
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(pool.install(|| heist::join(|| 1, || 2)), (1, 2));
    /// ```
    pub fn spawn_handler<F>(self, spawn: F) -> PoolBuilder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> io::Result<()>,
    {
        PoolBuilder {
            options: self.options,
            spawn: CustomSpawn(spawn),
        }
    }
}

impl<S: ThreadSpawn> PoolBuilder<S> {
    /// Starts the pool. Should it fail or panic part-way (a `thread_name` closure that
    /// panics), the workers it has started are stopped first.
    pub fn build(mut self) -> Result<Pool, BuildError> {
        let o = &mut self.options;
        let workers = match o.workers {
            Some(0) => return Err(BuildError::ZeroWorkers),
            Some(n) => n,
            None => workers_from_env()?,
        };
        if workers > MAX_WORKERS {
            return Err(BuildError::TooManyWorkers(workers));
        }
        if o.capacity == 0 || o.capacity > MAX_DEQUE_CAPACITY {
            return Err(BuildError::BadCapacity(o.capacity));
        }
        let scheduler = match o.scheduler {
            Some(s) => s,
            None => scheduler_from_env()?,
        };
        if o.adopt && worker::is_worker() {
            return Err(BuildError::CurrentThreadInPool);
        }
        // A relay worker answers steal requests at its pushes and pops, which an adopted
        // thread makes only inside heist's calls: under relay every worker is started.
        let adopt = o.adopt && scheduler == Scheduler::Lace;
        let out_of_memory = |e: crate::core::mem::OutOfMemory| BuildError::OutOfMemory {
            what: e.what,
            bytes: e.bytes,
        };
        let sched = || crate::sched::build(scheduler, workers);
        let sources = super::team_reduce::sources(workers);
        let mut registry =
            Registry::new(workers, sched, o.capacity, sources).map_err(out_of_memory)?;
        registry.detached.handler = o.panic_handler.take();
        let registry = Arc::new(registry);
        let lifecycle = std::mem::take(&mut o.lifecycle);
        let may_join = lifecycle.is_empty();
        let mut spawner = Spawner {
            handler: self.spawn.handler(),
            name: o.name.as_deref_mut(),
            stack_size: o.stack_size,
            pin: o.pin,
            lifecycle: Arc::new(lifecycle),
        };
        let mut started = threads::Started {
            registry: &registry,
            threads: Vec::with_capacity(workers),
        };
        // The kernel registers a process for `heavy_fence` at once while it has one thread,
        // and waits for a grace period (milliseconds) once it has more: the first glance
        // or sleep of a worker would pay that, and with it whoever waits for the worker.
        crate::core::sync::heavy_fence_available();
        // The loops' clock starts here, so that it is calibrated (against `Instant`, over
        // 200 µs or more) by the time most programs' loops read it.
        crate::core::clock::start();
        // An adopted worker 0 starts no thread (see `worker::adopt`).
        for i in usize::from(adopt)..workers {
            let spawned = spawner
                .start(&registry, i)
                .map_err(|e| BuildError::Spawn(format!("worker {i} of {workers}: {e}")))?;
            started.threads.extend(spawned);
        }
        let threads = started.keep();
        if adopt {
            worker::adopt(&registry, 0);
        }
        Ok(Pool {
            registry,
            threads,
            caller_helps: o.caller_helps,
            may_join,
        })
    }

    /// Starts the pool and makes it the global pool, which the free functions
    /// ([`join`](crate::join), [`spawn`](crate::spawn), ...) use off a worker. From rayon.
    ///
    /// # Errors
    /// [`BuildError::GlobalPoolAlreadyInitialized`] if the global pool has started already
    /// (set before, or used before: it starts on first use), or why the pool cannot be
    /// built.
    pub fn build_global(self) -> Result<(), BuildError> {
        let pool = self.build()?;
        super::set_global(pool).map_err(|_| BuildError::GlobalPoolAlreadyInitialized)
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
