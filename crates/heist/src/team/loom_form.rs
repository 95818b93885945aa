//! loom models of the registration word (`team::word`): joining workers registering
//! with one CAS while the coordinator fixes the team, a member leaving while the team is
//! fixed, a revocation racing a registration, and a persisting team reused while a
//! member leaves. Each model checks that a team is fixed only with exactly r workers
//! registered, that a member never leaves a fixed team with a task pending, and that
//! a revoked registration counts for nothing.
//!
//! Two more models check that a sleeper wanted by a team is not missed (the sleep
//! handshake of `core/sleep.rs` with `form::wants_member` in the last look): a coordinator's
//! request ([`form::ask`]) and a registration that makes a coordinator reachable through
//! the registering partner ([`form::enlist`]). A missed wake-up shows as a deadlock; with
//! `wants_member` left out of the last look, both models deadlock.
//!
//! The launch models drive the real launch and registration stacks (`Slot::publish` and
//! `retire`, `form::register`, `follow`, `withdraw`, `take_launched`, `gather_step`,
//! `Header::member` and `Job::run_caught`) with model loops in place of the workers'
//! waits: a team formed and launched (also with a member's panic), a launch revoked by
//! the nested request of its own rank 0 (the member must still find it, then join the
//! nested team), and two coordinators asking at once (the higher id gives way, serves
//! the other's team, then gets its own). Each checks that every member runs each launch
//! it belongs to once, that no launch is lost (a lost one hangs its coordinator, which
//! loom reports), and that results reach the coordinator (they sit in loom-tracked cells).
//!
//! Two models of three workers (see [`fair_model`] for how their waits are bounded):
//! a larger team's coordinator, with a registration, revokes its request for a smaller
//! team that needs it, serves that team, and still gets its own, its members waking from
//! real sleeps; and a team whose members panic, which poisons the barrier (with the
//! barrier's own steps, `Barrier::arrive`, `passed` and `block`) so that every member
//! leaves and the first panic, not the poison's, reaches the coordinator.
//!
//! Two more pin down that a worker registers with a coordinator at most once per
//! request, however deep its waits nest, and that a member lends itself to other work
//! only once it has taken its team's running launch.
//!
//! Run with `.ci/loom` (`RUSTFLAGS="--cfg loom" cargo test -p heist --release --lib loom`).

use super::barrier::Barrier;
use super::form::{self, wants_member, Follow, Gather, Teams};
use super::word::{Reg, Word};
use super::{Header, Job, Team};
use crate::core::sleep::Sleep;
use loom::sync::Arc;
use loom::thread;
use std::cell::Cell;
use std::sync::atomic::Ordering::{AcqRel, Relaxed};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

thread_local! {
    /// The rounds that each wait of the running model explores (see [`fair_model`]).
    static ROUNDS: Cell<Option<u32>> = const { Cell::new(None) };
}

/// A model of three workers, with `preemptions` and each wait explored for `rounds`
/// (loom runs a model's threads on the test's own thread, which holds the bound).
///
/// With two threads waiting by yielding and a third that they wait for, loom explores
/// ever longer executions in which the two take turns and the third never runs
/// (tokio-rs/loom#53): the model never ends. So each wait here branches for `rounds`
/// rounds; past them the execution goes on unexplored, in loom's default order, which
/// runs the thread that yielded least (a wait that can never end still fails the model,
/// with loom's "exceeded maximum number of branches").
fn fair_model(preemptions: u8, rounds: u32, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(preemptions.into());
    }
    ROUNDS.with(|r| r.set(Some(rounds)));
    b.check(f);
    ROUNDS.with(|r| r.set(None));
}

/// Round `k` of a model's wait (counting it): yields to the other threads.
fn pause(k: &mut u32) {
    *k += 1;
    if ROUNDS.with(Cell::get).is_some_and(|r| *k > r) {
        loom::skip_branch();
    }
    thread::yield_now();
}

