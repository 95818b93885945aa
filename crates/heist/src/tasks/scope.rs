//! `scope`: a dynamic number of tasks that may borrow from the enclosing stack. The scope
//! waits (working meanwhile) until every task has finished, so nothing a task borrows can
//! die first, whatever the caller forgets; panics are re-raised at the end of the scope.
//!
//! A task spawned on a worker is a slot of that worker's deque (`crate::core::spawn`), found by
//! draining: the scope drains its own worker's deque down to where it began, and a worker
//! that runs a slot drains what the slot's task left before the task counts as finished.
//! Only tasks spawned where no drain finds them (from another thread, or from a root or a
//! heap job on another worker) are counted.

use crate::core::frame::Frame;
use crate::core::spawn::{self, Then};
use crate::core::task::{self, JobRef, Panic};
use crate::core::worker::{self, Worker};
use crate::pool::{self, Pool, Registry};
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering::AcqRel, Ordering::Acquire, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// A scope in which tasks borrowing from the enclosing stack can be spawned.
///
/// Each task gets a `&Scope` of its own, which knows the worker running the task: see
/// [`Scope::worker`]. See [`scope`] and [`Worker::scope`].
pub struct Scope<'scope> {
    shared: *const Shared,
    /// The worker whose task holds this `Scope`, and its stack range (see `worker`).
    worker: *const Worker,
    stack: (usize, usize),
    /// Invariant in `'scope`, like `std::thread::Scope`.
    _marker: PhantomData<&'scope mut &'scope ()>,
}

// SAFETY: `shared` points to the scope's `Shared`, which is `Sync` and outlives every
// `Scope` (the scope ends only when all tasks, which hold the only other views, are done).
// `worker` is dereferenced only in `Scope::worker`, after it proved that the calling
// thread is that worker's own thread.
unsafe impl Sync for Scope<'_> {}
// SAFETY: as for `Sync`; nothing in a `Scope` belongs to the thread that made it except
// the worker, which is reached only from that worker's own thread.
unsafe impl Send for Scope<'_> {}

/// What all views of one scope share.
struct Shared {
    /// Counted tasks not yet finished: those spawned where no drain finds them.
    pending: AtomicUsize,
    panic: Mutex<Option<Panic>>,
    registry: Arc<Registry>,
    /// The address of the worker whose deque the scope drains at its end (0: the scope
    /// runs outside the pool); only compared, never dereferenced.
    owner: usize,
    /// The tasks spawned with `spawn_fifo`, a queue per worker (`compat::scope_fifo`),
    /// made at the first.
    pub(crate) fifos: std::sync::OnceLock<Box<[super::fifo::FifoQueue]>>,
}

impl Shared {
    fn new(registry: &Arc<Registry>, owner: Option<&Worker>) -> Shared {
        Shared {
            pending: AtomicUsize::new(0),
            panic: Mutex::new(None),
            registry: Arc::clone(registry),
            owner: owner.map_or(0, |w| w as *const Worker as usize),
            fifos: std::sync::OnceLock::new(),
        }
    }

    /// Keeps the first panic; a later payload is dropped, unable to unwind into the worker.
    fn record(&self, p: Panic) {
        task::record_first(&self.panic, p);
    }

    fn done(&self) -> bool {
        self.pending.load(Acquire) == 0
    }

    /// The scope's result: `out`, unless `op` or a task panicked.
    fn finish<R>(self, out: std::thread::Result<R>) -> R {
        let spawned = self.panic.into_inner().unwrap_or_else(|e| e.into_inner());
        task::resume_first(out, spawned)
    }
}

struct HeapJob<F> {
    f: F,
    shared: *const Shared,
}

