//! Team tasks, after "Work-stealing for mixed-mode parallelism by deterministic
//! team-building" (Wimmer, Träff; §3 team building, §3.1 properties, §5 Quicksort).
//!
//! A team task runs one body on r workers at once. The caller coordinates: it posts its
//! requirement in its registration word ([`word`]) and waits. Idle workers find it
//! through their deterministic partners (partner ℓ of worker i is i xor 2^ℓ): a worker
//! looks at each partner's coordinator and registers there, with one CAS, if that
//! coordinator's block of workers contains it. The block of a team of r is the aligned
//! block of size 2^⌈log₂ r⌉ holding the coordinator; in a pool whose size is not a power
//! of two a block may be cut short by the end of the pool, and then the next larger
//! aligned block is used, up to the whole pool, so every block has at least r workers
//! and stays reachable through partners (clearing and then setting bits of the id never
//! leaves the block or the pool). Once r workers are registered the coordinator fixes
//! the team with a second CAS and publishes the task.
//!
//! Priority goes to smaller teams, ties to the lower coordinator id: a waiting member
//! switches to such a coordinator, and a waiting coordinator revokes its own request
//! (every registration with it becomes void) and serves the other team first. This is
//! the paper's deadlock-freedom argument. A fixed team persists after its task: members
//! linger, and the next request of the same size from the same coordinator runs at once.
//! r = 1 runs the body inline with no atomic operation.
//!
//! Idle workers join teams through [`serve`], called from the worker's back-off, so that
//! every wait (the idle loop, leapfrogging, latches, reductions) can lend its worker.
//!
//! Nesting (the paper leaves open how teams inside team tasks behave): a worker that
//! waits inside a team body, or as a teamed member between tasks, or as a coordinator
//! for its members to leave, also serves teams (and, past a short spin, other work),
//! nested on its stack. A team asked for inside a body, or by work forked from one and
//! stolen, may need the running team's members, and they are all waiting for it; so
//! this is what keeps such programs from hanging. A nested request starts afresh (the
//! worker's persisting team is busy), and a coordinator keeps its running launches in a
//! small stack, so that the members of an outer launch find their job whatever launches
//! nest inside it. While it forms, a coordinator is its own `coord`, so that partners
//! find it even when it is a member of another team.
//!
//! Roles: [`word`] is the registration word, [`form`] how teams form and who serves
//! them, [`barrier`] the team's barrier; this file runs a launched team task.

mod barrier;
mod form;
#[cfg(all(test, loom))]
mod loom_form;
mod word;

use form::wants_member;
pub(crate) use form::{serve, Teams};

use crate::core::sleep::SPIN_ROUNDS;
use crate::core::source::Source;
use crate::core::sync::lock;
use crate::core::sync::{AtomicUsize, RaceCell};
use crate::core::worker::Worker;
use barrier::Barrier;
use form::back_off;
use std::any::Any;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::Mutex;

/// Why a team cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamError {
    /// A team of zero workers.
    Empty,
    /// More workers than the pool has.
    TooLarge {
        /// The size asked for.
        asked: usize,
        /// The pool's size.
        workers: usize,
    },
    /// The calling worker already coordinates as many running teams, nested on its
    /// stack, as it can publish (32): a team asked for inside the bodies of, or by work
    /// stolen while waiting for, that many teams of its own. Teams nest otherwise, and
    /// every worker that waits (in a join, at a team's barrier, between a team's tasks)
    /// serves the teams that need it, so a team always gets its members.
    WouldDeadlock,
}

impl fmt::Display for TeamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TeamError::Empty => write!(f, "a team needs at least one worker"),
            TeamError::TooLarge { asked, workers } => write!(
                f,
                "a team of {asked} workers does not fit a pool of {workers}"
            ),
            TeamError::WouldDeadlock => write!(
                f,
                "this worker already coordinates 32 teams nested on its stack"
            ),
        }
    }
}

impl std::error::Error for TeamError {}

/// Teams plug into the worker loop as a work source: a waiting worker serves a team that
/// needs it, or runs a launch it is due to run; a sleeper's last look covers the wake-ups
/// of team requests and registrations (PROTOCOLS.md, "Sleep and wake").
impl Source for Teams {
    fn serve(&self, w: &Worker) -> bool {
        serve(w)
    }