/// Two workers register with a coordinator of three, which fixes the team once both did.
#[test]
fn loom_team_two_joiners_then_fix() {
    model(|| {
        let w = Arc::new(Word::new());
        assert!(!w.request(3));
        let joiners: Vec<_> = (0..2)
            .map(|_| {
                let w = w.clone();
                thread::spawn(move || w.register(|_| false))
            })
            .collect();
        while !w.fix() {
            thread::yield_now();
        }
        let ns: Vec<_> = joiners.into_iter().map(|j| j.join().unwrap()).collect();
        let reg = w.load();
        assert!(ns.iter().all(|n| *n == Some(reg.n)));
        assert_eq!((reg.r, reg.a, reg.t), (3, 3, 3));
    });
}

/// A member leaves while the coordinator tries to fix: exactly one of them wins.
#[test]
fn loom_team_leave_races_fix() {
    model(|| {
        let w = Arc::new(Word::new());
        w.request(2);
        let m = {
            let w = w.clone();
            thread::spawn(move || {
                let n = w
                    .register(|_| false)
                    .expect("the team is forming and short of one");
                w.leave(n)
            })
        };
        let fixed = w.fix();
        let left = m.join().unwrap();
        assert!(fixed != left, "fixed {fixed}, left {left}");
        let reg = w.load();
        if fixed {
            assert_eq!((reg.a, reg.t), (2, 2));
        } else {
            assert_eq!((reg.a, reg.t), (1, 0));
        }
    });
}

/// A revocation races a registration: afterwards no registration counts.
#[test]
fn loom_team_revoke_races_register() {
    model(|| {
        let w = Arc::new(Word::new());
        w.request(2);
        let m = {
            let w = w.clone();
            thread::spawn(move || w.register(|_| false).map(|n| (n, w.leave(n))))
        };
        w.revoke();
        let out = m.join().unwrap();
        if let Some((_, left)) = out {
            assert!(left, "a revoked member is free to go");
        }
        let reg = w.load();
        assert_eq!((reg.r, reg.a, reg.t), (0, 1, 0));
        assert!(!w.fix());
    });
}

/// A persisting team of two: the coordinator asks again while the member leaves; it
/// reuses the team exactly when the member could not leave.
#[test]
fn loom_team_reuse_races_leave() {
    model(|| {
        let w = Arc::new(Word::new());
        w.request(2);
        let n = w.register(|_| false).expect("forming");
        assert!(w.fix());
        w.finish();
        assert_eq!(
            w.load(),
            Reg {
                r: 0,
                a: 2,
                t: 2,
                n
            }
        );
        let m = {
            let w = w.clone();
            thread::spawn(move || w.leave(n))
        };
        let kept = w.request(2);
        let left = m.join().unwrap();
        assert!(kept != left, "kept {kept}, left {left}");
        let reg = w.load();
        if kept {
            assert_eq!((reg.r, reg.a, reg.t, reg.n), (2, 2, 2, n));
        } else {
            assert_eq!((reg.r, reg.a, reg.t), (2, 1, 0));
            assert_ne!(reg.n, n);
        }
    });
}

/// Worker `me` idles as the runtime does: it serves a team that wants it, else sleeps
/// with a last look for one (here: it returns once wanted).
fn sleeper(teams: &Teams, sleep: &Sleep, me: usize) {
    while !wants_member(teams, me) {
        sleep.sleep(me, crate::core::frame::Roots::Included, None, || {
            wants_member(teams, me)
        });
    }
}

/// Worker 1 registers with coordinator 0's team of four, then, from a wait nested in
/// that registration (a launch of an outer one, a team body), is offered the same team
/// again: it is neither wanted nor registered a second time, which would count it twice
/// (two ranks of one launch on one worker, the inner waiting at the barrier for the
/// outer: the hang this model pins down). Once 0 asks afresh, the old registration is
/// void and 1 registers again.
#[test]
fn loom_team_a_member_registers_once_per_request() {
    model(|| {
        let teams = Teams::new(4);
        let sleep = Sleep::new(4);
        teams.pending.fetch_add(1, AcqRel);
        assert!(!teams.slots[0].word.request(4));
        let n = form::register(&teams, &sleep, 1, 0, 0).expect("0 is forming");
        assert!(!wants_member(&teams, 1), "1 is counted in 0's team already");
        assert_eq!(form::register(&teams, &sleep, 1, 0, 1), None);
        assert_eq!(teams.slots[0].word.load().a, 2);
        assert!(!teams.slots[0].word.request(3));
        let again = form::register(&teams, &sleep, 1, 0, 1).expect("a fresh request");
        assert_ne!(again, n);
    });
}

