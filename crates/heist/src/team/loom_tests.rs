//! loom models of the registration word (`team::word`): joining workers registering
//! with one CAS while the coordinator fixes the team, a member leaving while the team is
//! fixed, a revocation racing a registration, and a persisting team reused while a
//! member leaves. Each model checks that a team is fixed only with exactly r workers
//! registered, that a member never leaves a fixed team with a task pending, and that
//! a revoked registration counts for nothing.
//!
//! Two more models check that a sleeper wanted by a team is not missed (the sleep
//! handshake of `sleep.rs` with `form::wants_member` in the last look): a coordinator's
//! request ([`form::ask`]) and a registration that makes a coordinator reachable through
//! the registering partner ([`form::enlist`]). A missed wake-up shows as a deadlock; with
//! `wants_member` left out of the last look, both models deadlock.
//!
//! Run with `.ci/loom` (`RUSTFLAGS="--cfg loom" cargo test -p heist --release --lib loom`).

use super::form::{self, wants_member, Teams};
use super::word::{Reg, Word};
use crate::sleep::Sleep;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering::AcqRel;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
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
                thread::spawn(move || w.register())
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
                let n = w.register().expect("the team is forming and short of one");
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
            thread::spawn(move || w.register().map(|n| (n, w.leave(n))))
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
        let n = w.register().expect("forming");
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
        sleep.sleep(me, crate::frame::Roots::Included, None, || {
            wants_member(teams, me)
        });
    }
}

/// Coordinator 0 asks for a team of two while its partner, worker 1, goes to sleep.
#[test]
fn loom_team_request_wakes_the_sleeping_partner() {
    model(|| {
        let teams = Arc::new(Teams::new(2));
        let sleep = Arc::new(Sleep::new(2));
        let c = {
            let (teams, sleep) = (teams.clone(), sleep.clone());
            thread::spawn(move || {
                teams.pending.fetch_add(1, AcqRel);
                form::ask(&teams, &sleep, 0, 2);
            })
        };
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
