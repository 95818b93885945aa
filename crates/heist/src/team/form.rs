//! How teams form ("Work-stealing for mixed-mode parallelism by deterministic
//! team-building", §3, Alg. 5–9): each worker's team state, the aligned blocks, the
//! priority between requests, a coordinator gathering its team, and idle workers
//! registering with the coordinator that needs them and serving its launches.

use super::word::{Reg, Word};
use super::Header;
use crate::core::sleep::{wait_round, Sleep, SPIN_ROUNDS};
use crate::core::sync::{AtomicPtr, AtomicU64, AtomicUsize};
use crate::core::worker::Worker;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::time::Duration;

/// Idle rounds a member of a persisting team spins for the next task before it leaves:
/// a few microseconds, enough for a coordinator that asks again right away (the next
/// task of the same size), short enough that the member soon steals again otherwise.
const LINGER: u32 = SPIN_ROUNDS;
/// Idle rounds between a waiting coordinator's attempts to help with other work.
const HELP_EVERY: u32 = 32;

/// Launches a coordinator may have running at once, nested on its stack (and
/// registrations a member may hold at once).
pub(super) const LAUNCH_DEPTH: usize = 32;

/// One launch of a coordinator.
pub(super) struct Launch {
    /// The registration `n` it was launched under (top 16 bits) and its count (below).
    word: AtomicU64,
    /// Its job, published before `word`.
    pub(super) job: AtomicPtr<Header>,
}

/// Bits of a launch word below its registration `n`: the launch count.
const COUNT_BITS: u32 = 48;

impl Launch {
    /// The registration `n` and count of this launch, as last published.
    fn parts(&self) -> (u16, u64) {
        // Acquire: pairs with `publish`'s store, after the job's.
        let word = self.word.load(Acquire);
        ((word >> COUNT_BITS) as u16, word & ((1 << COUNT_BITS) - 1))
    }

    fn set(&self, n: u16, count: u64) {
        self.word.store(u64::from(n) << COUNT_BITS | count, Release);
    }
}

impl Slot {
    /// A launch of this coordinator under registration `n` that is newer than launch
    /// count `seen`: its count and job.
    fn launch_for(&self, n: u16, seen: u64) -> Option<(u64, *const Header)> {
        // Acquire: pairs with the store after a launch is published.
        let k = self.launching.load(Acquire);
        self.launches[..k].iter().find_map(|l| {
            let (of, count) = l.parts();
            (of == n && count > seen).then(|| (count, l.job.load(Acquire).cast_const()))
        })
    }

    /// The coordinator publishes `job`, of a team fixed under registration `n`, as its
    /// innermost launch; returns the launch's entry, for [`Slot::retire`].
    pub(super) fn publish(&self, job: *const Header, n: u16) -> usize {
        let i = self.launching.load(Relaxed);
        let count = self.launched.load(Relaxed) + 1;
        self.launched.store(count, Relaxed);
        let entry = &self.launches[i];
        entry.job.store(job.cast_mut(), Release);
        entry.set(n, count);
        self.launching.store(i + 1, Release);
        i
    }

    /// The coordinator ends launch `i`, its innermost, once every member has left it:
    /// nothing is pending and the team persists.
    pub(super) fn retire(&self, i: usize) {
        self.launching.store(i, Relaxed);
        self.word.finish();
    }
}

/// One worker's team state, in the registry.
#[repr(align(128))]
pub(super) struct Slot {
    /// Its registration word as a coordinator.
    pub(super) word: Word,
    /// The coordinator it is registered with; itself when none.
    coord: AtomicUsize,
    /// Its running launches as a coordinator, outermost first: a team asked for while
    /// an outer launch of it waits gets the next entry, so that the outer launch's
    /// members still find their job.
    pub(super) launches: [Launch; LAUNCH_DEPTH],
    /// How many of `launches` run (written by this worker alone).
    pub(super) launching: AtomicUsize,
    /// Launches made so far (written by this worker alone).
    launched: AtomicU64,
    /// Team bodies running on this worker (written by it alone).
    pub(super) depth: AtomicU32,
    /// Its registrations as a member, outermost first (a worker serves teams from
    /// waits inside other teams' bodies and between their tasks): from any wait it runs
    /// a launch it is due to run, wherever it waits ([`serve`]). Owner only.
    pub(super) regs: [Registration; LAUNCH_DEPTH],
    /// How many of `regs` hold (owner only).
    registered: std::sync::atomic::AtomicUsize,
}

/// A registration of a member: its coordinator, the `n` it registered under, and the
/// count of the last launch it ran there.
#[derive(Default)]
pub(super) struct Registration {
    coord: std::sync::atomic::AtomicUsize,
    n: AtomicU32,
    seen: AtomicU64,
}