    fn wants(&self, me: usize) -> bool {
        wants_member(self, me)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What each member of a team sees.
pub struct Team<'a> {
    rank: usize,
    size: usize,
    barrier: &'a Barrier,
    worker: &'a Worker,
}

impl Team<'_> {
    /// This member's rank, `0..size()`; the caller of `team` is rank 0.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of members.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Waits until every member reached this barrier.
    ///
    /// # Panics
    /// If another member panicked (the barrier is poisoned), so that every member leaves.
    pub fn barrier(&self) {
        self.barrier.wait(self.worker);
    }

    /// The worker this member runs on.
    pub fn worker(&self) -> &Worker {
        self.worker
    }
}

/// The part of a launched job that members use, first in every job.
#[repr(C)]
struct Header {
    /// Runs one member's body: `execute(job, worker)`.
    execute: unsafe fn(*const Header, &Worker),
    /// The team's size.
    size: usize,
    /// The next rank to hand out (the coordinator is 0).
    ranks: AtomicUsize,
    /// Members (other than the coordinator) that have left.
    left: AtomicUsize,
}

impl Header {
    /// Runs a member's part of `job` on `w` and leaves it.
    ///
    /// # Safety
    /// `job` is the header of a live `Job` whose coordinator waits for this member.
    unsafe fn run(job: *const Header, w: &Worker) {
        // SAFETY: by the caller's contract.
        unsafe { ((*job).execute)(job, w) };
    }

    /// A member's part: takes the next rank, runs it with `run` (which must not unwind),
    /// and leaves; leaving is its last access to the job.
    fn member(&self, run: impl FnOnce(usize)) {
        let rank = self.ranks.fetch_add(1, Relaxed);
        run(rank);
        // Release: the coordinator reads this member's result after `all_left`.
        self.left.fetch_add(1, Release);
    }

    /// Whether every member other than the coordinator has left.
    fn all_left(&self) -> bool {
        self.left.load(Acquire) == self.size - 1
    }
}

/// A launched team task, on its coordinator's stack.
#[repr(C)]
struct Job<'f, F, R> {
    header: Header,
    body: &'f F,
    barrier: Barrier,
    results: Box<[RaceCell<Option<R>>]>,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl<'f, F, R> Job<'f, F, R>
