//! Spawned tasks in the deque: scope and detached tasks are slots of the same split deque
//! (Lace) or private deque (relay) as the second branches of joins, stolen and handed out
//! like them ("Lace: non-blocking split deque for work-stealing"; Prell, "Embracing
//! Explicit Communication in Work-Stealing Runtime Systems", §4.1–4.3). A job that fits
//! is stored in its slot; a larger one is boxed.
//!
//! A spawned task has no frame waiting for it at a fixed place, so its slot may sit above
//! the slot of a join or a promise when that one is synced. The rules that make this work
//! (PROTOCOLS.md, "Spawned tasks in the deque"):
//!
//! - Whoever pops a spawned task runs it. A sync that finds spawned tasks above its own
//!   slot runs (or waits for) them first; the owner's pop gate keeps such a sync off the
//!   fast path (`Owner::set_spawn_top`, with a link from each spawned slot to the one
//!   below it).
//! - A worker that runs a slot it did not push itself, or a spawned slot it popped,
//!   drains what the task left in its deque before the task counts as finished
//!   (`run_draining`). So `DONE` on a slot means its task and every task it spawned into
//!   worker deques are finished.
//! - A scope therefore needs no count for tasks spawned on its own worker or inside slot
//!   runs: it drains its worker's deque down to its base. Only tasks spawned from other
//!   places (another thread, a root or heap job on another worker) are counted.
//! - Detached tasks are counted per worker (`Counts`): made where spawned, done where
//!   run; a barrier reads the done counts, then the made counts.

use crate::frame::Frame;
use crate::registry::Registry;
use crate::sched::Schedule;
use crate::sync::Padded;
use crate::task::{self, Context, Entry, Kind, Panic, Slot};
use crate::worker::Worker;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Acquire, Ordering::Release};

/// What a spawned task's slot run does once the tasks it left in the deque are done.
pub(crate) enum Then {
    /// Nothing: the scope finds the task through the deque.
    Nothing,
    /// A counted scope task: release one from the scope's count (the last touch of it).
    Release(*const AtomicUsize),
    /// A detached task: count it done on this worker.
    Detached,
}

impl Then {
    pub(crate) fn finish(self, w: &Worker) {
        match self {
            Then::Nothing => {}
            // SAFETY: the scope waits for its count to reach zero before it frees it, so
            // the count is alive until this decrement, which is the last touch.
            Then::Release(pending) => unsafe {
                (*pending).fetch_sub(1, Release);
            },
            Then::Detached => {
                Counts::done(w);
                crate::barrier::deque_task_ended(w.registry());
            }
        }
    }
}

/// Runs `f`, a slot's task on `w`, in a `Slot` frame, then runs or waits for everything
/// it left above the current top of `w`'s deque. (A heap job runs in the `Task` frame of
/// `Worker::run_taken` instead: its spawns are not drained when it ends, so a scope counts
/// those made in it.)
#[inline]
pub(crate) fn run_draining<R>(w: &Worker, f: impl FnOnce() -> R) -> R {
    let depth = w.owner().depth();
    let slot = w.frames().enter(Frame::Slot(depth));
    let r = f();
    if w.owner().depth() != depth {
        drain_to(w, depth, task::drop_panic);
    }
    drop(slot);
    r
}

/// Whether a scope task spawned on `w` for a scope owned by `owner` is found by draining:
/// `w` is the scope's own worker (whose deque the scope drains), or `w` runs a slot (which
/// drains before it finishes).
pub(crate) fn drained_on(w: &Worker, owner: usize) -> bool {
    w as *const Worker as usize == owner || w.frames().in_slot()
}

/// Runs or waits for every slot above `depth` in `w`'s deque, newest first. The panics
/// of promises whose handles were leaked go to `sink`; spawned tasks keep their own.
///
/// A spawned scope task popped here leaves what it spawned to this loop rather than
/// draining it itself (`run_spawn_popped`), so that a chain of tasks each spawning the
/// next runs at one stack depth, as in rayon.
pub(crate) fn drain_to(w: &Worker, depth: u32, sink: impl FnMut(Panic)) {
    drain(w, depth, sink, true);
}

/// [`drain_to`] for a promises scope's end: every spawned task drains its own leftovers,
/// so that the panics of promises leaked inside it are dropped there, not sent to `sink`.
pub(crate) fn drain_each_to(w: &Worker, depth: u32, sink: impl FnMut(Panic)) {
    drain(w, depth, sink, false);
}

