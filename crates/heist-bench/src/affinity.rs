//! Confining a run to as many CPUs as it has workers, and pinning a peer's threads. With
//! fewer workers than CPUs the scheduler would otherwise place the `seq` run (on the
//! harness thread) and each pool's workers on different CPUs, and on a shared machine
//! those differ in speed: one-worker runs of fib 36 gave 1.3× to 2.5× seq from process
//! to process that way, and within 5 % of each other when confined to one CPU.
//!
//! The harness's own (Linux, through `libc`): heist pins its workers itself
//! (`PoolBuilder::pin_workers`) and does not export how, as rayon does not.

/// Confines the calling thread, and every thread it starts from now on, to the first
/// `workers` CPUs it may run on, if it may run on more. Returns the CPUs chosen, or `None`
/// if nothing was changed (enough CPUs already, or no support on this platform).
pub fn confine(workers: usize) -> Option<Vec<usize>> {
    let cpus = allowed_cpus();
    if workers == 0 || cpus.len() <= workers {
        return None;
    }
    let chosen = cpus[..workers].to_vec();
    confine_to(&chosen).then_some(chosen)
}

/// The CPUs the calling thread may run on, in increasing order; empty if they cannot be
/// read, and on platforms other than Linux.
pub fn allowed_cpus() -> Vec<usize> {
    imp::allowed()
}

/// Confines the calling thread, and the threads it starts from then on, to `cpus`.
/// Returns whether it was done: false for an empty list, a CPU beyond the set's size, a
/// refusal, or a platform other than Linux.
pub fn confine_to(cpus: &[usize]) -> bool {
    !cpus.is_empty() && imp::confine(cpus)
}

/// Pins the calling thread to the `n`-th CPU (wrapping around) of those it may run on, as
/// heist's `pin_workers` does for worker `n` (`--pin` uses it for rayon's threads).
pub fn pin_nth(n: usize) {
    let cpus = allowed_cpus();
    if !cpus.is_empty() {
        confine_to(&[cpus[n % cpus.len()]]);
    }
}

/// The calling thread's id (0 where unknown), for [`keep_off_here`].
pub fn thread_id() -> i32 {
    imp::tid()
}

/// Keeps thread `tid` off the calling thread's CPU until the guard drops, if it may run
/// on another: a sleeper woken meanwhile starts elsewhere, as heist's workers wake one
/// another (heist does it inside, this is the harness's own). `None` if nothing changed.
pub fn keep_off_here(tid: i32) -> Option<Apart> {
    imp::keep_off_here(tid)
}

/// Gives a thread its CPUs back when dropped ([`keep_off_here`]).
pub struct Apart {
    #[cfg(target_os = "linux")]
    tid: i32,
    #[cfg(target_os = "linux")]
    mask: libc::cpu_set_t,
}

#[cfg(target_os = "linux")]
impl Drop for Apart {
    fn drop(&mut self) {
        // SAFETY: `mask` is a readable `cpu_set_t` of the size passed, read from `tid`
        // earlier; a thread that has ended makes this fail harmlessly.
        unsafe {
            libc::sched_setaffinity(self.tid, std::mem::size_of::<libc::cpu_set_t>(), &self.mask)
        };
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::mem;

    pub(super) fn tid() -> i32 {
        // SAFETY: `gettid` takes no arguments and cannot fail.
        unsafe { libc::gettid() }
    }

    pub(super) fn keep_off_here(tid: i32) -> Option<super::Apart> {
        let size = mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `sched_getcpu` takes no arguments.
        let cpu = usize::try_from(unsafe { libc::sched_getcpu() })
            .ok()
            .filter(|&c| c < libc::CPU_SETSIZE as usize)?;
        // SAFETY: an all-zero `cpu_set_t` is an empty set.
        let mut mask: libc::cpu_set_t = unsafe { mem::zeroed() };
        // SAFETY: `mask` is a writable `cpu_set_t` of the size passed.
        if tid == 0 || unsafe { libc::sched_getaffinity(tid, size, &mut mask) } != 0 {
            return None;
        }
        let mut apart = mask;
        // SAFETY: `cpu` is below `CPU_SETSIZE` (filtered above), the set's size in bits.
        unsafe { libc::CPU_CLR(cpu, &mut apart) };
        // SAFETY: `apart` is a readable `cpu_set_t` of the size passed.
        let moved = unsafe { libc::CPU_COUNT(&apart) } > 0
            && unsafe { libc::sched_setaffinity(tid, size, &apart) } == 0;
        moved.then_some(super::Apart { tid, mask })
    }

    pub(super) fn allowed() -> Vec<usize> {
        // SAFETY: an all-zero `cpu_set_t` is an empty set.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        // SAFETY: `set` is a writable `cpu_set_t` of the size passed; pid 0 is the
        // calling thread.
        if unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `c` is below `CPU_SETSIZE`, the set's size in bits.
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect()
    }

    pub(super) fn confine(cpus: &[usize]) -> bool {
        if cpus.iter().any(|&c| c >= libc::CPU_SETSIZE as usize) {
            return false;
        }
        // SAFETY: an all-zero `cpu_set_t` is an empty set.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        for &c in cpus {
            // SAFETY: every CPU is below `CPU_SETSIZE` (checked above).
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        // SAFETY: `set` is a readable `cpu_set_t` of the size passed; pid 0 is the calling
        // thread.
        unsafe { libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn tid() -> i32 {
        0
    }

    pub(super) fn keep_off_here(_: i32) -> Option<super::Apart> {
        None
    }

    pub(super) fn allowed() -> Vec<usize> {
        Vec::new()
    }

    pub(super) fn confine(_: &[usize]) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn confining_to_all_cpus_changes_nothing() {
        assert_eq!(super::confine(usize::MAX), None);
        assert_eq!(super::confine(0), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_confined_to_one_cpu_runs_there() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let t = std::thread::spawn(move || {
            let chosen = super::confine(1);
            if cpus > 1 {
                let chosen = chosen.expect("more CPUs than one worker");
                assert_eq!(chosen.len(), 1);
                // A thread started now inherits the mask.
                let inner = std::thread::spawn(|| super::confine(1)).join().unwrap();
                assert_eq!(inner, None, "the child may already run on one CPU only");
            }
        });
        t.join().unwrap();
    }
}
