//! Behaviour of `Worker::join`, `heist::join` and `Pool::run`.

mod support;

use support::{fib, fib_seq};

use heist::{Pool, Scheduler, Worker};
use std::panic::{self, AssertUnwindSafe};

fn pools() -> Vec<Pool> {
    let mut v = Vec::new();
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in support::worker_counts(&[1, 2, 3, 8]) {
            v.push(Pool::builder().workers(n).scheduler(s).build().unwrap());
        }
    }
    v
}

#[test]
fn fib_matches_sequential_on_every_pool() {
    for pool in pools() {
        for n in [0, 1, 2, 10, 22] {
            assert_eq!(pool.run(|w| fib(w, n)), fib_seq(n), "{pool:?} n={n}");
        }
    }
}

#[test]
fn join_runs_both_sides_and_returns_in_order() {
    for pool in pools() {
        let (a, b) = pool.run(|w| w.join(|_| "left", |_| String::from("right")));
        assert_eq!((a, b.as_str()), ("left", "right"));
    }
}

#[test]
fn large_closures_and_results_spill_correctly() {
    for pool in pools() {
        let big = [7u64; 32];
        let (a, b) = pool.run(|w| {
            w.join(
                |_| big.iter().sum::<u64>(),
                move |_| {
                    let mut out = [0u64; 16];
                    out.iter_mut().zip(big.iter()).for_each(|(o, b)| *o = b * 2);
                    out
                },
            )
        });
        assert_eq!(a, 224);
        assert_eq!(b, [14u64; 16]);
    }
}

fn panicky(w: &Worker, n: u32, bad: u32) -> u32 {
    if n == bad {
        panic!("task {n} failed");
    }
    if n > 40 {
        return 1;
    }
    let (a, b) = w.join(|w| panicky(w, 2 * n, bad), |w| panicky(w, 2 * n + 1, bad));
    a + b
}

#[test]
fn panic_on_either_side_reaches_the_caller_and_pool_survives() {
    for pool in pools() {
        for bad in [2, 3, 17, 40, 41] {
            let r = panic::catch_unwind(AssertUnwindSafe(|| pool.run(|w| panicky(w, 1, bad))));
            let msg = r.expect_err("the panic must reach run");
            let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
            assert_eq!(msg, format!("task {bad} failed"));
            assert_eq!(pool.run(|w| fib(w, 15)), 610);
        }
    }
}

#[test]
fn heist_join_works_off_and_on_workers() {
    let (a, b) = heist::join(|| 1 + 1, || "x");
    assert_eq!((a, b), (2, "x"));
    let pool = Pool::builder().workers(2).build().unwrap();
    let r = pool.run(|_| heist::join(|| heist::join(|| 1, || 2), || 3));
    assert_eq!(r, ((1, 2), 3));
}

#[test]
fn run_from_inside_a_worker_runs_inline_and_nested_pools_work() {
    let outer = Pool::builder().workers(2).build().unwrap();
    let inner = Pool::builder().workers(2).build().unwrap();
    let r = outer.run(|w| {
        let x = outer.run(|w2| fib(w2, 10));
        let (y, z) = w.join(|_| inner.run(|w3| fib(w3, 12)), |w| fib(w, 11));
        x + y + z
    });
    assert_eq!(r, 55 + 144 + 89);
}

/// A task of pool A runs a root on pool B, which runs a root back on A: A's worker, busy
/// waiting for B, must take that root up. With one worker in A it is the only one; under
/// relay with two, it may be the one that is not the manager.
#[test]
fn a_pool_called_back_from_a_pool_it_waits_for_does_not_deadlock() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in [1, 2] {
            let a = Pool::builder().workers(n).scheduler(s).build().unwrap();
            let b = Pool::builder().workers(n).scheduler(s).build().unwrap();
            let call_back = || b.run(|_| a.run(|w| fib(w, 12)));
            let r = a.run(|w| {
                let (x, y) = w.join(|_| call_back(), |w| fib(w, 10));
                // The call back in the branch a thief may take.
                let (z, v) = w.join(|w| fib(w, 18), |_| call_back());
                x + y + z + v
            });
            assert_eq!(r, 144 + 55 + 2584 + 144, "{s:?} {n} workers");
        }
    }
}

#[test]
fn full_deque_runs_tasks_inline() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in [1, 2, 4] {
            let pool = support::pool(s, n, 3);
            assert_eq!(pool.run(|w| fib(w, 20)), 6765);
        }
    }
}

/// fib whose every level also opens a scope (a mark in the deque) with one spawn, so that
/// the deque fills with tasks, marks and spawns in every order, and joins land on its
/// spare slots with and without a mark below them.
fn fib_marked(w: &Worker, n: u64, sum: &std::sync::atomic::AtomicU64) -> u64 {
    use std::sync::atomic::Ordering::Relaxed;
    if n < 2 {
        return n;
    }
    let (a, b) = w.scope(|s| {
        s.spawn(move |_| {
            sum.fetch_add(n, Relaxed);
        });
        w.join(|w| fib_marked(w, n - 1, sum), |w| fib_marked(w, n - 2, sum))
    });
    a + b
}

#[test]
fn full_deque_with_marks_and_spawns_runs_every_task_once() {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    // The sum of n over the calls with n >= 2 of fib(16).
    fn expected(n: u64) -> u64 {
        if n < 2 {
            0
        } else {
            n + expected(n - 1) + expected(n - 2)
        }
    }
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in [1, 2, 3, 8] {
            for cap in [1, 2, 3, 5] {
                let pool = support::pool(s, n, cap);
                let sum = AtomicU64::new(0);
                let r = pool.run(|w| fib_marked(w, 16, &sum));
                assert_eq!(r, 987, "{s:?} {n} workers, {cap} slots");
                assert_eq!(
                    sum.load(Relaxed),
                    expected(16),
                    "{s:?} {n} workers, {cap} slots"
                );
            }
        }
    }
}