fn drain(w: &Worker, depth: u32, mut sink: impl FnMut(Panic), flat: bool) {
    while let Some((top, below)) = w.owner().top_and_below() {
        if below < depth {
            break;
        }
        if let Some(p) = pop_and_finish(w, top, flat) {
            sink(p);
        }
    }
}

/// The slow path of a sync whose slot `top` has slots above it: spawned tasks, which are
/// run (or awaited) first.
#[cold]
#[inline(never)]
pub(crate) fn drain_above(w: &Worker, top: &Slot) {
    let Some((_, below)) = w.owner().top_and_below() else {
        return;
    };
    let depth = w.owner().index_of(top) + 1;
    if below >= depth {
        drain_to(w, depth, task::drop_panic);
    }
}

/// Pops the top slot `top` and finishes it: runs a private one, waits for a stolen one.
/// Returns the panic of a leaked promise. `flat`: the caller drains to at most `top`'s
/// depth, so a spawned task may leave its own spawns to it (`Frame::Drain`).
fn pop_and_finish(w: &Worker, top: &Slot, flat: bool) -> Option<Panic> {
    // SAFETY: `top` is a filled slot of this worker's own deque.
    let kind = unsafe { top.kind() };
    let spawned = kind == Kind::Spawn;
    if (spawned && w.owner().pop_spawned(top)) || w.try_pop_any(top) {
        if spawned {
            // SAFETY: a spawn slot, popped privately; the job is taken out by `run_popped`
            // after this, while nothing else writes the slot.
            w.owner().set_spawn_top(unsafe { top.spawn_link() });
        }
        let _drain = (flat && spawned).then(|| w.frames().enter(Frame::Drain));
        // SAFETY: popped privately; it still holds its job (or nothing, if claimed).
        return unsafe { top.run_popped(w) };
    }
    w.await_done(top);
    if spawned {
        // SAFETY: a spawn slot whose thief is done: it only read the payload.
        w.owner().set_spawn_top(unsafe { top.spawn_link() });
    }
    // SAFETY: `await_done` saw `DONE` with acquire ordering, and nobody took the outcome.
    unsafe { top.discard_outcome() }
}

/// Runs one spawned task of `w`'s own deque, if it has one within reach: the top slot
/// (run, or waited for; popped if claimed), or else the highest private spawned task, run
/// in place and left claimed (`run_buried`). False if there is none. For
/// the scheduling loop and for waits: a worker's own spawned tasks come first, and a wait
/// inside a join branch must not sit on those buried under the branch's sibling.
pub(crate) fn help_own(w: &Worker) -> bool {
    let owner = w.owner();
    w.sched().answer_thieves(w);
    let Some((top, below)) = owner.top_and_below() else {
        return false;
    };
    // Only a slot of the innermost draining frame: one below it may be the very slot an
    // outer wait of this worker awaits (popping it here would pop it twice, and waiting
    // for it here would make this wait depend on a task that may wait for it).
    let ours = below >= w.frames().drain_depth();
    // SAFETY: `top` is a filled slot of this worker's own deque. A spawned task that ran
    // in place is popped too: nothing depends on it any more. A claimed slot is left to
    // its promises scope, which counts it.
    let kind = unsafe { top.kind() };
    if ours && (kind == Kind::Spawn || kind == Kind::Ran) {
        w.run_taken(|| {
            pop_and_finish(w, top, false)
                .into_iter()
                .for_each(task::drop_panic)
        });
        return true;
    }
    run_buried(w)
}

/// Runs the highest private spawned task of `w`'s deque in place, leaving its slot
/// claimed: a frame that syncs a slot above it still needs that one. False if there is
/// none, or a thief has it.
fn run_buried(w: &Worker) -> bool {
    let owner = w.owner();
    let below = owner.spawn_top();
    if below <= owner.bottom() {
        return false;
    }
    // SAFETY: `spawn_top` is one past a spawn slot in use.
    let slot = unsafe { &*below.sub(1) };
    // Under Lace a shared one is taken back unless a thief has it: with one worker, or
    // idle thieves, nobody else might ever run it.
    let Some(held) = w.sched().take_back(w, slot) else {
        return false;
    };
    // SAFETY: a private spawn slot, kept from lifelines by the hold: nobody else touches
    // it; the link is read and the job taken out before the slot is marked claimed (a
    // thief that takes it after a grow then runs nothing), and the claimed slot leaves
    // the chain of spawned tasks.
    let job = unsafe {
        owner.set_spawn_top(slot.spawn_link());
        slot.move_out()
    };
    drop(held);
    // SAFETY: `job` holds the spawned job, on this worker's stack alone.
    w.run_taken(|| {
        unsafe { job.run_popped(w) }
            .into_iter()
            .for_each(task::drop_panic)
    });
    true
}

