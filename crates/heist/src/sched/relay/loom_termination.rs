//! Loom models of the relay scheduler's termination detection and task barrier (thesis
//! §4.1–4.2), run under `--cfg loom` against the protocol code itself: steal-request
//! handling (`request.rs`) and the manager's side (`termination.rs`) are generic over
//! [`Peer`], and each model worker is a loom thread owning a `ModelPeer` that implements
//! it over the real channels (`Channels`, whose `Mpsc` and `Spsc` switch to loom's
//! atomics through `crate::core::sync`) and the real barrier numbers (`Barriers`).
//!
//! Tasks are abstract: a `Task` takes `work` steps, then pushes `children` leaf tasks one
//! per step, then finishes, counting itself in a shared counter. A model worker's step is
//! the runtime's scheduling loop in small: handle every waiting request (the real
//! `handle_waiting`, which ends with the manager's `check`), then advance the running
//! task, or start the newest task of its deque, or the one a victim sent, or else send a
//! steal request (the real `ask`) to the next worker round-robin, if none is out and,
//! for a registered thief, its back-off (counted in steps, not time) is over; in some
//! models a worker also asks while it runs a task, once its deque is empty. Victims
//! are chosen round-robin and `random_other` gets a counter, so that every execution
//! is deterministic given loom's choices; with three workers `random_other` has one
//! choice anyway. One worker runs a root program: per barrier, it pushes tasks, asks
//! for the barrier and keeps stepping until the real `reached` says it is answered, then
//! `leave`s it and goes straight on to the next.
//!
//! Every model checks:
//! - **safety**: when a barrier is seen answered, every task created before it has
//!   finished, as seen through a relaxed load of the counter, so that a finish that does
//!   not happen before the answer fails too (a task in a message is unfinished);
//! - **liveness within the model**: the threads take a bounded number of steps (loom
//!   must terminate); then the model's main thread, with the others joined, steps every
//!   worker round-robin, which is fair, and every barrier must be answered within
//!   `DRAIN_ROUNDS` rounds;
//! - by the assertions in the code under test: no channel is ever found full.
//!
//! The models:
//! - `loom_two_workers_one_barrier`: the manager's root task arrives after two steps,
//!   pushes a task that spawns a child, asks for a barrier and waits; worker 1 steals
//!   through requests, and may be registered idle before the root arrives.
//! - `loom_two_workers_early_requests`: the same with requests sent early, while their
//!   thief runs a task (§3.3.2): such a request must not make its thief count as idle
//!   (§4.1.1), on its way or when it comes home.
//! - `loom_three_workers_forward_and_update`: worker 2 runs a task that later spawns a
//!   child, the manager waits in a barrier, worker 1 asks, requests go out early.
//!   Worker 1's requests are forwarded (n−1 = 2 failures before going home) and, once
//!   the manager has registered it idle, answered by worker 2, which must first send
//!   the manager an update (§4.1.2). Preemption bound 0: threads switch only between
//!   steps, but in every order, and loads still read every value the memory model
//!   allows.
//! - `loom_three_workers_update_races`: the same from the moment worker 2 is about to
//!   answer registered worker 1 (a deterministic warm-up gets there), with a preemption
//!   anywhere.
//! - `loom_barrier_exit_sends_update`: worker 1 (not the manager) waits in a barrier,
//!   then pushes a task and waits in a second one; leaving the first, it must send the
//!   manager an update, and the second must not be answered before its task is done
//!   (§4.2.1). This model found a bug: see its comment.
//! - `loom_manager_two_barriers`: two barriers waited in by the manager, with early
//!   requests.
//!
//! Each model also counts, across its executions, that the paths it exists for were
//! taken while the threads ran (a request forwarded or sent early, an update from a
//! victim or from a barrier exit, a task stolen, the last barrier answered before the
//! drain), so that it cannot pass vacuously.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p heist --release --lib loom_termination`
//! (about 30 s on 2 cores). The preemption bound is given per model;
//! `LOOM_MAX_PREEMPTIONS` overrides it.

use super::peer::Peer;
use super::request::{ask, handle, handle_waiting};
use super::termination::{leave, reached, MANAGER};
use super::{Barriers, Channels, Request, Status, StealAmount, WorkerState};
use crate::core::stats::Counters;
use loom::model::Builder;
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;

