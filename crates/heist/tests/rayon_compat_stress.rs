//! Stress tests of rayon's pool API on heist (`ThreadPoolBuilder` with its handlers,
//! `broadcast` and `spawn_broadcast`, `spawn` with a panic handler, `scope_fifo`,
//! `in_place_scope`, `join_context`, `Scope::worker`, `yield_local`) at 1, 2, 8 and 16
//! workers on both schedulers, with panics, each under a time limit.

mod support;

use heist::{Scheduler, ThreadPool, ThreadPoolBuilder};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::time::Duration;

const PREFIX: &str = "compat-stress:";

fn quiet_panics() {
    support::quiet_panics(&[PREFIX]);
}

/// Runs `f` for each pool shape on a thread of its own; fails if it takes over 120 s.
fn each_pool(name: &str, f: fn(&ThreadPool, usize)) {
    quiet_panics();
    for scheduler in [Scheduler::Lace, Scheduler::Relay] {
        for workers in support::worker_counts(&[1, 2, 8, 16]) {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let pool = ThreadPoolBuilder::new()
                    .num_threads(workers)
                    .scheduler(scheduler)
                    .build()
                    .unwrap();
                let out = panic::catch_unwind(AssertUnwindSafe(|| f(&pool, workers)));
                let _ = tx.send(out.is_ok());
            });
            let ok = rx.recv_timeout(Duration::from_secs(120));
            assert_eq!(
                ok,
                Ok(true),
                "{name} on {scheduler:?} × {workers} failed or hung"
            );
        }
    }
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = heist::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

#[test]
fn broadcasts_with_panics_nested_and_beside_busy_workers() {
    each_pool("broadcast", |pool, n| {
        for round in 0..20 {
            let bad = round % (n + 1); // sometimes no worker panics
            let r = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.broadcast(|cx| {
                    if cx.index() == bad {
                        panic!("{PREFIX} broadcast");
                    }
                    cx.index()
                })
            }));
            match r {
                Ok(v) => assert!(bad == n && v == (0..n).collect::<Vec<_>>()),
                Err(_) => assert!(bad < n),
            }
        }
        // From tasks that join, while the other workers are busy too.
        let sums = pool.install(|| {
            heist::join(
                || fib(18),
                || heist::broadcast(|cx| cx.index() + fib(10) as usize),
            )
        });
        assert_eq!(sums.0, 2584);
        assert_eq!(sums.1, (0..n).map(|i| i + 55).collect::<Vec<_>>());
        // A broadcast inside a broadcast: every worker waits for all the others' shares.
        let inner = pool.broadcast(|_| pool.broadcast(|cx| cx.index()).len());
        assert_eq!(inner, vec![n; n]);
    });
}

#[test]
fn spawned_panics_reach_the_handler_and_the_rest_runs() {
    each_pool("spawn", |_, n| {
        let caught = Arc::new(AtomicUsize::new(0));
        let c2 = Arc::clone(&caught);
        let pool = ThreadPoolBuilder::new()
            .num_threads(n)
            .panic_handler(move |p| {
                let msg = p.downcast_ref::<String>();
                assert!(msg.is_some_and(|m| m.starts_with(PREFIX)));
                c2.fetch_add(1, Relaxed);
            })
            .build()
            .unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        for i in 0..400 {
            let ran = Arc::clone(&ran);
            let job = move || {
                if i % 7 == 0 {
                    panic!("{PREFIX} spawned");
                }
                ran.fetch_add(1, Relaxed);
            };
            if i % 2 == 0 {
                pool.spawn(job);
            } else {
                pool.install(|| heist::spawn_fifo(job));
            }
        }
        pool.barrier(); // waits for the spawned tasks
        drop(pool);
        assert_eq!(
            caught.load(Relaxed),
            (0..400).filter(|i| i % 7 == 0).count()
        );
        assert_eq!(ran.load(Relaxed), (0..400).filter(|i| i % 7 != 0).count());
    });
}

#[test]
fn without_a_handler_a_spawned_panic_waits_for_the_barrier() {
    each_pool("spawn without a handler", |pool, _| {
        let ran = Arc::new(AtomicUsize::new(0));
        for i in 0..100 {
            let ran = Arc::clone(&ran);
            pool.spawn(move || {
                if i == 37 {
                    panic!("{PREFIX} unhandled");
                }
                ran.fetch_add(1, Relaxed);
            });
        }
        let r = panic::catch_unwind(AssertUnwindSafe(|| pool.barrier()));
        assert!(r.is_err(), "the barrier re-raises the spawned panic");
        assert_eq!(ran.load(Relaxed), 99);
        pool.barrier(); // taken once
        assert_eq!(pool.install(|| fib(10)), 55);
    });
}