/// Runs one spawned task of `w`'s own deque without waiting for anyone or taking anything
/// from another worker (rayon's `yield_local`): the highest private spawned task, in
/// place. Spawned tasks that ran in place and are left on top in the innermost draining
/// frame are popped, so that a worker whose spawned tasks have all run holds none. False
/// if no private spawned task was left.
pub(crate) fn run_own(w: &Worker) -> bool {
    w.sched().answer_thieves(w);
    let ran = run_buried(w);
    let owner = w.owner();
    // Below the frame lie the slots of frames outside it (a `Worker::scope` whose tasks
    // went below its base after a pop there would end without them), and claimed slots
    // are their promises scopes' to pop (help_own).
    let frame = w.frames().drain_depth();
    while let Some((top, below)) = owner.top_and_below() {
        // SAFETY: `top` is a filled slot of this worker's own deque.
        let spent = unsafe { top.kind() } == Kind::Ran;
        // Nothing is left to run in it; one that a thief took (after a grow, or handed
        // out in the slow pop's poll) stays for a later pop, which waits for it.
        if below < frame || !spent || !owner.is_private(top) || !w.try_pop_any(top) {
            break;
        }
    }
    ran
}

/// Pushes `job` as a spawned task on `w`'s deque; a job too large for a slot is boxed.
/// With the deque full, it runs at once.
#[inline]
pub(crate) fn push<F>(w: &Worker, job: F)
where
    F: FnOnce(&Worker) -> Then + Send,
{
    if task::fits_spawn::<F>() {
        push_fitting(w, job);
    } else {
        let job = Box::new(job);
        push_fitting(w, move |w: &Worker| (*job)(w));
    }
}

/// `push` for a job that fits in a slot.
#[inline(always)]
fn push_fitting<F>(w: &Worker, job: F)
where
    F: FnOnce(&Worker) -> Then + Send,
{
    let link = w.owner().spawn_top();
    let pushed = w.push_written(job, |slot, job| {
        // SAFETY: `push_written` hands over the free slot at `head`, not yet visible to
        // thieves; `F` fits beside its link, and the entry is `F`'s.
        unsafe { slot.put_spawn(link, job, &SpawnEntry::<F>::ENTRY) };
    });
    match pushed {
        Ok(slot) => {
            let above = (slot as *const Slot).wrapping_add(1);
            w.owner().set_spawn_top(above);
        }
        Err(job) => run_full(w, job),
    }
}

/// A spawn that found the deque full. The job joins a batch on top of the deque (the top
/// spawned task becomes one if it is not yet), which thieves take whole and split in
/// halves; with no private spawned task on top, or no other worker to take a batch, it
/// runs at once, like a slot that was pushed and popped.
#[cold]
#[inline(never)]
fn run_full<F>(w: &Worker, job: F)
where
    F: FnOnce(&Worker) -> Then + Send,
{
    let owner = w.owner();
    // The owner pushes nothing while it fills a batch: answer thieves here.
    w.sched().answer_thieves(w);
    // Lifelines stay off the top slot while it becomes a batch.
    let held = owner.hold();
    // Only a task pushed in the innermost draining frame: one below it may belong to an
    // outer frame, whose drain comes too late for the scope of this job.
    let frame = w.frames().drain_depth();
    let top = owner
        .top_and_below()
        .filter(|&(_, below)| below >= frame && w.workers() > 1);
    // SAFETY: `top` is a filled slot of this worker's own deque.
    match top.filter(|&(t, _)| owner.is_private(t) && unsafe { t.kind() } == Kind::Spawn) {
        Some((top, _)) => {
            let one = Slot::new();
            // SAFETY: a free slot of the caller's, and `F` fits beside a link.
            unsafe { one.put_spawn(ptr::null(), job, &SpawnEntry::<F>::ENTRY) };
            // SAFETY: the top slot is a private spawned task: only this owner touches it.
            unsafe { add_to_batch(top, one) };
        }
        None => {
            drop(held);
            run_draining(w, || job(w)).finish(w)
        }
    }
}