/// The state of a pool of two for a model, and worker 1 running `member` on it (worker 0
/// is the model's own thread).
fn two_workers<T: Send + 'static>(
    member: impl FnOnce(&Teams, &Sleep) -> T + Send + 'static,
) -> (Arc<Teams>, Arc<Sleep>, thread::JoinHandle<T>) {
    let teams = Arc::new(Teams::new(2));
    let sleep = Arc::new(Sleep::new(2));
    let (t, s) = (teams.clone(), sleep.clone());
    (teams, sleep, thread::spawn(move || member(&t, &s)))
}

/// Coordinator 0 asks for a team of two while its partner, worker 1, goes to sleep.
#[test]
fn loom_team_request_wakes_the_sleeping_partner() {
    model(|| {
        let (teams, sleep, c) = two_workers(move |teams, sleep| {
            teams.pending.fetch_add(1, AcqRel);
            form::ask(teams, sleep, 0, 2);
        });
        sleeper(&teams, &sleep, 1);
        c.join().unwrap();
    });
}

/// Coordinator 0 of four asks for the whole pool before anyone sleeps; worker 3 reaches
/// it only through a partner that follows it (1 or 2). Worker 1 registers while 3 goes to
/// sleep.
#[test]
fn loom_team_registration_wakes_a_sleeper_it_makes_reachable() {
    model(|| {
        let teams = Arc::new(Teams::new(4));
        let sleep = Arc::new(Sleep::new(4));
        teams.pending.fetch_add(1, AcqRel);
        assert!(!teams.slots[0].word.request(4));
        assert!(!wants_member(&teams, 3), "3 is no partner of 0");
        let m = {
            let (teams, sleep) = (teams.clone(), sleep.clone());
            thread::spawn(move || {
                assert!(form::enlist(&teams, &sleep, 1, 0).is_some());
            })
        };
        sleeper(&teams, &sleep, 3);
        m.join().unwrap();
    });
}

