//! `scope`: a dynamic number of heap-allocated tasks that may borrow from the enclosing
//! stack. The scope waits (working meanwhile) until every task has finished, so nothing a
//! task borrows can die first, whatever the caller forgets; panics are re-raised at the
//! end of the scope.

use crate::pool::{self, Pool, Registry};
use crate::task::{self, JobRef, Panic};
use crate::worker::{self, Worker};
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
    pending: AtomicUsize,
    panic: Mutex<Option<Panic>>,
    registry: Arc<Registry>,
}

impl Shared {
    fn new(registry: &Arc<Registry>) -> Shared {
        Shared {
            pending: AtomicUsize::new(0),
            panic: Mutex::new(None),
            registry: Arc::clone(registry),
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
    pub fn spawn<F>(&self, f: F)
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
        match self.worker() {
            Some(w) if Arc::ptr_eq(w.registry(), &shared.registry) => w.push_job(job),
            _ => match worker::current_in(&shared.registry) {
                // SAFETY: `current_in` returns this thread's live worker.
                Some(w) => unsafe { (*w).push_job(job) },
                None => shared.registry.inject(job),
            },
        }
    }
}

/// Runs a scope task and ends its part in the scope. Never unwinds.
///
/// # Safety
/// `data` is a `HeapJob<F>` made by `Scope::spawn`, executed once.
unsafe fn execute<'scope, F>(data: *const (), w: &Worker)
where
    F: FnOnce(&Scope<'scope>) + Send,
{
    // SAFETY: the contract above; the scope is alive until `pending` drops to zero below.
    let HeapJob { f, shared } = *unsafe { Box::from_raw(data as *mut HeapJob<F>) };
    // SAFETY: as above; the view ends with the task.
    let view = Scope::view(unsafe { &*shared }, Some(w));
    if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| f(&view))) {
        // SAFETY: as above.
        unsafe { (*shared).record(p) };
    }
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
        let shared = Shared::new(self.registry());
        let view = Scope::view(&shared, Some(self));
        let out = panic::catch_unwind(AssertUnwindSafe(|| op(&view)));
        // Cannot unwind (see `Worker::busy`), so no task outlives the scope.
        self.wait_until(|| shared.done());
        shared.finish(out)
    }
}

/// Runs `op` on the calling thread, which is not a worker, with a [`Scope`] whose tasks
/// run on `pool`; waits for them through a root of `pool` that works until they are done.
pub(crate) fn scope_outside<'scope, OP, R>(pool: &Pool, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let shared = Shared::new(pool.registry());
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
