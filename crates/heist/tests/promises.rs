//! Promises: spawn/join on both schedulers, leaked and dropped handles, panics, joins in
//! any order, promises next to scope and detached spawns.

// Promise handles are dropped and forgotten on purpose: the scope must finish their tasks
// whether or not the handle type has drop glue.
#![allow(clippy::drop_non_drop, clippy::forget_non_drop)]

mod support;

use heist::{Pool, Scheduler, Worker};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use support::pool;

fn pools() -> Vec<Pool> {
    let mut v = Vec::new();
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in [1, 2, 4] {
            v.push(Pool::builder().workers(n).scheduler(s).build().unwrap());
        }
    }
    v
}

fn fib(w: &Worker, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    w.promises(|s| {
        let f = s.spawn(move |w| fib(w, n - 1));
        let y = fib(w, n - 2);
        f.join() + y
    })
}

#[test]
fn fib_with_promises_is_correct() {
    for pool in pools() {
        assert_eq!(pool.run(|w| fib(w, 21)), 10946, "{pool:?}");
    }
}

#[test]
fn many_promises_joined_newest_first() {
    for pool in pools() {
        let data: Vec<u64> = (0..64).collect();
        let total = pool.run(|w| {
            w.promises(|s| {
                let fs: Vec<_> = data
                    .chunks(8)
                    .map(|c| s.spawn(move |w| c.iter().sum::<u64>() + fib(w, 10)))
                    .collect();
                fs.into_iter().rev().map(|f| f.join()).sum::<u64>()
            })
        });
        assert_eq!(total, 2016 + 8 * 55);
    }
}

#[test]
fn leaked_and_dropped_handles_still_run_before_the_scope_ends() {
    for pool in pools() {
        let ran = AtomicUsize::new(0);
        pool.run(|w| {
            w.promises(|s| {
                let a = s.spawn(|_| ran.fetch_add(1, Ordering::SeqCst));
                let b = s.spawn(|_| ran.fetch_add(1, Ordering::SeqCst));
                std::mem::forget(b);
                drop(a);
            })
        });
        assert_eq!(ran.load(Ordering::SeqCst), 2);
    }
}

#[test]
fn promises_joined_in_any_order_at_every_capacity() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for cap in [1, 2, 3, 64] {
            for n in [1, 2, 8] {
                let pool = pool(s, n, cap);
                for order in [[0, 1, 2, 3], [3, 0, 2, 1], [1, 3, 0, 2], [2, 1, 3, 0]] {
                    let sum = pool.run(|w| {
                        w.promises(|p| {
                            let mut hs: Vec<_> = (0..4u64)
                                .map(|i| Some(p.spawn(move |w| (i + 1) * fib(w, 12 + i))))
                                .collect();
                            order
                                .iter()
                                .map(|&i| hs[i].take().unwrap().join())
                                .sum::<u64>()
                        })
                    });
                    assert_eq!(sum, 144 + 2 * 233 + 3 * 377 + 4 * 610, "{s:?} {cap} {n}");
                }
            }
        }
    }
}

#[test]
fn a_panicking_promise_reaches_its_joiner_and_a_dropped_one_the_scope() {
    for pool in pools() {
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.run(|w| w.promises(|s| s.spawn(|_| -> u32 { panic!("joined") }).join()))
        }));
        assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"joined"));
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.run(|w| {
                w.promises(|s| {
                    drop(s.spawn(|_| -> u32 { panic!("dropped") }));
                    7
                })
            })
        }));
        assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"dropped"));
    }
}

#[test]
fn large_promises_and_full_deques_work() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        let pool = pool(s, 2, 2);
        let big = [3u64; 40];
        let r = pool.run(|w| {
            w.promises(|sp| {
                let fs: Vec<_> = (0..5u64)
                    .map(|i| sp.spawn(move |w| big.iter().sum::<u64>() * i + fib(w, 8)))
                    .collect();
                fs.into_iter().rev().map(|f| f.join()).sum::<u64>()
            })
        });
        assert_eq!(r, 120 * 10 + 5 * 21);
    }
}

