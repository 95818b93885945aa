//! The task descriptor of Lace (seed 001 §3.2) and Prell's thesis (000 §2.4): a fixed-size
//! slot stored directly in the deque. A job that fits is written into the slot itself; a
//! stolen job stays in place and its thief writes the result back over it. Heap jobs
//! (scope spawns, detached tasks, roots) are a data pointer and a function pointer.

use crate::sync::{AtomicUsize, RaceCell};
use crate::worker::Worker;
use std::any::Any;
use std::mem::{align_of, size_of, ManuallyDrop, MaybeUninit};
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::Ordering;

/// Bytes of a slot available to a job and, after a steal, its result.
pub(crate) const PAYLOAD_BYTES: usize = 48;

/// `Slot::thief` value once a thief has finished the job and written its result.
pub(crate) const DONE: usize = usize::MAX;

/// A caught panic, carried to whoever joins the task.
pub(crate) type Panic = Box<dyn Any + Send + 'static>;

type ExecFn = unsafe fn(*const Slot, *const Worker);

/// One task descriptor, one cache line.
#[repr(C, align(64))]
pub(crate) struct Slot {
    /// 0: not stolen (or not yet claimed); `DONE`: result ready; else thief index + 1.
    pub(crate) thief: AtomicUsize,
    exec: RaceCell<Option<ExecFn>>,
    payload: RaceCell<MaybeUninit<[u64; PAYLOAD_BYTES / 8]>>,
}

// SAFETY: a slot is written by its owner before it is published and by exactly one thief
// after that thief's CAS claimed it; the deque protocol (lace::deque) orders the two.
unsafe impl Sync for Slot {}
// SAFETY: as above; the jobs it holds are `Send`.
unsafe impl Send for Slot {}

/// What a slot holds: the job until it runs, then (if stolen) its outcome.
union Payload<B, R> {
    job: ManuallyDrop<B>,
    out: ManuallyDrop<std::thread::Result<R>>,
}

/// Whether a job `B` with result `R` can be stored directly in a slot.
pub(crate) const fn fits<B, R>() -> bool {
    size_of::<Payload<B, R>>() <= PAYLOAD_BYTES && align_of::<Payload<B, R>>() <= 16
}

impl Slot {
    pub(crate) fn new() -> Slot {
        Slot {
            thief: AtomicUsize::new(0),
            exec: RaceCell::new(None),
            payload: RaceCell::new(MaybeUninit::uninit()),
        }
    }

    /// Writes `job` into the slot.
    ///
    /// # Safety
    /// The caller is the deque's owner, the slot is not shared yet, and `fits::<B, R>()`.
    #[inline(always)]
    pub(crate) unsafe fn put<B, R>(&self, job: B)
    where
        B: FnOnce(&Worker) -> R + Send,
        R: Send,
    {
        // SAFETY: the caller's contract.
        unsafe { self.put_with::<B, R>(job, execute::<B, R>) }
    }

    /// Writes `job` and the entry a thief runs it through.
    ///
    /// # Safety
    /// As for `put`; `exec` must read the payload as a `Payload<B, R>`.
    #[inline(always)]
    unsafe fn put_with<B, R>(&self, job: B, exec: ExecFn) {
        debug_assert!(fits::<B, R>());
        // SAFETY: by the caller's contract nobody else reads the slot until it is published,
        // which happens after these writes with release ordering; `fits` bounds size and
        // alignment of the payload (the field is at offset 16 of a 64-aligned slot).
        unsafe {
            self.exec.with_mut(|e| *e = Some(exec));
            self.payload.with_mut(|p| {
                let job = Payload::<B, R> {
                    job: ManuallyDrop::new(job),
                };
                ptr::write(p.cast::<Payload<B, R>>(), job)
            });
        }
    }

    /// A thief's last touch of a slot: write the job's outcome over it and mark it done.
    ///
    /// # Safety
    /// The caller claimed the slot and has moved its job out.
    unsafe fn finish<B, R>(&self, out: std::thread::Result<R>) {
        // SAFETY: the job has been moved out, so the payload is free for the outcome; the
        // owner reads it only after the release store below.
        unsafe {
            self.payload.with_mut(|p| {
                let out = Payload::<B, R> {
                    out: ManuallyDrop::new(out),
                };
                ptr::write(p.cast::<Payload<B, R>>(), out)
            })
        };
        self.thief.store(DONE, Ordering::Release);
    }

    /// Takes the job out, for the owner (after a private pop) or its thief to run or drop.
    ///
    /// # Safety
    /// The caller has the slot to itself (popped it privately, or claimed it by a steal),
    /// and it holds a job of type `B` put with `R`.
    #[inline(always)]
    pub(crate) unsafe fn take<B, R>(&self) -> B {
        // SAFETY: by the caller's contract nobody else touches the slot, and the payload
        // still holds the `B` that `put` wrote.
        unsafe {
            self.payload
                .with_mut(|p| ManuallyDrop::take(&mut (*p.cast::<Payload<B, R>>()).job))
        }
    }

