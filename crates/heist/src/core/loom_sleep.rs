//! loom models of the sleep handshake (`core/sleep.rs`), run against the real `Sleep`, whose
//! atomics, fence, mutexes and condition variables `crate::core::sync` swaps for loom's.
//!
//! A sleeper in the runtime loops: look for work, and if there is none, `Sleep::sleep`
//! with a last look for it. A waker makes work visible and calls a `wake_*` function.
//! The property is that no wake-up is lost: a sleeper that sleeps while work it would
//! take is visible gets woken. loom's `Condvar::wait_timeout` never times out, so a lost
//! wake-up shows as a deadlock (every thread blocked) even for sleeps that have a
//! timeout in the runtime: the models check the handshake, not the timeouts behind it.
//!
//! - `loom_sleep_wake_one_not_missed`: one sleeper, one waker that publishes one token
//!   and calls `wake_one`. Before the fix, the runtime's wakers read the sleeper count
//!   (relaxed) before any fence; with the check done that way this model deadlocks (the
//!   store-buffering outcome: the waker reads no sleeper, the sleeper's last look reads
//!   no token).
//! - `loom_sleep_two_sleepers_two_tokens`: two sleepers each need a token; the waker
//!   publishes two, one `wake_one` each. Covers a sleeper that the waker picked while its
//!   last look found the token (`withdraw` must consume that wake-up), and the second
//!   sleeper still being woken.
//! - `loom_sleep_wake_all_for_condition`: a sleeper waits for a condition, not a token,
//!   as `Worker::wait_until` does for a barrier; the waker changes it by a
//!   read-modify-write and calls `wake_all`, as a detached task's end does.
//! - `loom_sleep_wake_all_while_the_sleeper_sleeps_again`: two wakers call `wake_all`
//!   for a hint (a team that may want the sleeper, as a registration does), and then
//!   the second one for the condition the sleeper waits for. The sleeper, woken by the
//!   hint, sleeps again. Before the fix, `wake_all` reset the sleeper count after
//!   releasing the idle list's lock: a waker that had taken an empty list reset it
//!   after the sleeper had counted itself again, so the last waker saw no sleeper and
//!   the sleeper slept for good (this model deadlocks with the reset moved back out of
//!   the lock; the team model `loom_team_smaller_request_revokes_a_larger_forming_team`
//!   first showed it, at a preemption bound too costly for CI).
//!
//! - `loom_sleep_a_wake_up_raced_by_the_last_look_is_consumed`: one waker, two tokens
//!   in turn. Before the fix a waker gave the wake-up after releasing the idle list's
//!   lock; a `withdraw` could then miss it, and the next sleep returned at once with
//!   the sleeper still listed, which the sleeper's check after each sleep catches.
//!
//! Each model also checks, across its executions, that the paths it exists for were
//! taken: a sleeper that really slept and was woken, and a last look that found the work.
//!
//! Run with `.ci/loom`. The preemption bound is [`PREEMPTIONS`] unless
//! `LOOM_MAX_PREEMPTIONS` is set.

use crate::core::frame::Roots;
use crate::core::sleep::Sleep;
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering::{AcqRel, Relaxed};

/// The preemption bound used when `LOOM_MAX_PREEMPTIONS` is not set.
const PREEMPTIONS: usize = 3;

/// Counts, across the executions of one model, how often a path was taken. A std atomic
/// outside loom, so it adds nothing to the explored state.
type Hits = std::sync::Arc<[std::sync::atomic::AtomicUsize; 2]>;

fn model(f: impl Fn() + Send + Sync + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(PREEMPTIONS);
    }
    b.check(f);
}

fn check_hits(h: &Hits) {
    assert!(
        h[0].load(Relaxed) > 0,
        "no explored execution had a sleeper sleep and be woken"
    );
    assert!(
        h[1].load(Relaxed) > 0,
        "no explored execution had a last look find the work"
    );
}

/// Takes one of `tokens` if there is one.
fn take(tokens: &AtomicUsize) -> bool {
    tokens
        .fetch_update(AcqRel, Relaxed, |t| t.checked_sub(1))
        .is_ok()
}

/// A worker's idle loop in small: take a token, else sleep with a last look for one.
/// Records whether the last look found one and whether a sleep ended by a wake-up.
/// Checks that every sleep returns with the sleeper off the idle list: one left on it
/// while it runs could be picked by a waker (even by itself) in place of a real sleeper.
fn sleeper(sleep: &Sleep, me: usize, tokens: &AtomicUsize, hits: &Hits) {
    while !take(tokens) {
        let last_look_found = std::cell::Cell::new(false);
        sleep.sleep(me, Roots::Included, None, || {
            let found = tokens.load(Relaxed) > 0;
            last_look_found.set(found);
            found
        });
        assert!(
            !sleep.is_listed(me),
            "a sleep returned with its sleeper listed"
        );
        let i = usize::from(last_look_found.get());
        hits[i].fetch_add(1, Relaxed);
    }
}

