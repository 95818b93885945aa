//! Small pools and small inputs through every task path: joins with steals and a full
//! deque, scopes, promises, detached tasks, panics (also with payloads that panic on drop)
//! and the drop of the pool. Quick enough to run under Miri:
//! `MIRIFLAGS="-Zmiri-tree-borrows -Zmiri-permissive-provenance" cargo +nightly miri test -p heist --test small`.

// Promise handles are dropped and forgotten on purpose: the scope must finish their tasks
// whether or not the handle type has drop glue.
#![allow(clippy::drop_non_drop, clippy::forget_non_drop)]

use heist::{Pool, Scheduler, Worker};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("heist-test: a Bomb payload was dropped");
    }
}

fn fib(w: &Worker, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = w.join(move |w| fib(w, n - 1), move |w| fib(w, n - 2));
    a + b
}

fn pools() -> Vec<Pool> {
    let mut v = Vec::new();
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for (n, cap) in [(1, 4), (2, 2), (2, 64)] {
            let pool = Pool::builder().workers(n).scheduler(s).deque_capacity(cap);
            v.push(pool.build().unwrap());
        }
    }
    v
}

#[test]
fn joins_scopes_futures_and_detached_tasks() {
    for pool in pools() {
        assert_eq!(pool.run(|w| fib(w, 9)), 34, "{pool:?}");
        let mut v = [1u64, 2, 3, 4];
        pool.run(|w| {
            w.scope(|s| {
                for x in &mut v {
                    s.spawn(move |_| *x *= 10);
                }
            })
        });
        assert_eq!(v, [10, 20, 30, 40]);
        let sum = pool.run(|w| {
            w.promises(|f| {
                let a = f.spawn(|w| fib(w, 6));
                let b = f.spawn(|w| fib(w, 5));
                let c = f.spawn(|w| fib(w, 3));
                let sum = c.join() + b.join() + a.join();
                std::mem::forget(f.spawn(|w| fib(w, 4)));
                sum
            })
        });
        assert_eq!(sum, 2 + 5 + 8, "{pool:?}");
        let n = Arc::new(AtomicUsize::new(0));
        for _ in 0..3 {
            let n = Arc::clone(&n);
            pool.spawn_detached(move |w| {
                n.fetch_add(fib(w, 5) as usize, SeqCst);
            });
        }
        pool.barrier();
        assert_eq!(n.load(SeqCst), 15);
    }
}

#[test]
fn panics_with_payloads_that_panic_on_drop() {
    for pool in pools() {
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.run(|w| {
                w.scope(|s| {
                    s.spawn(|_| panic!("plain"));
                    s.spawn(|_| panic::panic_any(Bomb));
                    s.spawn(|_| panic::panic_any(Bomb));
                })
            })
        }));
        let p = r.expect_err("the scope re-raises a panic");
        if p.is::<Bomb>() {
            std::mem::forget(p);
        }
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.run(|w| w.join(|w| fib(w, 5), |_| -> u64 { panic::panic_any(Bomb) }))
        }));
        std::mem::forget(r.expect_err("join re-raises the panic"));
        let r = pool.run(|w| {
            panic::catch_unwind(AssertUnwindSafe(|| {
                w.promises(|f| std::mem::forget(f.spawn(|_| -> u32 { panic!("forgotten") })))
            }))
        });
        assert_eq!(
            r.expect_err("a forgotten future's panic reaches futures()")
                .downcast_ref::<&str>(),
            Some(&"forgotten")
        );
        assert_eq!(pool.run(|w| fib(w, 7)), 13);
    }
}

#[test]
fn dropping_a_pool_resumes_its_detached_panic() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        // One worker, so that no thief takes the task, which `yield_local` runs: its panic
        // is kept before the drop (the drop does not wait for tasks still to run).
        let pool = Pool::builder().workers(1).scheduler(s).build().unwrap();
        pool.run(|w| {
            w.spawn_detached(|_| panic!("from a detached task"));
            assert_eq!(heist::yield_local(), Some(heist::Yield::Executed));
        });
        let p = panic::catch_unwind(AssertUnwindSafe(|| drop(pool)))
            .expect_err("Pool::drop re-raises the detached panic");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"from a detached task"));
    }
}
