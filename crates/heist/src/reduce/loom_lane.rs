//! loom model of the reduction's termination test (`reduce::lane::ended`): two workers and a
//! checker. Worker 0 runs the root, which pushes one task; the task is handed to worker
//! 1 (through a mutex, as the shared part of a lane is) after worker 0 published its
//! counts; each worker publishes its counts only when it hands out work or runs dry.
//! The checker may conclude the end only once both tasks have completed. (Without the
//! publication before the hand-out, the model fails: the end is seen early.)
//!
//! `loom_reduce_posted_wakes_a_sleeper`: a reduction is posted on the pool's board and
//! the sleepers woken while a worker goes to sleep with `Board::wants_help` in its last
//! look (the sleep handshake of `core/sleep.rs`). A missed wake-up shows as a deadlock; with
//! `wants_help` left out of the last look, the model deadlocks.
//!
//! Run with `.ci/loom` (`RUSTFLAGS="--cfg loom" cargo test -p heist --release --lib loom`).

use super::board::{Board, Posted};
use super::lane::{ended, Counts};
use super::Participate;
use crate::core::sleep::Sleep;
use crate::core::worker::Worker;
use loom::sync::atomic::{AtomicBool, Ordering::Acquire, Ordering::Release};
use loom::sync::{Arc, Mutex};
use loom::thread;

#[test]
fn loom_reduce_end_only_after_every_task() {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(|| {
        let counts = Arc::new([Counts::new(), Counts::new()]);
        let shared = Arc::new(Mutex::new(None::<u32>));
        let finished = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        // The caller's lane starts with the root counted.
        counts[0].publish(1, 0);
        let w0 = {
            let (counts, shared, finished) = (counts.clone(), shared.clone(), finished.clone());
            thread::spawn(move || {
                // The root pushes a task (made 2), hands it out (publishing first), and
                // completes; then the queue is dry and the counts are published.
                counts[0].publish(2, 0);
                *shared.lock().unwrap() = Some(1);
                finished[0].store(true, Release);
                counts[0].publish(2, 1);
            })
        };
        let w1 = {
            let (counts, shared, finished) = (counts.clone(), shared.clone(), finished.clone());
            thread::spawn(move || loop {
                if shared.lock().unwrap().take().is_some() {
                    finished[1].store(true, Release);
                    counts[1].publish(0, 1);
                    return;
                }
                thread::yield_now();
            })
        };
        for _ in 0..3 {
            if ended(counts.iter()) {
                assert!(finished[0].load(Acquire) && finished[1].load(Acquire));
                break;
            }
            thread::yield_now();
        }
        w0.join().unwrap();
        w1.join().unwrap();
        assert!(ended(counts.iter()));
    });
}

/// A reduction that every worker may join.
struct Open;

impl Participate for Open {
    fn may_enter(&self, _me: usize) -> bool {
        true
    }
    fn enter(&self, _me: usize) -> bool {
        true
    }
    fn help(&self, _w: &Worker) {}
}

#[test]
fn loom_reduce_posted_wakes_a_sleeper() {
    loom::model(|| {
        let board = Arc::new(Board::new());
        let sleep = Arc::new(Sleep::new(2));
        let caller = {
            let (board, sleep) = (board.clone(), sleep.clone());
            thread::spawn(move || {
                board.post(Posted(&Open));
                sleep.wake_all();
            })
        };
        while !board.wants_help(1) {
            sleep.sleep(1, crate::core::frame::Roots::Included, None, || {
                board.wants_help(1)
            });
        }
        caller.join().unwrap();
    });
}
