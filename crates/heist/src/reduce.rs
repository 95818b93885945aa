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
//! FIFO with epoch reclamation. Here the owner's queue is private (a `VecDeque` used
//! LIFO, no atomics), and work reaches thieves only when they ask: a thief raises the
//! victim's `hungry` flag and the owner moves the older half of its queue into a shared,
//! mutex-guarded part at its next push or pop (private-deque stealing, as in the relay
//! scheduler). The owner's fast path is then a plain push and pop plus two plain
//! counter stores, and no memory is reclaimed concurrently, so no epochs are needed.
//! LIFO order keeps the queue as short as the tree is deep, where Blaze's FIFO needs
//! continuation loops for locality and unbounded blocks for breadth.
//!
//! Idle workers of the pool find a running reduction through [`help`], called from the
//! worker's search for work, and stay in it until it ends.

use crate::pool::{lock, Pool};
use crate::sleep::{SPIN_ROUNDS, YIELD_ROUNDS};
use crate::sync::AtomicU64;
use crate::worker::Worker;
use std::any::Any;
use std::cell::{Cell, UnsafeCell};
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize};
use std::sync::Mutex;
use std::time::Duration;

/// The reductions that idle workers may join, newest last.
static BOARD: Mutex<Vec<Posted>> = Mutex::new(Vec::new());
/// `BOARD.len()`, read without the lock on every search for work.
static POSTED: AtomicUsize = AtomicUsize::new(0);

/// Attempt budgets per distance tier (same core, same socket, other socket), Blaze's
/// POWER9 values; budgets are scaled by `TIER_BUDGET[tier] / TIER_BUDGET[SAME_SOCKET]`.
const TIER_BUDGET: [u32; 3] = [6, 4, 2];
const SAME_SOCKET: usize = 1;
/// Victims whose load is sampled per steal round (Blaze's 4-sample probe).
const SAMPLES: usize = 4;

const RUNNING: u8 = 0;
const FINISHED: u8 = 1;
const STOPPED: u8 = 2;

const FREE: u8 = 0;
const IN: u8 = 1;
const LEFT: u8 = 2;

/// The distance tier between workers `a` and `b`: one socket here, so always
/// `SAME_SOCKET`; a multi-socket topology would return 0 or 2 where it applies.
fn tier(_a: usize, _b: usize) -> usize {
    SAME_SOCKET
}

/// Blaze's attempt budget on a victim with `load` queued tasks when the sampled victims
/// hold `avg` on average: none on an empty victim, one below a quarter of the average,
/// eight at or above it, four between.
fn budget(load: usize, avg: usize, tier: usize) -> u32 {
    let base = match load {
        0 => 0,
        l if l * 4 < avg => 1,
        l if l >= avg => 8,
        _ => 4,
    };
    (base * TIER_BUDGET[tier]).div_ceil(TIER_BUDGET[SAME_SOCKET])
}

/// Keeps what one side writes often off the cache lines the other side reads.
#[repr(align(128))]
struct Padded<X>(X);

/// The outcome of a steal round.
enum Steal {
    Taken,
    /// Loads were seen, but no task was had within the budgets.
    Failed,
    /// Every sampled victim looked empty.
    NoneSeen,
}

/// One worker's part of a reduction.
struct Lane<T> {
    /// Written by the owner on every task, read only by termination checks.
    counts: Padded<Counts>,
    /// Read by thieves as they choose and ask.
    offer: Padded<Offer>,
    shared: Padded<Mutex<Vec<T>>>,
    /// Owner only, while `offer.state` is `IN`; the newest task last.
    private: UnsafeCell<Vec<T>>,
}

struct Counts {
    /// Tasks pushed by this lane's worker.
    made: AtomicU64,
    /// Tasks run to completion by this lane's worker.
    done: AtomicU64,
}

impl Counts {
    fn new() -> Counts {
        Counts {
            made: AtomicU64::new(0),
            done: AtomicU64::new(0),
        }
    }

    /// Publishes a worker's counts: `made` first, so that a checker that sees a
    /// completion also sees the pushes of that task.
    fn publish(&self, made: u64, done: u64) {
        self.made.store(made, Release);
        self.done.store(done, Release);
    }
}

