//! The relay scheduler (Prell, "Embracing Explicit Communication in Work-Stealing
//! Runtime Systems", ch. 3 and §5.1): work stealing over channels. Deques
//! are private; an idle worker sends one steal request at a time, and a victim with
//! nothing to give forwards it to another random victim (never back to the thief) until
//! n−1 have failed, when it returns to its thief. A victim answers with one task or, in
//! steal-half mode, half of its private tasks in a single message; each worker switches
//! between the two modes every N = 25 steals by the tasks-per-steal ratio. Requests are
//! handled whenever the owner pushes or pops with a request waiting, in every wait loop,
//! and at `heist::poll()`.
//!
//! Termination (thesis §4.1–4.2) is detected by a manager, worker 0, from the requests
//! themselves; see `termination.rs`. Heap jobs (scope spawns, detached tasks) are handed
//! out through requests as well, and only the manager takes jobs submitted from outside,
//! so that every way a worker can get work is visible to the protocol.
//!
//! Tasks stay in the victim's deque (direct task storage): a message carries the first
//! slot and a count, the thief runs them in place and marks each one done, and the
//! victim that later pops one waits for it like Lace's owner does for a stolen task.

pub(crate) mod channel;
#[cfg(all(test, loom))]
mod loom_channel;
#[cfg(all(test, loom))]
mod loom_flag;
#[cfg(all(test, loom))]
mod loom_termination;
mod peer;
mod request;
pub(crate) mod split;
mod termination;

pub(crate) use termination::{at_root, barrier, barrier_pending, Barriers, Termination, MANAGER};

use crate::lace::deque::{Deque, Home, Owner, Pop};
use crate::stats::stat;
use crate::sync::fence;
use crate::task::{JobRef, Slot};
use crate::worker::Worker;
use std::cell::Cell;
use std::sync::atomic::{Ordering::Relaxed, Ordering::SeqCst};
use std::time::{Duration, Instant};

/// Steals per adaptive-stealing interval (thesis §5.1.3).
const ADAPT_INTERVAL: u32 = 25;

/// First and largest pause before a worker whose request came back unanswered sends a
/// new one (thesis §4.2: 100 µs, doubling while stealing keeps failing). Meanwhile it
/// still forwards other workers' requests.
const BACKOFF_MIN: Duration = Duration::from_micros(100);
const BACKOFF_MAX: Duration = Duration::from_micros(3200);

/// What a request says about its thief (thesis §4.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// The thief may still be working (a request can be sent early).
    Working,
    /// The thief had nothing when its request came back; on its way to the manager.
    Idle,
    /// The manager has counted the thief idle.
    Registered,
}

/// A steal request. It names its thief for its whole life, however often forwarded.
/// With `update` set it is a message to the manager that its thief got work.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    thief: u32,
    failed: u32,
    half: bool,
    status: Status,
    update: bool,
}

/// Tasks handed to a thief: `count` consecutive slots of worker `from`'s deque, or, if
/// `jobs` is not null, `count` heap jobs from its job list in one boxed vector.
#[derive(Clone, Copy)]
pub(crate) struct Batch {
    first: *const Slot,
    count: u32,
    from: u32,
    jobs: *mut Vec<JobRef>,
}

// SAFETY: a batch transfers the right to run its slots to the receiving thief; the slots
// live in the victim's deque, which the registry keeps alive for every worker.
unsafe impl Send for Batch {}

/// A worker's channels: steal requests in (MPSC), stolen tasks in (SPSC). `B` is what a
/// task message carries (the loom models send abstract tasks).
pub(crate) struct Channels<B = Batch> {
    requests: channel::Mpsc<Request>,
    tasks: channel::Spsc<B>,
}

impl<B: Copy> Channels<B> {
    /// Channels for a pool of `n` workers: n−1 foreign requests, the worker's own
    /// returned one, and as many again of slack for the manager's updates.
    pub(crate) fn new(n: usize) -> Channels<B> {
        Channels {
            requests: channel::Mpsc::new(2 * n),
            tasks: channel::Spsc::new(2),
        }
    }

    /// Queues a steal request (or update).
    fn post_request(&self, req: Request) {
        let sent = self.requests.send(req);
        assert!(
            sent,
            "relay: request channels hold every request that can exist"
        );
    }

