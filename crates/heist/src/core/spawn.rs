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
//! - A worker that runs a join branch it did not push itself drains what the branch left
//!   in its deque before storing `DONE` (`run_draining`); a spawned slot its owner popped
//!   leaves what it spawned to the drain that popped it (`run_spawned`), which goes on in
//!   a loop. A spawned task taken from elsewhere (stolen, handed out, spilled) waits for
//!   nothing: the scope tasks it spawns are counted (`run_counting`).
//! - A scope therefore needs no count for tasks spawned on its own worker or inside the
//!   runs above: it drains its worker's deque down to its base. Tasks spawned from other
//!   places (another thread, a heap job, a spawned task taken from elsewhere) are
//!   counted.
//! - Detached tasks are counted per worker (`Counts`): made where spawned, done where
//!   run; a barrier reads the done counts, then the made counts.

use crate::core::frame::Frame;
use crate::core::registry::Registry;
use crate::core::sync::Padded;
use crate::core::task::{self, Context, Entry, Kind, Panic, Slot};
use crate::core::worker::Worker;
use std::marker::PhantomData;
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
                crate::core::detached::deque_task_ended(w.registry());
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
/// `w` is the scope's own worker (whose deque the scope drains), or `w` runs a slot whose
/// leftovers a drain finds before it counts as finished (`Frames::in_slot`).
pub(crate) fn drained_on(w: &Worker, owner: usize) -> bool {
    w as *const Worker as usize == owner || w.frames().in_slot()
}

/// Runs or waits for every slot above `depth` in `w`'s deque, newest first. The panics
/// of promises whose handles were leaked go to `sink`; spawned tasks keep their own.
pub(crate) fn drain_to(w: &Worker, depth: u32, mut sink: impl FnMut(Panic)) {
    while let Some((top, below)) = w.owner().top_and_below() {
        if below < depth {
            break;
        }
        if let Some(p) = pop_and_finish(w, top) {
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
/// Returns the panic of a leaked promise.
fn pop_and_finish(w: &Worker, top: &Slot) -> Option<Panic> {
    // SAFETY: `top` is a filled slot of this worker's own deque.
    let kind = unsafe { top.kind() };
    let spawned = kind == Kind::Spawn;
    if (spawned && w.owner().pop_spawned(top)) || w.try_pop_any(top) {
        if spawned {
            // SAFETY: a spawn slot, popped privately; the job is taken out by `run_popped`
            // after this, while nothing else writes the slot.
            w.owner().set_spawn_top(unsafe { top.spawn_link() });
        }
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
        // What the task leaves in the deque is run here too, in a loop (see `run_spawned`).
        w.run_taken(|| {
            pop_and_finish(w, top)
                .into_iter()
                .for_each(task::drop_panic);
            drain_to(w, below, task::drop_panic);
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
/// With the deque full, it spills to `w`'s overflow (`crate::spill`), never running in
/// the spawner's frame. `count` is the count that waits for the job if no drain would
/// find it there (a scope's, for a task the scope finds by draining); `None` if the job
/// is counted already (`Then` releases its count, or it is a detached task).
///
/// # Safety
/// What `job` borrows lives until the job has run: a drain that finds the job in `w`'s
/// deque comes first (`drained_on`), and with `count`, its owner waits for that count to
/// fall to zero; or the job's `Then` releases a count its owner waits for; or the job is
/// `'static`.
#[inline]
pub(crate) unsafe fn push<F>(w: &Worker, job: F, count: Option<*const AtomicUsize>)
where
    F: FnOnce(&Worker) -> Then + Send,
{
    if task::fits_spawn::<F>() {
        push_fitting(w, job, count);
    } else {
        let job = Box::new(job);
        push_fitting(w, move |w: &Worker| (*job)(w), count);
    }
}

/// `push` for a job that fits in a slot.
#[inline(always)]
fn push_fitting<F>(w: &Worker, job: F, count: Option<*const AtomicUsize>)
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
        Err(job) => spill_full(w, job, count),
    }
}

/// A spawn that found the deque full: the job goes to the worker's overflow.
#[cold]
#[inline(never)]
fn spill_full<F>(w: &Worker, job: F, count: Option<*const AtomicUsize>)
where
    F: FnOnce(&Worker) -> Then + Send,
{
    // The owner pushes nothing while its deque is full: answer thieves here.
    w.sched().answer_thieves(w);
    // SAFETY: the contract of `push`, whose callers alone reach here: `count` is a count
    // that the owner of the job's borrows waits for, or the job is counted already, or
    // `'static`.
    unsafe { crate::core::spill::spill(w, job, count) };
}

/// Runs a spawned task that its owner popped, in a `Slot` frame. What the task leaves in
/// the deque is not drained here but by the frame that popped it, which drains in a loop
/// down to the popped slot (`drain_to`, `help_own`): a chain of spawns, each spawning the
/// next and returning, then runs in that loop instead of nesting one drain in the next on
/// the stack. Only a counted task drains here, since its count may be released only once
/// what it left is done; its children are uncounted, so they nest no further.
fn run_spawned<F>(w: &Worker, job: F)
where
    F: FnOnce(&Worker) -> Then,
{
    let depth = w.owner().depth();
    let slot = w.frames().enter(Frame::Slot(depth));
    let then = job(w);
    if matches!(then, Then::Release(_)) && w.owner().depth() != depth {
        drain_to(w, depth, task::drop_panic);
    }
    drop(slot);
    then.finish(w);
}

/// A worker runs a slot's job in a `Slot` frame and drains what it left.
impl Context for Worker {
    #[inline]
    fn run_slot<R>(&self, f: impl FnOnce() -> R) -> R {
        run_draining(self, f)
    }

    fn finishing_stolen(&self) {
        self.sched().finishing_stolen(self);
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
    run_counting(w, job);
    w.finishing_stolen();
    // SAFETY: the contract above; the store is the thief's last touch.
    unsafe { (*slot).thief.store(task::DONE, Release) };
}

/// Runs a spawned task that this worker took from elsewhere (a steal, a relay hand-out,
/// an overflow) in a `Task` frame, so that the scope tasks it spawns are counted in their
/// scopes (`drained_on`), and finishes it at once: it waits for none of them. Drained
/// here instead, a task stolen back and forth between two workers would wait for its
/// children, each wait running the next stolen task nested inside it (leapfrogging), and
/// a search whose tasks spawn their children and return ran out of stack on two workers.
/// What it leaves in the deque is counted, or belongs to a scope of this worker's own;
/// the frame around drains it (the steal's `run_taken`, a relay batch's join).
pub(crate) fn run_counting<F>(w: &Worker, job: F)
where
    F: FnOnce(&Worker) -> Then,
{
    let depth = w.owner().depth();
    let task = w.frames().enter(Frame::Task(depth));
    let then = job(w);
    drop(task);
    then.finish(w);
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
    run_spawned(w, job);
    None
}

/// Spawns a detached task on `w`: counted made here, a slot of `w`'s deque.
pub(crate) fn detached<F: FnOnce(&Worker) + Send + 'static>(w: &Worker, f: F) {
    Counts::made(w);
    let job = move |w: &Worker| {
        crate::core::detached::run_detached(w, f);
        Then::Detached
    };
    // SAFETY: the job is `'static`.
    unsafe { push(w, job, None) };
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