/// Adds `one` to the batch in `top`, making `top` a batch first if it holds a single job.
///
/// # Safety
/// `top` is the top slot of the caller's deque, private, and holds a spawned task.
unsafe fn add_to_batch(top: &Slot, one: Slot) {
    // SAFETY: the caller's contract.
    unsafe {
        if !top.has_entry(&BATCH) {
            let link = top.spawn_link();
            let mut batch = Batch { chunks: Vec::new() };
            batch.push(top.move_out());
            top.put_spawn(link, batch, &BATCH);
        }
        top.spawn_job_mut::<Batch>().push(one);
    }
}

/// Jobs in a batch: chunks of slots of a size that the allocator keeps for reuse, rather
/// than one vector that grows by copying into fresh pages.
pub(crate) struct Batch {
    chunks: Vec<Vec<Slot>>,
}

/// Jobs per chunk of a batch: 32 KiB.
const CHUNK: usize = 512;

impl Batch {
    fn push(&mut self, job: Slot) {
        if self.chunks.last().is_none_or(|c| c.len() == CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        self.chunks.last_mut().expect("a chunk with room").push(job);
    }

    /// Runs every job, in halves by `join`, so that thieves take the upper halves.
    pub(crate) fn run(&self, w: &Worker) {
        in_halves(w, &self.chunks, &|w, chunk| in_halves(w, chunk, &run_job));
    }
}

/// Runs a job of a batch.
fn run_job(w: &Worker, job: &Slot) {
    // SAFETY: each job of a batch is run once, by whoever runs its part of the batch.
    unsafe { job.run_popped(w) }
        .into_iter()
        .for_each(task::drop_panic);
}

/// Calls `each` on every item, splitting the items in halves by `join`.
fn in_halves<T: Sync>(w: &Worker, items: &[T], each: &(dyn Fn(&Worker, &T) + Sync)) {
    match items {
        [] => {}
        [one] => each(w, one),
        _ => {
            let (lo, hi) = items.split_at(items.len() / 2);
            w.join(|w| in_halves(w, lo, each), |w| in_halves(w, hi, each));
        }
    }
}

/// A worker runs a slot's job in a `Slot` frame and drains what it left.
impl Context for Worker {
    #[inline]
    fn run_slot<R>(&self, f: impl FnOnce() -> R) -> R {
        run_draining(self, f)
    }
}

/// The entries of a `Spawn` slot holding an `F`, which returns what to do once the
/// tasks it left in the deque are done.
pub(crate) struct SpawnEntry<F>(PhantomData<F>);

impl<F> SpawnEntry<F>
where
    F: FnOnce(&Worker) -> Then + Send,
{
    pub(crate) const ENTRY: Entry = Entry::spawned(run_spawn_stolen::<F>, run_spawn_popped::<F>);
}

/// `Entry::run_stolen` of a `Spawn` slot.
///
/// # Safety
/// `slot` was filled by `put_spawn::<F>` and claimed by the caller (a steal or a relay
/// hand-out); `w` points to this thread's live worker.
unsafe fn run_spawn_stolen<F>(slot: *const Slot, w: *const ())
where
    F: FnOnce(&Worker) -> Then + Send,
{
    // SAFETY: the contract above.
    let (job, w) = unsafe { ((*slot).take_spawn::<F>(), &*w.cast::<Worker>()) };
    run_draining(w, || job(w)).finish(w);
    // SAFETY: the contract above; the store is the thief's last touch.
    unsafe { (*slot).thief.store(task::DONE, Release) };
}

/// `Entry::run_popped` of a `Spawn` slot.
///
/// # Safety
/// The owner popped `slot` privately and it holds the `F` that `put_spawn::<F>` wrote;
/// `w` points to this thread's live worker.
unsafe fn run_spawn_popped<F>(slot: *const Slot, w: *const ()) -> Option<Panic>
where
    F: FnOnce(&Worker) -> Then + Send,
{
    // SAFETY: the contract above.
    let (job, w) = unsafe { ((*slot).take_spawn::<F>(), &*w.cast::<Worker>()) };
    if !w.frames().in_drain() {
        run_draining(w, || job(w)).finish(w);
        return None;
    }
    // Popped by a drain of this deque to at most this slot's depth: what an uncounted
    // task leaves there, that drain runs next, in this task's place (rule 3 still holds:
    // nobody waits for this task but that drain). A counted or detached task drains
    // first, as its count promises its spawns are done.
    let depth = w.owner().depth();
    let slot = w.frames().enter(Frame::Slot(depth));
    let then = job(w);
    drop(slot);
    if !matches!(then, Then::Nothing) && w.owner().depth() != depth {
        drain_to(w, depth, task::drop_panic);
    }
    then.finish(w);
    None
}

/// The entries of a batch: a `Spawn` slot holding spawned jobs that found the deque full
/// (`Batch`), each in a slot of its own on the heap.
static BATCH: Entry = Entry::spawned(run_batch_stolen, run_batch_popped);

/// `Entry::run_stolen` of a batch.
///
/// # Safety
/// As for `run_spawn_stolen`, for a slot that holds a batch.
unsafe fn run_batch_stolen(slot: *const Slot, w: *const ()) {
    // SAFETY: the contract above.
    let (jobs, w) = unsafe { ((*slot).take_spawn::<Batch>(), &*w.cast::<Worker>()) };
    run_draining(w, || jobs.run(w));
    // SAFETY: the contract above; the store is the thief's last touch.
    unsafe { (*slot).thief.store(task::DONE, Release) };
}

/// `Entry::run_popped` of a batch.
///
/// # Safety
/// As for `run_spawn_popped`, for a slot that holds a batch.
unsafe fn run_batch_popped(slot: *const Slot, w: *const ()) -> Option<Panic> {
    // SAFETY: the contract above.
    let (jobs, w) = unsafe { ((*slot).take_spawn::<Batch>(), &*w.cast::<Worker>()) };
    run_draining(w, || jobs.run(w));
    None
}

/// Spawns a detached task on `w`: counted made here, a slot of `w`'s deque.
pub(crate) fn detached<F: FnOnce(&Worker) + Send + 'static>(w: &Worker, f: F) {
    Counts::made(w);
    push(w, move |w: &Worker| {
        crate::barrier::run_detached(w, f);
        Then::Detached
    });
}