/// A promise spawned from an outer scope inside an inner one (or inside a scope body) goes
/// to the outer scope's overflow, so that the inner scope's end cannot take its slot; its
/// handle works as any, also when joined or dropped after the inner scope ended.
#[test]
fn an_outer_scope_spawning_inside_an_inner_one_goes_to_its_overflow() {
    for pool in pools() {
        let ran = AtomicUsize::new(0);
        let r = pool.run(|w| {
            let r = w.promises(|outer| {
                let a = outer.spawn(|_| 2u64);
                let b = w.promises(|_inner| outer.spawn(|w| fib(w, 10)));
                let c = w.scope(|_| outer.spawn(|_| 3u64));
                let d = w.promises(|inner| {
                    let x = inner.spawn(|_| 4u64);
                    let y = outer.spawn(|_| 5u64);
                    x.join() + y.join()
                });
                drop(w.promises(|_| outer.spawn(|_| ran.fetch_add(1, Ordering::Relaxed))));
                a.join() + b.join() + c.join() + d
            });
            assert_eq!(
                ran.load(Ordering::Relaxed),
                1,
                "the dropped one ran by the end"
            );
            r
        });
        assert_eq!(r, 2 + 55 + 3 + 9);
    }
}

/// An outer handle joined inside an inner scope that has not pushed yet finds its slot on
/// top of the deque, but must not pop it there: the inner scope's tasks would then sit
/// below the inner scope's base, and a dropped one would not run before the scope ends.
#[test]
fn an_outer_handle_joined_inside_an_empty_inner_scope_leaves_the_inner_tasks_inside() {
    for pool in pools() {
        for _ in 0..50 {
            let ran = AtomicUsize::new(0);
            let r = pool.run(|w| {
                w.promises(|outer| {
                    let a = outer.spawn(|_| 2u64);
                    let v = w.promises(|inner| {
                        let x = a.join();
                        drop(inner.spawn(|_| ran.fetch_add(1, Ordering::Relaxed)));
                        let y = inner.spawn(|_| 3u64);
                        x + y.join()
                    });
                    assert_eq!(ran.load(Ordering::Relaxed), 1, "inner task done at its end");
                    v
                })
            });
            assert_eq!(r, 5);
        }
    }
}

/// With the deque full a promise goes to an overflow slot: it runs when joined (its
/// panic re-raised there), or at the end of the scope if its handle was dropped or
/// leaked (its panic then reaching the caller of `promises`).
#[test]
fn a_promise_the_full_deque_did_not_take_runs_when_joined_or_at_the_end() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        let pool = pool(s, 2, 1);
        let ran = AtomicUsize::new(0);
        let r = pool.run(|w| {
            w.promises(|f| {
                let held = f.spawn(|_| 1u32);
                let b = f.spawn(|_| ran.fetch_add(1, Ordering::Relaxed) as u32 + 10);
                assert_eq!(
                    ran.load(Ordering::Relaxed),
                    0,
                    "runs when joined, not at spawn"
                );
                drop(f.spawn(|_| ran.fetch_add(1, Ordering::Relaxed)));
                std::mem::forget(f.spawn(|_| ran.fetch_add(1, Ordering::Relaxed)));
                b.join() + held.join()
            })
        });
        assert_eq!((r, ran.load(Ordering::Relaxed)), (11, 3), "{s:?}");
        let leaked = pool.run(|w| {
            panic::catch_unwind(AssertUnwindSafe(|| {
                w.promises(|f| {
                    let _held = f.spawn(|_| 1u32);
                    std::mem::forget(f.spawn(|_| -> u32 { panic!("leaked overflow") }));
                });
            }))
        });
        let p = leaked.expect_err("the leaked promise's panic reaches promises()");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"leaked overflow"), "{s:?}");
        let joined = pool.run(|w| {
            panic::catch_unwind(AssertUnwindSafe(|| {
                w.promises(|f| {
                    let held = f.spawn(|_| 1u32);
                    let b = f.spawn(|_| -> u32 { panic!("joined overflow") });
                    let r = panic::catch_unwind(AssertUnwindSafe(|| b.join()));
                    let p = r.expect_err("join re-raises");
                    assert_eq!(p.downcast_ref::<&str>(), Some(&"joined overflow"));
                    held.join()
                })
            }))
        });
        assert_eq!(joined.ok(), Some(1), "{s:?}");
    }
}

