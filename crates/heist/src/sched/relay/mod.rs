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
//! themselves; see `termination.rs`. Spawned tasks are deque slots, handed out like
//! join branches; only the manager takes jobs submitted from outside (into its job list,
//! handed out through requests as well), so that every way a worker can get work is
//! visible to the protocol.
//!
//! Tasks stay in the victim's deque (direct task storage): a message carries the first
//! slot and a count, the thief runs them in place and marks each one done, and the
//! victim that later pops one waits for it like Lace's owner does for a stolen task.

pub(crate) mod channel;
#[cfg(all(test, loom))]
mod loom_channel;
#[cfg(all(test, loom))]
mod loom_gate;
#[cfg(all(test, loom))]
mod loom_handout;
#[cfg(all(test, loom))]
mod loom_offer;
#[cfg(all(test, loom))]
mod loom_termination;
mod park;
mod peer;
mod request;
mod termination;
pub(crate) mod waiting;

pub(crate) use termination::{Barriers, IdleSet, MANAGER};

use crate::core::deque::Held;
use crate::core::deque::{Deque, Home, Owner, Pop};
use crate::core::frame::Roots;
use crate::core::mem::OutOfMemory;
use crate::core::offer::{Offer, OfferSlot};
use crate::core::registry::{Injected, Registry};
use crate::core::schedule::{Schedule, Scheduler, Waiting};
use crate::core::stats::stat;
use crate::core::sync::{fence, AtomicBool, AtomicU64, AtomicUsize, Padded};
use crate::core::task::Slot;
use crate::core::trace::EventKind;
use crate::core::worker::InWorkerSeat;
use crate::core::worker::{Job, Worker};
use std::cell::Cell;
use std::sync::atomic::{Ordering::Relaxed, Ordering::SeqCst};
use std::sync::Arc;
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

/// How much a victim hands a thief (thesis §3.5, §5.1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StealAmount {
    /// One task (steal-one).
    One,
    /// Half of the victim's private tasks (steal-half).
    Half,
}

