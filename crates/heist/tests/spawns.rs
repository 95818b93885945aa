//! Spawned tasks and promises in the deque, under stress: scope and detached spawns (flat
//! and as trees, from scope bodies, tasks, join branches and promise tasks) and promises
//! spawned inside join branches and scope tasks, at 1, 2, 8 and 16 workers on both
//! schedulers and at deque capacities from 1 (every spawn finds the deque full) up.
//! Every task runs exactly once and its closure is dropped exactly once; every panic
//! reaches the scope, barrier or joiner it belongs to; the pool keeps working afterwards.
//! Each case runs in a thread of its own with a time limit, so a hang fails the test.

// Promise handles are dropped on purpose: the scope must finish their tasks.
#![allow(clippy::drop_non_drop)]

mod support;

use heist::{Pool, Scheduler, Scope, Worker};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::time::Duration;

const WORKERS: [usize; 4] = [1, 2, 8, 16];
const CAPACITIES: [usize; 4] = [1, 2, 3, 64];

/// Runs `f` on a thread of its own and fails if it takes longer than two minutes.
fn in_time(what: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(p) = h.join() {
                panic::resume_unwind(p)
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: hung"),
    }
}

/// Every pool shape the tests use.
fn each_pool(mut f: impl FnMut(&Pool, &str)) {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in support::worker_counts(&WORKERS) {
            for cap in CAPACITIES {
                let pool = support::pool(s, n, cap);
                f(&pool, &format!("{s:?}, {n} workers, capacity {cap}"));
            }
        }
    }
}

/// Counts runs and drops of the tasks that own one.
#[derive(Default)]
struct Tally {
    ran: AtomicUsize,
    dropped: AtomicUsize,
}

/// A token a task owns: counted when the task runs it and when it is dropped.
struct Token(Arc<Tally>);

impl Token {
    fn ran(&self) {
        self.0.ran.fetch_add(1, SeqCst);
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, SeqCst);
    }
}

fn check(t: &Tally, n: usize, what: &str) {
    assert_eq!(t.ran.load(SeqCst), n, "{what}: runs");
    assert_eq!(t.dropped.load(SeqCst), n, "{what}: drops");
}

/// A binary tree of scope spawns, `depth` deep, a token per task; task `id` panics if
/// `bomb(id)`.
fn tree<'s>(s: &Scope<'s>, t: &Arc<Tally>, depth: u32, id: u64, bomb: fn(u64) -> bool) {
    let tok = Token(Arc::clone(t));
    let t2 = Arc::clone(t);
    s.spawn(move |s| {
        tok.ran();
        if bomb(id) {
            panic!("spawns: bomb");
        }
        if depth > 0 {
            tree(s, &t2, depth - 1, 2 * id, bomb);
            tree(s, &t2, depth - 1, 2 * id + 1, bomb);
        }
    });
}

fn fib(w: &Worker, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = w.join(|w| fib(w, n - 1), |w| fib(w, n - 2));
    a + b
}

#[test]
fn scope_spawns_flat_and_as_trees_run_once_at_every_capacity() {
    in_time("scope spawns", || {
        each_pool(|pool, what| {
            let t = Arc::new(Tally::default());
            pool.run(|w| {
                w.scope(|s| {
                    for _ in 0..300 {
                        let tok = Token(Arc::clone(&t));
                        s.spawn(move |_| tok.ran());
                    }
                    tree(s, &t, 7, 1, |_| false);
                })
            });
            check(&t, 300 + 255, what);
        });
    });
}

#[test]
fn a_panicking_scope_task_reaches_the_scope_after_all_others_ran() {
    in_time("scope panics", || {
        each_pool(|pool, what| {
            let t = Arc::new(Tally::default());
            let r = pool.run(|w| {
                panic::catch_unwind(AssertUnwindSafe(|| {
                    w.scope(|s| tree(s, &t, 6, 1, |id| id % 9 == 4));
                }))
            });
            let p = r.expect_err(what);
            assert_eq!(p.downcast_ref::<&str>(), Some(&"spawns: bomb"), "{what}");
            // Every task spawned before its parent panicked ran; the panicking tasks
            // spawned nothing, so whole subtrees below them are missing, as sequentially.
            let ran = t.ran.load(SeqCst);
            assert_eq!(
                ran,
                t.dropped.load(SeqCst),
                "{what}: every token dropped once"
            );
            assert_eq!(ran, expected_tree_runs(6, 1, |id| id % 9 == 4), "{what}");
            assert_eq!(pool.run(|w| fib(w, 15)), 610, "{what}: usable afterwards");
        });
    });
}