/// Counts, across the executions of one model, how often a path was taken. A std atomic
/// outside loom, so it adds nothing to the explored state.
type Hits = std::sync::Arc<std::sync::atomic::AtomicUsize>;

fn hit(h: &Hits) {
    h.fetch_add(1, Relaxed);
}

/// A model builder with preemption bound `bound`, unless `LOOM_MAX_PREEMPTIONS` is set.
/// The branch limit is raised so that a drain that fails to terminate reaches its own
/// liveness message rather than loom's limit.
fn builder(bound: usize) -> Builder {
    let mut b = Builder::new();
    b.max_branches = 20_000;
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        b.preemption_bound = Some(bound);
    }
    b
}

/// Round-robin rounds of the sequential drain within which every barrier must be
/// answered. Generous: a request comes home within n hops, and a registered thief backs
/// off for a few steps.
const DRAIN_ROUNDS: usize = 64;

/// An abstract task: `work` steps, then `children` leaves pushed one per step.
#[derive(Clone, Copy, Debug)]
struct Task {
    work: u8,
    children: u8,
}

impl Task {
    const LEAF: Task = Task {
        work: 0,
        children: 0,
    };

    /// How many tasks this one stands for, itself included.
    fn size(self) -> usize {
        1 + self.children as usize
    }
}

/// A task message: one task (the models steal one at a time) and its victim.
#[derive(Clone, Copy, Debug)]
struct Gift {
    from: u32,
    task: Task,
}

/// What the model workers share: the real channels and barrier numbers, and the number
/// of tasks finished.
struct Net {
    channels: Vec<Channels<Gift>>,
    barriers: Barriers,
    finished: AtomicUsize,
}

/// The paths a model wants to see taken, counted across its executions.
#[derive(Clone, Default)]
struct Seen {
    /// A request forwarded to another victim (not sent home).
    forwarded: Hits,
    /// A victim other than the manager sent an update for a registered thief.
    victim_update: Hits,
    /// A worker other than the manager sent an update on leaving a barrier.
    exit_update: Hits,
    /// A task arrived through a task channel.
    stolen: Hits,
    /// A request was sent while its thief ran a task.
    early: Hits,
    /// The last barrier was answered while the threads still ran.
    declared: Hits,
    /// A victim held a request of the thief it last gave a task to (`Peer::hold`).
    held: Hits,
}

/// A model worker: the relay state of the runtime's, a deque of abstract tasks, and
/// the task it is running.
struct ModelPeer {
    me: u32,
    net: Arc<Net>,
    local: WorkerState,
    counters: Counters,
    /// Private tasks; the owner's end is the back, thieves get the front.
    deque: RefCell<VecDeque<Task>>,
    running: Cell<Option<Task>>,
    /// The last worker this one sent a new request to.
    last_victim: Cell<u32>,
    rng: Cell<u64>,
    /// Steps a registered thief waits before its next request, and has waited.
    backoff: u8,
    paused: Cell<u8>,
    /// Whether this worker asks as soon as its deque is empty, even while it runs a
    /// task (a request sent early, §3.3.2, as the runtime does while it waits for a
    /// stolen task): a request then says nothing about its thief being idle (§4.1.1).
    eager: bool,
    /// Whether a victim that runs a task holds the request of the thief it last gave a
    /// task to, as the runtime's owner does while it syncs the slot it handed out.
    holds: bool,
    /// The thief this worker last gave a task to (the runtime reads it from its top slot).
    last_given: Cell<Option<u32>>,
    /// Whether the threads run (paths are counted only then, not in the warm-up or the
    /// drain).
    live: Cell<bool>,
    seen: Seen,
}

impl Peer for ModelPeer {
    type Tasks = Gift;

    fn me(&self) -> u32 {
        self.me
    }

    fn n(&self) -> u32 {
        self.net.channels.len() as u32
    }

    fn state(&self) -> &WorkerState {
        &self.local
    }