impl Registration {
    fn set(&self, c: usize, n: u16, seen: u64) {
        self.coord.store(c, Relaxed);
        self.n.store(u32::from(n), Relaxed);
        self.seen.store(seen, Relaxed);
    }
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
                    launches: std::array::from_fn(|_| Launch {
                        word: AtomicU64::new(0),
                        job: AtomicPtr::new(std::ptr::null_mut()),
                    }),
                    launching: AtomicUsize::new(0),
                    launched: AtomicU64::new(0),
                    regs: Default::default(),
                    registered: Default::default(),
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
        if c != mine_c
            && needs(c, reg, me, p)
            && before(reg.r, c, mine_r, mine_c)
            && !holds(teams, me, c, reg.n)
        {
            return Some(c);
        }
    }
    None
}

/// Whether worker `me` holds a registration with coordinator `c` under `n`, made in an
/// outer frame (a wait inside a launch, or a launch of an outer registration, can serve
/// teams again): it counts in `c`'s team already and runs `c`'s launch from whatever
/// wait it is in (`run_due`). A second registration would count it twice: two ranks of
/// one launch on one worker, the inner one waiting at the team's barrier for the outer.
fn holds(teams: &Teams, me: usize, c: usize, n: u16) -> bool {
    let slot = &teams.slots[me];
    slot.regs[..slot.registered.load(Relaxed)]
        .iter()
        .any(|g| g.coord.load(Relaxed) == c && g.n.load(Relaxed) == u32::from(n))
}

/// The coordinator that wants idle worker `me` as a member, if any: one that needs it,
/// found through its partners, unless `me` is busy with a team of its own.
pub(super) fn wanted_by(teams: &Teams, me: usize) -> Option<usize> {
    if teams.pending.load(Relaxed) == 0 {
        return None;
    }
    // A coordinator still forming its team serves only teams that go before its own
    // (in `gather`). Any other worker that waits serves, also inside a team body: the
    // team that needs it may come from work that the body waits for.
    let slot = &teams.slots[me];
    let reg = slot.word.load();
    if reg.r != 0 && reg.t == 0 || slot.registered.load(Relaxed) == LAUNCH_DEPTH {
        return None;
    }
    partner_coordinator(teams, me, 0, me)
}

/// Whether a team wants worker `me` as a member: [`serve`] would serve one, or run a
/// launch. For the sleeper's last look: a coordinator makes its request or launches, and
/// a worker registers (which may make a coordinator reachable through it), before waking
/// the sleepers.
pub(crate) fn wants_member(teams: &Teams, me: usize) -> bool {
    due(teams, me).is_some() || wanted_by(teams, me).is_some()
}

/// One round of a team wait past its spinning (a member at the barrier or between
/// tasks, a coordinator waiting for its members): lends `w` to a team that needs it, or
/// to other work, since that work may be what the team waits for (and under relay, a
/// task handed to `w` waits in its channel until it looks). True if it did something.
pub(super) fn lend(w: &Worker) -> bool {
    w.poll();
    if serve(w) {
        return true;
    }
    // Other work may nest more launches and registrations here: not past half the room.
    let slot = &w.registry().source::<Teams>().slots[w.index()];
    let deep = slot
        .launching
        .load(Relaxed)
        .max(slot.registered.load(Relaxed));
    deep < LAUNCH_DEPTH / 2 && w.find_work()
}

/// A launch that worker `me` is due to run for one of its registrations, innermost
/// first: the registration and the launch's count and job.
fn due(teams: &Teams, me: usize) -> Option<(&Registration, u64, *const Header)> {
    let slot = &teams.slots[me];
    let k = slot.registered.load(Relaxed);
    slot.regs[..k].iter().rev().find_map(|g| {
        let cs = &teams.slots[g.coord.load(Relaxed)];
        let n = g.n.load(Relaxed) as u16;
        cs.launch_for(n, g.seen.load(Relaxed))
            .map(|(count, job)| (g, count, job))
    })
}

/// Takes a launch that worker `me` is due to run, if any (see [`due`]): it counts as
/// run for its registration.
pub(super) fn take_due(teams: &Teams, me: usize) -> Option<*const Header> {
    let (g, count, job) = due(teams, me)?;
    g.seen.store(count, Relaxed);
    Some(job)
}

/// Runs on `w` a member's part of `job`, taken by [`take_due`] or [`take_launched`].
fn run_taken_launch(w: &Worker, job: *const Header) {
    // SAFETY: a launch under a registration's `n` publishes its job before its word
    // (release/acquire), and the coordinator keeps the job alive until every member of
    // the fixed team, this one included, has left it; each launch is taken once per
    // registration (its count is then `seen`).
    w.run_taken(|| unsafe { Header::run(job, w) });
}