impl<'scope> Scope<'scope> {
    /// A view of `shared` for a task running on `w` (or off the pool if `None`).
    fn view(shared: &Shared, w: Option<&Worker>) -> Scope<'scope> {
        Scope {
            shared,
            worker: w.map_or(ptr::null(), |w| w as *const Worker),
            stack: w.map_or((0, 0), Worker::stack_range),
            _marker: PhantomData,
        }
    }

    fn shared(&self) -> &Shared {
        // SAFETY: see `impl Sync for Scope`: the shared part outlives every view.
        unsafe { &*self.shared }
    }

    /// The scope's `spawn_fifo` queue of the worker with index `i` (of `workers`).
    pub(crate) fn fifo(&self, i: usize, workers: usize) -> &super::fifo::FifoQueue {
        let fifos = self
            .shared()
            .fifos
            .get_or_init(|| (0..workers).map(|_| Default::default()).collect());
        &fifos[i]
    }

    /// The pool the scope's tasks run on.
    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.shared().registry
    }

    /// The worker running the task that got this `Scope`, if the caller runs on that
    /// worker's thread: the fast path of [`Worker::join`] without a thread-local look-up.
    /// `None` where this `Scope` was passed to another thread (a join branch that was
    /// stolen, say) or outside the pool (the `op` of `in_place_scope`).
    ///
    /// ```
    /// let pool = heist::Pool::builder().workers(2).build().unwrap();
    /// let sum = std::sync::atomic::AtomicU64::new(0);
    /// pool.run(|w| {
    ///     w.scope(|s| {
    ///         s.spawn(|s| {
    ///             let w = s.worker().expect("a scope task runs on a worker");
    ///             let (a, b) = w.join(|_| 1, |_| 2);
    ///             sum.fetch_add(a + b, std::sync::atomic::Ordering::Relaxed);
    ///         });
    ///     })
    /// });
    /// assert_eq!(sum.into_inner(), 3);
    /// ```
    #[inline]
    pub fn worker(&self) -> Option<&Worker> {
        let here = worker::stack_here();
        let (lo, hi) = self.stack;
        // SAFETY: `here` is in the caller's own stack. `lo..hi` lies in the stack of
        // `self.worker`'s thread, which no other thread's stack overlaps while that thread
        // lives, and it lives while the task holding this view runs; so `here` is in it
        // only when the caller is that thread, the one thread that may use the worker.
        (lo < here && here < hi).then(|| unsafe { &*self.worker })
    }

    /// Spawns `f` to run on the pool before the scope ends. `f` receives the scope, so it
    /// can spawn more tasks.
    #[inline]
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        match self.worker() {
            Some(w) if spawn::drained_on(w, self.shared().owner) => push_drained(w, f, self.shared),
            _ => self.spawn_elsewhere(f),
        }
    }

    /// `spawn` off the task's own worker thread, or where no drain finds the task.
    #[cold]
    #[inline(never)]
    fn spawn_elsewhere<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let shared = self.shared();
        let here = match self.worker() {
            Some(w) => Some(w),
            // SAFETY: `current_in` returns this thread's live worker, which outlives this
            // call.
            None => worker::current_in(&shared.registry).map(|w| unsafe { &*w }),
        };
        let Some(w) = here else {
            return self.inject(f);
        };
        if spawn::drained_on(w, shared.owner) {
            push_drained(w, f, shared);
        } else {
            let to = SharedPtr(shared);
            shared.pending.fetch_add(1, Relaxed);
            // SAFETY: the scope waits for its count, which this task holds until `Then`
            // releases it, after the task and what it left in the deque are done.
            let job = move |w: &Worker| unsafe {
                run_task(f, to, w);
                Then::Release(&raw const (*to.0).pending)
            };
            // SAFETY: as above: the job releases a count its scope waits for.
            unsafe { spawn::push(w, job, None) };
        }
    }

    /// Spawns `f` from a thread that is not a worker of the scope's pool: a counted heap
    /// job submitted to the pool.
    #[cold]
    #[inline(never)]
    fn inject<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let shared = self.shared();
        shared.pending.fetch_add(1, Relaxed);
        let job = Box::new(HeapJob { f, shared });
        let data = Box::into_raw(job) as *const ();
        // SAFETY: the box stays alive until `execute` takes it back, which happens once;
        // the scope outlives the job because it waits for `pending` to reach zero, a wait
        // that cannot unwind (see `Worker::scope`); `execute` never unwinds; `F` is `Send`
        // and `Shared` is `Sync`.
        let job = unsafe { JobRef::new(data, execute::<F> as unsafe fn(*const (), &Worker)) };
        shared.registry.inject(job);
    }
}