    fn barriers(&self) -> &Barriers {
        &self.net.barriers
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn next_request(&self) -> Option<Request> {
        self.channels().requests.recv()
    }

    fn requests_waiting(&self) -> bool {
        !self.channels().requests.is_empty()
    }

    fn is_idle(&self) -> bool {
        self.running.get().is_none() && self.deque.borrow().is_empty() && self.channels().no_tasks()
    }

    fn no_jobs_queued(&self) -> bool {
        true
    }

    fn take_tasks(&self, _amount: StealAmount) -> Option<Gift> {
        let task = self.deque.borrow_mut().pop_front()?;
        Some(Gift {
            from: self.me,
            task,
        })
    }

    fn give(&self, thief: u32, tasks: Gift) {
        self.last_given.set(Some(thief));
        self.net.channels[thief as usize].post_tasks(tasks);
    }

    fn hold(&self, req: Request) -> bool {
        let l = &self.local;
        let keep = self.holds
            && !req.update
            && self.running.get().is_some()
            && self.last_given.get() == Some(req.thief)
            && l.held.get().is_none();
        if keep {
            self.hit(&self.seen.held);
            l.held.set(Some(req));
        }
        keep
    }

    fn send(&self, to: u32, req: Request) {
        let s = &self.seen;
        match (req.update, req.thief == self.me) {
            (false, false) if to != req.thief => self.hit(&s.forwarded),
            (true, false) if self.me != MANAGER => self.hit(&s.victim_update),
            (true, true) if self.me != MANAGER => self.hit(&s.exit_update),
            _ => {}
        }
        self.net.channels[to as usize].post_request(req);
    }

    fn random(&self) -> u64 {
        self.rng.set(self.rng.get() + 1);
        self.rng.get()
    }
}

impl ModelPeer {
    fn new(me: u32, net: Arc<Net>, plan: &Plan, seen: Seen) -> ModelPeer {
        let running = plan.initial.get(me as usize).copied().flatten();
        ModelPeer {
            me,
            net,
            local: WorkerState::default(),
            counters: Counters::default(),
            deque: RefCell::new(VecDeque::new()),
            running: Cell::new(running),
            last_victim: Cell::new(me),
            rng: Cell::new(0),
            backoff: plan.backoff,
            paused: Cell::new(0),
            eager: plan.eager,
            holds: plan.holds,
            last_given: Cell::new(None),
            live: Cell::new(false),
            seen,
        }
    }

    fn channels(&self) -> &Channels<Gift> {
        &self.net.channels[self.me as usize]
    }

    fn hit(&self, h: &Hits) {
        if self.live.get() {
            hit(h);
        }
    }

    /// One round of the scheduling loop.
    fn step(&self) {
        if let Some(req) = self.local.held.take() {
            handle(self, req);
        }
        handle_waiting(self);
        if self.eager && self.running.get().is_some() && self.deque.borrow().is_empty() {
            // Unless an answer waits already (the runtime would run it).
            if self.channels().no_tasks() {
                self.maybe_ask();
            }
        }
        if let Some(task) = self.running.take() {
            self.work_on(task);
            return;
        }
        let newest = self.deque.borrow_mut().pop_back();
        if let Some(task) = newest {
            self.running.set(Some(task));
            return;
        }
        if let Some(gift) = self.channels().tasks.recv() {
            self.hit(&self.seen.stolen);
            self.local.answered(gift.from);
            self.running.set(Some(gift.task));
            return;
        }
        self.maybe_ask();
    }

    /// Sends a steal request unless one is out or, for a registered thief, the back-off
    /// (thesis §4.2, here in steps) is not over.
    fn maybe_ask(&self) {
        if self.local.outstanding() {
            return;
        }
        let registered = self.local.status.get() == Status::Registered;
        if registered && self.paused.get() < self.backoff {
            self.paused.set(self.paused.get() + 1);
            return;
        }
        self.paused.set(0);
        if self.running.get().is_some() {
            self.hit(&self.seen.early);
        }
        ask(self, self.next_victim());
    }

    /// One step of the running task: work, push a child, or finish.
    fn work_on(&self, mut task: Task) {
        if task.work > 0 {
            task.work -= 1;
        } else if task.children > 0 {
            task.children -= 1;
            self.deque.borrow_mut().push_back(Task::LEAF);
        } else {
            self.net.finished.fetch_add(1, Relaxed);
            return;
        }
        self.running.set(Some(task));
    }

