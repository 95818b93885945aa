//! A team's barrier ("Work-stealing for mixed-mode parallelism by deterministic
//! team-building" defines none; its §5 quicksort needs only the end of the team): a
//! count and a generation; waiters spin, then yield, then block (a bounded nap: a team
//! that needs the waiter finds it within a millisecond), and a member's panic poisons it
//! so that every waiting member leaves.
//!
//! A waiter that blocks announces itself in `sleepers`, then (SeqCst fence) looks at the
//! generation; the last arriver moves the generation, then (SeqCst fence) looks at
//! `sleepers`. Of the two fences one comes first, so either the waiter sees the new
//! generation or the arriver sees the waiter and wakes it. Poisoning always wakes.
//! The loom model `loom_team_members_panic_and_poison_the_barrier` checks both wake-ups.

use super::form::{lend, TEAM_YIELDS};
use crate::core::sleep::SPIN_ROUNDS;
use crate::core::sync::{fence, AtomicBool, AtomicUsize, Condvar, Mutex, MutexGuard};
use crate::core::worker::Worker;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};
use std::sync::PoisonError;
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

fn lock(m: &Mutex<()>) -> MutexGuard<'_, ()> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
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
        let Some(g) = self.arrive() else { return };
        let mut idle = 0u32;
        while !self.passed(g) {
            idle += 1;
            if idle > SPIN_ROUNDS * 4 && lend(w) {
                continue;
            }
            if idle < SPIN_ROUNDS * 4 {
                std::hint::spin_loop();
            } else if idle < SPIN_ROUNDS * 4 + TEAM_YIELDS {
                std::thread::yield_now();
            } else {
                self.block(g, Duration::from_millis(1));
            }
        }
    }

    /// A member arrives: `None` if it was the last (the others are released), else the
    /// generation to wait out with [`Barrier::passed`].
    ///
    /// # Panics
    /// If the barrier is poisoned.
    pub(super) fn arrive(&self) -> Option<usize> {
        self.check();
        let g = self.generation.load(Acquire);
        if self.count.fetch_add(1, AcqRel) + 1 < self.size {
            return Some(g);
        }
        self.count.store(0, Relaxed);
        self.generation.store(g.wrapping_add(1), Release);
        // Pairs with the fence in `block`.
        fence(SeqCst);
        if self.sleepers.load(Relaxed) > 0 {
            let _guard = lock(&self.lock);
            self.cv.notify_all();
        }
        None
    }

    /// Whether the barrier moved past generation `g`.
    ///
    /// # Panics
    /// If the barrier is poisoned.
    pub(super) fn passed(&self, g: usize) -> bool {
        let passed = self.generation.load(Acquire) != g;
        self.check();
        passed
    }

    /// Blocks until the barrier may have moved past generation `g` or been poisoned, or
    /// for `nap` at most.
    pub(super) fn block(&self, g: usize, nap: Duration) {
        let guard = lock(&self.lock);
        self.sleepers.fetch_add(1, Relaxed);
        // Pairs with the fence in `arrive`.
        fence(SeqCst);
        if self.generation.load(Acquire) == g && !self.poisoned.load(Acquire) {
            let _ = self.cv.wait_timeout(guard, nap);
        }
        self.sleepers.fetch_sub(1, Relaxed);
    }

    pub(super) fn poison(&self) {
        self.poisoned.store(true, Release);
        let _guard = lock(&self.lock);
        self.cv.notify_all();
    }
}