/// Runs a launch that `w` is due to run, if any (see [`due`]).
fn run_due(w: &Worker, teams: &Teams) -> bool {
    take_due(teams, w.index())
        .map(|job| run_taken_launch(w, job))
        .is_some()
}

/// Lets `w`, which waits, run a launch it is due to run as a member, or join a team that
/// needs it and serve that team until it is done with `w`. Called from every wait's
/// back-off; true if it did either.
pub(crate) fn serve(w: &Worker) -> bool {
    let teams = w.registry().source::<Teams>();
    if run_due(w, teams) {
        return true;
    }
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
    let n = teams.slots[c].word.register(|n| holds(teams, me, c, n))?;
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

/// Worker `me` registers with coordinator `c` as its registration `depth` (see
/// [`enlist`]); returns the `n` it registered under.
pub(super) fn register(
    teams: &Teams,
    sleep: &Sleep,
    me: usize,
    c: usize,
    depth: usize,
) -> Option<u16> {
    let slot = &teams.slots[me];
    // Before the CAS: the launches of this registration come after it.
    let seen = teams.slots[c].launched.load(Relaxed);
    let n = enlist(teams, sleep, me, c)?;
    slot.regs[depth].set(c, n, seen);
    slot.registered.store(depth + 1, Relaxed);
    Some(n)
}

/// What a member registered with `c` under `n` does next: one look of [`member`].
pub(super) enum Follow {
    /// Run this launch (taken: see [`take_due`]).
    Run(*const Header),
    /// The registration is void.
    Revoked,
    /// Nothing to run: the word as read, and a coordinator that goes before `c` and
    /// needs this member, if any (see [`depart`]).
    Wait(Reg, Option<usize>),
}

/// One look of member `me`, registered with `c` under `n`.
pub(super) fn follow(teams: &Teams, me: usize, c: usize, n: u16) -> Follow {
    let reg = teams.slots[c].word.load();
    // Looked for after the word: a launch made before a revocation that this load sees
    // is found. (Launches of outer registrations too: they may be what a team here
    // waits for.)
    if let Some(job) = take_due(teams, me) {
        return Follow::Run(job);
    }
    if reg.n != n {
        return Follow::Revoked;
    }
    let first = (reg.t == 0 || reg.r == 0)
        .then(|| partner_coordinator(teams, me, reg.r, c))
        .flatten();
    Follow::Wait(reg, first)
}

/// Registers with coordinator `c` and serves it (or a coordinator that goes before it)
/// until the registration ends.
fn member(w: &Worker, teams: &Teams, mut c: usize) {
    let _t = crate::core::trace::span(w, crate::core::trace::EventKind::TeamMember, Some(c), 0);
    let me = w.index();
    let slot = &teams.slots[me];
    // Served from a wait inside another team's body or launch: follow that team again
    // afterwards.
    let outer = slot.coord.load(Relaxed);
    let depth = slot.registered.load(Relaxed);
    let g = &slot.regs[depth];
    'register: while let Some(n) = register(teams, &w.registry().sleep, me, c, depth) {
        let mut idle = 0u32;
        loop {
            let reg = match follow(teams, me, c, n) {
                Follow::Run(job) => {
                    run_taken_launch(w, job);
                    idle = 0;
                    continue;
                }
                Follow::Revoked => break 'register,
                Follow::Wait(reg, first) => {
                    if let Some(c2) = first.filter(|_| depart(w, teams, g)) {
                        c = c2;
                        slot.registered.store(depth, Relaxed);
                        continue 'register;
                    }
                    reg
                }
            };
            idle += 1;
            if idle > LINGER {
                if reg.r == 0 && depart(w, teams, g) {
                    break 'register;
                }
                // Teamed, and the team's task still runs elsewhere: it may wait for a
                // team or for work that needs this worker. Not before this member took
                // its part of that task: work it lent itself to would lie below that part,
                // and the part's barrier may wait for whoever waits for that work.
                if reg.t != 0 && took_current(teams, c, n, g) && lend(w) {
                    idle = 0;
                    continue;
                }
            }
            w.poll();
            back_off(idle);
        }
    }
    unfollow(teams, me, depth, outer);
}

/// Whether the member of registration `g` (with `c`, under `n`) has taken every running
/// launch of `c` under `n`, and there is one: `c` launches as soon as its team is fixed,
/// so a pending task with no launch under `n` yet is about to get one, which this member
/// must run first.
pub(super) fn took_current(teams: &Teams, c: usize, n: u16, g: &Registration) -> bool {
    let cs = &teams.slots[c];
    let k = cs.launching.load(Acquire);
    let seen = g.seen.load(Relaxed);
    let mut ours = cs.launches[..k]
        .iter()
        .map(Launch::parts)
        .filter(|&(of, _)| of == n)
        .peekable();
    ours.peek().is_some() && ours.all(|(_, count)| count <= seen)
}