/// Per-worker counts of detached tasks made (spawned on the worker) and done (run on
/// it), each written by its worker alone.
pub(crate) struct Counts {
    per_worker: Box<[Padded<[AtomicU64; 2]>]>,
}

const MADE: usize = 0;
const DONE: usize = 1;

impl Counts {
    pub(crate) fn new(workers: usize) -> Counts {
        Counts {
            per_worker: (0..workers)
                .map(|_| Padded([AtomicU64::new(0), AtomicU64::new(0)]))
                .collect(),
        }
    }

    /// Worker `index`'s counts.
    pub(crate) fn of(&self, index: usize) -> &[AtomicU64; 2] {
        &self.per_worker[index].0
    }

    /// Adds one to `w`'s count `which`: a load and a store, since only `w` writes it.
    #[inline(always)]
    fn bump(w: &Worker, which: usize) {
        let c = &w.spawn_counts()[which];
        c.store(c.load(std::sync::atomic::Ordering::Relaxed) + 1, Release);
    }

    #[inline(always)]
    pub(crate) fn made(w: &Worker) {
        Self::bump(w, MADE);
    }

    #[inline(always)]
    pub(crate) fn done(w: &Worker) {
        Self::bump(w, DONE);
    }

    /// Detached tasks made on workers and not yet done, as of some moment during the
    /// call, or more. The done counts are read first: a task counted done was made before
    /// (its spawn happens before its run), so its made count is seen by the later reads;
    /// a task made after the first read only adds to the result.
    pub(crate) fn pending(&self) -> u64 {
        let done: u64 = self
            .per_worker
            .iter()
            .map(|c| c.0[DONE].load(Acquire))
            .sum();
        let made: u64 = self
            .per_worker
            .iter()
            .map(|c| c.0[MADE].load(Acquire))
            .sum();
        made - done
    }
}

impl Registry {
    /// Detached tasks spawned on workers and not finished (see `Counts::pending`).
    pub(crate) fn detached_in_deques(&self) -> u64 {
        self.spawns.pending()
    }
}