/// A steal request. It names its thief for its whole life, however often forwarded.
/// With `update` set it is a message to the manager that its thief got work.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    thief: u32,
    failed: u32,
    amount: StealAmount,
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
    jobs: *mut Vec<Job>,
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
    /// returned one, and three times as many again for the manager's updates. An update
    /// reports a worker's end of an idle period; a victim's answer, a hand-out to the
    /// worker while it was parked, and its own lifeline or offer take may each report the
    /// same period while the manager runs a long task and does not poll.
    #[cfg(all(test, loom))]
    pub(crate) fn new(n: usize) -> Channels<B> {
        Channels::try_new(n).expect("a model's channels fit in memory")
    }

    /// `new`, or the allocation that failed (each worker's request channel holds 4n
    /// requests, so the channels of a pool take memory in n²).
    pub(crate) fn try_new(n: usize) -> Result<Channels<B>, crate::core::mem::NoMemory> {
        Ok(Channels {
            requests: channel::Mpsc::try_new(4 * n)?,
            tasks: channel::Spsc::try_new(2)?,
        })
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

/// The relay scheduler of one pool: each worker's channels and own state, the barrier
/// numbers, and the count whose change ends back-offs.
pub(crate) struct Relay {
    workers: Box<[PerWorker]>,
    pub(crate) barriers: Barriers,
    /// Bumped when a barrier is answered, a job comes from outside, or a worker's job
    /// list stops being empty. A worker that began backing off before the last bump may
    /// ask at once.
    pub(crate) new_work_epoch: AtomicU64,
    /// Workers whose threads have started (`start`).
    started: AtomicUsize,
    /// The barrier asked when the pool was closed (0: not closed): its workers stop once
    /// it is answered (`Schedule::quiet`).
    closing: AtomicU64,
    /// How many workers are parked (a hint for pushers, read on their slow path).
    parked: AtomicUsize,
}

struct PerWorker {
    channels: Channels,
    /// Set by the worker when it takes a loop's standing offer (`crate::core::offer`) while
    /// its request is out, before the take; cleared when the request comes home or it
    /// sends a new one after an answer. The request then goes home unanswered: it has
    /// work.
    took_offer: AtomicBool,
    /// While the worker sleeps: `PARKED`, its status and whether its request is out
    /// (`park_word`); 0 otherwise. A pusher that claims the word hands it tasks
    /// (`serve_parked`).
    parked: AtomicUsize,
    /// Tasks handed to the worker while it was parked (more than one batch if it parked
    /// again before a pusher that claimed it had written its batch).
    handed: std::sync::Mutex<Vec<Batch>>,
    state: Padded<Owned>,
}

/// A worker's `WorkerState`, touched by that worker's thread alone (see `state`).
struct Owned(WorkerState);

// SAFETY: `state` is the only way to the `WorkerState` inside, and it reaches element `i` of a
// pool's `Relay` only through that pool's worker `i`, which exists once (built by
// `worker::main`) and is neither `Send` nor `Sync`: every reference to the cells in it is
// made on that worker's thread.
unsafe impl Sync for Owned {}

impl Relay {
    /// The relay scheduler of a pool of `workers`, or what did not fit in memory.
    pub(crate) fn try_new(workers: usize) -> Result<Relay, OutOfMemory> {
        let no_room = |bytes| {
            let what =
                format!("the relay channels of {workers} workers (4 × {workers} requests each)");
            crate::core::registry::out_of_memory(what, bytes)
        };
        let mut all = Vec::new();
        all.try_reserve_exact(workers)
            .map_err(|_| no_room(crate::core::mem::bytes_of::<PerWorker>(workers)))?;
        for _ in 0..workers {
            all.push(PerWorker {
                channels: Channels::try_new(workers).map_err(|e| no_room(e.bytes))?,
                took_offer: AtomicBool::new(false),
                parked: AtomicUsize::new(0),
                handed: std::sync::Mutex::new(Vec::new()),
                state: Padded(Owned(WorkerState::default())),
            });
        }
        Ok(Relay {
            workers: all.into_boxed_slice(),
            barriers: Barriers::default(),
            new_work_epoch: AtomicU64::new(0),
            parked: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
            closing: AtomicU64::new(0),
        })
    }

    /// Worker `i`'s channels.
    fn channels(&self, i: usize) -> &Channels {
        &self.workers[i].channels
    }
}

/// The relay scheduler of `w`'s pool.
fn relay(w: &Worker) -> &Relay {
    w.sched()
        .as_any()
        .downcast_ref()
        .expect("relay code runs on relay workers")
}

/// `w`'s own relay state.
fn state(w: &Worker) -> &WorkerState {
    &relay(w).workers[w.index()].state.0 .0
}

impl Schedule for Relay {
    fn kind(&self) -> Scheduler {
        Scheduler::Relay
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// No thief touches a relay deque: tasks leave it only when its owner hands them out.
    fn start(&self, w: &Worker) {
        w.owner().start_private();
        self.started.fetch_add(1, SeqCst);
    }

    fn push_slow(&self, w: &Worker) {
        poll(w);
    }

    /// Polls, then pops unless the top task was handed out.
    fn pop_slow(&self, w: &Worker) -> Pop {
        poll(w);
        w.owner().pop_unless_handed_out()
    }

    /// Asks the thief first (a request to the last victim), like Lace's leapfrogging,
    /// handling requests meanwhile. A hand-out that no thief has started yet is taken
    /// back and run here instead: its thief may be busy with other work for as long as
    /// that takes (PROTOCOLS.md, "Hand-outs").
    fn await_stolen(&self, w: &Worker, slot: &Slot) {
        if slot.start_handed(w.index()) {
            // As a thief runs it: in a frame that drains what it leaves (a spawned task
            // leaves its children), so that the pop below finds `slot` on top.
            // SAFETY: `start_handed` made this worker the slot's thief; the job was put
            // with context `Worker`.
            w.run_taken(|| unsafe { slot.run_stolen(w) });
        } else {
            w.wait_for_thief(slot, |thief| steal(w, thief));
        }
        w.owner().pop_handed_out();
    }

    fn steal(&self, w: &Worker, victim: Option<usize>) -> bool {
        match victim {
            Some(v) => steal(w, v),
            None => {
                poll(w);
                false
            }
        }
    }

    fn poll(&self, w: &Worker) {
        poll(w);
    }

    /// Only the manager takes jobs from outside, so that termination detection sees
    /// every way work enters the pool; and a worker that waits for another pool, which
    /// the manager counts busy all along. The manager is busy from then on.
    fn take_injected(&self, w: &Worker) -> Option<Job> {
        if !takes_from_outside(w) {
            return None;
        }
        let r = w.registry();
        let job = r.take_from_injector(w.roots())?;
        if w.index() as u32 == MANAGER {
            termination::unregister(w, MANAGER);
        }
        // Someone must start asking for the work this job will create.
        r.sleep.wake_one();
        Some(job)
    }

    fn finishing_stolen(&self, w: &Worker) {
        finishing_stolen(w);
    }

    /// Hands the oldest private task to this worker itself, and runs it as its thief.
    fn steal_own(&self, w: &Worker) -> bool {
        if w.deep() {
            return false;
        }
        let first = {
            let _held = w.owner().hold();
            if w.owner().private_len() == 0 {
                return false;
            }
            let first = w.owner().hand_out(1);
            // SAFETY: the slot was just handed out and is live.
            unsafe { &*first }.hand_to(w.index());
            first
        };
        // SAFETY: a slot of this worker's own deque, which lives as long as the worker;
        // it was handed to this worker, so only a start by this worker runs it.
        let slot = unsafe { &*first };
        crate::core::trace::with_depth(w, EventKind::Steal, Some(w.index()), 0);
        if slot.start_handed(w.index()) {
            // SAFETY: `start_handed` made this worker the slot's thief; the job was put
            // with context `Worker`.
            w.run_taken(|| unsafe { slot.run_stolen(w) });
        }
        true
    }

    fn answer_thieves(&self, w: &Worker) {
        if w.owner().gate_raised() {
            poll(w);
        }
    }

    /// A slot below `o_split` was handed out: it stays with its thief.
    fn take_back<'w>(&self, w: &'w Worker, slot: &Slot) -> Option<Held<'w, InWorkerSeat>> {
        w.owner().take_back(slot, false)
    }

    /// Takes half of the victim's private tasks as a batch (`park::lifeline`).
    fn lifeline(&self, w: &Worker, victim: usize) -> bool {
        park::lifeline(self, w, victim)
    }

    /// Only the manager takes jobs from outside: workers backing off should ask it for
    /// the work at once.
    fn injected(&self, r: &Registry, _kind: Injected) {
        self.new_work_epoch.fetch_add(1, Relaxed);
        let m = MANAGER as usize;
        r.infos[m].deque.raise_gate();
        r.sleep.wake(m);
    }

    /// A thief in back-off wakes when it may ask again.
    fn sleep_timeout(&self, w: &Worker, timeout: Option<Duration>) -> Option<Duration> {
        match (timeout, backoff_left(w)) {
            (Some(t), Some(b)) => Some(t.min(b)),
            (t, b) => t.or(b),
        }
    }

    /// Work elsewhere is no reason to stay up: it arrives only through this worker's
    /// channels (or, for the manager, the injector).
    fn work_visible(&self, w: &Worker) -> bool {
        let r = w.registry();
        (takes_from_outside(w) && r.injector_has(w.roots()))
            || self.channels(w.index()).pending()
            || park::handed_something(w)
    }

    fn barrier_pending(&self) -> bool {
        self.barriers.pending()
    }

    /// Termination detection answers a barrier at the root (thesis §4.2).
    fn barrier_at_root(&self, r: &Arc<Registry>, w: Option<&Worker>) -> bool {
        termination::barrier(self, r, w);
        true
    }

    /// A handed-out task waits in its thief's channel until the thief looks: the workers
    /// may stop only once termination detection finds them all idle, so the pool asks a
    /// barrier now, and stops once it is answered.
    fn close(&self, r: &Registry) {
        self.closing.store(termination::ask(self, r), SeqCst);
    }

    fn quiet(&self) -> bool {
        let mine = self.closing.load(SeqCst);
        mine != 0 && self.barriers.answered(mine)
    }

    /// Waits for the closing barrier if every worker has started, or will (one that a
    /// spawn handler has not started may never take part).
    fn settle(&self, r: &Registry, other: Option<&Worker>, all_started: bool) -> bool {
        if !all_started && self.started.load(SeqCst) < r.workers() {
            return false;
        }
        let mine = self.closing.load(SeqCst);
        match other {
            Some(o) => o.wait_until(|| self.barriers.answered(mine)),
            None => self.barriers.wait(mine),
        }
        true
    }

    /// Relay raises the gate for waiting steal requests, which take private tasks first
    /// (thesis §5.3.2, Fig. 5.13); only a request that finds none asks for a split.
    fn split_demanded(&self, w: &Worker) -> bool {
        let asked = self.channels(w.index()).pending() || state(w).held.get().is_some();
        if w.owner().private_len() == 0 && asked {
            return true;
        }
        // Private tasks go first; with nothing waiting, this lowers the gate again.
        poll(w);
        false
    }

    fn waiting_requests<'w>(&self, w: &'w Worker) -> Waiting<'w> {
        Waiting::taken(Box::new(waiting::Waiting::take(w)))
    }

    fn parking(&self, w: &Worker, asleep: bool) {
        if asleep {
            park::park(w);
        } else {
            park::unpark(w);
        }
    }

    /// A thief whose request is out marks it answered before the take: the owner whose
    /// offer it takes then sends the request home instead of splitting for it (the
    /// owner's failed take-back acquires the take, and so the mark). A thief the manager
    /// may count idle (registered, or its idle request on the way) tells it that it works
    /// again, as a worker leaving a barrier does: the piece may leave work here, detached
    /// tasks it spawned, after its owner has gone idle.
    fn take_offer(&self, w: &Worker, slot: &OfferSlot, seen: u64) -> Option<*const Offer> {
        let l = state(w);
        let mark = l.outstanding().then(|| &self.workers[w.index()].took_offer);
        let offer = take_marked(mark, slot, seen)?;
        if l.status.get() != Status::Working {
            termination::leave(w);
        }
        Some(offer)
    }
}