/// Blaze's termination test: all `done` counters, then all `made` counters. Every
/// completion read in the first scan has its task's push in the second (published with
/// it or before the task left its maker), so equal sums mean every published push is a
/// published completion. Then nothing runs: the pushes of a published completion are
/// published, so by induction from the root every task is among them.
fn ended<'a>(counts: impl Iterator<Item = &'a Counts> + Clone) -> bool {
    let done: u64 = counts.clone().map(|c| c.done.load(Acquire)).sum();
    let made: u64 = counts.map(|c| c.made.load(Acquire)).sum();
    done == made
}

struct Offer {
    /// `FREE`, `IN` while its worker takes part, `LEFT` after.
    state: AtomicU8,
    /// Raised by a thief: the owner should move work into `shared`.
    hungry: AtomicBool,
    /// Tasks in the private queue (published now and then).
    load: AtomicUsize,
    /// Tasks in `shared`.
    shared_len: AtomicUsize,
}

/// A worker's accumulator: written by it as it leaves, read by the caller after every
/// helper left.
#[repr(align(128))]
struct Acc<R>(UnsafeCell<Option<R>>);

impl<T> Lane<T> {
    fn new() -> Self {
        Lane {
            counts: Padded(Counts::new()),
            offer: Padded(Offer {
                state: AtomicU8::new(FREE),
                hungry: AtomicBool::new(false),
                load: AtomicUsize::new(0),
                shared_len: AtomicUsize::new(0),
            }),
            shared: Padded(Mutex::new(Vec::new())),
            private: UnsafeCell::new(Vec::new()),
        }
    }
}

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
        if self.owner.lane.offer.0.hungry.load(Relaxed) && self.owner.with(|q| !q.is_empty()) {
            self.owner.donate();
        }
    }

    /// The worker running this task, for forking or nesting inside it.
    pub fn worker(&self) -> &Worker {
        self.worker
    }
}

/// The owner's view of its lane while it takes part.
struct Owner<'a, T> {
    lane: &'a Lane<T>,
    made: Cell<u64>,
    done: Cell<u64>,
}

impl<T> Owner<'_, T> {
    /// Runs `f` on the private queue. `f` must not run user code that could reach this
    /// owner again (only task drops run inside, and they cannot reach it).
    #[inline(always)]
    fn with<X>(&self, f: impl FnOnce(&mut Vec<T>) -> X) -> X {
        // SAFETY: only the owner, on its own thread, touches `private` while its lane is
        // `IN` (`Owner` is neither `Send` nor `Sync`), and no caller re-enters `with`
        // inside `f`, so this is the only reference.
        f(unsafe { &mut *self.lane.private.get() })
    }

    /// Publishes the queue length when it reaches a power of two or zero: thieves see
    /// the load within a factor of two without a store on every push and pop.
    #[inline(always)]
    fn publish_load(&self, len: usize) {
        if len & len.wrapping_sub(1) == 0 {
            self.lane.offer.0.load.store(len, Relaxed);
        }
    }

    /// Publishes the counts. Called before tasks are handed to thieves and whenever the
    /// private queue runs dry, never per task: the termination test needs only that a
    /// task's pushes are published no later than its completion, and before any of them
    /// can reach a thief.
    fn publish(&self) {
        self.lane.counts.0.publish(self.made.get(), self.done.get());
    }

    #[inline]
    fn pop(&self) -> Option<T> {
        match self.with(|q| q.pop().map(|t| (t, q.len()))) {
            Some((t, len)) => {
                self.publish_load(len);
                if self.lane.offer.0.hungry.load(Relaxed) && len > 0 {
                    self.donate();
                }
                Some(t)
            }
            None => self.reclaim(),
        }
    }

    /// Moves the older half of the private queue into the shared part for thieves.
    #[cold]
    fn donate(&self) {
        self.publish();
        let mut shared = lock(&self.lane.shared.0);
        let left = self.with(|q| {
            shared.extend(q.drain(..q.len().div_ceil(2)));
            q.len()
        });
        self.lane.offer.0.shared_len.store(shared.len(), Release);
        self.lane.offer.0.hungry.store(false, Relaxed);
        self.lane.offer.0.load.store(left + shared.len(), Relaxed);
    }

    /// Takes back what no thief took from the shared part.
    #[cold]
    fn reclaim(&self) -> Option<T> {
        if self.lane.offer.0.shared_len.load(Acquire) == 0 {
            self.lane.offer.0.load.store(0, Relaxed);
            return None;
        }
        let mut shared = lock(&self.lane.shared.0);
        let (t, len) = self.with(|q| {
            q.extend(shared.drain(..));
            (q.pop(), q.len())
        });
        self.lane.offer.0.shared_len.store(0, Release);
        drop(shared);
        self.lane.offer.0.load.store(len, Relaxed);
        t
    }

    #[inline]
    fn push(&self, task: T) {
        let len = self.with(|q| {
            q.push(task);
            q.len()
        });
        self.made.set(self.made.get() + 1);
        self.publish_load(len);
        if self.lane.offer.0.hungry.load(Relaxed) && len >= 2 {
            self.donate();
        }
    }
}

