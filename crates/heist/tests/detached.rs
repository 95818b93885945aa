//! Detached tasks and the barrier, on both schedulers.

use heist::{Pool, Scheduler, Worker};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn fib(w: &Worker, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = w.join(move |w| fib(w, n - 1), move |w| fib(w, n - 2));
    a + b
}

fn spread(w: &Worker, count: Arc<AtomicUsize>, depth: u32) {
    count.fetch_add(fib(w, 12) as usize / 144, Ordering::SeqCst);
    if depth > 0 {
        for _ in 0..3 {
            let c = Arc::clone(&count);
            w.spawn_detached(move |w| spread(w, c, depth - 1));
        }
    }
}

#[test]
fn barrier_waits_for_detached_tasks_and_their_children() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in [1, 2, 8] {
            let pool = Pool::builder().workers(n).scheduler(s).build().unwrap();
            for round in 0..3 {
                let count = Arc::new(AtomicUsize::new(0));
                let c = Arc::clone(&count);
                pool.spawn_detached(move |w| spread(w, c, 4));
                pool.barrier();
                assert_eq!(count.load(Ordering::SeqCst), 121, "{s:?} {n} round {round}");
            }
        }
    }
}

#[test]
fn barrier_inside_a_root_task_and_panics_reach_it() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        let pool = Pool::builder().workers(3).scheduler(s).build().unwrap();
        let count = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&count);
        pool.run(move |w| {
            for _ in 0..20 {
                let c = Arc::clone(&c);
                w.spawn_detached(move |w| {
                    c.fetch_add(fib(w, 10) as usize, Ordering::SeqCst);
                });
            }
            w.barrier();
        });
        assert_eq!(count.load(Ordering::SeqCst), 20 * 55);
        pool.spawn_detached(|_| panic!("detached boom"));
        let r = panic::catch_unwind(AssertUnwindSafe(|| pool.barrier()));
        assert_eq!(
            r.unwrap_err().downcast_ref::<&str>(),
            Some(&"detached boom")
        );
        pool.barrier();
        assert_eq!(pool.run(|w| fib(w, 10)), 55);
    }
}

#[test]
fn relay_termination_detection_is_never_early_oversubscribed() {
    for n in [2, 5, 16] {
        let pool = Pool::builder()
            .workers(n)
            .scheduler(Scheduler::Relay)
            .build()
            .unwrap();
        for round in 0..40 {
            let count = Arc::new(AtomicUsize::new(0));
            for _ in 0..3 {
                let c = Arc::clone(&count);
                pool.spawn_detached(move |w| spread(w, c, 3));
            }
            pool.barrier();
            assert_eq!(
                count.load(Ordering::SeqCst),
                3 * 40,
                "{n} workers, round {round}"
            );
        }
    }
}

#[test]
fn a_barrier_inside_a_detached_task_panics_instead_of_hanging() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        let pool = Pool::builder().workers(2).scheduler(s).build().unwrap();
        pool.spawn_detached(|w| w.barrier());
        let r = panic::catch_unwind(AssertUnwindSafe(|| pool.barrier()));
        let msg = r.unwrap_err();
        let msg = msg.downcast_ref::<&str>().copied().unwrap_or_default();
        assert!(msg.contains("wait for that task itself"), "{s:?}: {msg}");
        assert_eq!(pool.run(|w| fib(w, 10)), 55);
    }
}

/// Spawns detached work that must be done when the barrier returns, then waits in a
/// barrier from `place`'s branch; the result is whether the work was done. The detached
/// tasks never wait, so no barrier can be taken up beneath one of them.
fn barrier_in(pool: &Pool, w: &Worker, place: usize) -> bool {
    let count = Arc::new(AtomicUsize::new(0));
    for i in 0..40u64 {
        let c = Arc::clone(&count);
        w.spawn_detached(move |_| {
            std::hint::black_box((0..2000u64).fold(i, |a, k| a.wrapping_mul(31) ^ k));
            c.fetch_add(1, Ordering::SeqCst);
        });
    }
    let done = || count.load(Ordering::SeqCst) == 40;
    let nap = || std::thread::sleep(std::time::Duration::from_millis(2));
    let waited = |_: &Worker| {
        pool.barrier();
        done()
    };
    match place {
        0 => w.join(|_| nap(), waited).1,
        1 => w.join(waited, |_| nap()).0,
        2 => {
            let mut seen = false;
            w.scope(|s| {
                s.spawn(|_| {
                    pool.barrier();
                    seen = done();
                });
                nap();
            });
            seen
        }
        _ => w.join(|w| w.join(|_| nap(), waited).1, |_| nap()).0,
    }
}

#[test]
fn a_barrier_in_a_branch_of_a_task_waits_and_returns() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in [2, 3, 16] {
            let pool = Pool::builder().workers(n).scheduler(s).build().unwrap();
            for place in 0..4 {
                for round in 0..5 {
                    assert!(
                        pool.run(|w| barrier_in(&pool, w, place)),
                        "{s:?} {n} workers, place {place}, round {round}"
                    );
                }
            }
        }
    }
}

/// Several threads at once spawn detached trees (which join, so they leapfrog and nest)
/// and wait for them, from outside the pool or at the root of `run`; each barrier must
/// see its own thread's tasks done. More workers than cores.
#[test]
fn concurrent_barriers_from_threads_and_roots_oversubscribed() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in [2, 5, 16] {
            let pool = Pool::builder().workers(n).scheduler(s).build().unwrap();
            std::thread::scope(|ts| {
                for t in 0..3usize {
                    let pool = &pool;
                    ts.spawn(move || {
                        for round in 0..8 {
                            let count = Arc::new(AtomicUsize::new(0));
                            let c = Arc::clone(&count);
                            pool.spawn_detached(move |w| spread(w, c, 2));
                            if (t + round) % 2 == 0 {
                                pool.barrier();
                            } else {
                                pool.run(|w| w.barrier());
                            }
                            assert_eq!(
                                count.load(Ordering::SeqCst),
                                13,
                                "{s:?} {n} workers, thread {t}, round {round}"
                            );
                        }
                    });
                }
            });
        }
    }
}
