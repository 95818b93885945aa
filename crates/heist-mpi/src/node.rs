//! A rank's side of a round: the tasks it runs on its heist pool through
//! [`heist::Worker::reduce_tasks`], the context they push through, and the manager's
//! polls at task boundaries (thesis §3.6: polling, not a helper thread).
//!
//! A round runs a batch of tasks with the existing one-node reduction; every task passes
//! through [`task`], which polls the manager every so many tasks. When a remote thief
//! asks and the round has work to spare, the poll raises `drain`: from then on every task
//! that reaches a task boundary is set aside instead of run, the local reduction ends
//! quickly, and the rank loop answers the thief from what was set aside (oldest first)
//! and starts the next round with the rest. heist's reduction has no way for a caller
//! outside it to take queued tasks, so draining stands in for that hook (see the crate
//! docs).

use crate::manager::Manager;
use heist::ReduceCtx;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Instant;

/// What a round's reduction runs: the batch it starts from, or one task with its depth in
/// the rank's current tree of tasks (its age: shallow tasks are old and, in a tree
/// search, big).
pub(crate) enum Item<T> {
    Batch(Vec<(u32, T)>),
    One(u32, T),
}

/// Locks `m`, ignoring poisoning: the manager's state stays consistent across a panic,
/// since the user code that runs under its lock (serde of tasks) runs inside
/// `catch_unwind`.
pub(crate) fn lock<X>(m: &Mutex<X>) -> MutexGuard<'_, X> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One worker's counters, on a cache line of its own; only that worker writes them.
#[repr(align(128))]
pub(crate) struct Slot {
    made: AtomicU64,
    run: AtomicU64,
    /// Tasks until the next poll.
    countdown: AtomicU32,
    /// Tasks between polls, adapted so that polls come every `period` nanoseconds.
    interval: AtomicU32,
    /// When this worker last polled, in nanoseconds since `Shared::epoch`.
    last: AtomicU64,
    /// What its polls cost, nanoseconds (a moving average).
    cost: AtomicU64,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            made: AtomicU64::new(0),
            run: AtomicU64::new(0),
            countdown: AtomicU32::new(1),
            interval: AtomicU32::new(16),
            last: AtomicU64::new(0),
            cost: AtomicU64::new(0),
        }
    }

    /// Adds one to a counter only this worker writes: a load and a store, no RMW.
    #[inline(always)]
    fn bump(c: &AtomicU64, n: u64) {
        c.store(c.load(Relaxed) + n, Relaxed);
    }
}

/// What the workers of a rank share during a reduction.
pub(crate) struct Shared<T> {
    pub(crate) manager: Mutex<Manager>,
    /// Raised by a poll: set tasks aside instead of running them.
    pub(crate) drain: AtomicBool,
    pub(crate) drained: Mutex<Vec<(u32, T)>>,
    /// The shared bound (a maximum): raised locally and by other ranks' updates.
    pub(crate) bound: AtomicI64,
    slots: Box<[Slot]>,
    /// Tasks the current round started with.
    batch: AtomicU64,
    epoch: Instant,
    /// Nanoseconds between a worker's polls.
    period: u64,
    pub(crate) rank: i32,
}

impl<T> Shared<T> {
    pub(crate) fn new(manager: Manager, workers: usize, bound: i64, period_ns: u64) -> Self {
        let rank = manager.rank();
        Shared {
            manager: Mutex::new(manager),
            drain: AtomicBool::new(false),
            drained: Mutex::new(Vec::new()),
            bound: AtomicI64::new(bound),
            slots: (0..workers).map(|_| Slot::new()).collect(),
            batch: AtomicU64::new(0),
            epoch: Instant::now(),
            period: period_ns.max(1),
            rank,
        }
    }

    /// Readies the counters for a round of `n` tasks.
    pub(crate) fn begin_round(&self, n: usize) {
        for s in self.slots.iter() {
            s.made.store(0, Relaxed);
            s.run.store(0, Relaxed);
        }
        self.batch.store(n as u64, Relaxed);
        self.drain.store(false, Relaxed);
    }

    /// Tasks the round ran (after it ended).
    pub(crate) fn tasks_run(&self) -> u64 {
        self.slots.iter().map(|s| s.run.load(Relaxed)).sum()
    }

