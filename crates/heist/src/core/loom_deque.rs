//! loom models of Lace's split deque (`core::deque`) on its own, driven the way
//! `Worker::join` and `Worker::sync` drive it: the owner writes a job into the slot
//! at `head` (then `advance`, calling `push_slow` when the gate is raised) and pops in
//! LIFO order, running a private task inline and otherwise
//! waiting for the thief's `DONE` before `pop_stolen` and `take_outcome`. Thieves call
//! `Deque::steal` a bounded number of times and run what they take.
//!
//! Every model checks that each task runs exactly once, that the owner reads the right
//! result for each task, that thieves ran exactly the tasks the owner saw stolen, and
//! that the deque ends empty. Models that exist for one path (grow on a split request,
//! re-publishing after a shrink found everything stolen) also check that the path was
//! taken in at least one explored execution, so that they cannot pass vacuously.
//!
//! A thief stops after its first `Steal::Empty`, so that it writes the push gate (Lace's
//! `splitreq`) at most once and never reads it afterwards. loom 0.7 does not keep the
//! modification order of an atomic that several threads store to with relaxed loads in
//! between (tokio-rs/loom#282, #389): with a thief that test-and-sets the gate twice,
//! loom lets the owner read an older value after its own newer store, which no real
//! execution can do, and reports a hang that is not there. One `Empty` per thief keeps
//! the models sound; the grow model uses a second thief to take what the grow shared.
//!
//! Jobs run with the empty context `()`: a slot does not care what its jobs run with,
//! so the models need no `Worker`.
//!
//! Run with `.ci/loom` (`RUSTFLAGS="--cfg loom" cargo test -p heist --release --lib loom`).
//! The preemption bound is [`PREEMPTIONS`] unless `LOOM_MAX_PREEMPTIONS` is set.

use super::deque::{Deque, Home, Owner, Pop, Reach, Steal};
use crate::core::stats::Counters;
use crate::core::sync::heavy_fence;
use crate::core::task::{fits, Slot, DONE};
use loom::thread;
use std::cell::UnsafeCell;
use std::mem::{offset_of, MaybeUninit};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Acquire, Ordering::Relaxed};
use std::sync::Arc;

/// The preemption bound used when `LOOM_MAX_PREEMPTIONS` is not set.
const PREEMPTIONS: usize = 3;

/// Spins of a waiting owner after which the model reports a hang instead of running into
/// loom's branch limit (a thief that claimed the task finishes in a few steps).
const SPIN_LIMIT: usize = 200;

/// Book-keeping of one explored execution. Plain std atomics: loom runs one thread at a
/// time, and these are not part of the protocol under test, so they add no interleavings.
struct Runs {
    runs: Vec<AtomicUsize>,
}

impl Runs {
    fn new(tasks: usize) -> Arc<Runs> {
        Arc::new(Runs {
            runs: (0..tasks).map(|_| AtomicUsize::new(0)).collect(),
        })
    }

    fn check_each_ran_once(&self) {
        for (id, r) in self.runs.iter().enumerate() {
            assert_eq!(r.load(Relaxed), 1, "task {id} ran a wrong number of times");
        }
    }
}

/// The result task `id` must produce.
fn expected(id: usize) -> u64 {
    0x1000 + 7 * id as u64
}

/// The job of task `id`: count the run, return `expected(id)`.
fn job(runs: Arc<Runs>, id: usize) -> impl FnOnce(&()) -> u64 + Send + 'static {
    move |_| {
        runs.runs[id].fetch_add(1, Relaxed);
        expected(id)
    }
}

/// A task the owner pushed, as `Worker::join` keeps it on its stack.
struct Pushed<'a> {
    slot: &'a Slot,
    id: usize,
}

/// A deque with its owner beside it, as a worker's seat keeps them (the owner's fast
/// paths find the gate at a fixed offset from themselves), and what else the model's
/// threads share (`relay::loom_gate`: the channels).
pub(crate) struct Place<E = ()> {
    pub(crate) dq: Deque,
    pub(crate) extra: E,
    owner: UnsafeCell<MaybeUninit<Owner<Place<E>>>>,
}

