//! loom models of the registration word (`team::word`): joining workers registering
//! with one CAS while the coordinator fixes the team, a member leaving while the team is
//! fixed, a revocation racing a registration, and a persisting team reused while a
//! member leaves. Each model checks that a team is fixed only with exactly r workers
//! registered, that a member never leaves a fixed team with a task pending, and that
//! a revoked registration counts for nothing.
//!
//! Run with `.ci/loom` (`RUSTFLAGS="--cfg loom" cargo test -p heist --release --lib loom`).

use super::word::{Reg, Word};
use loom::sync::Arc;
use loom::thread;

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
