//! The task descriptor of Lace ("Lace: non-blocking split deque for work-stealing", §3.2)
//! and of Prell's thesis ("Embracing Explicit Communication in Work-Stealing Runtime
//! Systems", §2.4): a fixed-size slot stored directly in the deque. A job that fits is
//! written into the slot itself; a stolen job stays in place and its thief writes the
//! result back over it. Heap jobs (scope spawns, detached tasks, roots) are a data pointer
//! and a function pointer.
//!
//! A job runs with a context `C` that this module does not look into: the worker that
//! runs it, in the runtime; nothing (`()`), in the deque's loom models.

use crate::sync::{AtomicUsize, RaceCell};
use std::any::Any;
use std::mem::{self, align_of, size_of, ManuallyDrop, MaybeUninit};
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::Ordering;

/// Bytes of a slot available to a job and, after a steal, its result.
pub(crate) const PAYLOAD_BYTES: usize = 48;

/// `Slot::thief` value once a thief has finished the job and written its result.
pub(crate) const DONE: usize = usize::MAX;

/// A caught panic, carried to whoever joins the task.
pub(crate) type Panic = Box<dyn Any + Send + 'static>;

/// Drops a payload that nobody will receive, without letting its drop unwind into the
/// runtime. A payload whose drop panics yields another payload, dropped the same way; a
/// chain longer than `DROP_TRIES` is leaked rather than followed forever.
pub(crate) fn drop_panic(p: Panic) {
    const DROP_TRIES: u32 = 4;
    let mut p = p;
    for _ in 0..DROP_TRIES {
        match panic::catch_unwind(AssertUnwindSafe(move || drop(p))) {
            Ok(()) => return,
            Err(again) => p = again,
        }
    }
    mem::forget(p);
}

/// Keeps the first panic in `first`; a later one is dropped by `drop_panic`.
pub(crate) fn keep_first(first: &mut Option<Panic>, p: Panic) {
    match first {
        Some(_) => drop_panic(p),
        None => *first = Some(p),
    }
}

/// Keeps the first panic in `first`; a later one is dropped after the lock is released.
pub(crate) fn record_first(first: &std::sync::Mutex<Option<Panic>>, p: Panic) {
    let mut first = crate::sync::lock(first);
    let later = match *first {
        Some(_) => Some(p),
        None => {
            *first = Some(p);
            None
        }
    };
    drop(first);
    later.into_iter().for_each(drop_panic);
}

/// The end of a scope: `out` of its body, or else its tasks' first panic `spawned`. Either
/// panic is re-raised; whatever loses is dropped first, unable to unwind here.
pub(crate) fn resume_first<T>(out: std::thread::Result<T>, spawned: Option<Panic>) -> T {
    match (out, spawned) {
        (Err(p), later) => {
            later.into_iter().for_each(drop_panic);
            panic::resume_unwind(p)
        }
        (Ok(v), Some(p)) => {
            drop_caught(v).into_iter().for_each(drop_panic);
            panic::resume_unwind(p)
        }
        (Ok(v), None) => v,
    }
}

/// Drops `v` (a job never run, a result nobody takes) and returns the panic of its drop.
pub(crate) fn drop_caught<T>(v: T) -> Option<Panic> {
    panic::catch_unwind(AssertUnwindSafe(move || drop(v))).err()
}

/// Aborts the process when dropped; forgotten on the normal path, so it drops only while
/// unwinding. A worker holds one while it runs a task taken from a queue or a steal: each
/// such task catches its own panics, and one that still unwound would pass waits whose
/// frames a task on another worker may be borrowing.
pub(crate) struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    #[cold]
    fn drop(&mut self) {
        eprintln!(
            "heist: a panic unwound out of a task run by a worker; aborting, since frames \
             below it may still be in use by tasks on other workers"
        );
        std::process::abort();
    }
}

/// What a slot's entry does: run the job with a context (returns `None`), or take the
/// outcome of a finished job and drop it (returns the job's panic, or its result's).
#[derive(Clone, Copy)]
enum Op {
    /// The job's context, erased: a `*const C` for the `C` it was put with.
    Run(*const ()),
    Discard,
}

