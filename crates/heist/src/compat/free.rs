//! rayon's free functions: they act on the pool of the worker they are called on, or on
//! the global pool from any other thread.

use crate::core::worker::{self, Worker};
use crate::pool;
use crate::tasks::scope::{self, Scope};
use crate::tasks::scope_fifo::ScopeFifo;

/// Spawns `func` to run on the current pool (the global pool off a worker) and returns at
/// once (rayon's `spawn`).
///
/// A panic in `func` goes to the pool's panic handler (see
/// [`ThreadPoolBuilder::panic_handler`](crate::ThreadPoolBuilder::panic_handler)).
/// Without one, on the global pool (and on a dropped pool) the process aborts, as in
/// rayon. **Difference from rayon:** on a pool of one's own, heist keeps the panic and
/// re-raises it from the next [`Pool::barrier`](crate::Pool::barrier) or the pool's drop.
/// A pool's drop does not wait for its spawned tasks; its barrier does.
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// heist::spawn(move || tx.send(6 * 7).unwrap());
/// assert_eq!(rx.recv().unwrap(), 42);
/// ```
pub fn spawn<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    pool::with_registry(|r| crate::core::detached::spawn(r, move |_| func()))
}

/// Like [`spawn`], but the tasks that one worker spawns this way run oldest first where
/// that worker runs them itself (rayon's `spawn_fifo`); [`spawn`]'s run newest first.
/// Called outside the pool, it is [`spawn`].
pub fn spawn_fifo<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    crate::tasks::fifo::spawn_here(func)
}

/// Runs `op` with a [`ScopeFifo`] on the current pool, or on the global pool (rayon's
/// `scope_fifo`). See [`scope`](crate::scope) and [`ScopeFifo`] on order.
///
/// ```
/// let mut v = [1, 2, 3];
/// heist::scope_fifo(|s| {
///     for x in &mut v {
///         s.spawn_fifo(move |_| *x *= 2);
///     }
/// });
/// assert_eq!(v, [2, 4, 6]);
/// ```
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    scope::scope(|s| op(ScopeFifo::of(s)))
}

/// Runs `op` on the calling thread with a [`Scope`] whose tasks run on the current pool,
/// or on the global pool (rayon's `in_place_scope`). Unlike [`scope`](crate::scope), `op`
/// need not be `Send`: it does not move to a worker.
///
/// ```
/// let local = std::rc::Rc::new(5); // not `Send`
/// let mut out = 0;
/// heist::in_place_scope(|s| {
///     let (five, out) = (*local, &mut out); // `op` uses `local` on this thread
///     s.spawn(move |_| *out = five * 2);
/// });
/// assert_eq!(out, 10);
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let mut op = Some(op);
    let here = worker::with_current(|w| w.map(|w| w.scope(op.take().expect("unused"))));
    match here {
        Some(r) => r,
        None => scope::scope_outside(pool::global_or_panic(), op.expect("unused")),
    }
}

/// [`in_place_scope`] with a [`ScopeFifo`] (rayon's `in_place_scope_fifo`).
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    in_place_scope(|s| op(ScopeFifo::of(s)))
}

/// Where a closure of [`join_context`] runs (rayon's `FnContext`).
#[derive(Debug, Clone, Copy)]
pub struct FnContext {
    migrated: bool,
}

impl FnContext {
    /// Whether the closure runs on another thread than the one that called
    /// `join_context`: the second closure when a thief took it, and both when the call
    /// came from outside the pool.
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

/// Like [`join`](crate::join), but each closure learns whether it migrated (rayon's
/// `join_context`).
///
/// ```
/// let (a, _) = heist::join_context(|cx| cx.migrated(), |_| ());
/// assert!(a, "called from outside the pool, `a` runs on a worker");
/// ```
pub fn join_context<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    fn on<A, B, RA, RB>(w: &Worker, a: A, b: B, outside: bool) -> (RA, RB)
    where
        A: FnOnce(FnContext) -> RA + Send,
        B: FnOnce(FnContext) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let me = w.index();
        w.join(
            move |_| a(FnContext { migrated: outside }),
            move |w| {
                b(FnContext {
                    migrated: outside || w.index() != me,
                })
            },
        )
    }
    let mut pair = Some((oper_a, oper_b));
    let here = worker::with_current(|w| {
        w.map(|w| {
            let (a, b) = pair.take().expect("unused");
            on(w, a, b, false)
        })
    });
    match here {
        Some(r) => r,
        None => {
            let (a, b) = pair.take().expect("unused");
            pool::global_or_panic().run(|w| on(w, a, b, true))
        }
    }
}

/// The number of workers in the current pool, or in the global pool off a worker (rayon's
/// `current_num_threads`).
///
/// # Panics
/// Off a worker, if the global pool cannot start.
pub fn current_num_threads() -> usize {
    pool::with_registry(|r| r.workers())
}

/// The index of the current worker in its pool, `None` off a worker (rayon's
/// `current_thread_index`).
pub fn current_thread_index() -> Option<usize> {
    worker::with_current(|w| w.map(Worker::index))
}

/// What [`yield_now`] did (rayon's `Yield`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Yield {
    /// A pending task was found and run.
    Executed,
    /// No pending task was found.
    Idle,
}

/// Runs one pending task of the current pool if there is one (rayon's `yield_now`):
/// `None` off a worker. The task may come from anywhere in the pool, as when the worker
/// looks for work: its own queue, work from outside, or a steal.
pub fn yield_now() -> Option<Yield> {
    worker::with_current(|w| w.map(|w| yielded(w.find_work())))
}

/// Runs one task of the calling worker's own queue if there is one (rayon's
/// `yield_local`): `None` off a worker. Unlike [`yield_now`], it steals nothing.
///
/// **Difference from rayon:** the queue here is the worker's spawned and broadcast tasks.
/// A `join`'s second closure, which rayon keeps in the same deque, is left where it is:
/// it runs when its `join` comes back to it, or in a thief's hands.
pub fn yield_local() -> Option<Yield> {
    worker::with_current(|w| {
        w.map(|w| {
            let Some(job) = w.registry().take_mail(w.index()) else {
                return yielded(crate::core::spawn::run_own(w));
            };
            // SAFETY: every posted `JobRef` is taken exactly once, and this one was just
            // taken.
            w.run_taken(|| unsafe { job.execute(w) });
            Yield::Executed
        })
    })
}

/// Whether the calling worker's own queue holds tasks not yet started (rayon's
/// `current_thread_has_pending_tasks`): `None` off a worker. These are `join` branches
/// nobody has taken yet and tasks it spawned; others may take them at any moment, so the
/// answer is a hint.
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    worker::with_current(|w| {
        w.map(|w| {
            let info = &w.registry().infos[w.index()];
            w.owner().private_len() > 0
                || info.deque.has_shared()
                || info.has_mail.load(std::sync::atomic::Ordering::Relaxed)
        })
    })
}

/// The most worker threads a pool may have (rayon's `max_num_threads`): team sizes are
/// kept in 16 bits. A builder asked for more fails with an error that says so.
pub fn max_num_threads() -> usize {
    crate::pool::MAX_WORKERS
}

/// What a yield that ran a task (`true`) or found none did.
fn yielded(ran: bool) -> Yield {
    match ran {
        true => Yield::Executed,
        false => Yield::Idle,
    }
}