/// How many tasks `tree` runs when the tasks `bomb` names spawn nothing.
fn expected_tree_runs(depth: u32, id: u64, bomb: fn(u64) -> bool) -> usize {
    if bomb(id) || depth == 0 {
        return 1;
    }
    1 + expected_tree_runs(depth - 1, 2 * id, bomb)
        + expected_tree_runs(depth - 1, 2 * id + 1, bomb)
}

#[test]
fn spawns_from_join_branches_and_promise_tasks_reach_their_scope() {
    in_time("spawns in branches", || {
        each_pool(|pool, what| {
            let t = Arc::new(Tally::default());
            let sum = pool.run(|w| {
                w.scope(|s| {
                    let leaf = |w: &Worker, k: u64| {
                        let tok = Token(Arc::clone(&t));
                        s.spawn(move |_| tok.ran());
                        fib(w, k)
                    };
                    // Spawned tasks land above a join's pushed branch and above
                    // promises: the syncs must run them first.
                    let (a, b) = w.join(|w| leaf(w, 10), |w| leaf(w, 11));
                    let c = w.promises(|p| {
                        let x = p.spawn(|w| leaf(w, 12));
                        let y = leaf(w, 9);
                        x.join() + y
                    });
                    a + b + c
                })
            });
            assert_eq!(sum, 55 + 89 + 144 + 34, "{what}");
            check(&t, 4, what);
        });
    });
}

#[test]
fn promises_inside_join_branches_and_scope_tasks() {
    in_time("promises in branches", || {
        each_pool(|pool, what| {
            let total = AtomicUsize::new(0);
            let pf = |w: &Worker, n: u64| {
                w.promises(|p| {
                    let hs: Vec<_> = (0..4).map(|i| p.spawn(move |w| fib(w, n + i))).collect();
                    // Joined oldest first: each but the last runs in place.
                    hs.into_iter().map(|h| h.join()).sum::<u64>()
                })
            };
            pool.run(|w| {
                let (a, b) = w.join(|w| pf(w, 5), |w| pf(w, 6));
                total.fetch_add((a + b) as usize, SeqCst);
                w.scope(|s| {
                    for k in 0..3 {
                        let total = &total;
                        s.spawn(move |s| {
                            let w = s.worker().expect("a scope task runs on a worker");
                            total.fetch_add(pf(w, k) as usize, SeqCst);
                        });
                    }
                });
            });
            let f = |n: u64| (n..n + 4).map(fib_seq).sum::<u64>();
            let want = f(5) + f(6) + f(0) + f(1) + f(2);
            assert_eq!(total.into_inner() as u64, want, "{what}");
        });
    });
}

fn fib_seq(n: u64) -> u64 {
    (0..n).fold((0, 1), |(a, b), _| (b, a + b)).0
}