    /// The next worker after the last victim, other than this one.
    fn next_victim(&self) -> u32 {
        let n = self.n();
        let mut v = (self.last_victim.get() + 1) % n;
        if v == self.me {
            v = (v + 1) % n;
        }
        self.last_victim.set(v);
        v
    }
}

/// The root program of one worker: per barrier, the tasks it pushes before asking.
struct Program {
    rounds: &'static [&'static [Task]],
    /// Scheduling steps before the first round (the root arrives in a running pool).
    delay: usize,
    next: usize,
    waiting: Option<u64>,
    /// Tasks created so far, initial ones included.
    created: usize,
}

impl Program {
    fn new(rounds: &'static [&'static [Task]], delay: usize, initial: usize) -> Program {
        Program {
            rounds,
            delay,
            next: 0,
            waiting: None,
            created: initial,
        }
    }

    /// Whether every barrier has been waited for and left.
    fn done(&self) -> bool {
        self.next == self.rounds.len()
    }

    /// One step of the root program: wait in the barrier (one scheduling step), or
    /// leave it once answered and go straight on to the next: push its tasks and ask.
    fn advance(&mut self, p: &ModelPeer) {
        if self.delay > 0 {
            self.delay -= 1;
            p.step();
            return;
        }
        if let Some(mine) = self.waiting {
            if !reached(p, mine) {
                p.step();
                return;
            }
            let finished = p.net.finished.load(Relaxed);
            assert_eq!(
                finished,
                self.created,
                "barrier {mine} answered with {} of its tasks unfinished",
                self.created - finished
            );
            leave(p);
            self.waiting = None;
            self.next += 1;
        }
        match self.rounds.get(self.next) {
            Some(&tasks) => {
                for &t in tasks {
                    p.deque.borrow_mut().push_back(t);
                    self.created += t.size();
                }
                self.waiting = Some(p.barriers().ask());
            }
            // Not a root, or a root that is through: just schedule.
            None => p.step(),
        }
    }
}

/// A model: `n` workers; worker `root` runs `rounds`; worker `i` starts running
/// `initial[i]`, if any.
#[derive(Clone, Copy)]
struct Plan {
    n: usize,
    root: usize,
    rounds: &'static [&'static [Task]],
    /// Scheduling steps the root takes before its first round.
    delay: usize,
    initial: &'static [Option<Task>],
    /// Workers that take one step each, in this order, before the threads start: a
    /// deterministic prefix that brings the model to the state it explores from.
    warmup: &'static [usize],
    /// Steps each thread takes at most before the sequential drain.
    steps: usize,
    /// Steps a registered thief waits before asking again.
    backoff: u8,
    /// Whether workers ask while they run a task (see `ModelPeer::eager`).
    eager: bool,
    /// Whether victims hold requests (see `ModelPeer::holds`).
    holds: bool,
    bound: usize,
}

impl Plan {
    /// What a plan leaves as it is: the root is worker 0 and starts at once, no worker
    /// holds a task at the start, no warm-up, 16 steps a thread, no back-off, requests
    /// only from idle workers.
    const PLAIN: Plan = Plan {
        n: 2,
        root: 0,
        rounds: &[],
        delay: 0,
        initial: &[],
        warmup: &[],
        steps: 16,
        backoff: 0,
        eager: false,
        holds: false,
        bound: 0,
    };
}

/// A model worker and its program (empty for all but the root).
type ModelWorker = (ModelPeer, Program);

/// Runs `w` for at most `steps` steps, or until its part is done: the root's program,
/// or for the others the last barrier answered.
fn run_for(w: &mut ModelWorker, steps: usize, last: u64) {
    let (peer, program) = w;
    for _ in 0..steps {
        let over = if program.rounds.is_empty() {
            peer.barriers().answered(last)
        } else {
            program.done()
        };
        if over {
            return;
        }
        program.advance(peer);
        thread::yield_now();
    }
}

