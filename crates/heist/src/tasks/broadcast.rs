//! `broadcast` and `spawn_broadcast`: one closure run once on every worker of a pool,
//! through each worker's mailbox (jobs that are never stolen), with the results in worker
//! order.

use crate::core::latch::Latch;
use crate::core::task::{JobRef, Panic};
use crate::core::worker::{self, Worker};
use crate::pool::Registry;
use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::AcqRel};
use std::sync::Arc;

/// What a broadcast closure learns about where it runs (rayon's `BroadcastContext`).
pub struct BroadcastContext<'a> {
    index: usize,
    workers: usize,
    _worker: PhantomData<&'a Worker>,
}

impl BroadcastContext<'_> {
    /// The index of the worker running this call, `0..num_threads()`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of workers the broadcast runs on (the pool's size).
    pub fn num_threads(&self) -> usize {
        self.workers
    }
}

impl fmt::Debug for BroadcastContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BroadcastContext")
            .field("index", &self.index)
            .field("num_threads", &self.workers)
            .finish()
    }
}

/// One broadcast, on the caller's stack until every worker has run it.
struct Call<'a, OP, R> {
    op: &'a OP,
    outs: Box<[UnsafeCell<Option<std::thread::Result<R>>>]>,
    left: AtomicUsize,
    latch: Latch,
}

impl<OP, R> Call<'_, OP, R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    /// # Safety
    /// `data` is a `Call<OP, R>` whose caller waits on its latch; runs once per worker,
    /// each time on a different worker of the pool it was posted to.
    unsafe fn execute(data: *const (), w: &Worker) {
        // SAFETY: the contract above.
        let call = unsafe { &*data.cast::<Call<'_, OP, R>>() };
        let cx = BroadcastContext {
            index: w.index(),
            workers: w.workers(),
            _worker: PhantomData,
        };
        let out = panic::catch_unwind(AssertUnwindSafe(|| (call.op)(cx)));
        // SAFETY: only worker `index` writes `outs[index]`, and the caller reads it after
        // the latch, which the last decrement below sets.
        unsafe { *call.outs[w.index()].get() = Some(out) };
        if call.left.fetch_sub(1, AcqRel) == 1 {
            // SAFETY: the caller frees the call only once it has seen the latch set.
            unsafe { Latch::set(&raw const call.latch) };
        }
    }
}

/// Runs `op` once on each worker of `registry` and returns the results by worker index;
/// re-raises the first panic (by index) once all have run.
pub(crate) fn run<OP, R>(registry: &Arc<Registry>, op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    let n = registry.workers();
    let call = Call {
        op: &op,
        outs: (0..n).map(|_| UnsafeCell::new(None)).collect(),
        left: AtomicUsize::new(n),
        latch: Latch::new(),
    };
    let data = (&call as *const Call<'_, OP, R>).cast::<()>();
    for i in 0..n {
        // SAFETY: `call` outlives every job: this frame waits for the latch, which the
        // last of the `n` jobs sets, and lets the setter leave it, before returning. `OP`
        // is `Sync` and `R` is `Send`; each worker gets the job once, in its own mailbox.
        let job = unsafe { JobRef::new(data, Call::<OP, R>::execute) };
        registry.post(i, job);
    }
    match worker::current_in(registry) {
        // Not `wait_latch`, which lets a worker take up a root (of `Pool::run`, or an
        // in-place scope's) while it waits: such a root could wait for this very task.
        // SAFETY: `current_in` returns this thread's live worker.
        Some(w) => unsafe { &*w }.wait_until(|| call.latch.probe()),
        None => worker::wait_latch(&call.latch),
    }
    let outs: Vec<std::thread::Result<R>> = call
        .outs
        .into_vec()
        .into_iter()
        .map(|o| o.into_inner().expect("every worker ran the broadcast"))
        .collect();
    let mut first: Option<Panic> = None;
    let mut rs = Vec::with_capacity(n);
    for o in outs {
        match o {
            Ok(r) => rs.push(r),
            Err(p) => crate::core::task::keep_first(&mut first, p),
        }
    }
    crate::core::task::resume_first(Ok(rs), first)
}

/// Runs `op` once on every worker of the current pool (the global pool off a worker) and
/// returns the results in worker order (rayon's `broadcast`).
///
/// Called on a worker, that worker runs its own share while it waits for the others.
/// Each worker runs `op` when it next looks for work: a worker busy with one long task
/// runs it after that task. A panic in any call is re-raised once all have run.
///
/// ```
/// let v = heist::ThreadPoolBuilder::new()
///     .num_threads(3)
///     .build()
///     .unwrap()
///     .install(|| heist::broadcast(|cx| cx.index() * 10));
/// assert_eq!(v, [0, 10, 20]);
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    crate::pool::with_registry(|r| run(r, op))
}

/// Posts one call of `op` to every worker of `registry` (see [`spawn_broadcast`]): each
/// is a detached task in that worker's mailbox, behind the broadcasts posted before it.
pub(crate) fn spawn_in<OP>(registry: &Arc<Registry>, op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    let op = Arc::new(op);
    for i in 0..registry.workers() {
        let op = Arc::clone(&op);
        crate::core::detached::post(registry, i, move |w| {
            op(BroadcastContext {
                index: w.index(),
                workers: w.workers(),
                _worker: PhantomData,
            })
        });
    }
}

/// Runs `op` once on every worker of the current pool (the global pool off a worker), and
/// returns at once (rayon's `spawn_broadcast`).
///
/// Each call is a detached task queued for its worker alone, behind the broadcasts made
/// before it, so that a later [`broadcast`] finds them done, as in rayon. A panic in any
/// call goes to the pool's panic handler, one call at a time, as a panic in
/// [`spawn`](crate::spawn) does (without a handler, see there). A pool's barrier waits
/// for the calls; its drop does not.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// let pool = heist::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
/// let seen = Arc::new(AtomicUsize::new(0));
/// let s = Arc::clone(&seen);
/// pool.install(|| {
///     heist::spawn_broadcast(move |cx| {
///         s.fetch_add(1 << cx.index(), Ordering::SeqCst);
///     })
/// });
/// pool.barrier(); // waits for the spawned calls
/// assert_eq!(seen.load(Ordering::SeqCst), 0b111);
/// ```
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    crate::pool::with_registry(|r| spawn_in(r, op))
}

/// The trace buffers are emptied on each worker, by a broadcast.
impl crate::pool::Pool {
    /// Each worker's trace events since the pool started or the last `take_trace`, and
    /// empties the buffers (see [`crate::trace`]). Without the `trace` feature every list
    /// is empty.
    ///
    /// It runs on every worker, as a broadcast does: a worker busy with a long task
    /// hands its events over when it next looks for work. Events still open then (the
    /// span of a task running meanwhile) go to the next call.
    pub fn take_trace(&self) -> crate::core::trace::Trace {
        #[cfg(feature = "trace")]
        return crate::core::trace::Trace {
            workers: run(self.registry(), |_| {
                crate::core::worker::with_current(|w| {
                    w.expect("a broadcast runs on a worker").trace_log().take()
                })
            }),
        };
        #[cfg(not(feature = "trace"))]
        crate::core::trace::Trace {
            workers: vec![Vec::new(); self.workers()],
        }
    }
}