// SAFETY: only the thread that called `seat_owner` touches `owner`; the others use `dq`
// and `extra` alone.
unsafe impl<E: Sync> Sync for Place<E> {}
// SAFETY: as above; the owner is written and used on one thread only.
unsafe impl<E: Send> Send for Place<E> {}

// SAFETY: an `Owner<Place<E>>` is only made by `seat_owner`, in the `owner` field of the
// `Place` whose `dq` it is for, and `seat_owner` checks `is_home`.
unsafe impl<E> Home for Place<E> {
    const GATE_OFFSET: isize = (offset_of!(Place<E>, dq) + Deque::GATE_OFFSET) as isize
        - offset_of!(Place<E>, owner) as isize;
}

impl<E> Place<E> {
    pub(crate) fn new(capacity: usize, extra: E) -> Self {
        Place {
            dq: Deque::new(capacity),
            extra,
            owner: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// The deque's `Owner`, written in place beside it.
    ///
    /// # Safety
    /// At most once per place, on the one thread that then uses the owner; the place and
    /// `counters` outlive every use of it (it owns nothing, so it is never dropped).
    pub(crate) unsafe fn seat_owner<'a>(&'a self, counters: &'a Counters) -> &'a Owner<Self> {
        // SAFETY: by the contract no other thread touches `owner`, and this is the only
        // `Owner` of the deque.
        let owner = unsafe { (*self.owner.get()).write(Owner::new(&self.dq, counters)) };
        assert!(owner.is_home());
        owner
    }
}

/// The owner's side: an `Owner` over the shared deque plus the stack of pushed tasks.
struct OwnerSide<'a, B> {
    owner: &'a Owner<Place>,
    runs: Arc<Runs>,
    make: fn(Arc<Runs>, usize) -> B,
    stack: Vec<Pushed<'a>>,
    /// The slot `next_slot()` returns on an empty deque.
    bottom: *const Slot,
    /// Tasks that were stolen and whose outcome the owner took.
    stolen: Vec<usize>,
    /// A relay owner (`Owner::start_private`): its slow pop asks whether a task was
    /// handed out (here: taken by a lifeline), and a stolen top is released as handed out.
    relay: bool,
}

impl<'a, B> OwnerSide<'a, B>
where
    B: FnOnce(&()) -> u64 + Send + 'static,
{
    fn new(owner: &'a Owner<Place>, runs: &Arc<Runs>, make: fn(Arc<Runs>, usize) -> B) -> Self {
        assert!(fits::<B, u64>(), "the model's job must fit in a slot");
        let bottom: *const Slot = owner.next_slot().expect("capacity > 0");
        OwnerSide {
            owner,
            runs: Arc::clone(runs),
            make,
            stack: Vec::new(),
            bottom,
            stolen: Vec::new(),
            relay: false,
        }
    }

    /// The owner's slow push of its scheduler: Lace publishes or grows; relay polls,
    /// which with no request waiting only lowers the gate under the hold.
    fn push_slow(&self) {
        if self.relay {
            let held = self.owner.hold();
            self.owner.lower_gate();
            drop(held);
        } else {
            self.owner.push_slow(|| false);
        }
    }

    /// The owner's slow pop of its scheduler.
    fn pop_slow(&self) -> Pop {
        if self.relay {
            self.owner.pop_unless_handed_out()
        } else {
            self.owner.pop_slow(|| false)
        }
    }

    /// Releases the top slot after its thief finished.
    fn release_stolen(&self) {
        if self.relay {
            self.owner.pop_handed_out();
        } else {
            self.owner.pop_stolen();
        }
    }

    /// Pushes task `id` like `Worker::join`: writes the slot at `head` (a spare one if the
    /// deque is full), publishes `head`, then looks at the gate; takes the task back out of
    /// a spare slot and runs it inline, else calls `push_slow` if the gate is raised.
    /// Returns `None` if the deque was full and the task ran inline, else whether
    /// `push_slow` ran.
    fn push(&mut self, id: usize) -> Option<bool> {
        let job = (self.make)(Arc::clone(&self.runs), id);
        let slot = self.owner.join_slot();
        // SAFETY: `slot` is the free slot at `head`, not yet visible to thieves, and the
        // job fits (checked in `new`).
        unsafe { slot.put::<(), B, u64>(job) };
        let slow = self.owner.advance(slot);
        if slow && self.owner.is_spare(slot) {
            // SAFETY: nobody but the owner reads a spare slot; it holds the job just put.
            let job = unsafe { slot.take::<B, u64>() };
            self.owner.unpush_spare(slot);
            assert_eq!(job(&()), expected(id));
            return None;
        }
        if slow {
            self.push_slow();
        }
        self.stack.push(Pushed { slot, id });
        // The owner now runs the other half of its join: a point where a real thief gets
        // to run without any preemption.
        thread::yield_now();
        Some(slow)
    }

    /// Pushes a scope's mark like `Worker::push_mark`: a claimed slot at `head`, taking the
    /// slot past the capacity if the deque is full. `None` if a mark lies there already,
    /// else whether `push_slow` ran.
    fn push_mark(&mut self) -> Option<bool> {
        let slot = self.owner.mark_slot()?;
        // SAFETY: `slot` is the free slot at `head`, not yet visible to thieves.
        unsafe { slot.claim() };
        let slow = self.owner.push();
        if slow {
            self.push_slow();
        }
        self.stack.push(Pushed {
            slot,
            id: usize::MAX,
        });
        thread::yield_now();
        Some(slow)
    }

    /// Pops the top task like `Worker::sync`: runs it inline if private and returns
    /// `None`, else returns it for `await_stolen`.
    fn pop(&mut self) -> Option<Pushed<'a>> {
        let top = self.stack.pop().expect("pop on an empty model stack");
        if self.owner.try_pop_private(top.slot) || self.pop_slow() == Pop::Private {
            // SAFETY: popped privately, so no thief claimed the slot and it still holds
            // the `B` put by `push`.
            let job = unsafe { top.slot.take::<B, u64>() };
            assert_eq!(job(&()), expected(top.id), "private pop of task {}", top.id);
            return None;
        }
        Some(top)
    }

