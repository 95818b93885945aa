//! Futures: spawn/join on both schedulers, leaked and dropped handles, panics, order.

use heist::{Pool, Scheduler, Worker};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

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
    w.futures(|s| {
        let f = s.spawn(move |w| fib(w, n - 1));
        let y = fib(w, n - 2);
        f.join() + y
    })
}

#[test]
fn fib_with_futures_is_correct() {
    for pool in pools() {
        assert_eq!(pool.run(|w| fib(w, 21)), 10946, "{pool:?}");
    }
}

#[test]
fn many_futures_joined_newest_first() {
    for pool in pools() {
        let data: Vec<u64> = (0..64).collect();
        let total = pool.run(|w| {
            w.futures(|s| {
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
            w.futures(|s| {
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
fn joining_out_of_order_panics_without_harm() {
    for pool in pools() {
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.run(|w| {
                w.futures(|s| {
                    let a = s.spawn(|_| 1);
                    let _b = s.spawn(|_| 2);
                    a.join()
                })
            })
        }));
        let msg = r.unwrap_err();
        let msg = msg.downcast_ref::<&str>().copied().unwrap_or_default();
        assert!(msg.contains("newest first"), "{msg}");
        assert_eq!(pool.run(|w| fib(w, 12)), 144);
    }
}

#[test]
fn a_panicking_future_reaches_its_joiner_and_a_dropped_one_the_scope() {
    for pool in pools() {
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.run(|w| w.futures(|s| s.spawn(|_| -> u32 { panic!("joined") }).join()))
        }));
        assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"joined"));
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.run(|w| {
                w.futures(|s| {
                    drop(s.spawn(|_| -> u32 { panic!("dropped") }));
                    7
                })
            })
        }));
        assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"dropped"));
    }
}

#[test]
fn large_futures_and_full_deques_work() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        let pool = Pool::builder()
            .workers(2)
            .scheduler(s)
            .deque_capacity(2)
            .build()
            .unwrap();
        let big = [3u64; 40];
        let r = pool.run(|w| {
            w.futures(|sp| {
                let fs: Vec<_> = (0..5u64)
                    .map(|i| sp.spawn(move |w| big.iter().sum::<u64>() * i + fib(w, 8)))
                    .collect();
                fs.into_iter().rev().map(|f| f.join()).sum::<u64>()
            })
        });
        assert_eq!(r, 120 * 10 + 5 * 21);
    }
}

#[test]
fn an_outer_scope_cannot_spawn_inside_an_inner_one() {
    for pool in pools() {
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.run(|w| {
                w.futures(|outer| {
                    w.futures(|_inner| {
                        let f = outer.spawn(|_| 1u64);
                        f.join()
                    })
                })
            })
        }));
        let msg = r.unwrap_err();
        let msg = msg.downcast_ref::<&str>().copied().unwrap_or_default();
        assert!(msg.contains("innermost"), "{msg}");
        let ok = pool.run(|w| {
            w.futures(|outer| {
                let a = outer.spawn(|_| 2u64);
                let b = w.futures(|inner| inner.spawn(|_| 3u64).join());
                a.join() + b
            })
        });
        assert_eq!(ok, 5);
    }
}

/// With the deque full a future runs at spawn; a leaked handle of one that panicked still
/// hands its panic to the caller of `futures` (it was lost before), and a joined one
/// re-raises it.
#[test]
fn a_future_run_at_spawn_keeps_its_panic_when_leaked_or_joined() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        let pool = Pool::builder()
            .workers(2)
            .scheduler(s)
            .deque_capacity(1)
            .build()
            .unwrap();
        let leaked = pool.run(|w| {
            panic::catch_unwind(AssertUnwindSafe(|| {
                w.futures(|f| {
                    // Takes the one slot; dropped while the leaked handle is newer, so the
                    // scope's end finishes it.
                    let _held = f.spawn(|_| 1u32);
                    std::mem::forget(f.spawn(|_| -> u32 { panic!("leaked at spawn") }));
                });
            }))
        });
        let p = leaked.expect_err("the leaked future's panic reaches futures()");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"leaked at spawn"), "{s:?}");
        let joined = pool.run(|w| {
            panic::catch_unwind(AssertUnwindSafe(|| {
                w.futures(|f| {
                    let held = f.spawn(|_| 1u32);
                    let b = f.spawn(|_| -> u32 { panic!("joined at spawn") });
                    let r = b.join();
                    r + held.join()
                })
            }))
        });
        let p = joined.expect_err("join re-raises");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"joined at spawn"), "{s:?}");
    }
}