    /// Tasks queued in the round, roughly (counters of running workers are read racily):
    /// those it started with and those pushed, less those run.
    fn queued(&self) -> u64 {
        let (made, run) = self.slots.iter().fold((0, 0), |(m, r), s| {
            (m + s.made.load(Relaxed), r + s.run.load(Relaxed))
        });
        (self.batch.load(Relaxed) + made).saturating_sub(run)
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// The manager's poll at a task boundary of worker `slot`: take in messages, route
    /// the steal requests this round cannot serve, and raise `drain` for those it can.
    /// Skipped when another worker of the rank is polling.
    #[cold]
    #[inline(never)]
    fn poll(&self, slot: &Slot) {
        let now = self.now();
        let since = now.saturating_sub(slot.last.load(Relaxed));
        slot.last.store(now, Relaxed);
        // Polls come every `period`, or rarer where a probe is dear (TCP's polls the
        // sockets: ~5 µs here), so that polling stays under about 4 % of the time.
        let period = self.period.max(24 * slot.cost.load(Relaxed));
        let mut iv = slot.interval.load(Relaxed);
        if since < period / 2 {
            iv = (iv * 2).min(1 << 16);
        } else if since > period * 2 {
            iv = (iv / 2).max(1);
        }
        slot.interval.store(iv, Relaxed);
        slot.countdown.store(iv, Relaxed);
        self.manage();
        let cost = self.now().saturating_sub(now);
        let avg = slot.cost.load(Relaxed);
        slot.cost.store((avg * 7 + cost) / 8, Relaxed);
    }

    /// The poll's work, by whichever worker gets the manager's lock.
    fn manage(&self) {
        let mut m = match self.manager.try_lock() {
            Ok(m) => m,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        m.stats.polls += 1;
        m.receive_all(&self.bound);
        if !m.requests.is_empty() {
            if m.failed() || self.queued() < 2 {
                m.route_all();
            } else {
                self.drain.store(true, Relaxed);
            }
        }
        if m.failed() {
            self.drain.store(true, Relaxed);
        }
        m.maintain(self.bound.load(Relaxed));
    }
}

/// The functions of a reduction.
pub(crate) struct Fns<I, O, F> {
    pub(crate) identity: I,
    pub(crate) op: O,
    pub(crate) f: F,
}

/// The body of every task of a round.
#[inline(always)]
pub(crate) fn task<T, R, I, O, F>(
    sh: &Shared<T>,
    fns: &Fns<I, O, F>,
    ctx: &ReduceCtx<'_, Item<T>>,
    item: Item<T>,
) -> R
where
    I: Fn() -> R,
    F: Fn(&Ctx<'_, T>, T) -> R,
{
    let slot = &sh.slots[ctx.worker().index()];
    match item {
        Item::One(depth, t) => {
            let c = slot.countdown.load(Relaxed);
            if c <= 1 {
                sh.poll(slot);
            } else {
                slot.countdown.store(c - 1, Relaxed);
            }
            if sh.drain.load(Relaxed) {
                lock(&sh.drained).push((depth, t));
                return (fns.identity)();
            }
            Slot::bump(&slot.run, 1);
            let cx = Ctx {
                inner: ctx,
                sh,
                slot,
                depth,
            };
            (fns.f)(&cx, t)
        }
        Item::Batch(tasks) => {
            for (d, t) in tasks {
                ctx.push(Item::One(d, t));
            }
            (fns.identity)()
        }
    }
}

/// The context a distributed task runs in: push more tasks, read and raise the shared
/// bound, poll in long tasks. Tied to the worker running the task.
pub struct Ctx<'a, T> {
    inner: &'a ReduceCtx<'a, Item<T>>,
    sh: &'a Shared<T>,
    slot: &'a Slot,
    depth: u32,
}

impl<T> Ctx<'_, T> {
    /// Queues `task` on this rank; it runs later, here, on another worker of this rank's
    /// pool, or on another rank, and nothing waits for it.
    #[inline]
    pub fn push(&self, task: T) {
        Slot::bump(&self.slot.made, 1);
        self.inner.push(Item::One(self.depth + 1, task));
    }

    /// The best bound any rank has published and this rank has heard of (a maximum: it
    /// only grows).
    #[inline]
    pub fn bound(&self) -> i64 {
        self.sh.bound.load(Relaxed)
    }

    /// Raises the shared bound to `v` if `v` is higher; other ranks hear of it at this
    /// rank's next poll (non-blocking messages). Returns whether `v` raised it.
    pub fn raise_bound(&self, v: i64) -> bool {
        if v <= self.sh.bound.load(Relaxed) {
            return false;
        }
        self.sh.bound.fetch_max(v, Relaxed) < v
    }

    /// Hands queued tasks to idle workers of this rank and serves other ranks' requests
    /// now. Tasks are polled at their boundaries; a long task that pushes early and then
    /// computes for a while should call this now and then.
    pub fn poll(&self) {
        self.inner.poll();
        self.sh.poll(self.slot);
    }

    /// This rank's index in the communicator.
    pub fn rank(&self) -> i32 {
        self.sh.rank
    }

    /// The worker running this task, for forking or nesting inside it.
    pub fn worker(&self) -> &heist::Worker {
        self.inner.worker()
    }
}
