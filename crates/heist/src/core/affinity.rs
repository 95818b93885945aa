//! Pinning threads to CPUs, as Lace does ("Lace: non-blocking split deque for
//! work-stealing", §5), and starting woken workers on a CPU of their own. Workers pin
//! themselves when a pool is built with [`crate::PoolBuilder::pin_workers`]. Private, as
//! rayon's is: placing threads that are not heist's is the application's own business.
//!
//! With workers free to move, Linux often starts a woken worker on the CPU of the worker
//! that woke it, which keeps running: the woken one then waits for a scheduler tick (4 ms
//! here) before either of them moves. Under relay a thief woken to take part lost those
//! milliseconds at the start of every run. So a worker that wakes a sleeping worker
//! keeps it off its own CPU while the kernel places it (`Place::wake_apart`): it
//! narrows the sleeper's CPU mask by its own CPU, wakes it, and restores the mask. The
//! sleeper so lands on another CPU it may use, idle if there is one, and stays free to
//! move afterwards, unlike a pinned worker. Linux only; elsewhere the CPU list is empty,
//! nothing is pinned and wake-ups are plain.
//!
//! The mask is restored only if it is still the narrowed one: should the worker change
//! its own mask in the few microseconds between, its change stands.

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicI32};

/// The CPUs the calling thread may run on, in increasing order; empty if they cannot be
/// read, and on platforms other than Linux.
pub(crate) fn allowed_cpus() -> Vec<usize> {
    imp::allowed()
}

/// Confines the calling thread, and the threads it starts from then on, to `cpus` (taken
/// from [`allowed_cpus`]). Returns whether it was done: false for an empty list, a CPU
/// the system does not have, a refusal, or a platform other than Linux.
pub(crate) fn confine_to(cpus: &[usize]) -> bool {
    !cpus.is_empty() && imp::confine(cpus)
}

/// Pins the calling thread to the `n`-th CPU (wrapping around) of those it may run on,
/// as [`crate::PoolBuilder::pin_workers`] does for worker `n`. Does nothing where CPUs
/// cannot be listed.
pub(crate) fn pin_nth(n: usize) {
    let cpus = allowed_cpus();
    if !cpus.is_empty() {
        confine_to(&[cpus[n % cpus.len()]]);
    }
}

/// Where a sleeping worker's thread is, so that its waker can keep it off the waker's CPU
/// (see the module docs). One per worker, beside its parker.
#[derive(Debug, Default)]
pub(crate) struct Place {
    /// The sleeper's thread id; 0 until it first sleeps.
    tid: AtomicI32,
    /// A waker has narrowed the mask and not yet restored it. Another waker meanwhile
    /// wakes plainly: it would read the narrowed mask and restore that one.
    narrowed: AtomicBool,
}

/// Clears `Place::narrowed` when dropped, after the mask is restored.
struct Narrowed<'a>(&'a AtomicBool);

impl Drop for Narrowed<'_> {
    fn drop(&mut self) {
        self.0.store(false, Release);
    }
}

impl Place {
    /// Records the calling thread as the sleeper; call before waiting.
    pub(crate) fn enter(&self) {
        self.tid.store(imp::tid(), Relaxed);
    }

    /// Wakes the sleeper with `notify`, keeping it off the caller's CPU while the kernel
    /// places it, if the caller is a worker: a worker goes on running after a wake-up, so
    /// the sleeper would wait behind it. A thread outside the pool that wakes a worker
    /// usually blocks right after (`Pool::run`), and its CPU is the right place for the
    /// sleeper; it wakes plainly.
    pub(crate) fn wake_apart(&self, notify: impl FnOnce()) {
        let tid = self.tid.load(Relaxed);
        let waker_works = crate::core::worker::with_current(|w| w.is_some());
        if tid == 0 || !waker_works || self.narrowed.swap(true, Acquire) {
            return notify();
        }
        let _narrowed = Narrowed(&self.narrowed);
        imp::wake_apart(tid, notify)
    }
}

#[cfg(target_os = "linux")]
mod imp {
    /// A `cpu_set_t`: 1024 bits.
    type CpuSet = [u64; 16];
    pub(super) const SET_BYTES: usize = std::mem::size_of::<CpuSet>();

    extern "C" {
        pub(super) fn sched_getaffinity(pid: i32, size: usize, mask: *mut CpuSet) -> i32;
        pub(super) fn sched_setaffinity(pid: i32, size: usize, mask: *const CpuSet) -> i32;
        fn sched_getcpu() -> i32;
        fn gettid() -> i32;
    }

    /// The calling thread's id.
    pub(super) fn tid() -> i32 {
        thread_local! {
            static TID: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
        }
        TID.with(|t| {
            if t.get() == 0 {
                // SAFETY: `gettid` takes no arguments and cannot fail.
                t.set(unsafe { gettid() });
            }
            t.get()
        })
    }

    /// Puts `mask` back on thread `tid` when dropped (also if the wake-up unwinds), unless
    /// its mask is no longer `narrowed`.
    struct Restore {
        tid: i32,
        mask: CpuSet,
        narrowed: CpuSet,
    }