#[test]
fn loom_sleep_wake_one_not_missed() {
    let hits = Hits::default();
    let h = hits.clone();
    model(move || {
        let sleep = Arc::new(Sleep::new(1));
        let tokens = Arc::new(AtomicUsize::new(0));
        let waker = {
            let (sleep, tokens) = (sleep.clone(), tokens.clone());
            thread::spawn(move || {
                tokens.fetch_add(1, Relaxed);
                sleep.wake_one();
            })
        };
        sleeper(&sleep, 0, &tokens, &h);
        waker.join().unwrap();
        assert_eq!(tokens.load(Relaxed), 0, "the token was not taken");
    });
    check_hits(&hits);
}

#[test]
fn loom_sleep_two_sleepers_two_tokens() {
    let hits = Hits::default();
    let h = hits.clone();
    model(move || {
        let sleep = Arc::new(Sleep::new(2));
        let tokens = Arc::new(AtomicUsize::new(0));
        let other = {
            let (sleep, tokens, h) = (sleep.clone(), tokens.clone(), h.clone());
            thread::spawn(move || sleeper(&sleep, 1, &tokens, &h))
        };
        let waker = {
            let (sleep, tokens) = (sleep.clone(), tokens.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    tokens.fetch_add(1, Relaxed);
                    sleep.wake_one();
                }
            })
        };
        sleeper(&sleep, 0, &tokens, &h);
        other.join().unwrap();
        waker.join().unwrap();
        assert_eq!(tokens.load(Relaxed), 0, "a token was not taken");
    });
    check_hits(&hits);
}

#[test]
fn loom_sleep_wake_all_for_condition() {
    let hits = Hits::default();
    let h = hits.clone();
    model(move || {
        let sleep = Arc::new(Sleep::new(1));
        // Tasks pending, as a barrier counts detached tasks: it waits for zero.
        let pending = Arc::new(AtomicUsize::new(1));
        let waker = {
            let (sleep, pending) = (sleep.clone(), pending.clone());
            thread::spawn(move || {
                if pending.fetch_sub(1, AcqRel) == 1 {
                    sleep.wake_all();
                }
            })
        };
        while pending.load(Relaxed) != 0 {
            let last_look_found = std::cell::Cell::new(false);
            sleep.sleep(0, Roots::Included, None, || {
                let done = pending.load(Relaxed) == 0;
                last_look_found.set(done);
                done
            });
            h[usize::from(last_look_found.get())].fetch_add(1, Relaxed);
        }
        waker.join().unwrap();
    });
    check_hits(&hits);
}

#[test]
fn loom_sleep_wake_all_while_the_sleeper_sleeps_again() {
    let hits = Hits::default();
    let h = hits.clone();
    model(move || {
        let sleep = Arc::new(Sleep::new(1));
        let ready = Arc::new(AtomicUsize::new(0));
        let hint = {
            let sleep = sleep.clone();
            thread::spawn(move || sleep.wake_all())
        };
        let waker = {
            let (sleep, ready) = (sleep.clone(), ready.clone());
            thread::spawn(move || {
                sleep.wake_all();
                ready.store(1, Relaxed);
                sleep.wake_all();
            })
        };
        let mut sleeps = 0;
        while ready.load(Relaxed) == 0 {
            sleep.sleep(0, Roots::Included, None, || ready.load(Relaxed) != 0);
            sleeps += 1;
        }
        // [0]: woken by a hint and slept again; [1]: woke once, for the condition.
        h[usize::from(sleeps < 2)].fetch_add(1, Relaxed);
        hint.join().unwrap();
        waker.join().unwrap();
    });
    assert!(
        hits.iter().all(|h| h.load(Relaxed) > 0),
        "the sleeper slept again after a hint in some execution, and not in another"
    );
}

/// A waker takes the sleeper off the list while the sleeper's last look finds the work
/// (the race `withdraw` consumes), and the sleeper then sleeps again for more. Before the
/// fix the waker gave the wake-up after releasing the idle list's lock: it could arrive
/// after the `withdraw`, and the next sleep then returned at once with the sleeper still
/// listed. In the runtime that worker went on to run a root, and its push's
/// `wake_one_for` picked its own entry, leaving the real sleeper asleep beside a shared
/// task for good (`heist-bench handoff` hung about one run in two).
#[test]
fn loom_sleep_a_wake_up_raced_by_the_last_look_is_consumed() {
    let hits = Hits::default();
    let h = hits.clone();
    model(move || {
        let sleep = Arc::new(Sleep::new(1));
        let first = Arc::new(AtomicUsize::new(0));
        let second = Arc::new(AtomicUsize::new(0));
        let waker = {
            let (sleep, first, second) = (sleep.clone(), first.clone(), second.clone());
            thread::spawn(move || {
                first.fetch_add(1, Relaxed);
                sleep.wake_one();
                second.fetch_add(1, Relaxed);
                sleep.wake_one();
            })
        };
        sleeper(&sleep, 0, &first, &h);
        sleeper(&sleep, 0, &second, &h);
        waker.join().unwrap();
        assert!(!sleep.is_listed(0), "the sleeper was left on the idle list");
    });
    check_hits(&hits);
}
