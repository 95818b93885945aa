//! A one-shot completion flag that a non-worker thread can block on and a worker can poll
//! (PROTOCOLS.md, "The latch"; loom models in `core/loom_latch.rs`).
//!
//! A blocking waiter parks its thread. The setter's store of `SET` is its last touch of
//! the latch; the wake-up that follows goes through a handle to the waiter's thread that
//! the setter took before that store. So a woken waiter finds the latch set and returns at
//! once: it never waits for the setter to finish, which on an oversubscribed machine could
//! be preempted by the very waiter it woke.

use crate::core::sync::{AtomicUsize, RaceCell};
use std::sync::atomic::Ordering::{Acquire, Release};

#[cfg(loom)]
use loom::thread::{self, Thread};
#[cfg(not(loom))]
use std::thread::{self, Thread};

/// Not set, and no waiter parked.
const UNSET: usize = 0;
/// Not set; a waiter wrote its thread into `waiter` and parks until `SET`.
const PARKING: usize = 1;
/// Set; the setter no longer touches the latch.
const SET: usize = 2;

/// How many times, and for how long at most, a blocking waiter yields, looking at the
/// latch, before it parks: a short root (a loop of a few microseconds called from
/// outside) is then over with no park and no wake-up, which cost `tiny-outside` most of
/// its time. The time bound keeps a waiter whose yields hand its CPU to a busy worker
/// from staying runnable for many time slices.
#[cfg(not(loom))]
const WAIT_YIELDS: u32 = 16;
#[cfg(not(loom))]
const WAIT_YIELD_FOR: std::time::Duration = std::time::Duration::from_micros(50);

/// Set once by the finishing side; waited on by the side that owns the memory.
pub(crate) struct Latch {
    state: AtomicUsize,
    /// The parked waiter's thread: written by the waiter before it moves `state` from
    /// `UNSET` to `PARKING`, read by the setter only after it saw `PARKING`.
    waiter: RaceCell<Option<Thread>>,
}

// SAFETY: `waiter` is written by the one waiter before the Release CAS that publishes
// `PARKING` and never again while the latch is shared; the setter reads it only after its
// failed CAS read `PARKING` with Acquire. `Thread` is `Send + Sync`; the rest are atomics.
unsafe impl Sync for Latch {}

impl Latch {
    pub(crate) fn new() -> Latch {
        Latch {
            state: AtomicUsize::new(UNSET),
            waiter: RaceCell::new(None),
        }
    }

    /// Marks the latch set and wakes a parked waiter. The store of `SET` is the last
    /// touch: a waiter that sees it may free the latch, so the latch is passed as a raw
    /// pointer, not `&self`, which would have to stay valid until this function returns
    /// (rust-lang/rust#55005). The wake-up goes through a clone of the waiter's thread
    /// handle, taken before that store.
    ///
    /// # Safety
    /// `this` points to a live latch that the waiter does not free before it has seen it
    /// set (`wait`, or `probe` returning true); called once.
    pub(crate) unsafe fn set(this: *const Latch) {
        // SAFETY: the latch is live until `SET` is stored.
        let state = unsafe { &(*this).state };
        // No waiter parked: one that comes later sees `SET` at its CAS.
        let Err(seen) = state.compare_exchange(UNSET, SET, Release, Acquire) else {
            return;
        };
        debug_assert_eq!(seen, PARKING, "a latch is set once");
        // SAFETY: `PARKING` was published (Release; read here by the failed CAS, Acquire)
        // after the waiter wrote `waiter`, which it writes no more; the latch is live until
        // the store below.
        let parked = unsafe { (*this).waiter.with_mut(|w| (*w).clone()) };
        state.store(SET, Release);
        if let Some(t) = parked {
            t.unpark();
        }
    }

    /// Whether the latch is set; after `true` the setter no longer touches it.
    pub(crate) fn probe(&self) -> bool {
        self.state.load(Acquire) == SET
    }

    /// Whether the latch is set within `WAIT_YIELDS` yields and `WAIT_YIELD_FOR`. Under
    /// loom it looks once: the yields would keep the models from reaching the park.
    fn set_soon(&self) -> bool {
        #[cfg(not(loom))]
        {
            let start = std::time::Instant::now();
            for _ in 0..WAIT_YIELDS {
                if self.probe() || start.elapsed() > WAIT_YIELD_FOR {
                    break;
                }
                thread::yield_now();
            }
        }
        self.probe()
    }

    /// Blocks until the latch is set and the setter no longer touches it.
    pub(crate) fn wait(&self) {
        if self.set_soon() {
            return;
        }
        // `Pool::run` relies on this wait not unwinding while its root runs; should the
        // handle be out of reach (a thread's last TLS destructors), the waiter yields.
        let Ok(me) = std::panic::catch_unwind(thread::current) else {
            while !self.probe() {
                thread::yield_now();
            }
            return;
        };
        // SAFETY: only the one waiter writes `waiter`, and only before it publishes
        // `PARKING`; the setter reads it only after.
        unsafe { self.waiter.with_mut(|w| *w = Some(me)) };
        if self
            .state
            .compare_exchange(UNSET, PARKING, Release, Acquire)
            .is_err()
        {
            return; // set meanwhile
        }
        // A wake-up meant for an earlier park of this thread may end a park early.
        while !self.probe() {
            thread::park();
        }
    }
}