/// A promise task that leaves detached tasks in the deque: they are no promises of the
/// scope, which ends without draining them; they still run once (before the barrier), and
/// an outer handle whose slot lies below them still joins.
#[test]
fn detached_tasks_left_above_a_scope_run_once_and_outer_handles_join() {
    for pool in pools() {
        let ran = std::sync::Arc::new(AtomicUsize::new(0));
        let r = pool.run(|w| {
            let v = w.promises(|outer| {
                let a = outer.spawn(|w| fib(w, 6));
                let x = w.promises(|inner| {
                    let ran = std::sync::Arc::clone(&ran);
                    let h = inner.spawn(move |w| {
                        for _ in 0..3 {
                            let ran = std::sync::Arc::clone(&ran);
                            w.spawn_detached(move |_| {
                                ran.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                        fib(w, 5)
                    });
                    h.join()
                });
                x + a.join()
            });
            w.barrier();
            v
        });
        assert_eq!(r, 5 + 8, "{pool:?}");
        assert_eq!(ran.load(Ordering::Relaxed), 3, "{pool:?}");
    }
}

/// Runs `f` on another thread and fails if it takes more than a minute (a lost task would
/// leave a scope waiting for it).
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()).unwrap());
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("finished within a minute")
}

/// Runs `body` fifty times on each of `pools()`, within a minute, with a fresh counter
/// each time, and checks that it returns `want`.
fn fifty_times_on_each_pool(want: u64, body: fn(&Worker, &AtomicUsize) -> u64) {
    within_a_minute(move || {
        for pool in pools() {
            for _ in 0..50 {
                let ran = AtomicUsize::new(0);
                assert_eq!(pool.run(|w| body(w, &ran)), want, "{pool:?}");
            }
        }
    });
}

/// An outer scope may push into an inner one that has no slots yet: the outer slot then
/// lies at the inner scope's base. The inner scope must not push above it (its tasks go to
/// its overflow), and its end must not drain it: the outer handle still joins it after
/// the inner scope ended.
#[test]
fn an_outer_slot_at_the_base_of_an_empty_inner_scope_stays_the_outer_ones() {
    fifty_times_on_each_pool(144 + 3, |w, ran| {
        w.promises(|outer| {
            let (o, y) = w.promises(|inner| {
                let o = outer.spawn(|w| fib(w, 12));
                drop(inner.spawn(|_| ran.fetch_add(1, Ordering::Relaxed)));
                let y = inner.spawn(|_| 3u64);
                (o, y.join())
            });
            assert_eq!(ran.load(Ordering::Relaxed), 1, "inner task done at its end");
            o.join() + y
        })
    });
}