/// A tree of `spawn_fifo`s; node `id` panics if `id % bad == bad - 1`. Counts the nodes that
/// finished.
fn fifo_tree<'a>(s: &heist::ScopeFifo<'a>, depth: u32, id: u64, bad: u64, done: &'a AtomicUsize) {
    if depth > 0 {
        s.spawn_fifo(move |s| fifo_tree(s, depth - 1, 2 * id, bad, done));
        s.spawn_fifo(move |s| fifo_tree(s, depth - 1, 2 * id + 1, bad, done));
    }
    if id % bad == bad - 1 {
        panic!("{PREFIX} scope");
    }
    done.fetch_add(1, Relaxed);
}

#[test]
fn fifo_and_in_place_scopes_finish_every_task_and_re_raise() {
    each_pool("scopes", |pool, _| {
        for bad in [1000, 5, 64] {
            let nodes = (1u64..512).filter(|id| id % bad != bad - 1).count();
            let done = AtomicUsize::new(0);
            let r = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.scope_fifo(|s| s.spawn_fifo(|s| fifo_tree(s, 8, 1, bad, &done)))
            }));
            assert_eq!(r.is_err(), bad != 1000);
            assert_eq!(done.swap(0, Relaxed), nodes);
            let r = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.in_place_scope_fifo(|s| s.spawn_fifo(|s| fifo_tree(s, 8, 1, bad, &done)))
            }));
            assert_eq!(r.is_err(), bad != 1000);
            assert_eq!(done.swap(0, Relaxed), nodes);
            let r = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.install(|| {
                    heist::in_place_scope_fifo(|s| s.spawn_fifo(|s| fifo_tree(s, 8, 1, bad, &done)))
                })
            }));
            assert_eq!(r.is_err(), bad != 1000);
            assert_eq!(done.swap(0, Relaxed), nodes);
        }
    });
}

/// Sums a tree of `join_context`s; leaves panic where `id % bad == 3`.
fn ctx_tree(depth: u32, id: u64, bad: u64) -> u64 {
    if depth == 0 {
        if id % bad == 3 {
            panic!("{PREFIX} join_context");
        }
        return 1;
    }
    let (a, b) = heist::join_context(
        |cx| {
            assert!(!cx.migrated(), "`a` runs where join_context was called");
            ctx_tree(depth - 1, 2 * id, bad)
        },
        |_| ctx_tree(depth - 1, 2 * id + 1, bad),
    );
    a + b
}

#[test]
fn join_context_panics_and_migration() {
    each_pool("join_context", |pool, _| {
        for bad in [1 << 20, 97, 8] {
            let r = panic::catch_unwind(AssertUnwindSafe(|| pool.install(|| ctx_tree(12, 1, bad))));
            match r {
                Ok(v) => assert!(bad == 1 << 20 && v == 4096),
                Err(_) => assert!(bad != 1 << 20),
            }
        }
        assert_eq!(pool.install(|| ctx_tree(10, 1, 1 << 20)), 1024);
    });
}

#[test]
fn scope_tasks_reach_only_their_own_worker() {
    each_pool("Scope::worker", |pool, _| {
        let checked = AtomicUsize::new(0);
        pool.scope(|s| {
            for _ in 0..200 {
                s.spawn(|s| {
                    let w = s.worker().expect("a scope task runs on a worker");
                    assert_eq!(Some(w.index()), heist::current_thread_index());
                    let (x, y) = w.join(|_| fib(8), |_| fib(9));
                    assert_eq!(x + y, 55);
                    // A branch that may run on another worker sees this task's scope:
                    // there it must not hand out this task's worker.
                    // Each branch compares what the view gives with the thread it runs on.
                    let view = || (s.worker().map(|w| w.index()), heist::current_thread_index());
                    let (a, b) = heist::join(view, view);
                    for (seen, here) in [a, b] {
                        assert!(seen.is_none() || seen == here, "{seen:?} on {here:?}");
                    }
                    checked.fetch_add(1, Relaxed);
                });
            }
        });
        assert_eq!(checked.load(Relaxed), 200);
    });
}

