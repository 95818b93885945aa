//! `ThreadPoolBuilder` and `ThreadPoolBuildError`: rayon's names for heist's
//! [`PoolBuilder`](crate::PoolBuilder) and [`BuildError`].

use super::thread_pool::ThreadPool;
use super::ThreadBuilder;
use crate::pool::threads::{CustomSpawn, DefaultSpawn, Handler, Lifecycle, ThreadSpawn, Threads};
use crate::pool::{self, BuildError, Pool, Scheduler};
use std::any::Any;
use std::fmt;
use std::io;

type PanicHandler = dyn Fn(Box<dyn Any + Send>) + Send + Sync;
type NameFn = Box<dyn FnMut(usize) -> String>;

/// The most worker threads a pool may have (rayon's `max_num_threads`): team sizes are
/// kept in 16 bits. A builder asked for more fails with an error that says so.
pub fn max_num_threads() -> usize {
    crate::pool::MAX_WORKERS
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
            // rayon's texts, word for word.
            Kind::GlobalPoolAlreadyInitialized => {
                f.write_str("The global thread pool has already been initialized.")
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

/// Configures a [`ThreadPool`] (rayon's `ThreadPoolBuilder`). The type parameter says how
/// threads are started: [`spawn_handler`](ThreadPoolBuilder::spawn_handler) changes it.
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
pub struct ThreadPoolBuilder<S = DefaultSpawn> {
    num_threads: usize,
    name: Option<NameFn>,
    stack_size: Option<usize>,
    panic_handler: Option<Box<PanicHandler>>,
    lifecycle: Lifecycle,
    spawn: S,
    scheduler: Option<Scheduler>,
    use_current_thread: bool,
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        ThreadPoolBuilder {
            num_threads: 0,
            name: None,
            stack_size: None,
            panic_handler: None,
            lifecycle: Lifecycle::default(),
            spawn: DefaultSpawn,
            scheduler: None,
            use_current_thread: false,
        }
    }
}

impl<S> fmt::Debug for ThreadPoolBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &self.num_threads)
            .field("stack_size", &self.stack_size)
            .field("panic_handler", &self.panic_handler.is_some())
            .field("start_handler", &self.lifecycle.start.is_some())
            .field("exit_handler", &self.lifecycle.exit.is_some())
            .field("scheduler", &self.scheduler)
            .field("use_current_thread", &self.use_current_thread)
            .finish_non_exhaustive()
    }
}

impl ThreadPoolBuilder {
    /// A builder with the defaults.
    pub fn new() -> ThreadPoolBuilder {
        ThreadPoolBuilder::default()
    }

    /// Builds a pool whose threads are scoped threads of `std::thread::scope`: each starts
    /// by calling `wrapper`, which must call [`ThreadBuilder::run`]; `with_pool` then runs
    /// with the pool, and the pool is dropped and its threads joined before this returns.
    /// Workers may so borrow from the caller's stack (a scoped thread-local, say).
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
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, ThreadPoolBuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&ThreadPool) -> R,
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

impl<S> ThreadPoolBuilder<S> {
    /// Starts each worker thread with `spawn` instead of `std::thread`: it receives a
    /// [`ThreadBuilder`] and must arrange for [`ThreadBuilder::run`] to be called on a
    /// thread of its choice, returning an error if it cannot.
    ///
    /// The pool cannot join threads it did not start: dropping it stops them, but does
    /// not wait for them to end (as in rayon). A worker whose `run` is called late, or
    /// never, does not hold up the drop. Until it runs, what only it can take waits for
    /// it: its share of a [`broadcast`](crate::broadcast), and under the relay scheduler
    /// the steal requests sent to it (so work spreads more slowly), a
    /// [`Pool::barrier`](crate::Pool::barrier) called outside the pool, and the other
    /// workers' stop after the drop (termination is detected with every worker taking
    /// part).
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
    pub fn spawn_handler<F>(self, spawn: F) -> ThreadPoolBuilder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> io::Result<()>,
    {
        ThreadPoolBuilder {
            num_threads: self.num_threads,
            name: self.name,
            stack_size: self.stack_size,
            panic_handler: self.panic_handler,
            lifecycle: self.lifecycle,
            spawn: CustomSpawn(spawn),
            scheduler: self.scheduler,
            use_current_thread: self.use_current_thread,
        }
    }