/// Runs `plan` under loom and returns what its executions saw.
fn model(plan: Plan) -> Seen {
    let seen = Seen::default();
    let seen2 = seen.clone();
    builder(plan.bound).check(move || {
        let net = Arc::new(Net {
            channels: (0..plan.n).map(|_| Channels::new(plan.n)).collect(),
            barriers: Barriers::default(),
            finished: AtomicUsize::new(0),
        });
        let mut workers = workers(&plan, &net, &seen2);
        let last = plan.rounds.len() as u64;
        for &i in plan.warmup {
            run_for(&mut workers[i], 1, last);
        }
        let mut all = run_threads(workers, plan.steps, last);
        if net.barriers.answered(last) {
            hit(&seen2.declared);
        }
        drain(&mut all, last);
        assert_eq!(net.finished.load(Relaxed), all[plan.root].1.created);
    });
    seen
}

/// The model workers of `plan`, each with its program.
fn workers(plan: &Plan, net: &Arc<Net>, seen: &Seen) -> Vec<ModelWorker> {
    let initial: usize = plan.initial.iter().flatten().map(|t| t.size()).sum();
    (0..plan.n)
        .map(|i| {
            let peer = ModelPeer::new(i as u32, net.clone(), plan, seen.clone());
            let (rounds, delay) = if i == plan.root {
                (plan.rounds, plan.delay)
            } else {
                (&[][..], 0)
            };
            (peer, Program::new(rounds, delay, initial))
        })
        .collect()
}

/// Runs every worker for at most `steps` steps on a loom thread of its own (worker 0 on
/// the model's main thread), and returns them once all are through.
fn run_threads(mut workers: Vec<ModelWorker>, steps: usize, last: u64) -> Vec<ModelWorker> {
    fn live(w: &mut ModelWorker, steps: usize, last: u64) {
        w.0.live.set(true);
        run_for(w, steps, last);
        w.0.live.set(false);
    }
    let mut first = workers.remove(0);
    let threads: Vec<_> = workers
        .into_iter()
        .map(|mut w| {
            thread::spawn(move || {
                live(&mut w, steps, last);
                w
            })
        })
        .collect();
    live(&mut first, steps, last);
    let mut all = vec![first];
    all.extend(threads.into_iter().map(|t| t.join().unwrap()));
    all
}

/// With every thread joined, steps the workers round-robin until the root's program is
/// done; it must be within `DRAIN_ROUNDS` rounds.
fn drain(all: &mut [ModelWorker], last: u64) {
    for _ in 0..DRAIN_ROUNDS {
        for w in all.iter_mut() {
            run_for(w, 1, last);
        }
        if all.iter().all(|(_, p)| p.done()) {
            return;
        }
    }
    panic!("liveness: a barrier was not answered within {DRAIN_ROUNDS} fair rounds");
}

fn assert_seen(h: &Hits, what: &str) {
    assert!(h.load(Relaxed) > 0, "no explored execution {what}");
}

/// The manager's root task arrives after two steps, pushes a task that spawns a child,
/// asks for a barrier and waits; worker 1 gets work only through steal requests.
fn two_workers_one_barrier(eager: bool, bound: usize) -> Seen {
    model(Plan {
        n: 2,
        rounds: &[&[Task {
            work: 0,
            children: 1,
        }]],
        delay: 2,
        eager,
        bound,
        ..Plan::PLAIN
    })
}

#[test]
fn loom_two_workers_one_barrier() {
    let seen = two_workers_one_barrier(false, 4);
    assert_seen(&seen.stolen, "stole a task");
    assert_seen(&seen.declared, "answered the barrier before the drain");
}

/// Requests sent early, as a thief sends its next one before it publishes a stolen
/// task's outcome, and held by the victim that gave it that task while the victim still
/// runs its own: every barrier is still answered, and the task counts still add up.
#[test]
fn loom_two_workers_held_requests() {
    let seen = model(Plan {
        n: 2,
        rounds: &[&[Task {
            work: 1,
            children: 2,
        }]],
        delay: 2,
        eager: true,
        holds: true,
        bound: 3,
        ..Plan::PLAIN
    });
    assert_seen(&seen.held, "held a request for the next push");
    assert_seen(&seen.stolen, "stole a task");
    assert_seen(&seen.declared, "answered the barrier before the drain");
}