where
    F: Fn(&Team<'_>) -> R + Sync,
    R: Send,
{
    /// The job of a team of `r` running `body`.
    fn new(body: &'f F, r: usize) -> Self {
        Job {
            header: Header {
                execute: Self::execute,
                size: r,
                ranks: AtomicUsize::new(1),
                left: AtomicUsize::new(0),
            },
            body,
            barrier: Barrier::new(r),
            results: (0..r).map(|_| RaceCell::new(None)).collect(),
            panic: Mutex::new(None),
        }
    }

    /// Rank `rank`'s part, `part`: its result stored, or its panic kept (the first) and
    /// the barrier poisoned.
    fn run_caught(&self, rank: usize, part: impl FnOnce() -> R) {
        match panic::catch_unwind(AssertUnwindSafe(part)) {
            // SAFETY: each rank is handed out once, so this slot is this member's alone
            // until the coordinator reads it after every member left (`Header::member`'s
            // release, `Header::all_left`'s acquire).
            Ok(r) => unsafe { self.results[rank].with_mut(|p| *p = Some(r)) },
            Err(p) => {
                // Recorded before the poison: a member woken by it panics in turn, and
                // that panic must not take the first one's place.
                crate::core::task::record_first(&self.panic, p);
                self.barrier.poison();
            }
        }
    }

    /// After every member left: the results by rank, or the first panic.
    fn outcome(self) -> std::thread::Result<Vec<R>> {
        if let Some(p) = lock(&self.panic).take() {
            return Err(p);
        }
        Ok(self
            .results
            .iter()
            // SAFETY: every member has left (`Header::all_left`), so nobody writes.
            .map(|c| unsafe { c.with_mut(|p| (*p).take()) }.expect("every rank ran"))
            .collect())
    }

    /// Runs rank `rank` on `w`: the body, its result stored, a panic kept (the first)
    /// and the barrier poisoned.
    fn run_rank(&self, rank: usize, w: &Worker) {
        let slot = &w.registry().source::<Teams>().slots[w.index()];
        slot.depth.store(slot.depth.load(Relaxed) + 1, Relaxed);
        let team = Team {
            rank,
            size: self.header.size,
            barrier: &self.barrier,
            worker: w,
        };
        self.run_caught(rank, || (self.body)(&team));
        slot.depth.store(slot.depth.load(Relaxed) - 1, Relaxed);
    }

    /// `Header::execute` for this job type.
    unsafe fn execute(job: *const Header, w: &Worker) {
        // SAFETY: `job` is the header at the start of this `#[repr(C)]` job, which is
        // alive until its `left` count reaches every member (`Header::member` leaves
        // last).
        let this = unsafe { &*job.cast::<Self>() };
        this.header.member(|rank| this.run_rank(rank, w));
    }
}

// SAFETY: members share the job: the body is `Sync`, each result slot is written by one
// member and read by the coordinator after all left (`R: Send`), the rest is atomic or
// locked.
unsafe impl<F: Sync, R: Send> Sync for Job<'_, F, R> {}

impl Worker {
    /// Runs `body` on `r` workers at the same time and returns their results by rank.
    ///
    /// The caller is rank 0 and the bodies may borrow from its stack. A panic in a body
    /// poisons the team's barrier (so that members waiting there panic too and leave);
    /// the first panic is re-raised here after every member has left.
    ///
    /// Teams nest: a body may ask for a team, and so may work it forks. A worker that
    /// waits inside a body (in a join, at the barrier) or between its team's tasks serves
    /// a team that needs it, running that team's body on its stack, so the inner team
    /// gets its members while the outer one waits for it.
    ///
    /// # Panics
    /// If [`Worker::try_team`] would return an error, with that error's message.
    ///
    /// ```
    /// let pool = heist::Pool::builder().workers(2).build().unwrap();
    /// let ranks = pool.run(|w| w.team(2, |t| { t.barrier(); t.rank() }));
    /// assert_eq!(ranks, [0, 1]);
    /// ```
    pub fn team<F, R>(&self, r: usize, body: F) -> Vec<R>
    where
        F: Fn(&Team<'_>) -> R + Sync,
        R: Send,
    {
        self.try_team(r, body)
            .unwrap_or_else(|e| panic!("heist: {e}"))
    }

    /// [`Worker::team`], or an error for `r = 0`, `r` larger than the pool, or a team
    /// nested too deeply ([`TeamError::WouldDeadlock`]).
    pub fn try_team<F, R>(&self, r: usize, body: F) -> Result<Vec<R>, TeamError>
    where
        F: Fn(&Team<'_>) -> R + Sync,
        R: Send,
    {
        let p = self.workers();
        match r {
            0 => return Err(TeamError::Empty),
            r if r > p => {
                return Err(TeamError::TooLarge {
                    asked: r,
                    workers: p,
                })
            }
            1 => {
                let barrier = Barrier::new(1);
                let team = Team {
                    rank: 0,
                    size: 1,
                    barrier: &barrier,
                    worker: self,
                };
                return Ok(vec![body(&team)]);
            }
            _ => {}
        }
        let teams = self.registry().source::<Teams>();
        let slot = &teams.slots[self.index()];
        let launching = slot.launching.load(Relaxed);
        if slot.depth.load(Relaxed) > 0 || launching > 0 {
            // Nested (inside a body, or while this worker's own launch runs): its
            // persisting team, if any, is busy, so it cannot take the task; start afresh.
            if launching == form::LAUNCH_DEPTH {
                return Err(TeamError::WouldDeadlock);
            }
            slot.word.revoke();
        }
        let job = Job::new(&body, r);
        let n = form::form(self, teams, r as u16);
        self.launch(teams, &job, n);
        Ok(job.outcome().unwrap_or_else(|p| panic::resume_unwind(p)))
    }

    /// Publishes `job` to the fixed team, runs rank 0, and waits for every member.
    fn launch<F, R>(&self, teams: &Teams, job: &Job<'_, F, R>, n: u16)
    where
        F: Fn(&Team<'_>) -> R + Sync,
        R: Send,
    {
        let slot = &teams.slots[self.index()];
        let i = slot.publish(&job.header, n);
        // A member may wait elsewhere, asleep, with this launch in its last look.
        self.registry().sleep.wake_all();
        job.run_rank(0, self);
        let mut idle = 0u32;
        while !job.header.all_left() {
            // A member's body may wait for a team or work that needs this worker.
            idle += 1;
            if idle > SPIN_ROUNDS && form::lend(self) {
                idle = 0;
                continue;
            }
            back_off(idle);
        }
        slot.retire(i);
    }
}
