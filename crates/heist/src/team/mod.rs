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

mod word;

#[cfg(all(test, loom))]
mod loom_tests;

use crate::pool::{lock, Pool};
use crate::sleep::SPIN_ROUNDS;
use crate::worker::Worker;
use std::any::Any;
use std::cell::UnsafeCell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
use std::sync::{Condvar, Mutex};
use std::time::Duration;
use word::{Reg, Word};

/// Idle rounds a member of a persisting team spins for the next task before it leaves:
/// a few microseconds, enough for a coordinator that asks again right away (the next
/// task of the same size), short enough that the member soon steals again otherwise.
const LINGER: u32 = SPIN_ROUNDS;
/// Idle rounds between a waiting coordinator's attempts to help with other work.
const HELP_EVERY: u32 = 32;
/// Idle rounds between a waiting coordinator's wake-ups of sleepers.
const REWAKE: u32 = 64;

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
    /// Called inside a team body: the members of the running team are busy with it, so
    /// a team that needs workers beyond the caller could wait for ever.
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
                "a team of more than one worker inside a team body would deadlock"
            ),
        }
    }
}

impl std::error::Error for TeamError {}

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
        self.barrier.wait();
    }

    /// The worker this member runs on.
    pub fn worker(&self) -> &Worker {
        self.worker
    }
}