/// A worker's own relay state.
pub(crate) struct WorkerState {
    outstanding: Cell<bool>,
    /// The status our request had when it was last home (it keeps it across rounds), or
    /// `Idle` while our idle request is on its way to the manager.
    status: Cell<Status>,
    /// The manager's idle set (worker 0 only).
    pub(crate) idle_set: IdleSet,
    /// The request in flight carries a status that a barrier exit has overruled.
    revoked: Cell<bool>,
    last_victim: Cell<Option<u32>>,
    amount: Cell<StealAmount>,
    steals: Cell<u32>,
    /// Tasks run from steals in this interval, plus 2 for each that spawned work (see
    /// `run_batch`): the M of the thesis's M/N ratio.
    executed: Cell<u32>,
    spawned: Cell<bool>,
    /// When the last request came back unanswered, and how long to wait after that.
    returned_at: Cell<Option<Instant>>,
    backoff: Cell<Duration>,
    /// The pool's `new_work_epoch` when the back-off began: a change ends the back-off.
    backoff_epoch: Cell<u64>,
    /// When our request last went out.
    sent_at: Cell<Option<Instant>>,
    /// Tasks a lifeline of ours took, to run at the next search.
    lifeline: Cell<Option<Batch>>,
    /// A request that found nothing here and waits for our next poll (`Peer::hold`).
    held: Cell<Option<Request>>,
}