type ExecFn = unsafe fn(*const Slot, Op) -> Option<Panic>;

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

    /// Writes `job`, which runs with a `&C`, into the slot.
    ///
    /// # Safety
    /// The caller is the deque's owner, the slot is not shared yet, and `fits::<B, R>()`.
    #[inline(always)]
    pub(crate) unsafe fn put<C, B, R>(&self, job: B)
    where
        B: FnOnce(&C) -> R + Send,
        R: Send,
    {
        // SAFETY: the caller's contract.
        unsafe { self.put_with::<B, R>(job, execute::<C, B, R>) }
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
    /// Takes a pointer: once `DONE` is stored the owner may reuse the slot.
    ///
    /// # Safety
    /// `slot` is live, the caller claimed it and has moved its job out.
    unsafe fn finish<B, R>(slot: *const Slot, out: std::thread::Result<R>) {
        // SAFETY: the job has been moved out, so the payload is free for the outcome; the
        // owner reads it only after the release store below.
        unsafe {
            (*slot).payload.with_mut(|p| {
                let out = Payload::<B, R> {
                    out: ManuallyDrop::new(out),
                };
                ptr::write(p.cast::<Payload<B, R>>(), out)
            });
            (*slot).thief.store(DONE, Ordering::Release);
        }
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

    /// Runs a stolen job with `cx` and publishes its outcome. A panic of the job is part
    /// of the outcome: this never unwinds.
    ///
    /// # Safety
    /// The caller won the steal of this slot and has written its index to `thief`; the job
    /// was put with context type `C`.
    pub(crate) unsafe fn run_stolen<C>(&self, cx: &C) {
        // SAFETY: the caller's contract.
        unsafe { self.call(Op::Run((cx as *const C).cast())) };
    }

    /// Calls the slot's type-erased entry.
    ///
    /// # Safety
    /// The caller has the slot to itself, and it holds what `op` expects: a job for `Run`,
    /// an outcome for `Discard`.
    unsafe fn call(&self, op: Op) -> Option<Panic> {
        // SAFETY: the steal's acquire CAS (or the owner's own `put`) made the write of
        // `exec` visible, and no one writes the slot while the caller has it.
        let exec = unsafe { self.exec.with_mut(|e| *e) };
        let exec = exec.expect("a published slot always has a job");
        // SAFETY: `exec` is the `execute::<B, R>` matching the payload `put` wrote.
        unsafe { exec(self, op) }
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
    /// the outcome is dropped and its panic returned (for futures whose handle was
    /// forgotten: the panic goes to the scope).
    ///
    /// # Safety
    /// The owner popped this slot privately, it still holds its job, and the job was put
    /// with context type `C`.
    pub(crate) unsafe fn run_and_discard<C>(&self, cx: &C) -> Option<Panic> {
        // SAFETY: the caller's contract matches `run_stolen`'s: nobody else has the slot.
        unsafe { self.run_stolen(cx) };
        // SAFETY: `run_stolen` wrote the outcome on this thread.
        unsafe { self.discard_outcome() }
    }

    /// Drops the outcome a thief wrote, frees the slot and returns the outcome's panic.
    ///
    /// # Safety
    /// `thief` has been seen equal to `DONE` with acquire ordering (or the job ran on this
    /// thread), and the slot's outcome has not been taken.
    pub(crate) unsafe fn discard_outcome(&self) -> Option<Panic> {
        // SAFETY: the caller's contract; the entry matches the outcome's type.
        let p = unsafe { self.call(Op::Discard) };
        self.thief.store(0, Ordering::Relaxed);
        p
    }
}

/// A slot job's type-erased entry. `Run`: the thief's side: run the job, catch a panic,
/// write the outcome and mark the slot `DONE`. `Discard`: take that outcome and drop it,
/// returning its panic (or the panic of the result's drop). Never unwinds.
///
/// # Safety
/// `slot` points to a live slot that the caller has to itself and that was filled by
/// `put::<C, B, R>`. For `Run(cx)`: the slot still holds its job, the caller claimed it (a
/// steal, a relay hand-out, or the owner's private pop), and `cx` points to a `C` that is
/// live for this call. For `Discard`: the job has run and its outcome has not been taken.
unsafe fn execute<C, B, R>(slot: *const Slot, op: Op) -> Option<Panic>
where
    B: FnOnce(&C) -> R + Send,
    R: Send,
{
    match op {
        Op::Run(cx) => {
            // SAFETY: the contract above: the context is live for this call, and the slot
            // holds a `B` put with `R` that the caller may take.
            let (job, cx) = unsafe { ((*slot).take::<B, R>(), &*cx.cast::<C>()) };
            let out = panic::catch_unwind(AssertUnwindSafe(|| job(cx)));
            // SAFETY: claimed, and the job has been moved out.
            unsafe { Slot::finish::<B, R>(slot, out) };
            None
        }
        Op::Discard => {
            // SAFETY: the contract above: the slot holds the outcome, which nobody took.
            let out = unsafe {
                (*slot)
                    .payload
                    .with_mut(|p| ManuallyDrop::take(&mut (*p.cast::<Payload<B, R>>()).out))
            };
            match out {
                Ok(r) => drop_caught(r),
                Err(p) => Some(p),
            }
        }
    }
}

/// A type-erased job that lives outside the deque (a root, a scope spawn, a detached
/// task), run with a `&C`.
pub(crate) struct JobRef<C> {
    data: *const (),
    exec: unsafe fn(*const (), &C),
}

impl<C> Clone for JobRef<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for JobRef<C> {}

// SAFETY: a `JobRef` is only made from jobs that are `Send` (see `JobRef::new`), and it is
// executed exactly once, on whichever worker takes it.
unsafe impl<C> Send for JobRef<C> {}

impl<C> JobRef<C> {
    /// # Safety
    /// `data` stays valid until `exec(data, cx)` has run, which must happen exactly once,
    /// and whatever `data` points to may be used from another thread. `exec` must not
    /// unwind: it catches the job's panic and hands it on (workers abort otherwise).
    pub(crate) unsafe fn new(data: *const (), exec: unsafe fn(*const (), &C)) -> JobRef<C> {
        JobRef { data, exec }
    }

    /// # Safety
    /// Called exactly once per job.
    pub(crate) unsafe fn execute(self, cx: &C) {
        // SAFETY: the contract of `new`.
        unsafe { (self.exec)(self.data, cx) }
    }
}