    impl Drop for Restore {
        fn drop(&mut self) {
            let mut now: CpuSet = [0; 16];
            // SAFETY: `now` and `mask` are a writable and a readable `cpu_set_t` of
            // `SET_BYTES` bytes, the size passed. Should the restore fail, the thread
            // keeps the narrowed mask, which is still a set of CPUs it may use.
            unsafe {
                if sched_getaffinity(self.tid, SET_BYTES, &mut now) == 0 && now == self.narrowed {
                    sched_setaffinity(self.tid, SET_BYTES, &self.mask);
                }
            }
        }
    }

    /// Runs `notify` (which wakes thread `tid`) while `tid` may not use the calling
    /// thread's CPU, if it may use another; then gives it its mask back. A sleeping
    /// thread is placed on a CPU when woken, so it starts elsewhere, and moving it back
    /// within its mask costs nothing.
    pub(super) fn wake_apart(tid: i32, notify: impl FnOnce()) {
        // SAFETY: `sched_getcpu` takes no arguments.
        let cpu = unsafe { sched_getcpu() };
        let mut mask: CpuSet = [0; 16];
        // SAFETY: `mask` is a writable `cpu_set_t` of `SET_BYTES` bytes, the size passed;
        // `tid` names a thread of this process (a worker, alive while its pool is).
        let read = unsafe { sched_getaffinity(tid, SET_BYTES, &mut mask) } == 0;
        let Ok(cpu) = usize::try_from(cpu) else {
            return notify();
        };
        if !read || cpu >= SET_BYTES * 8 || mask[cpu / 64] >> (cpu % 64) & 1 == 0 {
            return notify();
        }
        let mut apart = mask;
        apart[cpu / 64] &= !(1 << (cpu % 64));
        // SAFETY: as for `sched_getaffinity` above.
        if apart == [0; 16] || unsafe { sched_setaffinity(tid, SET_BYTES, &apart) } != 0 {
            return notify();
        }
        let _restore = Restore {
            tid,
            mask,
            narrowed: apart,
        };
        notify();
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

    pub(super) fn tid() -> i32 {
        0
    }

    pub(super) fn wake_apart(_: i32, notify: impl FnOnce()) {
        notify()
    }

    pub(super) fn confine(_: &[usize]) -> bool {
        false
    }
}

#[cfg(all(test, not(loom), target_os = "linux"))]
mod tests {
    use super::{allowed_cpus, confine_to, imp, pin_nth};
    use std::sync::mpsc;

    /// A thread that reports its id, then waits for `go` and ends with the CPUs it may
    /// use; `confine` first if given.
    fn sleeper(confine: Option<usize>) -> (i32, mpsc::Sender<()>, mpsc::Receiver<Vec<usize>>) {
        let (tid_tx, tid_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let (out_tx, out_rx) = mpsc::channel();
        std::thread::spawn(move || {
            if let Some(n) = confine {
                pin_nth(n);
            }
            tid_tx.send(imp::tid()).unwrap();
            go_rx.recv().unwrap();
            out_tx.send(allowed_cpus()).unwrap();
        });
        (tid_rx.recv().unwrap(), go_tx, out_rx)
    }

    /// The CPUs thread `tid` may use.
    fn mask_of(tid: i32) -> Vec<usize> {
        let mut m = [0u64; 16];
        // SAFETY: as in `imp`; the test's threads are alive while it reads.
        assert_eq!(
            unsafe { imp::sched_getaffinity(tid, imp::SET_BYTES, &mut m) },
            0
        );
        (0..1024)
            .filter(|&c| m[c / 64] >> (c % 64) & 1 == 1)
            .collect()
    }

    #[test]
    fn a_woken_thread_is_kept_off_the_wakers_cpu_then_given_its_mask_back() {
        let all = allowed_cpus();
        let (tid, go, out) = sleeper(None);
        let mut during = Vec::new();
        imp::wake_apart(tid, || during = mask_of(tid));
        go.send(()).unwrap();
        if all.len() > 1 {
            assert_eq!(
                during.len(),
                all.len() - 1,
                "one CPU (the waker's) left out"
            );
            assert!(during.iter().all(|c| all.contains(c)));
        } else {
            assert_eq!(during, all, "no other CPU to go to: the mask stays");
        }
        assert_eq!(out.recv().unwrap(), all, "the mask is restored");
        // A thread pinned to one CPU keeps it.
        let (tid, go, out) = sleeper(Some(0));
        imp::wake_apart(tid, || during = mask_of(tid));
        go.send(()).unwrap();
        assert_eq!(during, [all[0]]);
        assert_eq!(out.recv().unwrap(), [all[0]]);
        // A mask changed while narrowed stays as changed: here to the CPU left out.
        let (tid, go, out) = sleeper(None);
        let mut set = Vec::new();
        imp::wake_apart(tid, || {
            let now = mask_of(tid);
            set = match all.iter().find(|c| !now.contains(c)) {
                Some(&c) => vec![c],
                None => now,
            };
            let mut m = [0u64; 16];
            set.iter().for_each(|&c| m[c / 64] |= 1 << (c % 64));
            // SAFETY: as in `imp`; the thread is alive until `go`.
            assert_eq!(
                unsafe { imp::sched_setaffinity(tid, imp::SET_BYTES, &m) },
                0
            );
        });
        go.send(()).unwrap();
        assert_eq!(out.recv().unwrap(), set);
    }

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