impl WorkerState {
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
    /// the pool's `new_work_epoch` stays `epoch`.
    fn back_off(&self, epoch: u64) {
        if self.backoff_epoch.replace(epoch) != epoch {
            self.backoff.set(Duration::ZERO);
        }
        self.returned_at.set(Some(Instant::now()));
        self.backoff
            .set((self.backoff.get() * 2).clamp(BACKOFF_MIN, BACKOFF_MAX));
    }
}

impl Default for WorkerState {
    fn default() -> WorkerState {
        WorkerState {
            outstanding: Cell::new(false),
            status: Cell::new(Status::Working),
            idle_set: IdleSet::default(),
            revoked: Cell::new(false),
            last_victim: Cell::new(None),
            amount: Cell::new(StealAmount::One),
            steals: Cell::new(0),
            executed: Cell::new(0),
            spawned: Cell::new(false),
            returned_at: Cell::new(None),
            backoff: Cell::new(Duration::ZERO),
            backoff_epoch: Cell::new(0),
            sent_at: Cell::new(None),
            lifeline: Cell::new(None),
            held: Cell::new(None),
        }
    }
}

/// Handles every waiting steal request. Called when the owner's gate is raised, in wait
/// loops, and by `heist::poll`.
fn poll(w: &Worker) {
    state(w).spawned.set(true);
    let _held = w.owner().hold();
    lower_gate_then_fence(w.owner());
    let r = w.registry();
    if w.index() as u32 == MANAGER {
        while let Some(job) = r.take_from_injector(Roots::Excluded) {
            termination::unregister(w, MANAGER);
            r.queue_job(w.index(), job);
            r.sleep.wake_one();
        }
    }
    if let Some(req) = state(w).held.take() {
        request::handle(w, req);
    }
    request::handle_waiting(w);
    park::serve_parked(w);
    if state(w).held.get().is_some() {
        w.registry().infos[w.index()].deque.raise_gate();
    }
}

