//! `scope`: a dynamic number of heap-allocated tasks that may borrow from the enclosing
//! stack. The scope waits (working meanwhile) until every task has finished, so nothing a
//! task borrows can die first, whatever the caller forgets; panics are re-raised at the
//! end of the scope.

use crate::pool::{self, Registry};
use crate::task::{self, JobRef, Panic};
use crate::worker::{self, Worker};
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::AcqRel, Ordering::Acquire, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// A scope in which tasks borrowing from the enclosing stack can be spawned.
///
/// See [`scope`] and [`Worker::scope`].
pub struct Scope<'scope> {
    pending: AtomicUsize,
    panic: Mutex<Option<Panic>>,
    registry: Arc<Registry>,
    /// Invariant in `'scope`, like `std::thread::Scope`.
    _marker: PhantomData<&'scope mut &'scope ()>,
}

struct HeapJob<'scope, F> {
    f: F,
    scope: *const Scope<'scope>,
}

impl<'scope> Scope<'scope> {
    /// Spawns `f` to run on the pool before the scope ends. `f` receives the scope, so it
    /// can spawn more tasks.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.pending.fetch_add(1, Relaxed);
        let job = Box::new(HeapJob { f, scope: self });
        let data = Box::into_raw(job) as *const ();
        // SAFETY: the box stays alive until `execute` takes it back, which happens once;
        // the scope outlives the job because it waits for `pending` to reach zero, a wait
        // that cannot unwind (see `Worker::scope`); `execute` never unwinds; `F` is `Send`
        // and `Scope` is `Sync`.
        let job = unsafe { JobRef::new(data, execute::<F> as unsafe fn(*const (), &Worker)) };
        match worker::current_in(&self.registry) {
            // SAFETY: `current_in` returns this thread's live worker.
            Some(w) => unsafe { (*w).push_job(job) },
            None => self.registry.inject(job, false),
        }
    }

    /// Keeps the first panic; a later payload is dropped, unable to unwind into the worker.
    fn record(&self, p: Panic) {
        task::record_first(&self.panic, p);
    }
}

/// Runs a scope task and ends its part in the scope. Never unwinds.
///
/// # Safety
/// `data` is a `HeapJob<'scope, F>` made by `Scope::spawn`, executed once.
unsafe fn execute<'scope, F>(data: *const (), _w: &Worker)
where
    F: FnOnce(&Scope<'scope>) + Send,
{
    // SAFETY: the contract above; the scope is alive until `pending` drops to zero below.
    let HeapJob { f, scope } = *unsafe { Box::from_raw(data as *mut HeapJob<'scope, F>) };
    // SAFETY: as above; the reference ends with the task.
    if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| f(unsafe { &*scope }))) {
        // SAFETY: as above.
        unsafe { (*scope).record(p) };
    }
    // The last touch of the scope, through the raw pointer: once `pending` is zero the
    // owner may return and free it.
    // SAFETY: as above; nothing touches `scope` after this.
    unsafe { (*scope).pending.fetch_sub(1, AcqRel) };
}

impl Worker {
    /// Runs `op` with a [`Scope`] on this worker and waits for every task spawned in it.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        let scope = Scope {
            pending: AtomicUsize::new(0),
            panic: Mutex::new(None),
            registry: Arc::clone(self.registry()),
            _marker: PhantomData,
        };
        let out = panic::catch_unwind(AssertUnwindSafe(|| op(&scope)));
        // Cannot unwind (see `Worker::busy`), so no task outlives the scope.
        self.wait_until(|| scope.pending.load(Acquire) == 0);
        let spawned = scope.panic.into_inner().unwrap_or_else(|e| e.into_inner());
        task::resume_first(out, spawned)
    }
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