    /// Runs a stolen job on worker `w` and publishes its outcome.
    ///
    /// # Safety
    /// The caller won the steal of this slot and has written its index to `thief`.
    pub(crate) unsafe fn run_stolen(&self, w: &Worker) {
        // SAFETY: the steal's acquire CAS made the owner's writes of `exec` visible, and no
        // one writes the slot while it is claimed by a thief.
        let exec = unsafe { self.exec.with_mut(|e| *e) };
        let exec = exec.expect("a published slot always has a job");
        // SAFETY: `exec` is the `execute::<B, R>` matching the payload `put` wrote.
        unsafe { exec(self, w) }
    }

    /// Reads the outcome a thief wrote and frees the slot for reuse.
    ///
    /// # Safety
    /// `thief` has been seen equal to `DONE` with acquire ordering, and the slot was put
    /// with job type `B` and result `R`.
    pub(crate) unsafe fn take_outcome<B, R>(&self) -> std::thread::Result<R> {
        self.thief.store(0, Ordering::Relaxed);
        // SAFETY: the thief wrote `out` before its release store of `DONE` and no longer
        // touches the slot; the owner's acquire load ordered this read after it.
        unsafe {
            self.payload
                .with_mut(|p| ManuallyDrop::take(&mut (*p.cast::<Payload<B, R>>()).out))
        }
    }
}

impl Slot {
    /// Runs the job through its type-erased entry, as a thief would, and frees the slot;
    /// the outcome is leaked (used for futures whose handle was forgotten).
    ///
    /// # Safety
    /// The owner popped this slot privately and it still holds its job.
    pub(crate) unsafe fn run_and_leak(&self, w: &Worker) {
        // SAFETY: the caller's contract matches `run_stolen`'s: nobody else has the slot.
        unsafe { self.run_stolen(w) };
        self.thief.store(0, Ordering::Relaxed);
    }

    /// Frees a slot whose thief finished, leaking the outcome.
    pub(crate) fn leak_outcome(&self) {
        self.thief.store(0, Ordering::Relaxed);
    }
}

/// The thief's side of a slot job: run it, catch a panic, write the outcome, mark `DONE`.
unsafe fn execute<B, R>(slot: *const Slot, w: *const Worker)
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    // SAFETY: `run_stolen` passes the claimed slot and the running worker, both live for
    // this call; the payload holds a `B` (see `Slot::run_stolen`).
    let (slot, w) = unsafe { (&*slot, &*w) };
    // SAFETY: the thief owns the claimed slot, which holds a `B` put with `R`.
    let job = unsafe { slot.take::<B, R>() };
    let out = panic::catch_unwind(AssertUnwindSafe(|| job(w)));
    // SAFETY: claimed, and the job has been moved out.
    unsafe { slot.finish::<B, R>(out) }
}

/// A type-erased job that lives outside the deque: a root, a scope spawn, a detached task.
#[derive(Clone, Copy)]
pub(crate) struct JobRef {
    data: *const (),
    exec: unsafe fn(*const (), &Worker),
}

// SAFETY: a `JobRef` is only made from jobs that are `Send` (see `JobRef::new`), and it is
// executed exactly once, on whichever worker takes it.
unsafe impl Send for JobRef {}

impl JobRef {
    /// # Safety
    /// `data` stays valid until `exec(data, w)` has run, which must happen exactly once,
    /// and whatever `data` points to may be used from another thread.
    pub(crate) unsafe fn new(data: *const (), exec: unsafe fn(*const (), &Worker)) -> JobRef {
        JobRef { data, exec }
    }

    /// # Safety
    /// Called exactly once per job.
    pub(crate) unsafe fn execute(self, w: &Worker) {
        // SAFETY: the contract of `new`.
        unsafe { (self.exec)(self.data, w) }
    }
}

/// Test hooks for the loom models of the deque, which cannot build a `Worker`.
#[cfg(all(test, loom))]
impl Slot {
    /// `put` for a job that takes no worker.
    ///
    /// # Safety
    /// As for `put`.
    pub(crate) unsafe fn put_detached<B, R>(&self, job: B)
    where
        B: FnOnce() -> R + Send,
        R: Send,
    {
        // SAFETY: as in `put`.
        unsafe { self.put_with::<B, R>(job, execute_detached::<B, R>) }
    }

    /// `run_stolen` for a slot filled by `put_detached`.
    ///
    /// # Safety
    /// As for `run_stolen`.
    pub(crate) unsafe fn run_stolen_detached(&self) {
        // SAFETY: as in `run_stolen`; the detached entry never reads the worker.
        let exec = unsafe { self.exec.with_mut(|e| *e) };
        unsafe { exec.expect("a published slot always has a job")(self, ptr::null()) }
    }
}

/// `execute` for a job that takes no worker (loom models only).
#[cfg(all(test, loom))]
unsafe fn execute_detached<B, R>(slot: *const Slot, _w: *const Worker)
where
    B: FnOnce() -> R + Send,
    R: Send,
{
    // SAFETY: as in `execute`.
    let slot = unsafe { &*slot };
    let job = unsafe { slot.take::<B, R>() };
    let out = panic::catch_unwind(AssertUnwindSafe(job));
    // SAFETY: as in `execute`.
    unsafe { slot.finish::<B, R>(out) }
}