#[test]
fn yields_and_pools_dropped_with_work_in_flight() {
    each_pool("yield_now", |pool, n| {
        let ran = Arc::new(AtomicUsize::new(0));
        pool.install(|| {
            for _ in 0..100 {
                let ran = Arc::clone(&ran);
                heist::spawn(move || {
                    ran.fetch_add(1, Relaxed);
                });
                assert!(heist::yield_now().is_some());
            }
        });
        for _ in 0..5 {
            let p = ThreadPoolBuilder::new().num_threads(n).build().unwrap();
            for _ in 0..50 {
                let ran = Arc::clone(&ran);
                p.spawn(move || {
                    ran.fetch_add(fib(5) as usize / 5, Relaxed);
                });
            }
        }
        pool.broadcast(|_| ()); // every worker has come by since the spawns
        assert_eq!(pool.yield_now(), None, "not on a worker");
        assert!(pool.install(heist::yield_now).is_some(), "on a worker");
        // The installed spawns are detached tasks of `pool`, which its barrier waits for;
        // the dropped pools' workers finish theirs after the drops, and then stop.
        pool.barrier();
        let t = std::time::Instant::now();
        while ran.load(Relaxed) < 350 && t.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(ran.load(Relaxed), 350);
    });
}

/// A pool like `pool` (its size and scheduler) whose panic handler counts the panics
/// (each must carry this file's prefix).
fn counting_pool(pool: &ThreadPool, caught: &Arc<AtomicUsize>) -> ThreadPool {
    let c = Arc::clone(caught);
    ThreadPoolBuilder::new()
        .num_threads(pool.current_num_threads())
        .scheduler(pool.scheduler())
        .panic_handler(move |p| {
            let msg = p.downcast_ref::<String>();
            assert!(msg.is_some_and(|m| m.starts_with(PREFIX)));
            c.fetch_add(1, Relaxed);
        })
        .build()
        .unwrap()
}

#[test]
fn spawn_broadcasts_hand_each_panic_to_the_handler() {
    each_pool("spawn_broadcast", |pool, n| {
        let caught = Arc::new(AtomicUsize::new(0));
        let calls = Arc::new(AtomicUsize::new(0));
        let p = counting_pool(pool, &caught);
        let rounds = 30;
        for round in 0..rounds {
            let calls = Arc::clone(&calls);
            let op = move |cx: heist::BroadcastContext<'_>| {
                calls.fetch_add(1, Relaxed);
                if (round + cx.index()) % 3 == 0 {
                    panic!("{PREFIX} spawn_broadcast");
                }
            };
            match round % 3 {
                0 => p.spawn_broadcast(op),
                1 => p.install(|| heist::spawn_broadcast(op)),
                // From inside a broadcast: worker 0 spawns one, run by every worker.
                _ => drop(p.broadcast(|cx| {
                    if cx.index() == 0 {
                        heist::spawn_broadcast(op.clone());
                    }
                })),
            };
        }
        p.barrier(); // waits for every call
        drop(p);
        let panics = (0..rounds)
            .flat_map(|r| (0..n).map(move |i| (r + i) % 3 == 0))
            .filter(|&b| b)
            .count();
        assert_eq!(calls.load(Relaxed), rounds * n);
        assert_eq!(caught.load(Relaxed), panics);
        // Without a handler the first panic waits for the barrier.
        pool.spawn_broadcast(|cx| {
            if cx.index() == 0 {
                panic!("{PREFIX} unhandled spawn_broadcast");
            }
        });
        let r = panic::catch_unwind(AssertUnwindSafe(|| pool.barrier()));
        assert!(r.is_err());
        assert_eq!(pool.install(|| fib(12)), 144);
    });
}

/// A scope node that adds 1, broadcasts a spawn of two children to every worker at each
/// third level, and panics where `id % bad == bad - 1`.
fn broadcast_tree<'a>(s: &heist::Scope<'a>, depth: u32, id: u64, bad: u64, done: &'a AtomicUsize) {
    if depth > 0 && depth % 3 == 0 {
        s.spawn_broadcast(move |s, cx| {
            let id = id * 64 + cx.index() as u64;
            s.spawn(move |s| broadcast_tree(s, depth - 1, id, bad, done));
        });
    } else if depth > 0 {
        s.spawn(move |s| broadcast_tree(s, depth - 1, 2 * id, bad, done));
        s.spawn(move |s| broadcast_tree(s, depth - 1, 2 * id + 1, bad, done));
    }
    if id % bad == bad - 1 {
        panic!("{PREFIX} scope broadcast");
    }
    done.fetch_add(1, Relaxed);
}