    /// Waits for the thief of `t` (as leapfrogging does, minus the stealing back), then
    /// releases the slot and checks the result.
    fn await_stolen(&mut self, t: Pushed<'a>) {
        let mut spins = 0;
        loop {
            let th = t.slot.thief.load(Acquire);
            if th == DONE {
                break;
            }
            spins += 1;
            assert!(
                spins < SPIN_LIMIT,
                "the owner waits forever for stolen task {} (thief field {th})",
                t.id
            );
            thread::yield_now();
        }
        self.release_stolen();
        // SAFETY: `DONE` was read with acquire ordering; the slot was put with `B`/`u64`.
        let out = unsafe { t.slot.take_outcome::<B, u64>() };
        match out {
            Ok(r) => assert_eq!(r, expected(t.id), "stolen task {}", t.id),
            Err(_) => panic!("stolen task {} panicked", t.id),
        }
        self.stolen.push(t.id);
    }

    /// Finishes task `t`, which is not on top, in place as an out-of-order promise join
    /// does (`promise::join_in_place`): takes its slot back from the shared part and runs
    /// it, or, if a thief has it, waits for the thief. Either way the slot is left claimed.
    /// Returns whether it was taken back.
    fn join_in_place(&mut self, t: &Pushed<'a>) -> bool {
        if let Some(held) = self.owner.take_back(t.slot, true) {
            // SAFETY: private now, and the hold keeps lifelines off it, so no thief can
            // claim it; it holds the `B` `push` put.
            let job = unsafe {
                let job = t.slot.take::<B, u64>();
                t.slot.claim();
                job
            };
            drop(held);
            assert_eq!(job(&()), expected(t.id), "task {} run in place", t.id);
            return true;
        }
        self.spin_until_done(t);
        // SAFETY: `DONE` was read with acquire ordering; the outcome is read once.
        let out = unsafe { t.slot.read_outcome::<B, u64>() };
        assert_eq!(out.ok(), Some(expected(t.id)), "stolen task {}", t.id);
        // SAFETY: the thief is done with the slot.
        unsafe { t.slot.claim() };
        self.stolen.push(t.id);
        false
    }

