//! How teams form ("Work-stealing for mixed-mode parallelism by deterministic
//! team-building", §3, Alg. 5–9): each worker's team state, the aligned blocks, the
//! priority between requests, a coordinator gathering its team, and idle workers
//! registering with the coordinator that needs them and serving its launches.

use super::word::{Reg, Word};
use super::Header;
use crate::sleep::{Sleep, SPIN_ROUNDS};
use crate::sync::AtomicUsize;
use crate::worker::Worker;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64};
use std::time::Duration;

/// Idle rounds a member of a persisting team spins for the next task before it leaves:
/// a few microseconds, enough for a coordinator that asks again right away (the next
/// task of the same size), short enough that the member soon steals again otherwise.
const LINGER: u32 = SPIN_ROUNDS;
/// Idle rounds between a waiting coordinator's attempts to help with other work.
const HELP_EVERY: u32 = 32;

/// One worker's team state, in the registry.
#[repr(align(128))]
pub(super) struct Slot {
    /// Its registration word as a coordinator.
    pub(super) word: Word,
    /// The coordinator it is registered with; itself when none.
    coord: AtomicUsize,
    /// Its last launch as a coordinator: `n` in the top 16 bits, a count below.
    pub(super) launch: AtomicU64,
    /// The job of that launch.
    pub(super) job: AtomicPtr<Header>,
    /// This worker's launched job whose members may not all have started (written and
    /// read by it alone).
    pub(super) running: AtomicPtr<Header>,
    /// Team bodies running on this worker (written by it alone).
    pub(super) depth: AtomicU32,
}

/// The team state of a pool.
pub(crate) struct Teams {
    pub(super) slots: Box<[Slot]>,
    /// Requests pending anywhere in the pool: the cheap test of [`serve`].
    pub(super) pending: AtomicUsize,
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
                    running: AtomicPtr::new(std::ptr::null_mut()),
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

/// The coordinator that wants idle worker `me` as a member, if any: one that needs it,
/// found through its partners, unless `me` is busy with a team of its own.
fn wanted_by(teams: &Teams, me: usize) -> Option<usize> {
    if teams.pending.load(Relaxed) == 0 {
        return None;
    }
    // A coordinator still forming its team serves only teams that go before its own
    // (in `gather`). Any other worker that waits serves, also inside a team body: the
    // team that needs it may come from work that the body waits for.
    let reg = teams.slots[me].word.load();
    if reg.r != 0 && reg.t == 0 {
        return None;
    }
    partner_coordinator(teams, me, 0, me)
}

/// Whether a team wants worker `me` as a member: [`serve`] would serve one. For the
/// sleeper's last look: a coordinator makes its request, and a worker registers (which
/// may make a coordinator reachable through it), before waking the sleepers.
pub(crate) fn wants_member(teams: &Teams, me: usize) -> bool {
    wanted_by(teams, me).is_some()
}

/// One round of a team wait past its spinning (a member at the barrier or between
/// tasks, a coordinator waiting for its members): lends `w` to a team that needs it, or
/// to other work, since that work may be what the team waits for (and under relay, a
/// task handed to `w` waits in its channel until it looks). True if it did something.
pub(super) fn lend(w: &Worker) -> bool {
    w.poll();
    serve(w) || w.find_work()
}

/// Lets `w`, which is idle, join a team that needs it, and serves that team until it is
/// done with `w`. Called from the worker's back-off; true if it served.
pub(crate) fn serve(w: &Worker) -> bool {
    let teams = &w.registry().teams;
    let Some(c) = wanted_by(teams, w.index()) else {
        return false;
    };
    w.run_taken(|| member(w, teams, c));
    true
}

/// Worker `me` registers with coordinator `c` (one CAS) and follows it; returns the `n`
/// it registered under. Through `me`, `c` may now reach a sleeper among its partners, so
/// the sleepers are woken (their last look checks [`wants_member`]).
pub(super) fn enlist(teams: &Teams, sleep: &Sleep, me: usize, c: usize) -> Option<u16> {
    let n = teams.slots[c].word.register()?;
    teams.slots[me].coord.store(c, Release);
    sleep.wake_all();
    Some(n)
}

/// Coordinator `me` asks for a team of `r`, waking the sleepers unless its persisting
/// team of `r` takes the task (its members are awake, lingering).
pub(super) fn ask(teams: &Teams, sleep: &Sleep, me: usize, r: u16) {
    if !teams.slots[me].word.request(r) {
        sleep.wake_all();
    }
}

/// Registers with coordinator `c` and serves it (or a coordinator that goes before it)
/// until the registration ends.
fn member(w: &Worker, teams: &Teams, mut c: usize) {
    let me = w.index();
    let slot = &teams.slots[me];
    // Served from a wait inside another team's body or launch: follow that team again
    // afterwards.
    let outer = slot.coord.load(Relaxed);
    'register: loop {
        let seen = teams.slots[c].launch.load(Acquire);
        let Some(n) = enlist(teams, &w.registry().sleep, me, c) else {
            break;
        };
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
            if idle > LINGER {
                if reg.r == 0 && cs.word.leave(n) {
                    break 'register;
                }
                // Teamed, and the team's task still runs elsewhere: it may wait for a
                // team or for work that needs this worker.
                if reg.t != 0 && lend(w) {
                    idle = 0;
                    continue;
                }
            }
            w.poll();
            back_off(idle);
        }
    }
    slot.coord.store(outer, Release);
}

