//! Reductions over tasks: exact results, `identity` at most once per worker, panics
//! re-raised with every task dropped once, unordered ops, nesting; both schedulers, pools
//! of 1, 2, 3, 5, 8 and 16 workers, each test under a timeout.

use heist::{Pool, ReduceCtx};
use std::collections::HashSet;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::thread;

mod reduce_team_pools;
use reduce_team_pools::{each_pool, push_children};

/// fib(n) as the number of leaves with value 1 (Blaze's formulation).
fn fib_tasks(pool: &Pool, n: u64) -> u64 {
    pool.reduce_tasks(n, || 0u64, |a, b| a + b, fib_node)
}

/// A node of the fib task tree: pushes fib(n - 2), fib(n - 3), ..., fib(0), and counts
/// the one leaf of fib(n - 1) that it walks down to.
fn fib_node(ctx: &ReduceCtx<'_, u64>, mut n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    while n > 1 {
        ctx.push(n - 2);
        n -= 1;
    }
    1
}

fn fib(n: u64) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

#[test]
fn reductions_are_exact_over_many_repeats() {
    each_pool(240, |pool| {
        for i in 0..1000 {
            let n = 6 + (i % 8);
            assert_eq!(fib_tasks(pool, n), fib(n), "fib({n}) run {i}");
        }
        assert_eq!(fib_tasks(pool, 22), fib(22));
    });
}

#[test]
fn tasks_borrow_the_callers_stack() {
    each_pool(120, |pool| {
        let v: Vec<u64> = (0..10_000).collect();
        let sum = pool.reduce_tasks(
            &v[..],
            || 0u64,
            |a, b| a + b,
            |ctx, s| {
                if s.len() > 16 {
                    let (l, r) = s.split_at(s.len() / 2);
                    ctx.push(l);
                    ctx.push(r);
                    0
                } else {
                    s.iter().sum()
                }
            },
        );
        assert_eq!(sum, 10_000 * 9_999 / 2);
    });
}

#[test]
fn identity_runs_at_most_once_per_worker() {
    each_pool(120, |pool| {
        for _ in 0..20 {
            let calls = AtomicUsize::new(0);
            let threads = Mutex::new(Vec::new());
            let n = pool.reduce_tasks(
                12u32,
                || {
                    calls.fetch_add(1, Relaxed);
                    threads.lock().unwrap().push(thread::current().id());
                    0u64
                },
                |a, b| a + b,
                |ctx, d| {
                    push_children(ctx, d);
                    1
                },
            );
            assert_eq!(n, (1 << 13) - 1);
            let calls = calls.into_inner();
            assert!(calls >= 1 && calls <= pool.workers(), "{calls} identities");
            let t = threads.into_inner().unwrap();
            let distinct: HashSet<_> = t.iter().collect();
            assert_eq!(distinct.len(), t.len(), "a worker ran identity twice");
        }
    });
}

#[test]
fn a_concatenating_op_yields_a_permutation() {
    each_pool(120, |pool| {
        let mut v = pool.reduce_tasks(
            (0u32, 2000u32),
            Vec::new,
            |mut a, mut b| {
                a.append(&mut b);
                a
            },
            |ctx, (lo, hi)| {
                if hi - lo > 8 {
                    let mid = (lo + hi) / 2;
                    ctx.push((lo, mid));
                    ctx.push((mid, hi));
                    Vec::new()
                } else {
                    (lo..hi).collect()
                }
            },
        );
        v.sort_unstable();
        assert_eq!(v, (0..2000).collect::<Vec<_>>());
    });
}

/// A task that counts its drops.
struct Counted<'a> {
    depth: u32,
    drops: &'a AtomicUsize,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Relaxed);
    }
}

#[test]
fn a_panic_is_reraised_and_every_task_dropped_once() {
    each_pool(180, |pool| {
        for round in 0..20u32 {
            let made = AtomicUsize::new(1);
            let drops = AtomicUsize::new(0);
            let r = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.reduce_tasks(
                    Counted {
                        depth: 0,
                        drops: &drops,
                    },
                    || 0u64,
                    |a, b| a + b,
                    |ctx, t| {
                        if t.depth == 9 && made.load(Relaxed) > 200 + round as usize * 10 {
                            panic!("boom");
                        }
                        if t.depth < 12 {
                            for _ in 0..2 {
                                made.fetch_add(1, Relaxed);
                                ctx.push(Counted {
                                    depth: t.depth + 1,
                                    drops: t.drops,
                                });
                            }
                        }
                        1
                    },
                )
            }));
            let p = r.expect_err("the panic is re-raised");
            assert_eq!(p.downcast_ref::<&str>(), Some(&"boom"));
            assert_eq!(drops.load(Relaxed), made.load(Relaxed), "round {round}");
        }
        // The pool stays usable.
        assert_eq!(fib_tasks(pool, 15), fib(15));
    });
}

#[test]
fn nested_reductions_work() {
    each_pool(180, |pool| {
        let total = pool.reduce_tasks(
            6u32,
            || 0u64,
            |a, b| a + b,
            |ctx, d| {
                push_children(ctx, d);
                // Each node counts the leaves of a fib tree of its own.
                ctx.worker()
                    .reduce_tasks(10u64, || 0u64, |a, b| a + b, fib_node)
            },
        );
        assert_eq!(total, 127 * fib(10));
    });
}

/// fib(n) with a task per call that pushes both halves.
fn fib_pairs(w: &heist::Worker, n: u64) -> u64 {
    w.reduce_tasks(
        n,
        || 0,
        |a, b| a + b,
        |c, n| {
            if n > 1 {
                c.push(n - 1);
                c.push(n - 2);
                0
            } else {
                n
            }
        },
    )
}

#[test]
fn reductions_inside_joins_and_from_many_threads() {
    each_pool(180, |pool| {
        let (a, b) = pool.run(|w| w.join(|w| fib_pairs(w, 16), |w| fib_pairs(w, 14)));
        assert_eq!((a, b), (fib(16), fib(14)));
        thread::scope(|s| {
            for k in 0..3 {
                s.spawn(move || assert_eq!(fib_tasks(pool, 12 + k), fib(12 + k)));
            }
        });
    });
}

#[test]
fn idle_workers_join_a_running_reduction() {
    each_pool(120, |pool| {
        if pool.workers() < 2 {
            return;
        }
        // The root waits until another worker ran the task it pushed: only a helper can.
        let stolen = std::sync::atomic::AtomicBool::new(false);
        let n = pool.reduce_tasks(
            true,
            || 0u32,
            |a, b| a + b,
            |ctx, root| {
                if root {
                    // Waits until another worker took the pushed task; a pool where nobody
                    // helps hangs here and fails at `each_pool`'s timeout.
                    ctx.push(false);
                    while !stolen.load(Relaxed) {
                        ctx.poll();
                        thread::yield_now();
                    }
                } else {
                    stolen.store(true, Relaxed);
                }
                1
            },
        );
        assert_eq!(n, 2);
    });
}