/// An outer handle whose slot is on top, joined inside a `Worker::scope` body that has
/// not spawned yet, must not pop it: the scope's tasks would then lie below its base, and
/// its end would not find them. Outer spawns inside the body go to the overflow.
#[test]
fn an_outer_handle_joined_inside_a_worker_scope_leaves_the_scope_tasks_inside() {
    fifty_times_on_each_pool(55 + 4, |w, ran| {
        w.promises(|outer| {
            let a = outer.spawn(|w| fib(w, 10));
            let (x, b) = w.scope(|s| {
                let x = a.join();
                s.spawn(|_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
                let b = outer.spawn(|_| 4u64);
                s.spawn(|_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
                (x, b)
            });
            assert_eq!(
                ran.load(Ordering::Relaxed),
                2,
                "scope tasks done at its end"
            );
            x + b.join()
        })
    });
}

/// A scope's handle joined out of order leaves a claimed slot, which the scope counts and
/// drains at its end. Looking for work inside the scope (`yield_now`, as a wait does) or
/// `yield_local` must leave it there: with it gone, an outer scope could push where the
/// inner one drains, and the inner one's end would run the outer task, which its handle
/// would run again.
#[test]
fn looking_for_work_inside_a_scope_leaves_its_claimed_slots_to_it() {
    for pool in pools() {
        for wait in 0..2 {
            let ran = AtomicUsize::new(0);
            let r = pool.run(|w| {
                w.promises(|outer| {
                    let z = w.promises(|inner| {
                        let x = inner.spawn(|_| 1u64);
                        let y = inner.spawn(|_| 2u64);
                        let a = x.join() + y.join();
                        match wait {
                            0 => drop(heist::yield_now()),
                            _ => drop(heist::yield_local()),
                        }
                        let z = outer.spawn(|_| ran.fetch_add(1, Ordering::Relaxed) as u64);
                        (z, a)
                    });
                    z.0.join() + z.1
                })
            });
            assert_eq!((r, ran.load(Ordering::Relaxed)), (3, 1), "{pool:?} {wait}");
        }
    }
}

/// `yield_local` inside a `Worker::scope` body pops only what lies above the body's base:
/// a claimed slot of an outer promises scope below it stays, and the scope's tasks, pushed
/// above it, run before the scope ends.
#[test]
fn yield_local_inside_a_worker_scope_keeps_the_scope_tasks_inside() {
    for pool in pools() {
        let ran = AtomicUsize::new(0);
        let r = pool.run(|w| {
            w.promises(|p| {
                let x = p.spawn(|_| 1u64);
                let y = p.spawn(|_| 2u64);
                let a = x.join() + y.join();
                w.scope(|s| {
                    heist::yield_local();
                    s.spawn(|_| {
                        ran.fetch_add(1, Ordering::Relaxed);
                    });
                });
                assert_eq!(ran.load(Ordering::Relaxed), 1, "scope task done at its end");
                a
            })
        });
        assert_eq!(r, 3);
    }
}

/// A `Worker::scope` begun with the deque full still keeps an outer handle on top from
/// popping inside its body (its mark takes the slot no task takes, or a mark lies on top
/// already), so that the scope's tasks stay inside it, at every small capacity.
#[test]
fn an_outer_handle_joined_inside_a_worker_scope_on_a_full_deque_stays_out() {
    within_a_minute(|| {
        for s in [Scheduler::Lace, Scheduler::Relay] {
            for cap in 1..=3 {
                for n in [1, 2] {
                    let pool = pool(s, n, cap);
                    for _ in 0..20 {
                        let ran = AtomicUsize::new(0);
                        let r = pool.run(|w| {
                            w.promises(|outer| {
                                let hs: Vec<_> =
                                    (0..cap as u64).map(|i| outer.spawn(move |_| i)).collect();
                                let last = hs.into_iter().rev().map(|h| {
                                    w.scope(|sc| {
                                        w.scope(|inner| {
                                            let v = h.join();
                                            inner.spawn(|_| {
                                                ran.fetch_add(1, Ordering::Relaxed);
                                            });
                                            v
                                        }) + {
                                            sc.spawn(|_| {
                                                ran.fetch_add(1, Ordering::Relaxed);
                                            });
                                            0
                                        }
                                    })
                                });
                                let sum: u64 = last.sum();
                                assert_eq!(ran.load(Ordering::Relaxed), 2 * cap, "tasks inside");
                                sum
                            })
                        });
                        let cap = cap as u64;
                        assert_eq!(r, cap * (cap - 1) / 2, "{s:?} {cap} {n}");
                    }
                }
            }
        }
    });
}

/// A promise joined out of order while its thief waits for a later promise of the same
/// scope: the joiner runs the later one meanwhile, as a thief of its own would. (Before,
/// it waited for the first, and with the only other worker spinning in it, nobody ran
/// the second.)
#[test]
fn a_stolen_promise_that_waits_for_a_later_one_is_joined() {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    within_a_minute(|| {
        for s in [Scheduler::Lace, Scheduler::Relay] {
            for n in [2, 3, 8] {
                let pool = Pool::builder().workers(n).scheduler(s).build().unwrap();
                for _ in 0..20 {
                    let (started, flag) = (AtomicBool::new(false), AtomicBool::new(false));
                    let r = pool.run(|w| {
                        w.promises(|p| {
                            let first = p.spawn(|_| {
                                started.store(true, SeqCst);
                                while !flag.load(SeqCst) {
                                    std::hint::spin_loop();
                                }
                                1
                            });
                            let second = p.spawn(|_| {
                                flag.store(true, SeqCst);
                                2
                            });
                            while !started.load(SeqCst) {
                                std::hint::spin_loop();
                            }
                            first.join() * 10 + second.join()
                        })
                    });
                    assert_eq!(r, 12, "{pool:?}");
                }
            }
        }
    });
}