/// Member `me`'s registrations from `depth` on have ended: it follows `outer` again.
pub(super) fn unfollow(teams: &Teams, me: usize, depth: usize, outer: usize) {
    let slot = &teams.slots[me];
    slot.registered.store(depth, Relaxed);
    slot.coord.store(outer, Release);
}

/// Withdraws registration `g` if its coordinator lets it go (see `Word::leave`), and
/// then runs what was launched under it meanwhile: the word may have moved on (revoked)
/// after a launch, when the coordinator asked for a nested team, and the member of that
/// launch must still run it. True if the member is free to go.
fn depart(w: &Worker, teams: &Teams, g: &Registration) -> bool {
    if !withdraw(teams, g) {
        return false;
    }
    while let Some(job) = take_launched(teams, g) {
        run_taken_launch(w, job);
    }
    true
}

/// The first half of [`depart`]: withdraws `g` unless its coordinator holds it.
pub(super) fn withdraw(teams: &Teams, g: &Registration) -> bool {
    let cs = &teams.slots[g.coord.load(Relaxed)];
    cs.word.leave(g.n.load(Relaxed) as u16)
}

/// The second half of [`depart`]: takes a launch made under `g` that it has not run.
pub(super) fn take_launched(teams: &Teams, g: &Registration) -> Option<*const Header> {
    let cs = &teams.slots[g.coord.load(Relaxed)];
    let (count, job) = cs.launch_for(g.n.load(Relaxed) as u16, g.seen.load(Relaxed))?;
    g.seen.store(count, Relaxed);
    Some(job)
}

/// Rounds a waiting coordinator or member yields before it naps: a team forms within
/// microseconds once its workers are up, and a nap costs tens of them.
pub(super) const TEAM_YIELDS: u32 = 2048;

/// A team member's or coordinator's wait: [`wait_round`] with its yields and naps.
pub(super) fn back_off(idle: u32) {
    wait_round(idle, TEAM_YIELDS, Duration::from_micros(20));
}

/// Coordinates on `w` until a team of `r` is fixed; returns the `n` it was fixed under.
pub(super) fn form(w: &Worker, teams: &Teams, r: u16) -> u16 {
    let _t = crate::core::trace::span(w, crate::core::trace::EventKind::Team, None, r.into());
    forming(teams, w.index(), || gather(w, teams, r))
}

/// Runs `gather`, the forming of a team coordinated by `me`, with the request counted
/// as pending and `me` its own `coord`.
pub(super) fn forming<T>(teams: &Teams, me: usize, gather: impl FnOnce() -> T) -> T {
    // Partners find a coordinator through their partners' `coord`: while it forms, it
    // is its own, also when it asks from inside another team's body.
    let coord = &teams.slots[me].coord;
    let outer = coord.swap(me, AcqRel);
    teams.pending.fetch_add(1, AcqRel);
    let n = gather();
    teams.pending.fetch_sub(1, AcqRel);
    coord.store(outer, Release);
    n
}

/// What coordinator `me`, asking for a team of `r`, does next: one look of [`gather`].
pub(super) enum Gather {
    /// Its team is fixed under this `n`.
    Fixed(u16),
    /// A team that goes first needs it: its request is revoked, to serve that one.
    GiveWay(usize),
    /// Still forming: the word as read.
    Wait(Reg),
}

/// One look of coordinator `me` at its request for a team of `r`.
pub(super) fn gather_step(teams: &Teams, me: usize, r: u16) -> Gather {
    let word = &teams.slots[me].word;
    let reg = word.load();
    if reg.t == r || word.fix() {
        return Gather::Fixed(word.load().n);
    }
    let room = teams.slots[me].registered.load(Relaxed) < LAUNCH_DEPTH;
    if let Some(c) = partner_coordinator(teams, me, r, me).filter(|_| room) {
        word.revoke();
        return Gather::GiveWay(c);
    }
    Gather::Wait(reg)
}

fn gather(w: &Worker, teams: &Teams, r: u16) -> u16 {
    let me = w.index();
    let word = &teams.slots[me].word;
    loop {
        ask(teams, &w.registry().sleep, me, r);
        let mut idle = 0u32;
        loop {
            let reg = match gather_step(teams, me, r) {
                Gather::Fixed(n) => return n,
                Gather::GiveWay(c) => {
                    // Serve the team that goes first, and ask again.
                    w.run_taken(|| member(w, teams, c));
                    break;
                }
                Gather::Wait(reg) => reg,
            };
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
