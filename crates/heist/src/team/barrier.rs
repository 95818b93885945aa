//! A team's barrier ("Work-stealing for mixed-mode parallelism by deterministic
//! team-building" defines none; its §5 quicksort needs only the end of the team): a
//! count and a generation; waiters spin, then yield, then block (a bounded nap: a team
//! that needs the waiter finds it within a millisecond), and a member's panic poisons it
//! so that every waiting member leaves.

use super::form::{lend, TEAM_YIELDS};
use crate::pool::lock;
use crate::sleep::SPIN_ROUNDS;
use crate::worker::Worker;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// A team's barrier: spin, then yield, then block; poisoned by a member's panic.
pub(super) struct Barrier {
    size: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
    poisoned: AtomicBool,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Barrier {
    pub(super) fn new(size: usize) -> Barrier {
        Barrier {
            size,
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            poisoned: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    fn check(&self) {
        if self.poisoned.load(Acquire) {
            panic!("heist: a member of this team panicked");
        }
    }

    /// Waits for the other members; past its spinning, `w`, this member's worker, is lent
    /// to teams and work meanwhile (a team or a task forked from this team's bodies may
    /// need it; see [`lend`]).
    pub(super) fn wait(&self, w: &Worker) {
        self.check();
        let g = self.generation.load(Acquire);
        if self.count.fetch_add(1, AcqRel) + 1 == self.size {
            self.count.store(0, Relaxed);
            self.generation.store(g.wrapping_add(1), Release);
            self.wake();
            return;
        }
        let mut idle = 0u32;
        while self.generation.load(Acquire) == g {
            self.check();
            idle += 1;
            if idle > SPIN_ROUNDS * 4 && lend(w) {
                continue;
            }
            if idle < SPIN_ROUNDS * 4 {
                std::hint::spin_loop();
            } else if idle < SPIN_ROUNDS * 4 + TEAM_YIELDS {
                std::thread::yield_now();
            } else {
                let guard = lock(&self.lock);
                self.sleepers.fetch_add(1, AcqRel);
                if self.generation.load(Acquire) == g && !self.poisoned.load(Acquire) {
                    let _ = self.cv.wait_timeout(guard, Duration::from_millis(1));
                }
                self.sleepers.fetch_sub(1, AcqRel);
            }
        }
        self.check();
    }

    fn wake(&self) {
        if self.sleepers.load(Acquire) > 0 {
            let _guard = lock(&self.lock);
            self.cv.notify_all();
        }
    }

    pub(super) fn poison(&self) {
        self.poisoned.store(true, Release);
        let _guard = lock(&self.lock);
        self.cv.notify_all();
    }
}
