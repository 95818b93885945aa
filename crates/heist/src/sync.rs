//! Atomics, fences, locks and cells of the concurrency protocols, swapped for loom's under
//! `cfg(loom)` so that the same code is model-checked (PROTOCOLS.md lists the models).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};

/// An `UnsafeCell` whose accesses loom tracks under `cfg(loom)`.
#[derive(Debug)]
pub(crate) struct RaceCell<T>(
    #[cfg(loom)] loom::cell::UnsafeCell<T>,
    #[cfg(not(loom))] std::cell::UnsafeCell<T>,
);

impl<T> RaceCell<T> {
    pub(crate) fn new(v: T) -> Self {
        #[cfg(loom)]
        return RaceCell(loom::cell::UnsafeCell::new(v));
        #[cfg(not(loom))]
        RaceCell(std::cell::UnsafeCell::new(v))
    }

    /// Gives `f` a pointer to the contents.
    ///
    /// # Safety
    /// The caller must have exclusive access for writes, or no concurrent writer for reads,
    /// by the protocol that owns the cell.
    #[inline(always)]
    pub(crate) unsafe fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(loom)]
        return self.0.with_mut(f);
        #[cfg(not(loom))]
        f(self.0.get())
    }
}

/// Keeps a field on its own cache lines (two, for adjacent-line prefetch).
#[repr(align(128))]
pub(crate) struct Padded<T>(pub(crate) T);

/// Locks a std mutex, ignoring poisoning: every lock in heist guards state that a panic
/// cannot leave half-written (queues, a first panic).
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