    /// Queues tasks for the thief that owns this channel.
    fn post_tasks(&self, tasks: B) {
        let sent = self.tasks.send(tasks);
        assert!(
            sent,
            "relay: a thief has at most one request out, so its task channel has room"
        );
    }

    /// Whether no stolen tasks wait to be received.
    pub(crate) fn no_tasks(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Whether a message waits (a sleeper's last look).
    pub(crate) fn pending(&self) -> bool {
        !self.requests.is_empty() || !self.tasks.is_empty()
    }
}

/// A worker's own relay state.
pub(crate) struct Local {
    outstanding: Cell<bool>,
    /// The status our request had when it was last home (it keeps it across rounds).
    status: Cell<Status>,
    /// The manager's idle set (worker 0 only).
    pub(crate) term: Termination,
    /// The request in flight carries a status that a barrier exit has overruled.
    revoked: Cell<bool>,
    /// How many running tasks still count as idle (those waiting in a barrier).
    pub(crate) idle_running: Cell<u32>,
    last_victim: Cell<Option<u32>>,
    half: Cell<bool>,
    steals: Cell<u32>,
    /// Tasks run from steals in this interval, plus 2 for each that spawned work (see
    /// `run_batch`): the M of the thesis's M/N ratio.
    executed: Cell<u32>,
    spawned: Cell<bool>,
    /// When the last request came back unanswered, and how long to wait after that.
    returned_at: Cell<Option<Instant>>,
    backoff: Cell<Duration>,
    /// The pool's `news` when the back-off began: news ends the back-off.
    backoff_epoch: Cell<u64>,
    /// When our request last went out.
    sent_at: Cell<Option<Instant>>,
}

impl Local {
    /// After a barrier: whatever our request in flight says, we are working.
    fn resume_working(&self) {
        self.status.set(Status::Working);
        self.revoked.set(self.outstanding.get());
    }

    /// Whether our steal request is out.
    fn outstanding(&self) -> bool {
        self.outstanding.get()
    }

    /// Tasks from worker `from` answered our request: we are working, and start afresh.
    fn answered(&self, from: u32) {
        self.outstanding.set(false);
        self.status.set(Status::Working);
        self.revoked.set(false);
        self.returned_at.set(None);
        self.backoff.set(Duration::ZERO);
        self.last_victim.set(Some(from));
    }

    /// Our request came home registered: pause before the next, longer each time while
    /// there is no news (`epoch`: the pool's `news` now).
    fn back_off(&self, epoch: u64) {
        if self.backoff_epoch.replace(epoch) != epoch {
            self.backoff.set(Duration::ZERO);
        }
        self.returned_at.set(Some(Instant::now()));
        self.backoff
            .set((self.backoff.get() * 2).clamp(BACKOFF_MIN, BACKOFF_MAX));
    }
}

impl Default for Local {
    fn default() -> Local {
        Local {
            outstanding: Cell::new(false),
            status: Cell::new(Status::Working),
            term: Termination::default(),
            revoked: Cell::new(false),
            idle_running: Cell::new(0),
            last_victim: Cell::new(None),
            half: Cell::new(false),
            steals: Cell::new(0),
            executed: Cell::new(0),
            spawned: Cell::new(false),
            returned_at: Cell::new(None),
            backoff: Cell::new(Duration::ZERO),
            backoff_epoch: Cell::new(0),
            sent_at: Cell::new(None),
        }
    }
}

/// Handles every waiting steal request. Called when the owner's flag is up, in wait
/// loops, and by `heist::poll`.
pub(crate) fn poll(w: &Worker) {
    w.relay.spawned.set(true);
    lower_flag(w.owner());
    let r = w.registry();
    if w.index() as u32 == MANAGER {
        while let Some(job) = r.take_injected(false) {
            termination::unregister(w, MANAGER);
            r.push_job(w.index(), job);
        }
    }
    request::handle_waiting(w);
}

/// Whether `w` takes jobs submitted from outside: the manager does; so does a worker whose
/// task waits for another pool's `run`, which the manager counts busy all along.
pub(crate) fn takes_injected(w: &Worker) -> bool {
    w.index() as u32 == MANAGER || (w.running() > 0 && w.may_take_roots())
}

/// A job submitted from outside, if `w` takes them; the manager is busy from then on.
pub(crate) fn take_injected(w: &Worker) -> Option<JobRef> {
    if !takes_injected(w) {
        return None;
    }
    let r = w.registry();
    let job = r.take_injected(w.may_take_roots())?;
    if w.index() as u32 == MANAGER {
        termination::unregister(w, MANAGER);
    }
    // Someone must start asking for the work this job will create.
    r.sleep.wake_one();
    Some(job)
}

/// Pop's slow path: poll, then pop unless the top task was handed out.
pub(crate) fn pop_slow(w: &Worker) -> Pop {
    poll(w);
    w.owner().relay_pop()
}

/// Hands the `k` oldest private tasks to `thief` in one message, and wakes it.
fn give(w: &Worker, thief: u32, k: u32) {
    stat!(w.counters(), steal_half, k > 1);
    stat!(w.counters(), steal_one, k == 1);
    let first = w.owner().hand_out(k);
    for i in 0..k as usize {
        // SAFETY: the `k` slots from `first` were just handed out and are live.
        let slot = unsafe { &*first.add(i) };
        slot.thief.store(thief as usize + 1, Relaxed);
    }
    let r = w.registry();
    let batch = Batch {
        first,
        count: k,
        from: w.index() as u32,
        jobs: std::ptr::null_mut(),
    };
    r.infos[thief as usize].channels.post_tasks(batch);
    r.sleep.wake(thief as usize);
}

/// Hands heap jobs to `thief` in one message, and wakes it.
fn give_jobs(w: &Worker, thief: u32, jobs: Vec<JobRef>) {
    let count = jobs.len() as u32;
    stat!(w.counters(), steal_half, count > 1);
    stat!(w.counters(), steal_one, count == 1);
    let r = w.registry();
    let batch = Batch {
        first: std::ptr::null(),
        count,
        from: w.index() as u32,
        jobs: Box::into_raw(Box::new(jobs)),
    };
    r.infos[thief as usize].channels.post_tasks(batch);
    r.sleep.wake(thief as usize);
}

/// Queues `req` at worker `to`, raises its flag and wakes it if it sleeps.
pub(crate) fn send(w: &Worker, to: u32, req: Request) {
    let r = w.registry();
    let info = &r.infos[to as usize];
    post_and_raise(&info.channels, &info.deque, req);
    r.sleep.wake(to as usize);
}

/// The sender's half of the flag pairing (PROTOCOLS.md, "Relay"): queue the request,
/// fence, raise the owner's flag. Pairs with the fence in `lower_flag`: either the owner's
/// drain after it sees the request, or this flag store lands after the owner's lowering
/// and its next push or pop polls again.
pub(crate) fn post_and_raise<B: Copy>(ch: &Channels<B>, dq: &Deque, req: Request) {
    ch.post_request(req);
    fence(SeqCst);
    dq.raise_flag();
}

/// The owner's half of the flag pairing: lower the flag, fence; the caller then drains
/// its request channel.
pub(crate) fn lower_flag<H: Home>(owner: &Owner<H>) {
    owner.clear_flag();
    fence(SeqCst);
}

/// One steal attempt on `victim`: run a batch if one has arrived, otherwise make sure a
/// request is out (to the last victim first), and handle waiting requests meanwhile.
pub(crate) fn steal(w: &Worker, victim: usize) -> bool {
    poll(w);
    let ch = &w.registry().infos[w.index()].channels;
    if let Some(batch) = ch.tasks.recv() {
        stat!(
            w.counters(),
            reply_wait_ns,
            w.relay.sent_at.get().map_or(0, |t| t.elapsed().as_nanos())
        );
        w.relay.answered(batch.from);
        if batch.jobs.is_null() {
            run_batch(w, batch);
        } else {
            // SAFETY: `give_jobs` boxed the vector for this one message; we own it now.
            run_jobs(w, *unsafe { Box::from_raw(batch.jobs) });
        }
        return true;
    }
    if !w.relay.outstanding() && may_request(w) {
        let to = w.relay.last_victim.take().unwrap_or(victim as u32);
        adapt(w);
        w.relay.sent_at.set(Some(Instant::now()));
        request::ask(w, to);
    }
    false
}

/// How long a thief yields (rather than sleeps) while its request is out.
const AWAIT_REPLY: Duration = Duration::from_millis(1);

/// Whether `w` has a request out that was sent less than `AWAIT_REPLY` ago.
pub(crate) fn awaiting_reply(w: &Worker) -> bool {
    let l = &w.relay;
    l.outstanding.get() && l.sent_at.get().is_some_and(|t| t.elapsed() < AWAIT_REPLY)
}

/// Whether a new request may go out: there is work in flight somewhere in the pool, and
/// the back-off after the last unanswered request has passed.
fn may_request(w: &Worker) -> bool {
    let r = w.registry();
    if r.in_flight.load(Relaxed) == 0 && !r.barriers.pending() {
        return false;
    }
    backoff_left(w).is_none()
}

/// How long `w` still has to wait before its next request, if it is backing off.
pub(crate) fn backoff_left(w: &Worker) -> Option<Duration> {
    let since = w.relay.returned_at.get()?.elapsed();
    if w.registry().news.load(Relaxed) != w.relay.backoff_epoch.get() {
        return None;
    }
    w.relay
        .backoff
        .get()
        .checked_sub(since)
        .filter(|d| !d.is_zero())
}

/// Adaptive stealing (thesis §5.1.2): every N steals, switch steal-one → steal-half if
/// each steal brought exactly one task that spawned nothing, and back if steal-half
/// averaged fewer than two tasks per steal.
fn adapt(w: &Worker) {
    let l = &w.relay;
    if l.steals.get() < ADAPT_INTERVAL {
        return;
    }
    let ratio = l.executed.get() / ADAPT_INTERVAL;
    if l.half.get() && ratio < 2 {
        l.half.set(false);
    } else if !l.half.get() && ratio == 1 {
        l.half.set(true);
    }
    l.steals.set(0);
    l.executed.set(0);
}

/// Runs the first of the received jobs and queues the rest here, where further thieves
/// can ask for them.
fn run_jobs(w: &Worker, jobs: Vec<JobRef>) {
    stat!(w.counters(), tasks_stolen, jobs.len());
    let l = &w.relay;
    l.steals.set(l.steals.get() + 1);
    l.executed.set(l.executed.get() + jobs.len() as u32);
    let mut jobs = jobs.into_iter();
    let first = jobs.next().expect("a batch holds at least one job");
    let r = w.registry();
    jobs.for_each(|j| {
        r.push_job_quiet(w.index(), j);
    });
    // SAFETY: a job handed over in a batch is executed exactly once, here.
    w.busy(|| unsafe { first.execute(w) });
}

/// Runs a received batch. The batch is split in halves by `join`, so the tasks not yet
/// started sit in this worker's deque as proxies that further thieves can take (the
/// thesis prepends a stolen list to the thief's deque).
fn run_batch(w: &Worker, b: Batch) {
    stat!(w.counters(), tasks_stolen, b.count);
    let l = &w.relay;
    l.steals.set(l.steals.get() + 1);
    l.executed.set(l.executed.get() + b.count);
    w.busy(|| run_range(w, Proxy(b.first), b.count, true));
}

/// Runs `count` handed-out slots from `first`. With `probe`, the first slot is run with
/// this worker's flag raised, so that a push by that task polls and marks it as one that
/// spawned work; such a task counts as two more executed for adaptive stealing.
fn run_range(w: &Worker, first: Proxy, count: u32, probe: bool) {
    if count == 1 {
        let l = &w.relay;
        if probe {
            l.spawned.set(false);
            w.registry().infos[w.index()].deque.raise_flag();
        }
        // SAFETY: the batch gave this worker (or whoever took the proxy) the slot.
        unsafe { run_remote(w, &*first.0) };
        if probe && l.spawned.get() {
            l.executed.set(l.executed.get() + 2);
        }
        return;
    }
    let half = count / 2;
    // SAFETY: `first + half` is inside the batch.
    let upper = Proxy(unsafe { first.0.add(half as usize) });
    w.join(
        move |w| run_range(w, first, half, probe),
        move |w| run_range(w, upper, count - half, false),
    );
}

/// Runs a slot of another worker's deque and marks it done.
///
/// # Safety
/// The caller holds the right to run `slot` (it came in a batch).
unsafe fn run_remote(w: &Worker, slot: &Slot) {
    slot.thief.store(w.index() + 1, Relaxed);
    // SAFETY: the caller's contract; `run_stolen` publishes the outcome with `DONE`.
    unsafe { slot.run_stolen(w) }
}

/// A pointer to a handed-out slot, carried by a proxy task.
#[derive(Clone, Copy)]
struct Proxy(*const Slot);

// SAFETY: the slot lives in the registry and the proxy is the only holder of the right to
// run it.
unsafe impl Send for Proxy {}