    /// The number of worker threads; 0 (the default) means `HEIST_WORKERS`, else all
    /// cores. **Differences from rayon:** `RAYON_NUM_THREADS` is not read, and more than
    /// [`max_num_threads`] is an error of [`build`](Self::build) (rayon starts that many
    /// instead).
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

    /// Called with the payload of a panic in a task started by `spawn`, `spawn_fifo` or
    /// `spawn_broadcast`, or in a start or exit handler, where there is no caller to
    /// re-raise it in. Without one, see [`spawn`](crate::spawn). **Difference from
    /// rayon:** a panic in the handler itself, for a spawned task, does not abort; it is
    /// kept for the next [`Pool::barrier`](crate::Pool::barrier).
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.panic_handler = Some(Box::new(panic_handler));
        self
    }

    /// Calls `start_handler(i)` on worker `i`'s thread as the worker starts, before it
    /// takes any task (there `current_thread_index()` is `Some(i)`). A panic in it goes to
    /// the [`panic_handler`](Self::panic_handler), and then the worker starts normally;
    /// with no panic handler, or one that panics in turn, the process aborts, as in rayon.
    pub fn start_handler<H>(mut self, start_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.lifecycle.start = Some(Box::new(start_handler) as Handler);
        self
    }

    /// Calls `exit_handler(i)` on worker `i`'s thread as the worker stops, after its last
    /// task; panics as for [`start_handler`](Self::start_handler). Dropping a pool whose
    /// threads it started itself, with no spawned task left, waits for its exit handlers
    /// (rayon's drop does not); with spawned tasks left, the workers exit once those are
    /// done.
    pub fn exit_handler<H>(mut self, exit_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.lifecycle.exit = Some(Box::new(exit_handler) as Handler);
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
    /// `build` fails if the calling thread is already a worker of a pool.
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }

    /// Accepted for rayon's sake, and ignored: heist's workers always run their newest
    /// task first and steal the oldest. Use [`scope_fifo`](crate::scope_fifo) instead, as
    /// rayon advises (but see [`ScopeFifo`](crate::ScopeFifo) on order).
    #[deprecated(note = "use `scope_fifo` and `spawn_fifo` for similar effect")]
    pub fn breadth_first(self) -> Self {
        self
    }

    /// heist only: the scheduler (default `HEIST_SCHEDULER`, else Lace).
    pub fn scheduler(mut self, scheduler: Scheduler) -> Self {
        self.scheduler = Some(scheduler);
        self
    }
}

impl<S: ThreadSpawn> ThreadPoolBuilder<S> {
    /// Starts the pool.
    pub fn build(mut self) -> Result<ThreadPool, ThreadPoolBuildError> {
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
        if self.use_current_thread {
            b = b.adopt_current_thread();
        }
        let threads = Threads {
            lifecycle: self.lifecycle,
            spawn: self.spawn.handler(),
        };
        let pool = b
            .build_with(threads)
            .map_err(|e| ThreadPoolBuildError(Kind::Build(e)))?;
        Ok(ThreadPool::of(pool))
    }

    /// Starts the pool and makes it the global pool, which the free functions
    /// ([`join`](crate::join), [`spawn`](crate::spawn), ...) use off a worker.
    ///
    /// # Errors
    /// If the global pool has started already (set before, or used before: it starts on
    /// first use), or if the pool cannot be built.
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        let pool = self.build()?.into_pool();
        pool::set_global(pool).map_err(|_| ThreadPoolBuildError(Kind::GlobalPoolAlreadyInitialized))
    }
}
