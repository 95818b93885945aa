//! Confining a run to as many CPUs as it has workers. With fewer workers than CPUs the
//! scheduler would otherwise place the `seq` run (on the harness thread) and each pool's
//! workers on different CPUs, and on a shared machine those differ in speed: one-worker
//! runs of fib 36 gave 1.3× to 2.5× seq from process to process that way, and within 5 %
//! of each other when confined to one CPU.

/// Confines the calling thread, and every thread it starts from now on, to the first
/// `workers` CPUs it may run on, if it may run on more. Returns the CPUs chosen, or `None`
/// if nothing was changed (enough CPUs already, or no support on this platform).
pub fn confine(workers: usize) -> Option<Vec<usize>> {
    imp::confine(workers)
}

/// Pins the calling thread to the `n`-th CPU (wrapping around) of those it may run on, as
/// `heist::PoolBuilder::pin_workers` does for heist's workers: the harness gives rayon's
/// workers the same placement. Returns whether it is pinned.
pub fn pin_nth(n: usize) -> bool {
    imp::pin_nth(n)
}

#[cfg(target_os = "linux")]
mod imp {
    use std::mem;

    pub fn confine(workers: usize) -> Option<Vec<usize>> {
        let cpus = allowed();
        if workers == 0 || cpus.len() <= workers {
            return None;
        }
        let chosen = cpus[..workers].to_vec();
        restrict(&chosen).then_some(chosen)
    }

    pub fn pin_nth(n: usize) -> bool {
        let cpus = allowed();
        !cpus.is_empty() && restrict(&[cpus[n % cpus.len()]])
    }

    /// The CPUs the calling thread may run on (none if that cannot be read).
    fn allowed() -> Vec<usize> {
        // SAFETY: `cpu_set_t` is plain data for which all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        // SAFETY: `set` is a valid, writable `cpu_set_t` of the size passed; pid 0 is the
        // calling thread.
        if unsafe { libc::sched_getaffinity(0, mem::size_of_val(&set), &mut set) } != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `c` is below `CPU_SETSIZE`, the capacity of the set.
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect()
    }

    /// Lets the calling thread, and the threads it starts from now on, run on `cpus` only.
    /// Each CPU must come from `allowed`.
    fn restrict(cpus: &[usize]) -> bool {
        // SAFETY: as above, all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        for &c in cpus {
            // SAFETY: `c` came from `allowed`, so it is below `CPU_SETSIZE`.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        // SAFETY: `set` is a valid `cpu_set_t` of the size passed; pid 0 is the calling
        // thread.
        unsafe { libc::sched_setaffinity(0, mem::size_of_val(&set), &set) == 0 }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn confine(_workers: usize) -> Option<Vec<usize>> {
        None
    }

    pub fn pin_nth(_n: usize) -> bool {
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
