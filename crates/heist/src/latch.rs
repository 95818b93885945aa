//! A one-shot completion flag that a non-worker thread can block on and a worker can poll
//! (PROTOCOLS.md, "The latch"; loom models in `loom_latch.rs`).

use crate::sync::{AtomicBool, Condvar, Mutex};
use std::sync::atomic::Ordering::{Acquire, Release};
use std::sync::PoisonError;

/// Set once by the finishing side; waited on by the side that owns the memory.
pub(crate) struct Latch {
    done: AtomicBool,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Latch {
    pub(crate) fn new() -> Latch {
        Latch {
            done: AtomicBool::new(false),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Marks the latch set and wakes a blocked waiter. The flag is stored under the lock,
    /// so a waiter that returns after seeing it (see `wait`/`probe`) knows this call no
    /// longer touches the latch except through the mutex's own release.
    pub(crate) fn set(&self) {
        let _g = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.done.store(true, Release);
        self.cv.notify_all();
    }

    /// Whether the latch is set. After `true`, call `settle` before freeing the latch.
    pub(crate) fn probe(&self) -> bool {
        self.done.load(Acquire)
    }

    /// Waits for a setter that was seen by `probe` to leave `set`.
    pub(crate) fn settle(&self) {
        drop(self.lock.lock().unwrap_or_else(PoisonError::into_inner));
    }

    /// Blocks until the latch is set.
    pub(crate) fn wait(&self) {
        let mut g = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        while !self.done.load(Acquire) {
            g = self.cv.wait(g).unwrap_or_else(PoisonError::into_inner);
        }
    }
}
