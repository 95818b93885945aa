//! The pools both the reduction and the team tests run on: both schedulers, 1, 2, 3, 5, 8
//! and 16 workers, under a timeout; and the complete binary trees their reductions walk.

use heist::{Pool, ReduceCtx, Scheduler};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

const SIZES: [usize; 6] = [1, 2, 3, 5, 8, 16];

/// Runs `f` on a fresh pool of every size and scheduler, failing after `secs` seconds.
pub fn each_pool(secs: u64, f: fn(&Pool)) {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for s in [Scheduler::Lace, Scheduler::Relay] {
            for n in SIZES {
                let pool = Pool::builder().workers(n).scheduler(s).build().unwrap();
                f(&pool);
            }
        }
        tx.send(()).unwrap();
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("timed out after {secs} s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the test thread panicked"),
    }
}

/// A node of height `d` of a complete binary tree of reduction tasks: pushes its two
/// children, if it has any.
pub fn push_children(ctx: &ReduceCtx<'_, u32>, d: u32) {
    if d > 0 {
        ctx.push(d - 1);
        ctx.push(d - 1);
    }
}