/// Rounds a waiting coordinator or member yields before it naps: a team forms within
/// microseconds once its workers are up, and a nap costs tens of them.
pub(super) const TEAM_YIELDS: u32 = 2048;

/// A team member's or coordinator's wait: [`wait_round`] with its yields and naps.
pub(super) fn back_off(idle: u32) {
    wait_round(idle, TEAM_YIELDS, Duration::from_micros(20));
}

/// Round `idle` of a wait that spins, then yields `yields` rounds, then naps `nap` a
/// round, so that 16 workers on 2 cores still progress (teams and reductions).
pub(crate) fn wait_round(idle: u32, yields: u32, nap: Duration) {
    if idle < SPIN_ROUNDS {
        for _ in 0..(1u32 << (idle / 16).min(6)) {
            std::hint::spin_loop();
        }
    } else if idle < SPIN_ROUNDS + yields {
        std::thread::yield_now();
    } else {
        std::thread::sleep(nap);
    }
}

/// Coordinates on `w` until a team of `r` is fixed; returns the `n` it was fixed under.
pub(super) fn form(w: &Worker, teams: &Teams, r: u16) -> u16 {
    // Partners find a coordinator through their partners' `coord`: while it forms, it
    // is its own, also when it asks from inside another team's body.
    let coord = &teams.slots[w.index()].coord;
    let outer = coord.swap(w.index(), AcqRel);
    teams.pending.fetch_add(1, AcqRel);
    let n = gather(w, teams, r);
    teams.pending.fetch_sub(1, AcqRel);
    coord.store(outer, Release);
    n
}

fn gather(w: &Worker, teams: &Teams, r: u16) -> u16 {
    let me = w.index();
    let word = &teams.slots[me].word;
    loop {
        ask(teams, &w.registry().sleep, me, r);
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
                w.run_taken(|| member(w, teams, c));
                break;
            }
            idle += 1;
            if reg.a == 1 && idle > SPIN_ROUNDS && idle % HELP_EVERY == 0 {
                // Help while nobody has come (the paper's waiting threads steal): the
                // request is withdrawn meanwhile, so that a stolen task may form
                // teams of its own here, and is made again afterwards. Once someone
                // registered, the team is gathering and the request stays.
                word.revoke();
                w.find_work();
                break;
            }
            w.poll();
            back_off(idle);
        }
    }
}