/// One reduction: its lanes, its functions and how it ended.
struct Reduction<T, R, I, O, F> {
    lanes: Box<[Lane<T>]>,
    accs: Box<[Acc<R>]>,
    phase: AtomicU8,
    /// Workers other than the caller inside `participate`.
    helpers: AtomicUsize,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    identity: I,
    op: O,
    f: F,
}

// SAFETY: a lane's `private` and `acc` are touched only by the one worker whose lane it
// is while its state is `IN` (claimed by a CAS), and `acc` by the caller after every
// helper left; tasks and results move between threads, hence `T: Send, R: Send`, and the
// functions are shared, hence `Sync`.
unsafe impl<T: Send, R: Send, I: Sync, O: Sync, F: Sync> Sync for Reduction<T, R, I, O, F> {}

/// A reduction as idle workers see it.
trait Participate {
    /// Claims worker `me`'s lane if it never took part; counts it as a helper.
    fn enter(&self, me: usize) -> bool;
    /// Takes part until the reduction ends, then leaves (the last access).
    fn help(&self, w: &Worker);
}

impl<T, R, I, O, F> Reduction<T, R, I, O, F>
where
    T: Send,
    R: Send,
    I: Fn() -> R + Sync,
    O: Fn(R, R) -> R + Sync,
    F: Fn(&ReduceCtx<'_, T>, T) -> R + Sync,
{
    /// Works on the reduction on worker `w` until it finished or stopped; stores the
    /// accumulator, or the first panic.
    fn participate(&self, w: &Worker) {
        let lane = &self.lanes[w.index()];
        let owner = Owner {
            lane,
            made: Cell::new(lane.counts.0.made.load(Relaxed)),
            done: Cell::new(lane.counts.0.done.load(Relaxed)),
        };
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
        owner.with(drain);
    }

    fn work(&self, w: &Worker, owner: &Owner<'_, T>, acc: &mut Option<R>) {
        let ctx = ReduceCtx { worker: w, owner };
        let mut idle = 0u32;
        loop {
            if let Some(mut t) = owner.pop() {
                // `identity` once per worker: at its first task.
                let mut a = acc.take().unwrap_or_else(&self.identity);
                loop {
                    let r = (self.f)(&ctx, t);
                    a = (self.op)(a, r);
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
            let seen = match self.steal(w, owner) {
                Steal::Taken => {
                    idle = 0;
                    continue;
                }
                Steal::Failed => true,
                Steal::NoneSeen => false,
            };
            // Work in sight keeps the counters of busy workers unread.
            if !seen && self.ended() {
                self.phase
                    .compare_exchange(RUNNING, FINISHED, AcqRel, Relaxed)
                    .ok();
                return;
            }
            w.poll();
            // A team that needs this worker must not wait for the reduction to end.
            crate::team::serve(w);
            idle += 1;
            back_off(idle);
        }
    }

    fn ended(&self) -> bool {
        ended(self.lanes.iter().map(|l| &l.counts.0))
    }

    /// One steal round: sampled victims, richest first, each tried up to its budget.
    fn steal(&self, w: &Worker, owner: &Owner<'_, T>) -> Steal {
        let n = self.lanes.len();
        let me = w.index();
        if n == 1 {
            return Steal::NoneSeen;
        }
        let mut picks = [(0usize, 0usize); SAMPLES];
        let k = (n - 1).min(SAMPLES);
        let start = w.next_random() as usize;
        for (i, p) in picks.iter_mut().take(k).enumerate() {
            // All others when there are few; else `SAMPLES` consecutive from a random start.
            let mut v = (start + i) % (n - 1);
            if k == n - 1 {
                v = i;
            }
            if v >= me {
                v += 1;
            }
            let l = &self.lanes[v];
            *p = (
                l.offer.0.load.load(Relaxed) + l.offer.0.shared_len.load(Relaxed),
                v,
            );
        }
        let picks = &mut picks[..k];
        picks.sort_unstable_by_key(|p| std::cmp::Reverse(p.0));
        let total = picks.iter().map(|p| p.0).sum::<usize>();
        if total == 0 {
            return Steal::NoneSeen;
        }
        let avg = total / k;
        for &(load, v) in picks.iter() {
            let victim = &self.lanes[v];
            for attempt in 0..budget(load, avg, tier(me, v)) {
                if self.take_from(victim, owner) {
                    return Steal::Taken;
                }
                let hungry = &victim.offer.0.hungry;
                if !hungry.load(Relaxed) {
                    hungry.store(true, Relaxed);
                }
                for _ in 0..(16u32 << attempt.min(6)) {
                    std::hint::spin_loop();
                }
            }
        }
        Steal::Failed
    }

    /// Takes half of `victim`'s shared part (at least one task) into this worker's queue.
    fn take_from(&self, victim: &Lane<T>, owner: &Owner<'_, T>) -> bool {
        if victim.offer.0.shared_len.load(Acquire) == 0 {
            return false;
        }
        let Ok(mut shared) = victim.shared.0.try_lock() else {
            return false;
        };
        let k = shared.len().div_ceil(2);
        let len = owner.with(|q| {
            q.extend(shared.drain(..k));
            q.len()
        });
        victim.offer.0.shared_len.store(shared.len(), Release);
        drop(shared);
        owner.lane.offer.0.load.store(len, Relaxed);
        k > 0
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
}

impl<T, R, I, O, F> Participate for Reduction<T, R, I, O, F>
where
    T: Send,
    R: Send,
    I: Fn() -> R + Sync,
    O: Fn(R, R) -> R + Sync,
    F: Fn(&ReduceCtx<'_, T>, T) -> R + Sync,
{
    fn enter(&self, me: usize) -> bool {
        if self.phase.load(Relaxed) != RUNNING {
            return false;
        }
        let lane = &self.lanes[me];
        if lane
            .offer
            .0
            .state
            .compare_exchange(FREE, IN, Acquire, Relaxed)
            .is_err()
        {
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

/// A posted reduction: its pool and its erased address.
struct Posted {
    registry: usize,
    red: *const (dyn Participate + 'static),
}

// SAFETY: the pointer is followed only under `BOARD`'s lock (to enter) and then by a
// helper counted in `helpers`; the reduction is `Sync`, and its caller removes it from
// the board and waits for its helpers before its frame ends.
unsafe impl Send for Posted {}

/// Joins a reduction of `w`'s pool that it never took part in, if there is one, and
/// works on it until it ends. Called when `w` looks for work; true if it joined.
pub(crate) fn help(w: &Worker) -> bool {
    if POSTED.load(Relaxed) == 0 {
        return false;
    }
    let me = std::sync::Arc::as_ptr(w.registry()) as usize;
    let board = lock(&BOARD);
    let Some(red) = board.iter().rev().find_map(|p| {
        // SAFETY: a posted reduction is alive while it is on the board.
        (p.registry == me && unsafe { (*p.red).enter(w.index()) }).then_some(p.red)
    }) else {
        return false;
    };
    drop(board);
    // SAFETY: `enter` counted this worker as a helper, and the caller waits for its
    // helpers after taking the reduction off the board.
    w.run_taken(|| unsafe { (*red).help(w) });
    true
}

/// Takes a reduction off the board and waits for its helpers, also when unwinding.
struct Unpost<'a> {
    red: *const (dyn Participate + 'static),
    helpers: &'a AtomicUsize,
    w: &'a Worker,
}

impl Drop for Unpost<'_> {
    fn drop(&mut self) {
        {
            let mut board = lock(&BOARD);
            if let Some(i) = board
                .iter()
                .position(|p| std::ptr::addr_eq(p.red, self.red))
            {
                board.remove(i);
            }
            POSTED.store(board.len(), Relaxed);
        }
        let mut idle = 0;
        while self.helpers.load(Acquire) != 0 {
            // A helper may be registered with a team that needs this worker: serve it,
            // or the helper never comes back.
            self.w.poll();
            if crate::team::serve(self.w) {
                idle = 0;
                continue;
            }
            idle += 1;
            back_off(idle);
        }
    }
}

#[cfg(all(test, loom))]
#[path = "reduce_loom.rs"]
mod loom_tests;

/// Spins, then yields, then naps: a worker inside a reduction waits for work or the end.
fn back_off(idle: u32) {
    if idle < SPIN_ROUNDS {
        for _ in 0..(1u32 << (idle / 16).min(6)) {
            std::hint::spin_loop();
        }
    } else if idle < SPIN_ROUNDS + YIELD_ROUNDS {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(50));
    }
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
        let n = self.workers();
        let red = Reduction {
            lanes: (0..n).map(|_| Lane::new()).collect(),
            accs: (0..n).map(|_| Acc(UnsafeCell::new(None))).collect(),
            phase: AtomicU8::new(RUNNING),
            helpers: AtomicUsize::new(0),
            panic: Mutex::new(None),
            identity,
            op,
            f,
        };
        let lane = &red.lanes[self.index()];
        lane.offer.0.state.store(IN, Relaxed);
        // SAFETY: the lane is this worker's, and no helper can enter it (`IN`).
        unsafe { (*lane.private.get()).push(root) };
        lane.counts.0.made.store(1, Relaxed);
        lane.offer.0.load.store(1, Relaxed);
        if n > 1 {
            let erased: *const (dyn Participate + '_) = &red;
            // SAFETY: only the lifetime is erased; `Unpost` keeps the reduction off the
            // board and free of helpers before this frame ends, also when unwinding.
            let erased: *const (dyn Participate + 'static) = unsafe { mem::transmute(erased) };
            let _unpost = Unpost {
                red: erased,
                helpers: &red.helpers,
                w: self,
            };
            {
                let mut board = lock(&BOARD);
                board.push(Posted {
                    registry: std::sync::Arc::as_ptr(self.registry()) as usize,
                    red: erased,
                });
                POSTED.store(board.len(), Relaxed);
            }
            self.registry().sleep.wake_all();
            red.participate(self);
        } else {
            red.participate(self);
        }
        // Every helper has left: the lanes are the caller's alone.
        for l in red.lanes.iter() {
            drain(&mut lock(&l.shared.0));
        }
        if let Some(p) = lock(&red.panic).take() {
            panic::resume_unwind(p);
        }
        let mut total: Option<R> = None;
        for a in red.accs.into_vec() {
            if let Some(a) = a.0.into_inner() {
                total = Some(match total {
                    Some(t) => (red.op)(t, a),
                    None => a,
                });
            }
        }
        total.unwrap_or_else(|| (red.identity)())
    }
}

impl Pool {
    /// [`Worker::reduce_tasks`] on this pool, from any thread.
    ///
    /// ```
    /// let pool = heist::Pool::builder().workers(3).build().unwrap();
    /// let v: Vec<u64> = (1..=1000).collect();
    /// let sum = pool.reduce_tasks(&v[..], || 0u64, |a, b| a + b, |ctx, s| {
    ///     if s.len() > 64 {
    ///         let (l, r) = s.split_at(s.len() / 2);
    ///         ctx.push(l);
    ///         ctx.push(r);
    ///         0
    ///     } else {
    ///         s.iter().sum()
    ///     }
    /// });
    /// assert_eq!(sum, 500_500);
    /// ```
    pub fn reduce_tasks<T, R, I, O, F>(&self, root: T, identity: I, op: O, f: F) -> R
    where
        T: Send,
        R: Send,
        I: Fn() -> R + Sync,
        O: Fn(R, R) -> R + Sync,
        F: Fn(&ReduceCtx<'_, T>, T) -> R + Sync,
    {
        let (identity, op, f) = (&identity, &op, &f);
        self.run(move |w| w.reduce_tasks(root, identity, op, f))
    }
}