/// A thief's take of an offer, with `mark` (its `took_offer`, while its request is out)
/// set before the take and cleared again if the take fails: the take's release carries
/// the mark to the owner whose take-back fails (PROTOCOLS.md, "Standing offers").
pub(crate) fn take_marked(
    mark: Option<&AtomicBool>,
    slot: &OfferSlot,
    seen: u64,
) -> Option<*const Offer> {
    if let Some(m) = mark {
        m.store(true, Relaxed);
    }
    let got = slot.take(seen);
    if got.is_none() {
        if let Some(m) = mark {
            m.store(false, Relaxed);
        }
    }
    got
}

/// Whether `thief` has taken an offer since it sent its request (see `PerWorker`).
fn took_offer(w: &Worker, thief: u32) -> bool {
    relay(w).workers[thief as usize].took_offer.load(Relaxed)
}

/// Whether `w` takes jobs submitted from outside: the manager does; so does a worker whose
/// task waits for another pool's `run`, which the manager counts busy all along.
fn takes_from_outside(w: &Worker) -> bool {
    w.index() as u32 == MANAGER || w.frames().waits_for_other_pool()
}

/// Hands the `k` oldest private tasks to `thief` in one message, and wakes it: a thief
/// idles as any worker does while its request is out, and may be asleep.
fn give(w: &Worker, thief: u32, k: u32) {
    stat!(w.counters(), steal_half, k > 1);
    stat!(w.counters(), steal_one, k == 1);
    let first = w.owner().hand_out(k);
    crate::core::trace::with_depth(w, EventKind::Answer, Some(thief as usize), k as usize);
    for i in 0..k as usize {
        // SAFETY: the `k` slots from `first` were just handed out and are live.
        unsafe { &*first.add(i) }.hand_to(thief as usize);
    }
    let r = w.registry();
    let batch = Batch {
        first,
        count: k,
        from: w.index() as u32,
        jobs: std::ptr::null_mut(),
    };
    relay(w).channels(thief as usize).post_tasks(batch);
    r.sleep.wake(thief as usize);
}

/// Hands heap jobs to `thief` in one message, and wakes it.
fn give_jobs(w: &Worker, thief: u32, jobs: Vec<Job>) {
    let count = jobs.len() as u32;
    stat!(w.counters(), steal_half, count > 1);
    stat!(w.counters(), steal_one, count == 1);
    crate::core::trace::with_depth(w, EventKind::Answer, Some(thief as usize), count as usize);
    let r = w.registry();
    let batch = Batch {
        first: std::ptr::null(),
        count,
        from: w.index() as u32,
        jobs: Box::into_raw(Box::new(jobs)),
    };
    relay(w).channels(thief as usize).post_tasks(batch);
    r.sleep.wake(thief as usize);
}

/// Queues `req` at worker `to`, raises its gate and wakes it if it sleeps.
fn send(w: &Worker, to: u32, req: Request) {
    let r = w.registry();
    let to = to as usize;
    post_then_raise_gate(relay(w).channels(to), &r.infos[to].deque, req);
    r.sleep.wake(to);
}