    /// Pops the claimed slot of `t`, now on top: nothing left to run, but a thief that took
    /// it after a grow must be done with it first. True if a thief took it after the claim.
    fn pop_claimed(&mut self, t: Pushed<'a>, ran_in_place: bool) -> bool {
        if self.owner.try_pop_private(t.slot) || self.owner.pop_slow(|| false) == Pop::Private {
            return false;
        }
        self.spin_until_done(&t);
        self.owner.pop_stolen();
        // SAFETY: done, and the claimed entry has no outcome to drop.
        assert!(unsafe { t.slot.discard_outcome() }.is_none());
        if ran_in_place {
            // A thief took the claimed slot: it ran nothing, but it counts a steal.
            self.stolen.push(usize::MAX);
        }
        ran_in_place
    }

    fn spin_until_done(&self, t: &Pushed<'a>) {
        let mut spins = 0;
        while t.slot.thief.load(Acquire) != DONE {
            spins += 1;
            assert!(
                spins < SPIN_LIMIT,
                "the owner waits forever for task {}",
                t.id
            );
            thread::yield_now();
        }
    }

    /// Pops the top task and, if it was stolen, waits for it. True if it was stolen.
    fn pop_and_sync(&mut self) -> bool {
        match self.pop() {
            None => false,
            Some(t) => {
                self.await_stolen(t);
                true
            }
        }
    }

    /// The deque is empty again: `head` is back at the bottom.
    fn check_empty(&self) {
        assert!(self.stack.is_empty());
        let next: *const Slot = self.owner.next_slot().expect("an empty deque has room");
        assert_eq!(
            next, self.bottom,
            "head is not back at the bottom of the deque"
        );
    }
}

/// A thief: up to `attempts` calls of `steal`, running whatever it takes as
/// `Worker::steal_from` does. It stops after its first `Empty`, which may have raised
/// the split request (see the module docs for why). Returns the number of tasks it ran.
fn thief(place: Arc<Place>, me: usize, attempts: usize) -> usize {
    let mut ran = 0;
    for _ in 0..attempts {
        match place.dq.steal() {
            Steal::Taken(slot) => {
                slot.thief.store(me + 1, Relaxed);
                // SAFETY: the CAS in `steal` gave this thief the slot, and the owner
                // filled it with `put::<(), _, _>`.
                unsafe { slot.run_stolen(&()) };
                ran += 1;
            }
            Steal::Busy => {}
            Steal::Empty => break,
        }
    }
    ran
}

/// Explores `f` with the default preemption bound unless `LOOM_MAX_PREEMPTIONS` is set.
fn model(f: impl Fn() + Send + Sync + 'static) {
    crate::core::sync::loom_model(PREEMPTIONS, f);
}

/// The shape of one model.
struct Shape {
    /// Deque slots.
    capacity: usize,
    /// Task ids `0..tasks` the owner's script uses, each exactly once.
    tasks: usize,
    thieves: usize,
    /// Steal attempts per thief.
    attempts: usize,
}

impl Shape {
    const fn new(capacity: usize, tasks: usize, thieves: usize, attempts: usize) -> Self {
        Shape {
            capacity,
            tasks,
            thieves,
            attempts,
        }
    }
}