/// The body type of the launch models' jobs; the models run their own parts instead.
type Body = fn(&Team<'_>) -> usize;

fn never(_: &Team<'_>) -> usize {
    unreachable!("the launch models run their own parts")
}

static NEVER: Body = never;

type ModelJob = Job<'static, Body, usize>;

/// What rank `rank` of a launch computes: a value that names both.
fn value(launch: usize, rank: usize) -> usize {
    launch * 10 + rank
}

/// A member's part of a launch: given the job's barrier and the rank, it computes the
/// rank's result.
type Part<'a> = &'a dyn Fn(&Barrier, usize) -> usize;

/// A member runs launch `job`, taken by the real code: its real member part
/// (`Header::member`, `Job::run_caught`) around `part`.
fn run_part(job: *const Header, part: Part<'_>) {
    // SAFETY: a launch's coordinator keeps its job alive until every member left it
    // (what `Header::member` does last); the models' jobs are `ModelJob`s.
    let job = unsafe { &*job.cast::<ModelJob>() };
    job.header
        .member(|rank| job.run_caught(rank, || part(&job.barrier, rank)));
}

/// Coordinator `me` launches its fixed team of `r` under `n` as `Worker::launch` does:
/// publish, rank 0 (`part0`), wait for the members, retire; then the outcome.
fn launch(
    teams: &Teams,
    me: usize,
    r: u16,
    n: u16,
    part0: impl FnOnce(&Barrier) -> usize,
) -> std::thread::Result<Vec<usize>> {
    let job = ModelJob::new(&NEVER, usize::from(r));
    let slot = &teams.slots[me];
    let i = slot.publish(&job.header, n);
    job.run_caught(0, || part0(&job.barrier));
    let mut k = 0;
    while !job.header.all_left() {
        pause(&mut k);
    }
    slot.retire(i);
    job.outcome()
}

/// Coordinator `me` asks for a team of `r` until it is fixed (`gather` without help);
/// `None` if it gives way to a team that goes first (its request is revoked then).
fn gather(teams: &Teams, sleep: &Sleep, me: usize, r: u16) -> Result<u16, usize> {
    form::ask(teams, sleep, me, r);
    let mut k = 0;
    loop {
        match form::gather_step(teams, me, r) {
            Gather::Fixed(n) => return Ok(n),
            Gather::GiveWay(c) => return Err(c),
            Gather::Wait(_) => pause(&mut k),
        }
    }
}

/// Worker `me` registers with coordinator `c` (retrying while `c` does not need it) and
/// follows it (see [`follow`]). Returns how many launches it ran.
fn serve(teams: &Teams, sleep: &Sleep, me: usize, c: usize, part: Part<'_>) -> usize {
    let n = register(teams, sleep, me, c);
    let (ran, _) = follow(teams, me, c, n, part);
    ran
}

/// Worker `me` registers with coordinator `c`, retrying while `c` does not need it;
/// returns the registration's `n`.
fn register(teams: &Teams, sleep: &Sleep, me: usize, c: usize) -> u16 {
    let mut k = 0;
    loop {
        match form::register(teams, sleep, me, c, 0) {
            Some(n) => return n,
            None => pause(&mut k),
        }
    }
}

/// Worker `me`, registered with coordinator `c` under `n`, follows it as `form::member`
/// does (without lending), running each launch with `part`, until the registration ends.
/// Returns how many launches it ran, and whether the registration was revoked.
fn follow(teams: &Teams, me: usize, c: usize, n: u16, part: Part<'_>) -> (usize, bool) {
    follow_watched(teams, me, c, n, part, &|_, _| {})
}

/// [`follow`], calling `waits(reg, ran)` at each wait with the word as read and the
/// launches run so far.
fn follow_watched(
    teams: &Teams,
    me: usize,
    c: usize,
    n: u16,
    part: Part<'_>,
    waits: &dyn Fn(Reg, usize),
) -> (usize, bool) {
    let g = &teams.slots[me].regs[0];
    let mut ran = 0;
    let mut k = 0;
    let revoked = loop {
        match form::follow(teams, me, c, n) {
            Follow::Run(job) => {
                run_part(job, part);
                ran += 1;
            }
            Follow::Revoked => break true,
            Follow::Wait(reg, first) => {
                assert!(first.is_none(), "no other coordinator here");
                waits(reg, ran);
                if reg.r == 0 && form::withdraw(teams, g) {
                    while let Some(job) = form::take_launched(teams, g) {
                        run_part(job, part);
                        ran += 1;
                    }
                    break false;
                }
                pause(&mut k);
            }
        }
    };
    form::unfollow(teams, me, 0, me);
    (ran, revoked)
}

/// Worker `me` registers with coordinator `c` once, as `form::member` does, and if it
/// could, follows it (see [`follow`]).
fn member(
    teams: &Teams,
    sleep: &Sleep,
    me: usize,
    c: usize,
    part: Part<'_>,
) -> Option<(usize, bool)> {
    let n = form::register(teams, sleep, me, c, 0)?;
    Some(follow(teams, me, c, n, part))
}

/// Worker `me` idles as the runtime's idle loop does, until it has run a launch: it
/// sleeps, with `wants_member` in its last look, until a team wants it, then registers
/// and follows it (`form::serve`). Returns the launches it ran and how many of its
/// registrations were revoked.
fn idle(teams: &Teams, sleep: &Sleep, me: usize, part: Part<'_>) -> (usize, usize) {
    let mut revoked = 0;
    loop {
        sleeper(teams, sleep, me);
        let Some(c) = form::wanted_by(teams, me) else {
            continue;
        };
        if let Some((ran, r)) = member(teams, sleep, me, c, part) {
            revoked += usize::from(r);
            if ran > 0 {
                return (ran, revoked);
            }
        }
    }
}

/// Coordinator `me` forms a team of `r` as `form::form` does (without help): it asks,
/// and when a team that goes first needs it, it serves that team with `part` and asks
/// again. Returns the `n` its team was fixed under and the coordinators it gave way to.
fn form_team(teams: &Teams, sleep: &Sleep, me: usize, r: u16, part: Part<'_>) -> (u16, Vec<usize>) {
    form::forming(teams, me, || {
        let mut gave_way = Vec::new();
        loop {
            match gather(teams, sleep, me, r) {
                Ok(n) => return (n, gave_way),
                Err(c) => {
                    gave_way.push(c);
                    member(teams, sleep, me, c, part);
                }
            }
        }
    })
}

/// Coordinator 0 forms a team of two with worker 1 and launches it; the member's part
/// panics if `panics`. The member runs the launch once, as rank 1, and its result or its
/// panic reaches the coordinator after it left.
fn formed_and_launched(panics: bool) {
    model(move || {
        let (teams, sleep, m) = two_workers(move |teams, sleep| {
            serve(teams, sleep, 1, 0, &|_, rank| {
                assert_eq!(rank, 1);
                if panics {
                    panic!("member");
                }
                value(1, rank)
            })
        });
        let n = gather(&teams, &sleep, 0, 2).expect("nobody goes first");
        let out = launch(&teams, 0, 2, n, |_| value(1, 0));
        assert_eq!(m.join().unwrap(), 1, "the member ran the launch once");
        match out {
            Ok(v) => assert!(!panics && v == [value(1, 0), value(1, 1)], "{v:?}"),
            Err(p) => assert!(panics && p.downcast_ref::<&str>() == Some(&"member")),
        }
        let reg = teams.slots[0].word.load();
        assert_eq!((reg.r, reg.t), (0, 0), "the member left the finished team");
    });
}

#[test]
fn loom_team_formed_and_launched() {
    formed_and_launched(false);
}

#[test]
fn loom_team_formed_and_launched_with_a_members_panic() {
    formed_and_launched(true);
}

/// Coordinator 0 forms a team of two with worker 1 and launches it. Wherever the
/// member's loop would lend itself to other work (the team fixed, and
/// `form::took_current`), it has run the launch already: work it lent itself to before
/// would lie below its rank on its stack, while the launch's barrier waits for that rank
/// (the hang `took_current` fixed). The team is fixed before its launch is published, so
/// a fixed team alone does not say so.
#[test]
fn loom_team_a_member_lends_itself_only_after_taking_the_launch() {
    // Executions in which the member could lend itself.
    static LENT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    model(|| {
        let (teams, sleep, m) = two_workers(move |teams, sleep| {
            let g = &teams.slots[1].regs[0];
            let n = register(teams, sleep, 1, 0);
            let lends = |reg: Reg, ran: usize| {
                if reg.t != 0 && form::took_current(teams, 0, n, g) {
                    assert_eq!(ran, 1, "the member lends itself before its launch");
                    LENT.fetch_add(1, Relaxed);
                }
            };
            let (ran, _) = follow_watched(teams, 1, 0, n, &|_, rank| value(1, rank), &lends);
            ran
        });
        let n = gather(&teams, &sleep, 0, 2).expect("nobody goes first");
        let out = launch(&teams, 0, 2, n, |_| value(1, 0));
        assert_eq!(out.expect("no panic"), [value(1, 0), value(1, 1)]);
        assert_eq!(m.join().unwrap(), 1, "the member ran the launch once");
    });
    assert!(
        LENT.load(Relaxed) > 0,
        "the member could lend itself in some execution"
    );
}

/// Rank 0 of coordinator 0's launch asks for a nested team, revoking the registration
/// that launch was made under (as `try_team` does while a launch runs). Worker 1, its
/// member, still finds and runs the outer launch (in the launch stack, under the old
/// `n`), then joins the nested team and runs it: each once, both results arrive.
#[test]
fn loom_team_launch_found_after_a_nested_request_revokes_it() {
    // Executions in which the member ran the outer launch after its revocation.
    static LATE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    model(|| {
        let (teams, sleep, m) = two_workers(move |teams, sleep| {
            let mut launches = Vec::new();
            // The outer launch, then (a fresh registration) the nested one.
            for _ in 0..2 {
                let ran = std::cell::Cell::new(0);
                serve(teams, sleep, 1, 0, &|_, rank| {
                    ran.set(ran.get() + 1);
                    if launches.is_empty() && teams.slots[0].word.load().r == 0 {
                        LATE.fetch_add(1, Relaxed);
                    }
                    value(launches.len() + 1, rank)
                });
                launches.push(ran.get());
            }
            launches
        });
        let n = gather(&teams, &sleep, 0, 2).expect("nobody goes first");
        let outer = launch(&teams, 0, 2, n, |_| {
            teams.slots[0].word.revoke();
            let n2 = gather(&teams, &sleep, 0, 2).expect("nobody goes first");
            assert_ne!(n2, n, "the nested team forms under a new registration");
            let inner = launch(&teams, 0, 2, n2, |_| value(2, 0)).expect("no panic");
            assert_eq!(inner, [value(2, 0), value(2, 1)]);
            value(1, 0)
        });
        assert_eq!(outer.expect("no panic"), [value(1, 0), value(1, 1)]);
        assert_eq!(
            m.join().unwrap(),
            [1, 1],
            "each launch ran once on the member"
        );
    });
    assert!(LATE.load(Relaxed) > 0, "the late case was reached");
}

/// Workers 0 and 1 ask for a team of two at once. The tie goes to the lower id: worker 1
/// gives way (its request revoked), serves 0's team, and then asks again and gets its
/// own team with 0 as its member. Each launch runs once on each of its two workers.
#[test]
fn loom_team_two_requests_at_once_the_higher_id_gives_way() {
    model(|| {
        let (teams, sleep, one) = two_workers(move |teams, sleep| {
            let mut served = 0;
            let n = loop {
                match gather(teams, sleep, 1, 2) {
                    Ok(n) => break n,
                    Err(c) => {
                        assert_eq!(c, 0, "only 0 goes first");
                        served += serve(teams, sleep, 1, 0, &|_, rank| value(1, rank));
                    }
                }
            };
            let out = launch(teams, 1, 2, n, |_| value(2, 0)).expect("no panic");
            (served, out)
        });
        let n = gather(&teams, &sleep, 0, 2).expect("0 goes first");
        let out = launch(&teams, 0, 2, n, |_| value(1, 0)).expect("no panic");
        assert_eq!(out, [value(1, 0), value(1, 1)]);
        let served = serve(&teams, &sleep, 0, 1, &|_, rank| value(2, rank));
        assert_eq!(served, 1, "0 ran 1's launch once");
        let (served, out) = one.join().unwrap();
        assert_eq!(served, 1, "1 ran 0's launch once");
        assert_eq!(out, [value(2, 0), value(2, 1)]);
    });
}

/// Three workers. Coordinator 0 asks for a team of all three, and worker 2, idle, may
/// register with it. Worker 1 asks for a team of two, whose block {0, 1} needs 0, and
/// goes first: 0 revokes its request (voiding 2's registration, if made), serves 1's
/// team, and asks again; 1 and 2, idle (asleep until a team wants them), join it. Each
/// team forms and runs once, each worker runs each launch it belongs to once, and
/// nothing hangs (a lost wake-up or a lost launch shows as a deadlock).
#[test]
fn loom_team_smaller_request_revokes_a_larger_forming_team() {
    // Executions in which 2's registration was revoked by 0's giving way.
    static VOIDED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    // One preemption, one round a wait: ~2 s in a release build; two preemptions run
    // for tens of minutes.
    fair_model(1, 1, || {
        let teams = Arc::new(Teams::new(3));
        let sleep = Arc::new(Sleep::new(3));
        let joins_three = |_: &Barrier, rank: usize| {
            assert!(rank == 1 || rank == 2, "rank {rank}");
            value(2, rank)
        };
        let two = {
            let (teams, sleep) = (teams.clone(), sleep.clone());
            thread::spawn(move || idle(&teams, &sleep, 2, &joins_three))
        };
        let one = {
            let (teams, sleep) = (teams.clone(), sleep.clone());
            thread::spawn(move || {
                let (n, gave_way) = form_team(&teams, &sleep, 1, 2, &|_, _| {
                    unreachable!("nothing goes before a team of two")
                });
                assert!(gave_way.is_empty());
                let out = launch(&teams, 1, 2, n, |_| value(1, 0)).expect("no panic");
                assert_eq!(out, [value(1, 0), value(1, 1)]);
                idle(&teams, &sleep, 1, &joins_three)
            })
        };
        let (n, gave_way) = form_team(&teams, &sleep, 0, 3, &|_, rank| {
            assert_eq!(rank, 1);
            value(1, rank)
        });
        assert_eq!(gave_way, [1], "0 served 1's team once");
        let out = launch(&teams, 0, 3, n, |_| value(2, 0)).expect("no panic");
        assert_eq!(out, [value(2, 0), value(2, 1), value(2, 2)]);
        let (ran1, _) = one.join().unwrap();
        let (ran2, voided) = two.join().unwrap();
        assert_eq!((ran1, ran2), (1, 1), "each member ran 0's launch once");
        VOIDED.fetch_add(voided, Relaxed);
    });
    assert!(
        VOIDED.load(Relaxed) > 0,
        "the revocation voided a registration"
    );
}

/// A member's wait at barrier `b`, blocking from the start (the real wait spins and
/// yields first, then blocks the same way): a lost wake-up hangs it. Sets `blocked` if
/// it blocked.
fn wait_at(b: &Barrier, blocked: &Cell<bool>) {
    if let Some(g) = b.arrive() {
        while !b.passed(g) {
            blocked.set(true);
            b.block(g, std::time::Duration::from_millis(1));
        }
    }
}

/// A team of three (coordinator 0, members 1 and 2) passes a barrier; then ranks 1 and
/// 2 panic, and rank 0 waits at a second barrier, where only the poison wakes it (and
/// it panics in turn). Every member leaves, each rank runs once, and the coordinator
/// gets a member's own panic (never the poison's) once both members have left.
#[test]
fn loom_team_members_panic_and_poison_the_barrier() {
    // Executions in which rank 0 blocked at the first barrier, and at the second.
    static BLOCKED: [std::sync::atomic::AtomicUsize; 2] = [
        std::sync::atomic::AtomicUsize::new(0),
        std::sync::atomic::AtomicUsize::new(0),
    ];
    // Two preemptions (a lost barrier wake-up needs them), one round a wait: ~10 s.
    fair_model(2, 1, || {
        let teams = Arc::new(Teams::new(3));
        let sleep = Arc::new(Sleep::new(3));
        let part = |b: &Barrier, rank: usize| -> usize {
            let blocked = [Cell::new(false), Cell::new(false)];
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                wait_at(b, &blocked[0]);
                if rank != 0 {
                    std::panic::resume_unwind(Box::new(rank));
                }
                wait_at(b, &blocked[1]);
            }));
            if rank == 0 {
                for (n, b) in BLOCKED.iter().zip(&blocked) {
                    n.fetch_add(usize::from(b.get()), Relaxed);
                }
            }
            std::panic::resume_unwind(caught.expect_err("a panic, or the poison's"))
        };
        let members: Vec<_> = (1..3)
            .map(|me| {
                let (teams, sleep) = (teams.clone(), sleep.clone());
                thread::spawn(move || serve(&teams, &sleep, me, 0, &part))
            })
            .collect();
        let n = gather(&teams, &sleep, 0, 3).expect("nobody goes first");
        let out = launch(&teams, 0, 3, n, |b| part(b, 0));
        let ran: Vec<_> = members.into_iter().map(|m| m.join().unwrap()).collect();
        assert_eq!(ran, [1, 1], "each member ran the launch once");
        let p = out.expect_err("the members panicked");
        let rank = p.downcast_ref::<usize>().copied();
        assert!(
            matches!(rank, Some(1 | 2)),
            "a member's own panic: {rank:?}"
        );
    });
    assert!(
        BLOCKED.iter().all(|b| b.load(Relaxed) > 0),
        "rank 0 blocked: {BLOCKED:?}"
    );
}
