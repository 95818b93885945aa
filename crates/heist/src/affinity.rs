//! Pinning workers to CPUs, as Lace does (seed 001 §5), opted into through
//! [`crate::PoolBuilder::pin_workers`]. With workers free to move, Linux often starts a
//! woken worker on the CPU of the worker that woke it, which keeps running: the woken one
//! then waits for a scheduler tick (4 ms here). Under relay a thief woken to take part
//! lost those milliseconds at the start of every run. Linux only; elsewhere a no-op.

/// Pins the calling thread to the `n`-th CPU (wrapping around) of those it may run on.
/// Returns whether it is pinned.
pub(crate) fn pin_nth(n: usize) -> bool {
    let cpus = imp::allowed();
    !cpus.is_empty() && imp::pin(cpus[n % cpus.len()])
}

#[cfg(target_os = "linux")]
mod imp {
    /// A `cpu_set_t`: 1024 bits.
    type CpuSet = [u64; 16];
    const SET_BYTES: usize = std::mem::size_of::<CpuSet>();

    extern "C" {
        fn sched_getaffinity(pid: i32, size: usize, mask: *mut CpuSet) -> i32;
        fn sched_setaffinity(pid: i32, size: usize, mask: *const CpuSet) -> i32;
    }

    /// The CPUs the calling thread may run on.
    pub(super) fn allowed() -> Vec<usize> {
        let mut set: CpuSet = [0; 16];
        // SAFETY: `set` is a writable `cpu_set_t` of `SET_BYTES` bytes, the size passed;
        // pid 0 names the calling thread.
        if unsafe { sched_getaffinity(0, SET_BYTES, &mut set) } != 0 {
            return Vec::new();
        }
        (0..SET_BYTES * 8)
            .filter(|&c| set[c / 64] >> (c % 64) & 1 == 1)
            .collect()
    }

    /// Confines the calling thread to `cpu`.
    pub(super) fn pin(cpu: usize) -> bool {
        let mut set: CpuSet = [0; 16];
        set[cpu / 64] |= 1 << (cpu % 64);
        // SAFETY: `set` is a readable `cpu_set_t` of `SET_BYTES` bytes, the size passed;
        // pid 0 names the calling thread. `cpu` came from `allowed`, so it is in range.
        unsafe { sched_setaffinity(0, SET_BYTES, &set) == 0 }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn allowed() -> Vec<usize> {
        Vec::new()
    }

    pub(super) fn pin(_: usize) -> bool {
        false
    }
}