/// The sender's half of the gate pairing (PROTOCOLS.md, "Relay"): queue the request,
/// fence, raise the owner's gate. Pairs with the fence in `lower_gate_then_fence`: either
/// the owner's drain after it sees the request, or this gate store lands after the owner's
/// lowering
/// and its next push or pop polls again.
pub(crate) fn post_then_raise_gate<B: Copy>(ch: &Channels<B>, dq: &Deque, req: Request) {
    ch.post_request(req);
    fence(SeqCst);
    dq.raise_gate();
}

/// The owner's half of the gate pairing: lower the gate, fence; the caller then drains
/// its request channel.
pub(crate) fn lower_gate_then_fence<H: Home>(owner: &Owner<H>) {
    owner.lower_gate();
    fence(SeqCst);
}

/// One steal attempt on `victim`: run a batch if one has arrived, otherwise make sure a
/// request is out (to the last victim first), and handle waiting requests meanwhile.
fn steal(w: &Worker, victim: usize) -> bool {
    poll(w);
    let l = state(w);
    let ours = l.lifeline.take();
    let got = ours.or_else(|| park::take_handed(w));
    if let Some(batch) = got {
        // Our request, if out, stays out: it goes home when it reaches a victim, and
        // whatever status it carries is overruled. The giver is our last victim.
        l.resume_working();
        l.last_victim.set(Some(batch.from));
        crate::core::trace::with_depth(w, EventKind::Steal, Some(batch.from as usize), 0);
        run_batch(w, batch);
        return true;
    }
    if let Some(batch) = relay(w).channels(w.index()).tasks.recv() {
        stat!(
            w.counters(),
            reply_wait_ns,
            l.sent_at.get().map_or(0, |t| t.elapsed().as_nanos())
        );
        l.answered(batch.from);
        crate::core::trace::with_depth(w, EventKind::Steal, Some(batch.from as usize), 0);
        if batch.jobs.is_null() {
            run_batch(w, batch);
        } else {
            // SAFETY: `give_jobs` boxed the vector for this one message; we own it now.
            run_jobs(w, *unsafe { Box::from_raw(batch.jobs) });
        }
        return true;
    }
    // A worker deep in its stack asks for no more work while it runs tasks (it still runs
    // an answer to a request already out, which its victim handed over for good).
    let deep = w.deep() && !w.frames().idle();
    if !l.outstanding() && may_request(w) && !deep {
        ask(w, l.last_victim.take().unwrap_or(victim as u32));
    }
    false
}

/// Sends our steal request to `to`.
fn ask(w: &Worker, to: u32) {
    adapt(w);
    state(w).sent_at.set(Some(Instant::now()));
    relay(w).workers[w.index()].took_offer.store(false, Relaxed);
    request::ask(w, to);
}

/// A thief that will have nothing to do once this stolen task is done sends its next
/// request now, before it publishes the outcome: to its last victim, which may be waiting
/// for that outcome and then holds the request (`Peer::hold`) until its next push.
/// Sent after the outcome, the request would reach an owner that has pushed its next
/// task already and may not poll again for as long as its next leaf runs.
fn finishing_stolen(w: &Worker) {
    let l = state(w);
    let busy = w.owner().depth() != 0
        || l.outstanding()
        || w.deep()
        || l.lifeline.get().is_some()
        || park::handed_something(w)
        || !relay(w).channels(w.index()).no_tasks();
    if busy || !may_request(w) {
        return;
    }
    if let Some(to) = l.last_victim.take() {
        ask(w, to);
    }
}

/// Whether a new request may go out: there is work in flight somewhere in the pool, and
/// the back-off after the last unanswered request has passed.
fn may_request(w: &Worker) -> bool {
    if w.registry().in_flight.load(Relaxed) == 0 && !relay(w).barriers.pending() {
        return false;
    }
    backoff_left(w).is_none()
}

/// How long `w` still has to wait before its next request, if it is backing off.
fn backoff_left(w: &Worker) -> Option<Duration> {
    let l = state(w);
    let since = l.returned_at.get()?.elapsed();
    if relay(w).new_work_epoch.load(Relaxed) != l.backoff_epoch.get() {
        return None;
    }
    l.backoff.get().checked_sub(since).filter(|d| !d.is_zero())
}

