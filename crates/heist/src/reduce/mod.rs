//! Reductions over tasks, after "Blaze-Tasks: A Framework for Computing Parallel
//! Reductions over Tasks" (Pirkelbauer, Wilson, Peterson, Dechev; §2 interface, §4
//! implementation).
//!
//! A task never waits for the tasks it pushes: each returns a partial result that its
//! worker folds into a private accumulator, and the accumulators are combined once the
//! whole tree of tasks has run. Nothing is synchronised per task: every worker has a
//! private queue and a counter pair `made`/`done` that only it writes, the end is found
//! by comparing the sums of all `done` counters and then all `made` counters (§4.4), and
//! thieves pick victims by their published load, richest first, with an attempt budget
//! that grows with the victim's load (§4.3).
//!
//! Kept from Blaze: per-worker accumulators, owner-only producers, per-worker made/done
//! counts as the termination test, load-aware victim choice with a per-victim attempt
//! budget and distance tiers (a no-op on one socket). Dropped: the relaxed-atomic block
//! FIFO with epoch reclamation. Here the owner's queue is private (a `Vec` used LIFO, no
//! atomics), and work reaches thieves only when they ask ([`lane`]). The owner's fast
//! path is then a plain push and pop plus two plain counter updates, and no memory is
//! reclaimed concurrently, so no epochs are needed. LIFO order keeps the queue as short
//! as the tree is deep, where Blaze's FIFO needs continuation loops for locality and
//! unbounded blocks for breadth.
//!
//! Roles: [`lane`] holds a worker's queue and counters, [`steal`] the victim choice,
//! [`board`] the pool's list of running reductions that idle workers join (through
//! [`help`], called from the worker's search for work); this file runs a reduction.

mod board;
mod lane;
#[cfg(all(test, loom))]
mod loom_lane;
mod steal;

pub(crate) use board::Board;

use crate::core::sleep::YIELD_ROUNDS;
use crate::core::sync::lock;
use crate::core::worker::Worker;
use board::{Posted, Unpost};
use lane::{Lane, Owner, FREE, IN, LEFT};
use std::any::Any;
use std::cell::UnsafeCell;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicU8, AtomicUsize};
use std::sync::Mutex;
use std::time::Duration;

const RUNNING: u8 = 0;
const FINISHED: u8 = 1;
const STOPPED: u8 = 2;

/// The context a reduction task runs in: push more tasks with [`ReduceCtx::push`].
///
/// It is tied to the worker running the task (neither `Send` nor `Sync`).
pub struct ReduceCtx<'a, T> {
    worker: &'a Worker,
    owner: &'a Owner<'a, T>,
}

impl<T> ReduceCtx<'_, T> {
    /// Queues `task` on this worker; it runs later, here or on a thief, and nothing
    /// waits for it.
    #[inline]
    pub fn push(&self, task: T) {
        self.owner.push(task);
    }

    /// Hands queued tasks to waiting thieves now. Queued tasks reach thieves only when
    /// their owner pushes, pops or polls, so a long task that pushes early and then
    /// computes for a while should call this now and then.
    pub fn poll(&self) {
        self.owner.poll();
    }

    /// The worker running this task, for forking or nesting inside it.
    pub fn worker(&self) -> &Worker {
        self.worker
    }
}

