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
    /// so a waiter that returns after seeing it (see `wait`/`probe`, then `settle`) knows
    /// this call no longer touches the latch except through the mutex's own unlock, after
    /// which the waiter may free it. So the latch is passed as a raw pointer, not `&self`:
    /// a reference argument would have to stay valid until this function returns
    /// (rust-lang/rust#55005).
    ///
    /// # Safety
    /// `this` points to a live latch that the waiter does not free before it has seen the
    /// flag and then acquired the lock (`wait`, or `probe` and `settle`).
    pub(crate) unsafe fn set(this: *const Latch) {
        // SAFETY: the latch is live until the guard below is released: the waiter needs
        // the lock before it may free it.
        let g = unsafe { (*this).lock.lock() }.unwrap_or_else(PoisonError::into_inner);
        // SAFETY: as above.
        unsafe {
            (*this).done.store(true, Release);
            (*this).cv.notify_all();
        }
        // The last touch: the mutex's unlock, after which the waiter may free the latch.
        drop(g);
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