/// Adaptive stealing (thesis §5.1.2): every N steals, switch steal-one → steal-half if
/// each steal brought exactly one task that spawned nothing, and back if steal-half
/// averaged fewer than two tasks per steal.
fn adapt(w: &Worker) {
    let l = state(w);
    if l.steals.get() < ADAPT_INTERVAL {
        return;
    }
    let ratio = l.executed.get() / ADAPT_INTERVAL;
    match l.amount.get() {
        StealAmount::Half if ratio < 2 => l.amount.set(StealAmount::One),
        StealAmount::One if ratio == 1 => l.amount.set(StealAmount::Half),
        _ => {}
    }
    l.steals.set(0);
    l.executed.set(0);
}

/// Runs the first of the received jobs and queues the rest here, where further thieves
/// can ask for them.
fn run_jobs(w: &Worker, jobs: Vec<Job>) {
    stat!(w.counters(), tasks_stolen, jobs.len());
    let l = state(w);
    l.steals.set(l.steals.get() + 1);
    l.executed.set(l.executed.get() + jobs.len() as u32);
    let mut jobs = jobs.into_iter();
    let first = jobs.next().expect("a batch holds at least one job");
    let r = w.registry();
    jobs.for_each(|j| {
        r.queue_job(w.index(), j);
    });
    // SAFETY: a job handed over in a batch is executed exactly once, here.
    w.run_taken(|| unsafe { first.execute(w) });
}

/// Runs a received batch. The batch is split in halves by `join`, so the tasks not yet
/// started sit in this worker's deque as proxies that further thieves can take (the
/// thesis prepends a stolen list to the thief's deque).
fn run_batch(w: &Worker, b: Batch) {
    stat!(w.counters(), tasks_stolen, b.count);
    let l = state(w);
    l.steals.set(l.steals.get() + 1);
    l.executed.set(l.executed.get() + b.count);
    w.run_taken(|| run_range(w, Proxy(b.first), b.count, Watch::FirstTask));
}

/// Whether `run_range` watches its first task for spawning (adaptive stealing).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Watch {
    FirstTask,
    Nothing,
}

/// Runs `count` handed-out slots from `first`. Watching, the first slot is run with this
/// worker's gate raised, so that a push by that task polls and marks it as one that
/// spawned work; such a task counts as two more executed for adaptive stealing.
fn run_range(w: &Worker, first: Proxy, count: u32, watch: Watch) {
    if count == 1 {
        let l = state(w);
        if watch == Watch::FirstTask {
            l.spawned.set(false);
            w.registry().infos[w.index()].deque.raise_gate();
        }
        // SAFETY: the batch gave this worker (or whoever took the proxy) the slot.
        unsafe { run_remote(w, &*first.0) };
        if watch == Watch::FirstTask && l.spawned.get() {
            l.executed.set(l.executed.get() + 2);
        }
        return;
    }
    let half = count / 2;
    // SAFETY: `first + half` is inside the batch.
    let upper = Proxy(unsafe { first.0.add(half as usize) });
    w.join_untraced(
        move |w| run_range(w, first, half, watch),
        move |w| run_range(w, upper, count - half, Watch::Nothing),
    );
}

/// Runs a slot of another worker's deque and marks it done, unless someone started it
/// first (its owner took it back: `Relay::await_stolen`).
///
/// # Safety
/// `slot` came in a batch (or a proxy of one): a slot of a deque the registry keeps.
unsafe fn run_remote(w: &Worker, slot: &Slot) {
    if !slot.start_handed(w.index()) {
        return;
    }
    // SAFETY: `start_handed` made this worker the slot's thief; every slot of a worker's deque is put with context
    // `Worker` (`Worker::join`, `crate::tasks::promise`); `run_stolen` publishes the outcome with
    // `DONE`.
    unsafe { slot.run_stolen(w) }
}

/// A pointer to a handed-out slot, carried by a proxy task.
#[derive(Clone, Copy)]
struct Proxy(*const Slot);

// SAFETY: the slot lives in the registry, and only the worker that starts it
// (`Slot::start_handed`) runs it.
unsafe impl Send for Proxy {}