/// The same with requests sent while their thief runs a task.
#[test]
fn loom_two_workers_early_requests() {
    let seen = two_workers_one_barrier(true, 3);
    assert_seen(&seen.early, "sent a request while running a task");
    assert_seen(&seen.stolen, "stole a task");
    assert_seen(&seen.declared, "answered the barrier before the drain");
}

/// The task that worker 2 runs while the manager waits in a barrier.
const SLOW_PARENT: Task = Task {
    work: 1,
    children: 1,
};

/// Three workers: worker 2 runs `SLOW_PARENT`, the manager waits in a barrier, worker
/// 1 asks. Requests are forwarded (n−1 = 2 failures before going home); once the
/// manager has registered worker 1 idle, worker 2 answers it with the child and must
/// update the manager first (§4.1.2). Threads switch only between steps (bound 0), but
/// in every order, and loads still read every value the memory model allows.
#[test]
fn loom_three_workers_forward_and_update() {
    let seen = model(Plan {
        n: 3,
        rounds: &[&[]],
        initial: &[None, None, Some(SLOW_PARENT)],
        steps: 12,
        eager: true,
        bound: 0,
        ..Plan::PLAIN
    });
    assert_seen(&seen.early, "sent a request while running a task");
    assert_seen(&seen.forwarded, "forwarded a request");
    assert_seen(&seen.victim_update, "sent an update from a victim");
    assert_seen(&seen.stolen, "stole a task");
    assert_seen(&seen.declared, "answered the barrier before the drain");
}

/// The same three workers from the moment worker 2 is about to answer registered
/// worker 1 (the warm-up gets there: 1's request is forwarded by 2 and the manager,
/// comes home, goes to the manager idle and is registered and forwarded to 2, which has
/// pushed the child meanwhile), now with a preemption anywhere: inside the victim's
/// update and give, the manager's drain and check, the thief's receive.
#[test]
fn loom_three_workers_update_races() {
    let seen = model(Plan {
        n: 3,
        rounds: &[&[]],
        initial: &[None, None, Some(SLOW_PARENT)],
        warmup: &[0, 1, 2, 0, 1, 2, 0],
        steps: 6,
        backoff: 8,
        bound: 1,
        ..Plan::PLAIN
    });
    assert_seen(&seen.victim_update, "sent an update from a victim");
    assert_seen(&seen.declared, "answered the barrier before the drain");
}

/// Worker 1, not the manager, waits in a barrier for a task, then pushes another and
/// waits in a second barrier (§4.2.1). Leaving the first, it must update the manager,
/// and the second must not be answered before its task is done.
///
/// This model found a bug in `check`: the manager read the barrier numbers fresh but
/// judged them by its idle set as of its last drain. Loom's counterexample: the manager
/// registers worker 1 and answers barrier 1; worker 1 leaves it and sends its update,
/// which the manager's next drain does not see yet (nothing orders the two); worker 1
/// pushes its task and asks barrier 2; the manager, still counting worker 1 idle, reads
/// barrier 2 and answers it, and worker 1 leaves with its task still in its deque.
/// `check` now answers only with its channel empty, and its read of barrier 2 orders it
/// after the update.
#[test]
fn loom_barrier_exit_sends_update() {
    let seen = model(Plan {
        n: 2,
        root: 1,
        rounds: &[&[Task::LEAF], &[Task::LEAF]],
        bound: 4,
        ..Plan::PLAIN
    });
    assert_seen(&seen.exit_update, "sent an update on leaving a barrier");
    assert_seen(&seen.stolen, "stole a task");
    assert_seen(&seen.declared, "answered both barriers before the drain");
}

/// Two barriers in a row waited in by the manager, which unregisters itself on leaving;
/// requests go out early.
#[test]
fn loom_manager_two_barriers() {
    let seen = model(Plan {
        n: 2,
        rounds: &[&[Task::LEAF], &[Task::LEAF]],
        eager: true,
        bound: 3,
        ..Plan::PLAIN
    });
    assert_seen(&seen.early, "sent a request while running a task");
    assert_seen(&seen.stolen, "stole a task");
    assert_seen(&seen.declared, "answered both barriers before the drain");
}
