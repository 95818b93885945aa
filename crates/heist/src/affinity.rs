//! Pinning threads to CPUs, as Lace does ("Lace: non-blocking split deque for
//! work-stealing", §5). Workers pin themselves when a pool is built with
//! [`crate::PoolBuilder::pin_workers`]; the functions here are public so that a harness
//! or an application can give other threads (a rayon pool's, the main thread) the same
//! placement. With workers free to move, Linux often starts a woken worker on the CPU of
//! the worker that woke it, which keeps running: the woken one then waits for a
//! scheduler tick (4 ms here). Under relay a thief woken to take part lost those
//! milliseconds at the start of every run. Linux only; elsewhere the CPU list is empty
//! and nothing is pinned.

/// The CPUs the calling thread may run on, in increasing order; empty if they cannot be
/// read, and on platforms other than Linux.
pub fn allowed_cpus() -> Vec<usize> {
    imp::allowed()
}

/// Confines the calling thread, and the threads it starts from then on, to `cpus` (taken
/// from [`allowed_cpus`]). Returns whether it was done: false for an empty list, a CPU
/// the system does not have, a refusal, or a platform other than Linux.
pub fn confine_to(cpus: &[usize]) -> bool {
    !cpus.is_empty() && imp::confine(cpus)
}

/// Pins the calling thread to the `n`-th CPU (wrapping around) of those it may run on,
/// as [`crate::PoolBuilder::pin_workers`] does for worker `n`. Does nothing where CPUs
/// cannot be listed.
pub fn pin_nth(n: usize) {
    let cpus = allowed_cpus();
    if !cpus.is_empty() {
        confine_to(&[cpus[n % cpus.len()]]);
    }
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

    /// Confines the calling thread to `cpus`; false if one is out of range.
    pub(super) fn confine(cpus: &[usize]) -> bool {
        let mut set: CpuSet = [0; 16];
        for &cpu in cpus {
            if cpu >= SET_BYTES * 8 {
                return false;
            }
            set[cpu / 64] |= 1 << (cpu % 64);
        }
        // SAFETY: `set` is a readable `cpu_set_t` of `SET_BYTES` bytes, the size passed;
        // pid 0 names the calling thread.
        unsafe { sched_setaffinity(0, SET_BYTES, &set) == 0 }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn allowed() -> Vec<usize> {
        Vec::new()
    }

    pub(super) fn confine(_: &[usize]) -> bool {
        false
    }
}

#[cfg(all(test, not(loom), target_os = "linux"))]
mod tests {
    use super::{allowed_cpus, confine_to, pin_nth};

    #[test]
    fn a_thread_pinned_by_index_runs_on_that_allowed_cpu_only() {
        let all = allowed_cpus();
        assert!(!all.is_empty(), "Linux lists the CPUs a thread may use");
        let n = all.len() + 1;
        let now = std::thread::spawn(move || {
            pin_nth(n);
            allowed_cpus()
        });
        assert_eq!(now.join().unwrap(), [all[n % all.len()]]);
        assert!(!confine_to(&[]));
        assert!(!confine_to(&[1 << 20]), "a CPU beyond any set");
    }
}
