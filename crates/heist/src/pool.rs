//! The pool: its builder and errors, the shared registry its workers run against, the
//! lazily started global pool, and the entry points that hand work to a pool from
//! outside (DESIGN §1–2).

use crate::lace::deque::Deque;
use crate::latch::Latch;
use crate::sleep::Sleep;
use crate::stats::{Counters, WorkerStats};
use crate::task::{self, JobRef, Panic};
use crate::worker::{self, Worker};
use std::any::Any;
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::fmt;
use std::mem::{self, MaybeUninit};
use std::panic::{self, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::JoinHandle;

/// The largest deque capacity a builder accepts (slots of 64 bytes: 4 GiB of address
/// space per worker, touched only as deep as the recursion goes).
pub const MAX_DEQUE_CAPACITY: usize = 1 << 26;

const DEFAULT_DEQUE_CAPACITY: usize = 1 << 14;

/// Which scheduler a pool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheduler {
    /// Lace's split deque with leapfrogging (seed 001).
    Lace,
    /// Prell's channel-based work stealing: private deques and forwarded steal requests
    /// (seed 000).
    Relay,
}

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
    /// A deque capacity of 0 or above [`MAX_DEQUE_CAPACITY`].
    BadCapacity(usize),
    /// `HEIST_WORKERS` is set but not a positive integer.
    BadWorkersVar(String),
    /// `HEIST_SCHEDULER` or a scheduler name is neither `lace` nor `relay`.
    UnknownScheduler(String),
    /// The operating system refused to start a worker thread.
    Spawn(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::ZeroWorkers => write!(f, "a pool needs at least one worker, got 0"),
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
    panic_handler: Option<crate::barrier::PanicHandler>,
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

    /// Slots per worker deque (default 16384). A full deque runs new tasks inline.
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
    /// may run on, as Lace does (default: off). Woken workers then start at once on their
    /// own CPU instead of queueing behind the worker that woke them. Leave it off when
    /// other busy threads or pools share these CPUs. Linux only; elsewhere ignored.
    pub fn pin_workers(mut self, pin: bool) -> Self {
        self.pin = pin;
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

    /// Starts the pool. Should it fail or panic part-way (a `thread_name` closure that
    /// panics), the workers it has started are stopped first.
    pub fn build(mut self) -> Result<Pool, BuildError> {
        let workers = match self.workers {
            Some(0) => return Err(BuildError::ZeroWorkers),
            Some(n) => n,
            None => workers_from_env()?,
        };
        if self.capacity == 0 || self.capacity > MAX_DEQUE_CAPACITY {
            return Err(BuildError::BadCapacity(self.capacity));
        }
        let scheduler = match self.scheduler {
            Some(s) => s,
            None => scheduler_from_env()?,
        };
        let mut registry = Registry::new(workers, scheduler, self.capacity);
        registry.detached.handler = self.panic_handler.take();
        let registry = Arc::new(registry);
        let mut started = Started {
            registry: &registry,
            threads: Vec::with_capacity(workers),
        };
        for i in 0..workers {
            let name = match &mut self.name {
                Some(f) => f(i),
                None => format!("heist-{i}"),
            };
            let mut b = std::thread::Builder::new().name(name);
            if let Some(s) = self.stack_size {
                b = b.stack_size(s);
            }
            let r = Arc::clone(&registry);
            let pin = self.pin;
            let start = move || {
                if pin {
                    crate::affinity::pin_nth(i);
                }
                worker::main(r, i)
            };
            match b.spawn(start) {
                Ok(h) => started.threads.push(h),
                Err(e) => return Err(BuildError::Spawn(e.to_string())),
            }
        }
        let threads = mem::take(&mut started.threads);
        mem::forget(started);
        Ok(Pool { registry, threads })
    }
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

/// What one worker shares with the others.
pub(crate) struct WorkerInfo {
    pub(crate) deque: Deque,
    pub(crate) counters: Counters,
    /// Heap jobs this worker spawned (scope tasks); others may take them from the front.
    pub(crate) jobs: Mutex<VecDeque<JobRef>>,
    pub(crate) jobs_len: AtomicUsize,
    /// Relay: this worker's request and task channels.
    pub(crate) channels: crate::relay::Channels,
    /// Jobs for this worker alone (`broadcast`); never stolen.
    pub(crate) mail: Mutex<Vec<JobRef>>,
    pub(crate) has_mail: AtomicBool,
    /// Where the worker's own context lives while its thread runs (see `worker::main`):
    /// beside its deque, so that the owner reaches the gate at a fixed offset.
    pub(crate) seat: Seat,
}

/// Room for one `Worker`, built in place and dropped by that worker's thread. It has
/// cache lines of its own: thieves lock the job list and read the words around it.
#[repr(C, align(128))]
pub(crate) struct Seat(UnsafeCell<MaybeUninit<Worker>>);

// SAFETY: only the worker's own thread touches a seat: `worker::main` builds the `Worker`
// in it, uses it through `&Worker` on that thread alone (`Worker` is neither `Send` nor
// `Sync`), and drops it before returning. No other code reads the field, so sharing the
// registry shares nothing of the seat's contents.
unsafe impl Sync for Seat {}
// SAFETY: a seat holds a live `Worker` only while its thread runs, and that thread keeps
// the registry alive meanwhile; the registry moves or drops with the seat empty.
unsafe impl Send for Seat {}

impl Seat {
    fn new() -> Seat {
        Seat(UnsafeCell::new(MaybeUninit::uninit()))
    }

    /// The seat's memory, for `worker::main`.
    pub(crate) fn get(&self) -> *mut MaybeUninit<Worker> {
        self.0.get()
    }
}

/// The state a pool's workers share.
pub(crate) struct Registry {
    pub(crate) infos: Box<[WorkerInfo]>,
    pub(crate) scheduler: Scheduler,
    pub(crate) sleep: Sleep,
    /// Jobs submitted from outside; `true` marks a root of `Pool::run`.
    injector: Mutex<VecDeque<(JobRef, bool)>>,
    injected: AtomicUsize,
    /// How many of the `injected` are roots.
    roots: AtomicUsize,
    /// Roots and detached tasks submitted and not yet finished.
    pub(crate) in_flight: AtomicUsize,
    pub(crate) terminate: AtomicBool,
    pub(crate) detached: crate::barrier::Detached,
    pub(crate) barriers: crate::relay::Barriers,
    /// Relay: bumped when a barrier is answered, a job comes from outside, or a worker's
    /// job list stops being empty. A worker that began backing off before the last bump
    /// may ask at once.
    pub(crate) news: AtomicU64,
    pub(crate) teams: crate::team::Teams,
    /// Detached tasks made and done on each worker (`crate::spawn`).
    pub(crate) spawns: crate::spawn::Counts,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Registry {
    fn new(workers: usize, scheduler: Scheduler, capacity: usize) -> Registry {
        let infos = (0..workers)
            .map(|_| WorkerInfo {
                deque: Deque::new(capacity),
                counters: Counters::default(),
                jobs: Mutex::new(VecDeque::new()),
                jobs_len: AtomicUsize::new(0),
                channels: crate::relay::Channels::new(workers),
                mail: Mutex::new(Vec::new()),
                has_mail: AtomicBool::new(false),
                seat: Seat::new(),
            })
            .collect();
        Registry {
            infos,
            scheduler,
            sleep: Sleep::new(workers),
            injector: Mutex::new(VecDeque::new()),
            injected: AtomicUsize::new(0),
            roots: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            terminate: AtomicBool::new(false),
            detached: Default::default(),
            barriers: Default::default(),
            news: AtomicU64::new(0),
            teams: crate::team::Teams::new(workers),
            spawns: crate::spawn::Counts::new(workers),
        }
    }

    pub(crate) fn workers(&self) -> usize {
        self.infos.len()
    }

    /// Queues a job from outside the pool (a root of `Pool::run` if `root`) and wakes a
    /// worker for it (under relay, the manager, which alone takes such jobs).
    pub(crate) fn inject(&self, job: JobRef, root: bool) {
        let mut q = lock(&self.injector);
        q.push_back((job, root));
        self.roots.fetch_add(usize::from(root), SeqCst);
        self.injected.store(q.len(), SeqCst);
        drop(q);
        match self.scheduler {
            Scheduler::Lace if root => self.sleep.wake_for_root(),
            Scheduler::Lace => self.sleep.wake_one(),
            Scheduler::Relay => {
                // Work from outside: workers backing off should ask for it at once.
                self.news.fetch_add(1, Relaxed);
                let m = crate::relay::MANAGER as usize;
                self.infos[m].deque.raise_flag();
                self.sleep.wake(m);
            }
        }
    }

    /// Whether a job submitted from outside waits, counting roots only if `roots`.
    pub(crate) fn has_injected(&self, roots: bool) -> bool {
        self.injected.load(SeqCst) > usize::from(!roots) * self.roots.load(SeqCst)
    }

    pub(crate) fn jobs_len(&self, w: usize) -> usize {
        self.infos[w].jobs_len.load(SeqCst)
    }

    /// Whether no heap job is queued anywhere. Roots not yet started do not count: they
    /// have spawned nothing a barrier waits for.
    pub(crate) fn no_jobs_queued(&self) -> bool {
        !self.has_injected(false) && (0..self.workers()).all(|w| self.jobs_len(w) == 0)
    }

    /// The oldest job submitted from outside; a root only if `roots`. A root runs at the
    /// bottom of a worker's stack, or above a task that waits for another pool's `run`:
    /// taken up inside other waits, a root's barrier could wait for the very task that
    /// the wait is for.
    pub(crate) fn take_injected(&self, roots: bool) -> Option<JobRef> {
        if !self.has_injected(roots) {
            return None;
        }
        let mut q = lock(&self.injector);
        let i = q.iter().position(|&(_, root)| roots || !root)?;
        let (job, root) = q.remove(i).expect("the position is in the queue");
        self.roots.fetch_sub(usize::from(root), SeqCst);
        self.injected.store(q.len(), SeqCst);
        Some(job)
    }

    /// Queues a heap job on worker `w`'s own job list and wakes a worker for it.
    pub(crate) fn push_job(&self, w: usize, job: JobRef) {
        self.push_job_quiet(w, job);
        self.sleep.wake_one();
    }

    /// Queues a heap job on worker `w`'s own job list.
    /// Returns how many jobs the list holds now.
    pub(crate) fn push_job_quiet(&self, w: usize, job: JobRef) -> usize {
        let info = &self.infos[w];
        let mut q = lock(&info.jobs);
        q.push_back(job);
        info.jobs_len.store(q.len(), SeqCst);
        q.len()
    }

    /// Takes a heap job of worker `w`: the newest if `own`, else the oldest.
    pub(crate) fn take_job(&self, w: usize, own: bool) -> Option<JobRef> {
        let info = &self.infos[w];
        if info.jobs_len.load(Relaxed) == 0 {
            return None;
        }
        let mut q = lock(&info.jobs);
        let job = if own { q.pop_back() } else { q.pop_front() };
        info.jobs_len.store(q.len(), Relaxed);
        job
    }

    /// Takes the oldest heap job of worker `w`, or the older half of them.
    pub(crate) fn take_oldest_jobs(&self, w: usize, half: bool) -> Vec<JobRef> {
        let info = &self.infos[w];
        if info.jobs_len.load(Relaxed) == 0 {
            return Vec::new();
        }
        let mut q = lock(&info.jobs);
        let k = if half {
            q.len().div_ceil(2)
        } else {
            q.len().min(1)
        };
        let jobs: Vec<JobRef> = q.drain(..k).collect();
        info.jobs_len.store(q.len(), Relaxed);
        jobs
    }

    /// Posts `job` to worker `w` alone and wakes it (`broadcast`'s mailbox). The job
    /// is never stolen; `w` takes it up in its scheduling loop or in any wait.
    pub(crate) fn post(&self, w: usize, job: JobRef) {
        let info = &self.infos[w];
        lock(&info.mail).push(job);
        info.has_mail.store(true, SeqCst);
        self.sleep.wake(w);
    }

    /// A job posted to worker `w`, if any.
    pub(crate) fn take_mail(&self, w: usize) -> Option<JobRef> {
        let info = &self.infos[w];
        if !info.has_mail.load(SeqCst) {
            return None;
        }
        let mut q = lock(&info.mail);
        let job = q.pop();
        info.has_mail.store(!q.is_empty(), SeqCst);
        job
    }

    /// Whether any work is visible to a thief (a sleeper's last look), counting roots
    /// only if `roots`.
    pub(crate) fn has_visible_work(&self, roots: bool) -> bool {
        self.has_injected(roots)
            || self
                .infos
                .iter()
                .any(|i| i.jobs_len.load(SeqCst) > 0 || i.deque.has_shared())
    }
}

/// A pool of worker threads.
///
/// Dropping a pool waits until its detached tasks have finished (as [`Pool::barrier`]
/// does, discarding a panic among them), then stops its workers.
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
        let outer = w.root_running.replace(w.running());
        let out = panic::catch_unwind(AssertUnwindSafe(|| f(w)));
        w.root_running.set(outer);
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
        }
    }

    /// The number of worker threads.
    pub fn workers(&self) -> usize {
        self.registry.workers()
    }

    /// The scheduler this pool runs.
    pub fn scheduler(&self) -> Scheduler {
        self.registry.scheduler
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
        // here runs other tasks only under `Worker::busy`, which aborts on an unwind, and
        // every task entry catches its panic); `F` and `R` are `Send`.
        let job =
            unsafe { JobRef::new((&root as *const Root<F, R>).cast(), Root::<F, R>::execute) };
        self.registry.in_flight.fetch_add(1, SeqCst);
        self.registry.inject(job, true);
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
}

fn shut_down(registry: &Registry, threads: Vec<JoinHandle<()>>) {
    registry.terminate.store(true, SeqCst);
    registry.sleep.wake_all();
    for t in threads {
        let _ = t.join();
    }
}

/// Waits for the pool's detached tasks, then stops its workers. A panic among those
/// tasks that no barrier re-raised (and no panic handler took) is re-raised here, after
/// the workers have stopped; if the thread is already panicking it is dropped instead.
///
/// Dropped inside one of its own tasks (the last handle moved into a detached task), the
/// pool cannot wait there: the drop returns at once, and the workers run every task still
/// queued and then stop. A detached panic then has nobody to reach: the process aborts
/// with a message unless a panic handler is set.
impl Drop for Pool {
    fn drop(&mut self) {
        let threads = mem::take(&mut self.threads);
        if worker::current_in(&self.registry).is_some() {
            // The handles are dropped: the threads detach and end by themselves.
            crate::barrier::close_inside(&self.registry);
            return;
        }
        let waited = panic::catch_unwind(AssertUnwindSafe(|| self.barrier()));
        shut_down(&self.registry, threads);
        if let Err(p) = waited {
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
pub fn global() -> Result<&'static Pool, BuildError> {
    GLOBAL
        .get_or_init(|| Pool::builder().build())
        .as_ref()
        .map_err(Clone::clone)
}

/// Makes `pool` the global pool; gives it back if the global pool exists already.
pub(crate) fn set_global(pool: Pool) -> Result<(), Pool> {
    GLOBAL
        .set(Ok(pool))
        .map_err(|p| p.expect("only an `Ok` was offered"))
}

/// The global pool, or a panic whose message says which setting is wrong.
pub(crate) fn global_or_panic() -> &'static Pool {
    match global() {
        Ok(p) => p,
        Err(e) => panic!("heist: cannot start the global pool: {e}"),
    }
}