/// The three functions of a reduction under one bound.
trait Fns<T, R>: Sync {
    fn identity(&self) -> R;
    fn op(&self, a: R, b: R) -> R;
    fn task(&self, ctx: &ReduceCtx<'_, T>, t: T) -> R;
}

/// `identity`, `op` and the task body as the user gave them.
struct Body<I, O, F> {
    identity: I,
    op: O,
    f: F,
}

impl<T, R, I, O, F> Fns<T, R> for Body<I, O, F>
where
    I: Fn() -> R + Sync,
    O: Fn(R, R) -> R + Sync,
    F: Fn(&ReduceCtx<'_, T>, T) -> R + Sync,
{
    fn identity(&self) -> R {
        (self.identity)()
    }

    #[inline(always)]
    fn op(&self, a: R, b: R) -> R {
        (self.op)(a, b)
    }

    #[inline(always)]
    fn task(&self, ctx: &ReduceCtx<'_, T>, t: T) -> R {
        (self.f)(ctx, t)
    }
}

/// A worker's accumulator: written by it as it leaves, read by the caller after every
/// helper left.
#[repr(align(128))]
struct Acc<R>(UnsafeCell<Option<R>>);

/// One reduction: its lanes, its functions and how it ended.
struct Reduction<T, R, B> {
    lanes: Box<[Lane<T>]>,
    accs: Box<[Acc<R>]>,
    phase: AtomicU8,
    /// Workers other than the caller inside `participate`.
    helpers: AtomicUsize,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    fns: B,
}

// SAFETY: a lane's private queue and `acc` are touched only by the one worker whose lane
// it is while its state is `IN` (claimed by a CAS), and `acc` by the caller after every
// helper left; tasks and results move between threads, hence `T: Send, R: Send`, and the
// functions are shared, hence `Sync`.
unsafe impl<T: Send, R: Send, B: Sync> Sync for Reduction<T, R, B> {}

/// A reduction as idle workers see it.
trait Participate {
    /// Whether worker `me` could join: the reduction runs and `me` never took part.
    fn may_enter(&self, me: usize) -> bool;
    /// Claims worker `me`'s lane if it never took part; counts it as a helper.
    fn enter(&self, me: usize) -> bool;
    /// Takes part until the reduction ends, then leaves (the last access).
    fn help(&self, w: &Worker);
}

impl<T: Send, R: Send, B: Fns<T, R>> Reduction<T, R, B> {
    fn new(workers: usize, fns: B) -> Self {
        Reduction {
            lanes: (0..workers).map(|_| Lane::new()).collect(),
            accs: (0..workers).map(|_| Acc(UnsafeCell::new(None))).collect(),
            phase: AtomicU8::new(RUNNING),
            helpers: AtomicUsize::new(0),
            panic: Mutex::new(None),
            fns,
        }
    }

    /// Works on the reduction on worker `w` until it finished or stopped; stores the
    /// accumulator, or the first panic.
    fn participate(&self, w: &Worker) {
        let owner = Owner::new(&self.lanes[w.index()]);
        let mut acc = None;
        match panic::catch_unwind(AssertUnwindSafe(|| self.work(w, &owner, &mut acc))) {
            // SAFETY: this worker owns its lane's `acc` until it leaves.
            Ok(()) => unsafe { *self.accs[w.index()].0.get() = acc },
            Err(p) => {
                drop_quietly(acc);
                self.fail(p);
            }
        }
        // Left behind only when the reduction stopped.
        owner.drain();
    }

    fn work(&self, w: &Worker, owner: &Owner<'_, T>, acc: &mut Option<R>) {
        let ctx = ReduceCtx { worker: w, owner };
        let mut idle = 0u32;
        loop {
            if let Some(mut t) = owner.pop() {
                // `identity` once per worker: at its first task.
                let mut a = acc.take().unwrap_or_else(|| self.fns.identity());
                loop {
                    let r = self.fns.task(&ctx, t);
                    a = self.fns.op(a, r);
                    owner.done.set(owner.done.get() + 1);
                    if self.phase.load(Relaxed) != RUNNING {
                        *acc = Some(a);
                        return;
                    }
                    match owner.pop() {
                        Some(next) => t = next,
                        None => break,
                    }
                }
                *acc = Some(a);
                idle = 0;
            }
            owner.publish();
            if self.phase.load(Acquire) != RUNNING {
                return;
            }
            let seen = match steal::steal(&self.lanes, w.index(), w.next_random(), owner) {
                steal::Steal::Taken => {
                    idle = 0;
                    continue;
                }
                steal::Steal::Failed => true,
                steal::Steal::NoneSeen => false,
            };
            // Work in sight keeps the counters of busy workers unread.
            if !seen && self.ended() {
                self.phase
                    .compare_exchange(RUNNING, FINISHED, AcqRel, Relaxed)
                    .ok();
                return;
            }
            // A broadcast (posted to this worker alone) or a team that needs this worker
            // must not wait for the reduction to end: a task of the reduction may be
            // what waits for it.
            if w.run_mail() {
                idle = 0;
                continue;
            }
            w.poll();
            // A team that needs this worker must not wait for the reduction to end.
            crate::core::source::serve(w);
            idle += 1;
            back_off(idle);
        }
    }

    fn ended(&self) -> bool {
        lane::ended(self.lanes.iter().map(|l| &l.counts.0))
    }

    /// Keeps the first panic and stops the reduction.
    fn fail(&self, p: Box<dyn Any + Send>) {
        let mut slot = lock(&self.panic);
        if slot.is_none() {
            *slot = Some(p);
        } else {
            drop(slot);
            drop_quietly(p);
        }
        self.phase.store(STOPPED, Release);
    }

    /// Runs the reduction from its caller `w`, with every idle worker of the pool
    /// invited, and combines the accumulators.
    fn run(mut self, w: &Worker, root: T) -> R {
        self.lanes[w.index()].start(root);
        if self.lanes.len() > 1 {
            let erased: *const (dyn Participate + '_) = &self;
            // SAFETY: only the lifetime is erased; `Unpost` takes the reduction off the
            // board and waits for its helpers before this frame ends, also when unwinding.
            let erased: *const (dyn Participate + 'static) = unsafe { mem::transmute(erased) };
            let _unpost = Unpost {
                red: Posted(erased),
                helpers: &self.helpers,
                w,
            };
            w.registry().source::<Board>().post(Posted(erased));
            w.registry().sleep.wake_all();
            self.participate(w);
        } else {
            self.participate(w);
        }
        // Every helper has left: the lanes are the caller's alone.
        for l in self.lanes.iter() {
            drain(&mut lock(&l.shared.0));
        }
        if let Some(p) = lock(&self.panic).take() {
            panic::resume_unwind(p);
        }
        let mut total: Option<R> = None;
        for a in mem::take(&mut self.accs).into_vec() {
            if let Some(a) = a.0.into_inner() {
                total = Some(match total {
                    Some(t) => self.fns.op(t, a),
                    None => a,
                });
            }
        }
        total.unwrap_or_else(|| self.fns.identity())
    }
}

impl<T: Send, R: Send, B: Fns<T, R>> Participate for Reduction<T, R, B> {
    fn may_enter(&self, me: usize) -> bool {
        self.phase.load(Relaxed) == RUNNING && self.lanes[me].offer.0.state.load(Relaxed) == FREE
    }

    fn enter(&self, me: usize) -> bool {
        if self.phase.load(Relaxed) != RUNNING {
            return false;
        }
        let state = &self.lanes[me].offer.0.state;
        if state.compare_exchange(FREE, IN, Acquire, Relaxed).is_err() {
            return false;
        }
        self.helpers.fetch_add(1, Relaxed);
        true
    }

    fn help(&self, w: &Worker) {
        self.participate(w);
        self.lanes[w.index()].offer.0.state.store(LEFT, Relaxed);
        // Release: the caller reads this lane's `acc` after seeing no helpers left.
        self.helpers.fetch_sub(1, Release);
    }
}

/// Spins, then yields, then naps: a worker inside a reduction waits for work or the end.
fn back_off(idle: u32) {
    crate::core::sleep::wait_round(idle, YIELD_ROUNDS, Duration::from_micros(50));
}

/// Drops `v`; a panic in its drop is swallowed (and that panic's payload leaked if
/// dropping it panics too), so a failing drop cannot abort the reduction's clean-up.
pub(crate) fn drop_quietly<V>(v: V) {
    if let Err(p) = panic::catch_unwind(AssertUnwindSafe(move || drop(v))) {
        if let Err(q) = panic::catch_unwind(AssertUnwindSafe(move || drop(p))) {
            mem::forget(q);
        }
    }
}

/// Drops every task in `q`, each once, also when some drops panic.
fn drain<T>(q: &mut Vec<T>) {
    while let Some(t) = q.pop() {
        drop_quietly(t);
    }
}

impl Worker {
    /// Runs a reduction over a tree of tasks: `f(ctx, task)` solves one task, may push
    /// any number of new tasks with `ctx.push`, never waits for them, and returns a
    /// partial result. Each worker folds its results with `op` into an accumulator that
    /// starts from `identity()`; the accumulators are combined with `op` at the end.
    ///
    /// `op` must be associative and commutative: the order in which results are folded
    /// is unspecified (as with TBB's `combinable` or OpenMP's task reductions).
    /// `identity` runs at most once per worker per reduction. Tasks may borrow from the
    /// caller's stack. Every idle worker of the pool joins in.
    ///
    /// A panic in `f`, `identity` or `op` stops the reduction; the tasks still queued are
    /// dropped (each once), and the first panic is re-raised here.
    ///
    /// ```
    /// let pool = heist::Pool::builder().workers(2).build().unwrap();
    /// // Count the nodes of a complete binary tree of depth 10.
    /// let nodes = pool.run(|w| {
    ///     w.reduce_tasks(10u32, || 0u64, |a, b| a + b, |ctx, d| {
    ///         if d > 0 {
    ///             ctx.push(d - 1);
    ///             ctx.push(d - 1);
    ///         }
    ///         1
    ///     })
    /// });
    /// assert_eq!(nodes, (1 << 11) - 1);
    /// ```
    pub fn reduce_tasks<T, R, I, O, F>(&self, root: T, identity: I, op: O, f: F) -> R
    where
        T: Send,
        R: Send,
        I: Fn() -> R + Sync,
        O: Fn(R, R) -> R + Sync,
        F: Fn(&ReduceCtx<'_, T>, T) -> R + Sync,
    {
        Reduction::new(self.workers(), Body { identity, op, f }).run(self, root)
    }
}