/// The nodes of `broadcast_tree(depth, id)` on `n` workers, and how many panic.
fn broadcast_tree_size(n: u64, depth: u32, id: u64, bad: u64) -> (usize, usize) {
    let me = usize::from(id % bad == bad - 1);
    let kids: Vec<u64> = match depth {
        0 => vec![],
        d if d % 3 == 0 => (0..n).map(|i| id * 64 + i).collect(),
        _ => vec![2 * id, 2 * id + 1],
    };
    kids.into_iter()
        .map(|k| broadcast_tree_size(n, depth - 1, k, bad))
        .fold((1 - me, me), |a, b| (a.0 + b.0, a.1 + b.1))
}

#[test]
fn scope_broadcasts_reach_every_worker_and_re_raise() {
    each_pool("Scope::spawn_broadcast", |pool, n| {
        for bad in [u64::MAX, 7, 100] {
            let (nodes, panics) = broadcast_tree_size(n as u64, 5, 1, bad);
            let done = AtomicUsize::new(0);
            let r = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.scope(|s| broadcast_tree(s, 5, 1, bad, &done))
            }));
            assert_eq!(r.is_err(), panics > 0);
            assert_eq!(done.swap(0, Relaxed), nodes);
            let r = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.in_place_scope(|s| broadcast_tree(s, 5, 1, bad, &done))
            }));
            assert_eq!(r.is_err(), panics > 0);
            assert_eq!(done.swap(0, Relaxed), nodes);
        }
    });
}

#[test]
fn start_exit_and_spawn_handlers_run_once_per_worker() {
    each_pool("handlers", |pool, n| {
        let starts = Arc::new(AtomicUsize::new(0));
        let exits = Arc::new(AtomicUsize::new(0));
        let handles = std::sync::Mutex::new(Vec::new());
        let (s2, e2) = (Arc::clone(&starts), Arc::clone(&exits));
        let p = ThreadPoolBuilder::new()
            .num_threads(n)
            .scheduler(pool.scheduler())
            .start_handler(move |i| {
                assert_eq!(heist::current_thread_index(), Some(i));
                s2.fetch_add(1 << (2 * i % 64), Relaxed);
            })
            .exit_handler(move |i| {
                assert_eq!(heist::current_thread_index(), Some(i));
                e2.fetch_add(1, Relaxed);
            })
            .spawn_handler(|t| {
                let h = std::thread::Builder::new().spawn(|| t.run())?;
                handles.lock().unwrap().push(h);
                Ok(())
            })
            .build()
            .unwrap();
        assert_eq!(p.install(|| fib(15)), 610);
        drop(p);
        for h in handles.into_inner().unwrap() {
            h.join().unwrap();
        }
        let want: usize = (0..n).map(|i| 1usize << (2 * i % 64)).sum();
        assert_eq!((starts.load(Relaxed), exits.load(Relaxed)), (want, n));
        // Scoped: the threads are joined before `build_scoped` returns.
        let wrapped = AtomicUsize::new(0);
        let r = ThreadPoolBuilder::new()
            .num_threads(n)
            .scheduler(pool.scheduler())
            .build_scoped(
                |t| {
                    t.run();
                    wrapped.fetch_add(1, Relaxed);
                },
                |p| p.install(|| fib(14)),
            );
        assert_eq!((r.unwrap(), wrapped.load(Relaxed)), (377, n));
    });
}

#[test]
fn local_yields_run_only_this_workers_tasks() {
    each_pool("yield_local", |pool, _| {
        let ran = Arc::new(AtomicUsize::new(0));
        let local = pool.install(|| {
            assert_eq!(heist::current_thread_has_pending_tasks(), Some(false));
            for _ in 0..100 {
                let ran = Arc::clone(&ran);
                heist::spawn(move || {
                    ran.fetch_add(1, Relaxed);
                });
            }
            let mut local = 0;
            while heist::yield_local() == Some(heist::Yield::Executed) {
                local += 1;
            }
            assert_eq!(heist::current_thread_has_pending_tasks(), Some(false));
            let pending = heist::join(heist::current_thread_has_pending_tasks, || ()).0;
            // `join`'s second closure waits in this worker's deque unless stolen.
            assert!(pending.is_some());
            local
        });
        assert_eq!(heist::yield_local(), None);
        assert_eq!(heist::current_thread_has_pending_tasks(), None);
        assert!(local <= 100);
        pool.barrier();
        assert_eq!(ran.load(Relaxed), 100);
    });
}