/// A team's barrier: spin, then yield, then block; poisoned by a member's panic.
pub(crate) struct Barrier {
    size: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
    poisoned: AtomicBool,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Barrier {
    fn new(size: usize) -> Barrier {
        Barrier {
            size,
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            poisoned: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    fn check(&self) {
        if self.poisoned.load(Acquire) {
            panic!("heist: a member of this team panicked");
        }
    }

    fn wait(&self) {
        self.check();
        let g = self.generation.load(Acquire);
        if self.count.fetch_add(1, AcqRel) + 1 == self.size {
            self.count.store(0, Relaxed);
            self.generation.store(g.wrapping_add(1), Release);
            self.wake();
            return;
        }
        let mut idle = 0u32;
        while self.generation.load(Acquire) == g {
            self.check();
            idle += 1;
            if idle < SPIN_ROUNDS * 4 {
                std::hint::spin_loop();
            } else if idle < SPIN_ROUNDS * 4 + TEAM_YIELDS {
                std::thread::yield_now();
            } else {
                let guard = lock(&self.lock);
                self.sleepers.fetch_add(1, AcqRel);
                if self.generation.load(Acquire) == g && !self.poisoned.load(Acquire) {
                    let _ = self.cv.wait_timeout(guard, Duration::from_millis(1));
                }
                self.sleepers.fetch_sub(1, AcqRel);
            }
        }
        self.check();
    }

    fn wake(&self) {
        if self.sleepers.load(Acquire) > 0 {
            let _guard = lock(&self.lock);
            self.cv.notify_all();
        }
    }

    fn poison(&self) {
        self.poisoned.store(true, Release);
        let _guard = lock(&self.lock);
        self.cv.notify_all();
    }
}

/// One worker's team state, in the registry.
#[repr(align(128))]
struct Slot {
    /// Its registration word as a coordinator.
    word: Word,
    /// The coordinator it is registered with; itself when none.
    coord: AtomicUsize,
    /// Its last launch as a coordinator: `n` in the top 16 bits, a count below.
    launch: AtomicU64,
    /// The job of that launch.
    job: AtomicPtr<Header>,
    /// Team bodies running on this worker (written by it alone).
    depth: AtomicU32,
}

/// The team state of a pool.
pub(crate) struct Teams {
    slots: Box<[Slot]>,
    /// Requests pending anywhere in the pool: the cheap test of [`serve`].
    pending: AtomicUsize,
}

impl Teams {
    pub(crate) fn new(workers: usize) -> Teams {
        Teams {
            slots: (0..workers)
                .map(|i| Slot {
                    word: Word::new(),
                    coord: AtomicUsize::new(i),
                    launch: AtomicU64::new(0),
                    job: AtomicPtr::new(std::ptr::null_mut()),
                    depth: AtomicU32::new(0),
                })
                .collect(),
            pending: AtomicUsize::new(0),
        }
    }
}

/// The workers a team of `r` coordinated by `c` may use in a pool of `p`: the aligned
/// block of the next power of two ≥ r holding `c`, doubled while the pool's end leaves
/// it fewer than `r` workers.
fn block(c: usize, r: usize, p: usize) -> (usize, usize) {
    let mut s = r.next_power_of_two();
    loop {
        let lo = c / s * s;
        let hi = (lo + s).min(p);
        if hi - lo >= r {
            return (lo, hi);
        }
        s *= 2;
    }
}

/// Whether coordinator `c`, whose word reads `reg`, needs worker `i` to register.
fn needs(c: usize, reg: Reg, i: usize, p: usize) -> bool {
    if reg.r < 2 || reg.t != 0 || reg.a >= reg.r || c == i {
        return false;
    }
    let (lo, hi) = block(c, usize::from(reg.r), p);
    (lo..hi).contains(&i)
}

/// Whether request `r2` of coordinator `c2` goes before request `r1` of `c1` (the paper:
/// smaller teams first, ties to the lower id; no request at all comes last).
fn before(r2: u16, c2: usize, r1: u16, c1: usize) -> bool {
    r1 == 0 || r2 < r1 || (r2 == r1 && c2 < c1)
}

/// A coordinator that needs worker `me`, found through its partners, going before the
/// request `(mine_r, mine_c)` it already serves or makes.
fn partner_coordinator(teams: &Teams, me: usize, mine_r: u16, mine_c: usize) -> Option<usize> {
    let p = teams.slots.len();
    let mut l = 0;
    while 1 << l < p {
        let x = me ^ (1 << l);
        l += 1;
        if x >= p {
            continue;
        }
        let c = teams.slots[x].coord.load(Acquire);
        let reg = teams.slots[c].word.load();
        if c != mine_c && needs(c, reg, me, p) && before(reg.r, c, mine_r, mine_c) {
            return Some(c);
        }
    }
    None
}

/// Lets `w`, which is idle, join a team that needs it, and serves that team until it is
/// done with `w`. Called from the worker's back-off; true if it served.
pub(crate) fn serve(w: &Worker) -> bool {
    let teams = &w.registry().teams;
    if teams.pending.load(Relaxed) == 0 {
        return false;
    }
    let me = w.index();
    let slot = &teams.slots[me];
    // A member of a running team, or a coordinator: busy with its own team.
    if slot.depth.load(Relaxed) > 0 || slot.word.load().r != 0 {
        return false;
    }
    let Some(c) = partner_coordinator(teams, me, 0, me) else {
        return false;
    };
    w.run_taken(|| member(w, teams, c));
    true
}

/// Registers with coordinator `c` and serves it (or a coordinator that goes before it)
/// until the registration ends.
fn member(w: &Worker, teams: &Teams, mut c: usize) {
    let me = w.index();
    let slot = &teams.slots[me];
    'register: loop {
        let seen = teams.slots[c].launch.load(Acquire);
        let Some(n) = teams.slots[c].word.register() else {
            break;
        };
        slot.coord.store(c, Release);
        let mut seen = seen;
        let mut idle = 0u32;
        loop {
            let cs = &teams.slots[c];
            let launch = cs.launch.load(Acquire);
            if launch >> 48 == u64::from(n) && launch != seen {
                seen = launch;
                let job = cs.job.load(Acquire);
                // SAFETY: a launch under our `n` publishes its job before the launch word
                // (release/acquire), and the coordinator keeps the job alive until every
                // member of the fixed team, this one included, has left it.
                unsafe { Header::run(job, w) };
                idle = 0;
                continue;
            }
            let reg = cs.word.load();
            if reg.n != n {
                break 'register;
            }
            if reg.t == 0 || reg.r == 0 {
                if let Some(c2) = partner_coordinator(teams, me, reg.r, c) {
                    if cs.word.leave(n) {
                        c = c2;
                        continue 'register;
                    }
                }
            }
            idle += 1;
            if reg.r == 0 && idle > LINGER && cs.word.leave(n) {
                break 'register;
            }
            w.poll();
            back_off(idle);
        }
    }
    slot.coord.store(me, Release);
}

/// Rounds a waiting coordinator or member yields before it naps: a team forms within
/// microseconds once its workers are up, and a nap costs tens of them.
const TEAM_YIELDS: u32 = 2048;

/// Spins, then yields, then naps (so that 16 workers on 2 cores still progress).
fn back_off(idle: u32) {
    if idle < SPIN_ROUNDS {
        for _ in 0..(1u32 << (idle / 16).min(6)) {
            std::hint::spin_loop();
        }
    } else if idle < SPIN_ROUNDS + TEAM_YIELDS {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(20));
    }
}

/// The part of a launched job that members use, first in every job.
#[repr(C)]
struct Header {
    /// Runs one member's body: `execute(job, worker)`.
    execute: unsafe fn(*const Header, &Worker),
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
}

/// A launched team task, on its coordinator's stack.
#[repr(C)]
struct Job<'f, F, R> {
    header: Header,
    size: usize,
    body: &'f F,
    barrier: Barrier,
    results: Box<[UnsafeCell<Option<R>>]>,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl<F, R> Job<'_, F, R>
where
    F: Fn(&Team<'_>) -> R + Sync,
    R: Send,
{
    /// Runs rank `rank` on `w`: the body, its result stored, a panic kept (the first)
    /// and the barrier poisoned.
    fn run_rank(&self, rank: usize, w: &Worker) {
        let slot = &w.registry().teams.slots[w.index()];
        slot.depth.store(slot.depth.load(Relaxed) + 1, Relaxed);
        let team = Team {
            rank,
            size: self.size,
            barrier: &self.barrier,
            worker: w,
        };
        let out = panic::catch_unwind(AssertUnwindSafe(|| (self.body)(&team)));
        slot.depth.store(slot.depth.load(Relaxed) - 1, Relaxed);
        match out {
            // SAFETY: each rank is handed out once, so this slot is this member's alone
            // until the coordinator reads it after every member left.
            Ok(r) => unsafe { *self.results[rank].get() = Some(r) },
            Err(p) => {
                // Recorded before the poison: a member woken by it panics in turn, and
                // that panic must not take the first one's place.
                crate::task::record_first(&self.panic, p);
                self.barrier.poison();
            }
        }
    }

    /// `Header::execute` for this job type.
    unsafe fn execute(job: *const Header, w: &Worker) {
        // SAFETY: `job` is the header at the start of this `#[repr(C)]` job, which is
        // alive until its `left` count reaches every member (below, the last access).
        let this = unsafe { &*job.cast::<Self>() };
        let rank = this.header.ranks.fetch_add(1, Relaxed);
        this.run_rank(rank, w);
        this.header.left.fetch_add(1, Release);
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

    /// [`Worker::team`], or an error for `r = 0`, `r` larger than the pool, or a team of
    /// more than one worker asked for inside a team body (which could wait for ever).
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
        let teams = &self.registry().teams;
        if teams.slots[self.index()].depth.load(Relaxed) > 0 {
            return Err(TeamError::WouldDeadlock);
        }
        let job = Job {
            header: Header {
                execute: Job::<F, R>::execute,
                ranks: AtomicUsize::new(1),
                left: AtomicUsize::new(0),
            },
            size: r,
            body: &body,
            barrier: Barrier::new(r),
            results: (0..r).map(|_| UnsafeCell::new(None)).collect(),
            panic: Mutex::new(None),
        };
        teams.pending.fetch_add(1, AcqRel);
        let n = self.form(teams, r as u16);
        teams.pending.fetch_sub(1, AcqRel);
        self.launch(teams, &job, n);
        if let Some(p) = lock(&job.panic).take() {
            panic::resume_unwind(p);
        }
        Ok(job
            .results
            .into_vec()
            .into_iter()
            .map(|c| c.into_inner().expect("every rank ran"))
            .collect())
    }

    /// Coordinates until a team of `r` is fixed; returns the `n` it was fixed under.
    fn form(&self, teams: &Teams, r: u16) -> u16 {
        let me = self.index();
        let word = &teams.slots[me].word;
        loop {
            if !word.request(r) {
                self.registry().sleep.wake_all();
            }
            let mut idle = 0u32;
            loop {
                let reg = word.load();
                if reg.t == r || word.fix() {
                    return word.load().n;
                }
                if let Some(c) = partner_coordinator(teams, me, r, me) {
                    // A team that goes first needs this worker: give way, serve it, and
                    // ask again.
                    word.revoke();
                    self.run_taken(|| member(self, teams, c));
                    break;
                }
                idle += 1;
                if reg.a == 1 && idle > SPIN_ROUNDS && idle % HELP_EVERY == 0 {
                    // Help while nobody has come (the paper's waiting threads steal): the
                    // request is withdrawn meanwhile, so that a stolen task may form
                    // teams of its own here, and is made again afterwards. Once someone
                    // registered, the team is gathering and the request stays.
                    word.revoke();
                    self.find_work();
                    break;
                }
                if idle % REWAKE == 0 {
                    self.registry().sleep.wake_all();
                }
                self.poll();
                back_off(idle);
            }
        }
    }

    /// Publishes `job` to the fixed team, runs rank 0, and waits for every member.
    fn launch<F, R>(&self, teams: &Teams, job: &Job<'_, F, R>, n: u16)
    where
        F: Fn(&Team<'_>) -> R + Sync,
        R: Send,
    {
        let slot = &teams.slots[self.index()];
        let count = (slot.launch.load(Relaxed) + 1) & ((1 << 48) - 1);
        slot.job
            .store(&job.header as *const Header as *mut Header, Release);
        slot.launch.store(u64::from(n) << 48 | count, Release);
        job.run_rank(0, self);
        let mut idle = 0u32;
        while job.header.left.load(Acquire) < job.size - 1 {
            idle += 1;
            back_off(idle);
        }
        slot.word.finish();
    }
}

impl Pool {
    /// [`Worker::team`] on this pool, from any thread.
    ///
    /// ```
    /// let pool = heist::Pool::builder().workers(3).build().unwrap();
    /// let mut data = vec![0u32; 3];
    /// let cells: Vec<std::sync::atomic::AtomicU32> =
    ///     (0..3).map(|_| Default::default()).collect();
    /// let sizes = pool.team(3, |t| {
    ///     cells[t.rank()].store(t.rank() as u32 * 10, std::sync::atomic::Ordering::Relaxed);
    ///     t.barrier();
    ///     t.size()
    /// });
    /// assert_eq!(sizes, [3, 3, 3]);
    /// for (d, c) in data.iter_mut().zip(&cells) {
    ///     *d = c.load(std::sync::atomic::Ordering::Relaxed);
    /// }
    /// assert_eq!(data, [0, 10, 20]);
    /// ```
    ///
    /// # Panics
    /// As [`Worker::team`].
    pub fn team<F, R>(&self, r: usize, body: F) -> Vec<R>
    where
        F: Fn(&Team<'_>) -> R + Sync,
        R: Send,
    {
        self.run(|w| w.team(r, &body))
    }

    /// [`Worker::try_team`] on this pool, from any thread.
    pub fn try_team<F, R>(&self, r: usize, body: F) -> Result<Vec<R>, TeamError>
    where
        F: Fn(&Team<'_>) -> R + Sync,
        R: Send,
    {
        self.run(|w| w.try_team(r, &body))
    }
}