/// Pushes `f` on `w`, where a drain finds it before the scope ends (`spawn::drained_on`).
#[inline(always)]
fn push_drained<'scope, F>(w: &Worker, f: F, shared: *const Shared)
where
    F: FnOnce(&Scope<'scope>) + Send + 'scope,
{
    let to = SharedPtr(shared);
    let job = move |w: &Worker| {
        // SAFETY: the scope is alive while its task runs (below).
        unsafe { run_task(f, to, w) };
        Then::Nothing
    };
    // SAFETY: `shared` is the scope's, alive while the spawning task runs. The drain that
    // finds the task comes before the scope ends (`drained_on`), so the scope outlives
    // it; spilled from a full deque, where no drain finds it, it is counted in
    // `pending`, which the scope waits for.
    unsafe { spawn::push(w, job, Some(&raw const (*shared).pending)) };
}

/// A scope's shared part, as a task holds it.
#[derive(Clone, Copy)]
struct SharedPtr(*const Shared);

// SAFETY: `Shared` is `Sync`, and a task uses the pointer only while the scope waits for
// it (see `run_task`).
unsafe impl Send for SharedPtr {}

/// Runs a scope task on `w` with its own view of the scope; a panic goes to the scope.
///
/// # Safety
/// The scope is alive for the whole call.
unsafe fn run_task<'scope, F>(f: F, shared: SharedPtr, w: &Worker)
where
    F: FnOnce(&Scope<'scope>),
{
    // SAFETY: the contract above; the view ends with the task.
    let view = Scope::view(unsafe { &*shared.0 }, Some(w));
    let _t = crate::core::trace::span(w, crate::core::trace::EventKind::Spawn, None, 0);
    if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| f(&view))) {
        view.shared().record(p);
    }
}

/// Runs a counted scope task submitted from outside the worker, drains what it left in
/// the deque, and ends its part in the scope. Never unwinds.
///
/// # Safety
/// `data` is a `HeapJob<F>` made by `Scope::inject`, executed once.
unsafe fn execute<'scope, F>(data: *const (), w: &Worker)
where
    F: FnOnce(&Scope<'scope>) + Send,
{
    // SAFETY: the contract above; the scope is alive until `pending` drops to zero below.
    let HeapJob { f, shared } = *unsafe { Box::from_raw(data as *mut HeapJob<F>) };
    // SAFETY: as above.
    spawn::run_draining(w, || unsafe { run_task(f, SharedPtr(shared), w) });
    // The last touch of the scope, through the raw pointer: once `pending` is zero the
    // owner may return and free it.
    // SAFETY: as above; nothing touches `shared` after this.
    unsafe { (*shared).pending.fetch_sub(1, AcqRel) };
}

impl Worker {
    /// Runs `op` with a [`Scope`] on this worker and waits for every task spawned in it.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        let shared = Shared::new(self.registry(), Some(self));
        let view = Scope::view(&shared, Some(self));
        let base = self.owner().depth();
        // The body runs above a mark, which keeps the promises scopes outside it from
        // pushing or popping in it (`crate::tasks::promise`); its own tasks lie above the mark.
        let marked = self.push_mark();
        let entered = self.frames().enter(Frame::Scope(base + u32::from(marked)));
        let out = panic::catch_unwind(AssertUnwindSafe(|| op(&view)));
        // Cannot unwind (see `Worker::run_taken`), so no task outlives the scope. The
        // mark goes with the tasks.
        spawn::drain_to(self, base, task::drop_panic);
        if !shared.done() {
            self.wait_until(|| shared.done());
        }
        drop(entered);
        shared.finish(out)
    }
}

/// Runs `op` on the calling thread, which is not a worker, with a [`Scope`] whose tasks
/// run on `pool`; waits for them through a root of `pool` that works until they are done.
pub(crate) fn scope_outside<'scope, OP, R>(pool: &Pool, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let shared = Shared::new(pool.registry(), None);
    let view = Scope::view(&shared, None);
    let out = panic::catch_unwind(AssertUnwindSafe(|| op(&view)));
    pool.run(|w| w.wait_until(|| shared.done()));
    shared.finish(out)
}

/// Runs `op` with a [`Scope`]: every task spawned in it finishes before `scope` returns,
/// so tasks may borrow from the caller's stack.
///
/// On a worker thread the scope runs there; elsewhere it runs on the global pool. A panic
/// in `op` or in any spawned task is re-raised once all of them have finished.
///
/// ```
/// let mut v = vec![1, 2, 3, 4];
/// heist::scope(|s| {
///     for x in &mut v {
///         s.spawn(move |_| *x *= 10);
///     }
/// });
/// assert_eq!(v, [10, 20, 30, 40]);
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    let mut op = Some(op);
    let here = worker::with_current(|w| w.map(|w| w.scope(op.take().expect("unused"))));
    match here {
        Some(r) => r,
        None => pool::global_or_panic().run(|w| w.scope(op.take().expect("unused"))),
    }
}