#[test]
fn detached_spawns_flat_and_as_trees_run_once_and_panics_reach_the_barrier() {
    in_time("detached", || {
        each_pool(|pool, what| {
            let t = Arc::new(Tally::default());
            fn node(w: &Worker, t: Arc<Tally>, depth: u32) {
                let tok = Token(Arc::clone(&t));
                w.spawn_detached(move |w| {
                    tok.ran();
                    if depth > 0 {
                        node(w, Arc::clone(&t), depth - 1);
                        node(w, t, depth - 1);
                    }
                });
            }
            pool.run(|w| {
                for _ in 0..200 {
                    let tok = Token(Arc::clone(&t));
                    w.spawn_detached(move |_| tok.ran());
                }
                node(w, Arc::clone(&t), 6);
                w.barrier();
            });
            check(&t, 200 + 127, what);
            // A panicking detached task, spawned inside a join branch, reaches a barrier
            // from outside the pool after the others ran.
            let t = Arc::new(Tally::default());
            pool.run(|w| {
                w.join(
                    |w| {
                        for i in 0..50 {
                            let tok = Token(Arc::clone(&t));
                            w.spawn_detached(move |_| {
                                tok.ran();
                                if i == 17 {
                                    panic!("spawns: detached");
                                }
                            });
                        }
                    },
                    |w| fib(w, 12),
                )
            });
            let r = panic::catch_unwind(AssertUnwindSafe(|| pool.barrier()));
            let p = r.expect_err(what);
            assert_eq!(
                p.downcast_ref::<&str>(),
                Some(&"spawns: detached"),
                "{what}"
            );
            check(&t, 50, what);
            assert_eq!(pool.run(|w| fib(w, 15)), 610, "{what}: usable afterwards");
        });
    });
}

#[test]
fn large_spawned_closures_are_boxed_and_run_once() {
    in_time("large closures", || {
        each_pool(|pool, what| {
            let t = Arc::new(Tally::default());
            let sum = AtomicUsize::new(0);
            pool.run(|w| {
                w.scope(|s| {
                    for i in 0..40usize {
                        let big = [i; 16];
                        let tok = Token(Arc::clone(&t));
                        let sum = &sum;
                        s.spawn(move |_| {
                            tok.ran();
                            sum.fetch_add(big.iter().sum::<usize>(), SeqCst);
                        });
                    }
                })
            });
            check(&t, 40, what);
            assert_eq!(sum.into_inner(), 16 * (0..40).sum::<usize>(), "{what}");
        });
    });
}

#[test]
fn a_barrier_under_a_join_branch_runs_the_detached_tasks_buried_below_it() {
    in_time("buried detached", || {
        for s in [Scheduler::Lace, Scheduler::Relay] {
            // One worker: nobody else can take the tasks under the pushed branch.
            let pool = Pool::builder().workers(1).scheduler(s).build().unwrap();
            let n = Arc::new(AtomicUsize::new(0));
            let seen = pool.run(|w| {
                for _ in 0..20 {
                    let n = Arc::clone(&n);
                    w.spawn_detached(move |_| {
                        n.fetch_add(1, SeqCst);
                    });
                }
                w.join(
                    |w| {
                        w.barrier();
                        n.load(SeqCst)
                    },
                    |_| 0,
                )
                .0
            });
            assert_eq!(seen, 20, "{s:?}");
        }
    });
}

/// Spawns the next task of a chain of `n` from each task, and records how far below
/// `bottom` each task's frame lies.
fn countdown<'s>(s: &Scope<'s>, bottom: &'s u8, deepest: &'s AtomicUsize, n: usize) {
    let here = 0u8;
    let depth = (std::ptr::from_ref(bottom) as usize).abs_diff(std::ptr::from_ref(&here) as usize);
    deepest.fetch_max(depth, SeqCst);
    if n > 0 {
        s.spawn(move |s| countdown(s, bottom, deepest, n - 1));
    }
}

#[test]
fn a_chain_of_scope_tasks_each_spawning_the_next_runs_at_one_stack_depth() {
    in_time("chain of spawns", || {
        for s in [Scheduler::Lace, Scheduler::Relay] {
            // One worker: it runs the whole chain itself, from the scope's drain.
            let pool = Pool::builder().workers(1).scheduler(s).build().unwrap();
            let deepest = |n: usize| {
                pool.run(|w| {
                    let bottom = 0u8;
                    let deepest = AtomicUsize::new(0);
                    w.scope(|s| countdown(s, &bottom, &deepest, n));
                    deepest.load(SeqCst)
                })
            };
            let (short, long) = (deepest(5), deepest(500));
            // rayon's `linear_stack_growth` allows 10 %; nesting would add a few hundred
            // bytes for each of the 495 more tasks.
            assert!(
                long <= short + short / 10,
                "{s:?}: {short} bytes for 5, {long} for 500"
            );
        }
    });
}
