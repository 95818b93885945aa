//! A one-shot completion flag that a non-worker thread can block on and a worker can poll
//! (PROTOCOLS.md, "The latch"; loom models in `core/loom_latch.rs`).

use crate::core::sync::{AtomicBool, Condvar, Mutex};
use std::sync::atomic::Ordering::{Acquire, Release};
use std::sync::PoisonError;

/// How many times `wait` looks for `done` before it yields, once notified.
#[cfg(not(loom))]
const SETTER_SPINS: u32 = 1 << 12;

/// The pause after look `looks` of `wait` at an unset `done`.
#[cfg(not(loom))]
fn pause(looks: u32) {
    if looks < SETTER_SPINS {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

#[cfg(loom)]
fn pause(_looks: u32) {
    loom::thread::yield_now();
}

/// Set once by the finishing side; waited on by the side that owns the memory.
pub(crate) struct Latch {
    /// The setter's last touch of the latch: once it reads true, the latch may be freed.
    done: AtomicBool,
    /// Whether `set` has notified, under the lock that blocked waiters sleep on.
    notified: Mutex<bool>,
    cv: Condvar,
}

impl Latch {
    pub(crate) fn new() -> Latch {
        Latch {
            done: AtomicBool::new(false),
            notified: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    /// Wakes a blocked waiter, then marks the latch set. The store of `done` is the last
    /// touch: a waiter that sees it may free the latch, so the latch is passed as a raw
    /// pointer, not `&self`, which would have to stay valid until this function returns
    /// (rust-lang/rust#55005), and nothing of the mutex (whose unlock is still running
    /// when a waiter could take it) is the last touch. The notification comes after the
    /// unlock: a waiter woken under the lock would block on the mutex at once and need a
    /// second wake-up from the unlock.
    ///
    /// # Safety
    /// `this` points to a live latch that the waiter does not free before it has seen
    /// `done` (`wait`, or `probe` returning true).
    pub(crate) unsafe fn set(this: *const Latch) {
        // SAFETY: the latch is live until `done` is stored below.
        *unsafe { (*this).notified.lock() }.unwrap_or_else(PoisonError::into_inner) = true;
        // SAFETY: as above.
        unsafe { (*this).cv.notify_all() };
        // SAFETY: as above; nothing touches the latch after this store.
        unsafe { (*this).done.store(true, Release) };
    }

    /// Whether the latch is set; after `true` the setter no longer touches it.
    pub(crate) fn probe(&self) -> bool {
        self.done.load(Acquire)
    }

    /// Blocks until the latch is set and the setter no longer touches it.
    pub(crate) fn wait(&self) {
        let mut g = self.notified.lock().unwrap_or_else(PoisonError::into_inner);
        while !*g {
            g = self.cv.wait(g).unwrap_or_else(PoisonError::into_inner);
        }
        drop(g);
        // The setter is between its unlock and its store of `done`: its notification's
        // return from the kernel, then a store. A yield at once could hand this CPU to a
        // worker that only yields back.
        let mut looks = 0u32;
        while !self.probe() {
            looks += 1;
            pause(looks);
        }
    }
}
