//! The pools the loop tests run on: both schedulers, 1, 2, 8 and 16 workers (more than
//! the cores, and `HEIST_TEST_WORKERS`), each on a thread of its own outside the pool,
//! under a timeout. Loops that a test calls outside the pool in `Pool::enter` start on
//! the calling thread (`caller_helps`), so that those tests exercise the caller's side;
//! loops a test runs with `Pool::run` do not meet it.

#[path = "../support/mod.rs"]
mod support;

use heist::{Pool, Scheduler};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Runs `f` on each pool shape, failing (not hanging) if a run takes over a minute.
pub fn on_every_pool(f: impl Fn(&Pool) + Send + Sync + 'static) {
    let f = Arc::new(f);
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in support::worker_counts(&[1, 2, 8, 16]) {
            let (tx, rx) = mpsc::channel();
            let f = f.clone();
            std::thread::spawn(move || {
                let pool = Pool::builder()
                    .workers(n)
                    .scheduler(s)
                    .caller_helps(true)
                    .build()
                    .unwrap();
                let r = catch_unwind(AssertUnwindSafe(|| f(&pool)));
                drop(pool);
                let _ = tx.send(r);
            });
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(Ok(())) => {}
                Ok(Err(p)) => resume_unwind(p),
                Err(_) => panic!("{s:?} with {n} workers: no answer within 60 s"),
            }
        }
    }
}
