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

/// The owner's half of an asymmetric fence (PROTOCOLS.md, "Lifelines"): keeps the
/// compiler from moving the owner's accesses across it, and costs no instruction. A
/// thief's [`heavy_fence`] makes it act as a full fence at some point of the owner's
/// program. loom has no such pair, so its models run both halves as SeqCst fences.
#[inline(always)]
pub(crate) fn light_fence() {
    #[cfg(loom)]
    loom::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    #[cfg(not(loom))]
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

/// The thief's half of an asymmetric fence: every other thread of the process passes a
/// full fence between its accesses before this call and those after, as seen from here
/// (Linux `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`). False where the system has no
/// such call: lifelines are then off, and work reaches idle workers only when its owner
/// comes back to the runtime.
#[inline]
pub(crate) fn heavy_fence() -> bool {
    #[cfg(loom)]
    {
        loom::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        true
    }
    #[cfg(not(loom))]
    membarrier::fence()
}

/// Whether [`heavy_fence`] works here (registers the process with the kernel first).
pub(crate) fn heavy_fence_available() -> bool {
    #[cfg(loom)]
    return true;
    #[cfg(not(loom))]
    membarrier::available()
}

#[cfg(not(loom))]
mod membarrier {
    use std::sync::OnceLock;

    /// Whether the process is registered for expedited private membarriers.
    static REGISTERED: OnceLock<bool> = OnceLock::new();

    #[cfg(all(target_os = "linux", not(miri)))]
    mod sys {
        use std::ffi::{c_int, c_long};

        extern "C" {
            fn syscall(num: c_long, ...) -> c_long;
        }

        #[cfg(target_arch = "x86_64")]
        const SYS_MEMBARRIER: c_long = 324;
        #[cfg(target_arch = "aarch64")]
        const SYS_MEMBARRIER: c_long = 283;
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        const SYS_MEMBARRIER: c_long = -1;

        const CMD_QUERY: c_int = 0;
        const CMD_PRIVATE_EXPEDITED: c_int = 1 << 3;
        const CMD_REGISTER_PRIVATE_EXPEDITED: c_int = 1 << 4;

        fn call(cmd: c_int) -> c_long {
            if SYS_MEMBARRIER < 0 {
                return -1;
            }
            // SAFETY: membarrier(2) takes a command, flags and a CPU id, reads no memory of
            // ours and writes none; an unknown command is refused with -1 (EINVAL).
            unsafe { syscall(SYS_MEMBARRIER, cmd, 0 as c_int, 0 as c_int) }
        }

        pub(super) fn register() -> bool {
            let cmds = call(CMD_QUERY);
            cmds >= 0
                && cmds & c_long::from(CMD_PRIVATE_EXPEDITED) != 0
                && call(CMD_REGISTER_PRIVATE_EXPEDITED) == 0
        }

        pub(super) fn fence() -> bool {
            call(CMD_PRIVATE_EXPEDITED) == 0
        }
    }

    #[cfg(not(all(target_os = "linux", not(miri))))]
    mod sys {
        pub(super) fn register() -> bool {
            false
        }

        pub(super) fn fence() -> bool {
            false
        }
    }

    pub(super) fn available() -> bool {
        *REGISTERED.get_or_init(sys::register)
    }

    pub(super) fn fence() -> bool {
        available() && sys::fence()
    }
}

/// Explores `f` under loom with at most `bound` preemptions, unless
/// `LOOM_MAX_PREEMPTIONS` sets one bound for every model (`.ci/loom`).
#[cfg(all(test, loom))]
pub(crate) fn loom_model(bound: usize, f: impl Fn() + Send + Sync + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(bound);
    }
    b.check(f);
}