/// One execution: a deque, thieves, and the owner running `script`. Checks that every
/// task ran once, that thieves ran exactly the tasks the owner saw stolen, and that the
/// deque ends empty with nothing left to steal.
fn run_model<B>(
    shape: Shape,
    make: fn(Arc<Runs>, usize) -> B,
    script: impl FnOnce(&mut OwnerSide<'_, B>),
) where
    B: FnOnce(&()) -> u64 + Send + 'static,
{
    run_model_with(shape, make, false, thief, script)
}

/// `run_model` with thieves that run `steal` (`thief`, or a sleeper's `lifeline_lace`
/// and `lifeline_relay`), and an owner of either scheduler.
fn run_model_with<B>(
    shape: Shape,
    make: fn(Arc<Runs>, usize) -> B,
    relay: bool,
    steal: fn(Arc<Place>, usize, usize) -> usize,
    script: impl FnOnce(&mut OwnerSide<'_, B>),
) where
    B: FnOnce(&()) -> u64 + Send + 'static,
{
    let place = Arc::new(Place::new(shape.capacity, ()));
    let counters = Counters::default();
    let runs = Runs::new(shape.tasks);
    let handles: Vec<_> = (0..shape.thieves)
        .map(|i| {
            let place = Arc::clone(&place);
            let attempts = shape.attempts;
            thread::spawn(move || steal(place, i, attempts))
        })
        .collect();
    // SAFETY: the only owner of this new place, used on this thread alone; `place` and
    // `counters` outlive every use of it, which ends with this function.
    let owner = unsafe { place.seat_owner(&counters) };
    let dq = &place.dq;
    if relay {
        owner.start_private();
    }
    let stolen = {
        let mut side = OwnerSide::new(owner, &runs, make);
        side.relay = relay;
        script(&mut side);
        side.check_empty();
        side.stolen.len()
    };
    let by_thieves: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(
        by_thieves, stolen,
        "thieves ran other tasks than the owner saw stolen"
    );
    runs.check_each_ran_once();
    assert!(
        !dq.has_shared(),
        "the drained deque still shows shared work"
    );
}

/// Explores `f`, which records in a `Coverage` the paths each execution takes, and checks
/// that the explored executions took each of `paths` (see [`Coverage::check`]).
fn model_covering(paths: &[&str], f: impl Fn(&Coverage) + Send + Sync + 'static) {
    let cov = Arc::new(Coverage::default());
    let c = Arc::clone(&cov);
    model(move || f(&c));
    cov.check(paths);
}

/// Paths a model must reach in at least one explored execution, so that it cannot pass by
/// never exercising what it is for.
#[derive(Default)]
struct Coverage {
    flags: [AtomicBool; 4],
}

impl Coverage {
    fn hit(&self, i: usize) {
        self.flags[i].store(true, Relaxed);
    }

    fn check(&self, names: &[&str]) {
        for (i, name) in names.iter().enumerate() {
            assert!(self.flags[i].load(Relaxed), "no explored execution {name}");
        }
    }
}

/// Two pushes, two pops, then a push and pop that reuse a slot a thief may have run.
#[test]
fn loom_one_thief_push_pop() {
    model_covering(&["stole task 0", "stole task 2 from a reused slot"], |c| {
        let shape = Shape::new(2, 3, 1, 3);
        run_model(shape, job, |o| {
            o.push(0);
            o.push(1);
            o.pop_and_sync();
            if o.pop_and_sync() {
                c.hit(0);
            }
            o.push(2);
            if o.pop_and_sync() {
                c.hit(1);
            }
        })
    });
}

/// A full deque runs the task inline (capacity 2, three nested pushes).
#[test]
fn loom_one_thief_full_deque() {
    model_covering(&["stole task 0"], |c| {
        let shape = Shape::new(2, 3, 1, 2);
        run_model(shape, job, |o| {
            o.push(0);
            o.push(1);
            assert_eq!(o.push(2), None, "a push into a full deque must fail");
            o.pop_and_sync();
            if o.pop_and_sync() {
                c.hit(0);
            }
        })
    });
}

/// Two thieves race each other and the owner over three tasks.
#[test]
fn loom_two_thieves_push_pop() {
    model_covering(&["had two tasks stolen"], |c| {
        let shape = Shape::new(3, 3, 2, 2);
        run_model(shape, job, |o| {
            for id in 0..3 {
                o.push(id);
            }
            for _ in 0..3 {
                o.pop_and_sync();
            }
            if o.stolen.len() >= 2 {
                c.hit(0);
            }
        })
    });
}

/// Only task 0 is shared after the pushes; a thief that finds nothing more raises a
/// split request, the owner grows the shared part on its next push, and the other thief
/// can take a task above task 0.
#[test]
fn loom_split_request_grows_shared_part() {
    model_covering(
        &["grew on push", "had a task above the first one stolen"],
        |c| {
            let shape = Shape::new(3, 3, 2, 2);
            run_model(shape, job, |o| {
                o.push(0);
                for id in 1..3 {
                    // With tasks below, a slow push can only be a grow (nothing is all-stolen
                    // before the first pop).
                    if o.push(id) == Some(true) {
                        c.hit(0);
                    }
                }
                for _ in 0..3 {
                    o.pop_and_sync();
                }
                if o.stolen.iter().any(|&id| id > 0) {
                    c.hit(1);
                }
            })
        },
    );
}

/// The owner finds its only task stolen (a shrink reports all stolen), pushes a new task
/// above it as leapfrogging does, which must re-publish the deque for thieves, and
/// syncs both; then it pushes once more after `pop_stolen` left the deque all stolen.
fn republish(thieves: usize, attempts: usize, c: &Coverage) {
    let shape = Shape::new(2, 3, thieves, attempts);
    run_model(shape, job, |o| {
        o.push(0);
        match o.pop() {
            None => {
                o.push(1);
                o.pop_and_sync();
            }
            Some(t0) => {
                c.hit(0);
                assert_eq!(
                    o.push(1),
                    Some(true),
                    "a push after all-stolen must publish"
                );
                if o.pop_and_sync() {
                    c.hit(1);
                }
                o.await_stolen(t0);
            }
        }
        o.push(2);
        o.pop_and_sync();
    })
}

#[test]
fn loom_one_thief_republish_after_all_stolen() {
    model_covering(
        &[
            "found task 0 stolen",
            "had task 1 stolen after re-publishing",
        ],
        |c| republish(1, 3, c),
    );
}

#[test]
fn loom_two_thieves_republish_after_all_stolen() {
    model_covering(
        &[
            "found task 0 stolen",
            "had task 1 stolen after re-publishing",
        ],
        |c| republish(2, 1, c),
    );
}

/// An out-of-order join (`promise::join_in_place`): task 0, shared since the first push,
/// is taken back from under tasks 1 and 2 (a CAS that lowers `split`, like a shrink) and
/// run in place, or else awaited from its thief. Its claimed slot may be shared again by a
/// grow on the next push; a thief that takes it runs nothing. Every task still runs once.
#[test]
fn loom_take_back_and_claim() {
    model_covering(
        &[
            "took task 0 back and ran it in place",
            "found task 0 with a thief",
            "had a thief take the claimed slot",
        ],
        |c| {
            let shape = Shape::new(4, 4, 2, 2);
            run_model(shape, job, |o| {
                for id in 0..3 {
                    o.push(id);
                }
                let t0 = o.stack.remove(0);
                let in_place = o.join_in_place(&t0);
                c.hit(if in_place { 0 } else { 1 });
                o.push(3);
                for _ in 0..3 {
                    o.pop_and_sync();
                }
                if o.pop_claimed(t0, in_place) {
                    c.hit(2);
                }
            })
        },
    );
}

/// A scope's mark (`Worker::push_mark`) on a full deque takes the slot past the capacity,
/// where no task goes, and only one mark fits there. Shared by a grow, a thief that takes it
/// runs nothing; the owner pops it like a claimed slot, waiting for that thief if need be.
#[test]
fn loom_mark_on_a_full_deque() {
    model_covering(&["had a thief take the mark"], |c| {
        let shape = Shape::new(1, 2, 2, 2);
        run_model(shape, job, |o| {
            o.push(0);
            o.push_mark()
                .expect("the slot past the capacity takes a mark");
            assert!(o.push_mark().is_none(), "a second mark past the capacity");
            assert_eq!(o.push(1), None, "a task push into a full deque must fail");
            let mark = o.stack.pop().expect("the mark is on top");
            if o.pop_claimed(mark, true) {
                c.hit(0);
            }
            o.pop_and_sync();
        })
    });
}

/// A sleeper's last look on Lace (`Worker::lifeline_look`): the sign on the owner's push
/// gate, the asymmetric fence, then a lifeline if the owner holds private tasks; then it
/// steals what is shared, as its next search would. Returns the tasks it ran.
fn lifeline_lace(place: Arc<Place>, me: usize, attempts: usize) -> usize {
    place.dq.raise_limit();
    assert!(heavy_fence());
    if place.dq.has_private() && place.dq.lifeline(me, Reach::Share, || ()).is_some() {
        LIFELINES.with(|n| n.set(n.get() + 1));
    }
    thief(place, me, attempts)
}

/// A sleeper's last look on relay: the sign, the fence, then a lifeline that takes half of
/// the owner's private tasks, which it runs as a batch (`relay::run_batch`).
fn lifeline_relay(place: Arc<Place>, me: usize, _attempts: usize) -> usize {
    place.dq.raise_limit();
    assert!(heavy_fence());
    let Some((first, count)) = place
        .dq
        .has_private()
        .then(|| place.dq.lifeline(me, Reach::Take, || ()))
        .flatten()
    else {
        return 0;
    };
    LIFELINES.with(|n| n.set(n.get() + 1));
    for i in 0..count as usize {
        // SAFETY: the lifeline took the `count` slots from `first`; the owner filled them
        // with `put::<(), _, _>` and waits for `DONE` before reusing them.
        let slot = unsafe { &*first.add(i) };
        slot.thief.store(me + 1, Relaxed);
        // SAFETY: as above.
        unsafe { slot.run_stolen(&()) };
    }
    count as usize
}

/// Runs the job that `make` made into `slot`, which the caller popped privately.
///
/// # Safety
/// `slot` holds a job made by `make`, put with `u64`, and is the caller's alone.
unsafe fn run_popped<B: FnOnce(&()) -> u64>(slot: &Slot, _make: fn(Arc<Runs>, usize) -> B) -> u64 {
    // SAFETY: the caller's contract.
    let job = unsafe { slot.take::<B, u64>() };
    job(&())
}

std::thread_local! {
    /// Lifelines that reached work in the execution being explored (loom runs each
    /// execution's threads on one OS thread, one at a time).
    static LIFELINES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn lifelines_taken() -> usize {
    LIFELINES.with(|n| n.replace(0))
}

/// The owner pushes one task and never comes back to the runtime (it stops here), while a
/// sleeper makes its last look. Either the sleeper reaches the task (a lifeline, or the
/// share of a push that saw the sign), or the push saw the sign (and shared the task, on
/// Lace, or would answer the parked sleeper, on relay), so that the push's wake-up brings
/// the sleeper to it. Never neither: that would be a lost wake-up. Before the sleeper
/// starts, the owner pushes and pops a task of its own, so that the deque is neither all
/// stolen (whose first push publishes) nor raised (as a new owner's is).
fn owner_never_returns(relay: bool, c: &Coverage) {
    let _ = lifelines_taken();
    let place = Arc::new(Place::new(2, ()));
    let counters = Counters::default();
    let runs = Runs::new(2);
    // SAFETY: as in `run_model_with`.
    let owner = unsafe { place.seat_owner(&counters) };
    if relay {
        owner.start_private();
    }
    let warm = owner.fast_slot().expect("room");
    // SAFETY: the free slot at `head`; the job fits.
    unsafe { warm.put::<(), _, u64>(job(Arc::clone(&runs), 1)) };
    assert!(owner.advance(warm), "a new owner's gate is raised");
    if relay {
        let held = owner.hold();
        owner.lower_gate();
        drop(held);
    } else {
        owner.push_slow(|| false);
    }
    let popped = owner.try_pop_private(warm)
        || if relay {
            owner.pop_unless_handed_out() == Pop::Private
        } else {
            owner.pop_slow(|| false) == Pop::Private
        };
    assert!(popped, "nobody else runs yet");
    // SAFETY: popped privately; it holds the job `job` made above.
    assert_eq!(unsafe { run_popped(warm, job) }, expected(1));

    let p = Arc::clone(&place);
    let sleeper = thread::spawn(move || {
        if relay {
            lifeline_relay(p, 0, 1)
        } else {
            lifeline_lace(p, 0, 1)
        }
    });
    let slot = owner.fast_slot().expect("room");
    // SAFETY: the free slot at `head`; the job fits.
    unsafe { slot.put::<(), _, u64>(job(Arc::clone(&runs), 0)) };
    let saw_sign = owner.advance(slot);
    if saw_sign && !relay {
        owner.push_slow(|| false);
    }
    let ran = sleeper.join().unwrap();
    let by_lifeline = lifelines_taken() > 0;
    assert!(
        ran == 1 || saw_sign,
        "lost: the push did not see the sign, and the sleeper did not reach the task"
    );
    if ran == 0 && !relay {
        assert!(
            place.dq.has_shared(),
            "the push saw the sign but did not share"
        );
    }
    if ran == 1 {
        runs.check_each_ran_once();
    }
    if by_lifeline {
        c.hit(0);
    }
    if saw_sign {
        c.hit(1);
    }
}

#[test]
fn loom_lifeline_lace_owner_never_returns() {
    model_covering(
        &[
            "reached the task by a lifeline",
            "had the push see the sign",
        ],
        |c| owner_never_returns(false, c),
    );
}

#[test]
fn loom_lifeline_relay_owner_never_returns() {
    model_covering(
        &[
            "reached the task by a lifeline",
            "had the push see the sign",
        ],
        |c| owner_never_returns(true, c),
    );
}

/// The owner pushes and pops a task (the first push on Lace publishes it), then pushes and
/// pops two private tasks, one at a time, while a sleeper's lifeline shares the private
/// task (half of one) and steals: the owner's THE-ordered pop and its held slow pop race the lifeline.
/// Every task runs once, and the owner sees stolen exactly what the sleeper ran.
#[test]
fn loom_lifeline_lace_races_the_owners_pops() {
    model_covering(&["had a lifeline share a private task"], |c| {
        let _ = lifelines_taken();
        let shape = Shape::new(3, 3, 1, 2);
        run_model_with(shape, job, false, lifeline_lace, |o| {
            // Published and (unless stolen) taken back: the deque is then neither all
            // stolen nor raised, and tasks 1 and 2 stay private.
            o.push(0);
            o.pop_and_sync();
            o.push(1);
            o.pop_and_sync();
            o.push(2);
            o.pop_and_sync();
        });
        if lifelines_taken() > 0 {
            c.hit(0);
        }
    });
}

/// The relay owner (whose deque no thief touches otherwise) pushes two tasks and pops
/// both while a sleeper's lifeline takes half of them: a task the lifeline took is
/// awaited and released as handed out. Every task runs once.
#[test]
fn loom_lifeline_relay_races_the_owners_pops() {
    model_covering(&["had a lifeline take a private task"], |c| {
        let _ = lifelines_taken();
        let shape = Shape::new(2, 2, 1, 1);
        run_model_with(shape, job, true, lifeline_relay, |o| {
            o.push(0);
            o.push(1);
            for _ in 0..2 {
                o.pop_and_sync();
            }
        });
        if lifelines_taken() > 0 {
            c.hit(0);
        }
    });
}

/// A full deque: the owner's `join` pushes into a spare slot, takes the task back and
/// runs it inline, while a sleeper reaches the task below it and then makes a lifeline
/// again, with `split` already over that task: Lace steals the published task first,
/// relay's sleeper makes two lifelines. Neither lifeline reaches the spare slot: every
/// task runs once, the spare one on the owner. Without the clamp in
/// `Deque::head_index`, both models fail.
fn spare_slot_under_a_lifeline(relay: bool, c: &Coverage) {
    let _ = lifelines_taken();
    let shape = Shape::new(1, 2, 1, 1);
    let thief = if relay {
        lifelines_relay
    } else {
        steal_then_lifeline
    };
    run_model_with(shape, job, relay, thief, |o| {
        // Lace publishes task 0 (the deque starts all stolen); relay keeps it.
        o.push(0);
        assert_eq!(o.push(1), None, "a push onto a full deque runs inline");
        o.pop_and_sync();
    });
    if lifelines_taken() > 0 {
        c.hit(0);
    }
}

/// A Lace sleeper that steals, then makes its last look (sign, fence, lifeline), then
/// steals what that shared.
fn steal_then_lifeline(place: Arc<Place>, me: usize, attempts: usize) -> usize {
    let ran = thief(Arc::clone(&place), me, attempts);
    ran + lifeline_lace(place, me, attempts)
}

/// A relay sleeper that makes a lifeline, runs what it took, and makes another.
fn lifelines_relay(place: Arc<Place>, me: usize, attempts: usize) -> usize {
    let ran = lifeline_relay(Arc::clone(&place), me, attempts);
    ran + lifeline_relay(place, me, attempts)
}

#[test]
fn loom_lifeline_lace_spare_slot() {
    model_covering(&["had a lifeline reach a task"], |c| {
        spare_slot_under_a_lifeline(false, c)
    });
}

#[test]
fn loom_lifeline_relay_spare_slot() {
    model_covering(&["had a lifeline reach a task"], |c| {
        spare_slot_under_a_lifeline(true, c)
    });
}
