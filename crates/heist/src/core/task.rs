//! The task descriptor of Lace ("Lace: non-blocking split deque for work-stealing", §3.2)
//! and of Prell's thesis ("Embracing Explicit Communication in Work-Stealing Runtime
//! Systems", §2.4): a fixed-size slot stored directly in the deque. A job that fits is
//! written into the slot itself; a stolen job stays in place and its thief writes the
//! result back over it. A slot holds a join branch or a promise, a spawned scope or
//! detached task, or nothing left to run (`Kind`). Heap jobs (roots, and tasks submitted
//! from outside the pool) are a data pointer and a function pointer.
//!
//! A job runs with a context `C` that this module does not look into (`Context`): the
//! worker that runs it, in the runtime; nothing (`()`), in the deque's loom models.

use crate::core::sync::{AtomicUsize, RaceCell};
use std::any::Any;
use std::marker::PhantomData;
use std::mem::{self, align_of, size_of, ManuallyDrop, MaybeUninit};
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::Ordering;

/// Bytes of a slot available to a job and, after a steal, its result.
pub(crate) const PAYLOAD_BYTES: usize = 48;

/// `Slot::thief` value once a thief has finished the job and written its result.
pub(crate) const DONE: usize = usize::MAX;

/// Set in `Slot::thief`, beside the thief's index + 1, while a relay hand-out is not yet
/// started: whoever starts the slot first runs it (`Slot::start_handed`), be it the thief
/// it went to, a worker that took a proxy of it, or its owner, which takes it back
/// rather than wait for a thief that is busy elsewhere (PROTOCOLS.md, "Hand-outs").
pub(crate) const HANDED: usize = 1 << (usize::BITS - 2);

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
    let mut first = crate::core::sync::lock(first);
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

/// What a slot holds, as the owner sees it when it pops or drains the slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A join's second branch or a promise: a frame or a handle syncs it and takes its
    /// outcome.
    Task,
    /// A scope or detached task: self-contained, so whoever pops it runs it (PROTOCOLS.md,
    /// "Spawned tasks in the deque").
    Spawn,
    /// A promise that its handle ran in place, out of order, or a `Worker::scope`'s mark:
    /// nothing is left in it, and a thief that still takes it only marks it done. Its
    /// scope counts on it and pops it at its end; nothing else pops it while the scope
    /// lives.
    Claimed,
    /// A spawned task that its owner ran in place: nothing is left in it, and nobody
    /// counts it, so whoever finds it on top may pop it.
    Ran,
}

/// What a slot's job runs with; the entries below pass it on erased, as a `*const ()`
/// to the `C` the job was put with.
pub(crate) trait Context {
    /// Runs `f`, the job of a slot that this context runs, then finishes whatever the job
    /// left behind (a worker: the tasks it spawned into its deque).
    fn run_slot<R>(&self, f: impl FnOnce() -> R) -> R;

    /// A thief has run a stolen slot's job and is about to publish that it is done: the
    /// owner may be waiting for exactly that (relay sends the thief's next steal request
    /// here, `Schedule::finishing_stolen`).
    fn finishing_stolen(&self) {}
}

/// The loom models' context: nothing is left behind.
impl Context for () {
    fn run_slot<R>(&self, f: impl FnOnce() -> R) -> R {
        f()
    }
}

/// The type-erased entries of one type of slot job; a slot points to one of these.
pub(crate) struct Entry {
    /// The thief's side (also a relay hand-out): run the job with the context, write the
    /// outcome, and store `DONE`. Never unwinds.
    run_stolen: unsafe fn(*const Slot, *const ()),
    /// The owner's side after a private pop: take the job out, run it with the context,
    /// drop its outcome and return its panic. Never unwinds.
    run_popped: unsafe fn(*const Slot, *const ()) -> Option<Panic>,
    /// After `DONE`: drop the outcome a thief wrote and return its panic.
    discard: unsafe fn(*const Slot) -> Option<Panic>,
    kind: Kind,
}

impl Entry {
    /// The entries of a `Spawn` slot: a self-contained job that `put_spawn` wrote, which
    /// leaves no outcome. Both functions take the context the job was put with and store
    /// nothing but `DONE` (a thief's run) into the slot.
    pub(crate) const fn spawned(
        run_stolen: unsafe fn(*const Slot, *const ()),
        run_popped: unsafe fn(*const Slot, *const ()) -> Option<Panic>,
    ) -> Entry {
        Entry {
            run_stolen,
            run_popped,
            discard: nothing_to_discard,
            kind: Kind::Spawn,
        }
    }
}

/// The entries of a `Task` slot holding a `B` that runs with a `&C` and returns `R`.
struct TaskEntry<C, B, R>(PhantomData<fn(&C, B) -> R>);

impl<C, B, R> TaskEntry<C, B, R>
where
    C: Context,
    B: FnOnce(&C) -> R + Send,
    R: Send,
{
    const ENTRY: Entry = Entry {
        run_stolen: run_task_stolen::<C, B, R>,
        run_popped: run_task_popped::<C, B, R>,
        discard: discard_task::<B, R>,
        kind: Kind::Task,
    };
}

/// The entry of a slot whose promise ran in place, or of a scope's mark.
const CLAIMED: Entry = Entry {
    run_stolen: run_claimed_stolen,
    run_popped: nothing_popped,
    discard: nothing_to_discard,
    kind: Kind::Claimed,
};

/// The entry of a slot whose spawned task ran in place.
const RAN: Entry = Entry {
    kind: Kind::Ran,
    ..CLAIMED
};

/// One task descriptor, one cache line.
#[repr(C, align(64))]
pub(crate) struct Slot {
    /// 0: not stolen (or not yet claimed); `DONE`: result ready; else thief index + 1,
    /// with `HANDED` set while a relay hand-out waits to be started.
    pub(crate) thief: AtomicUsize,
    entry: RaceCell<Option<&'static Entry>>,
    payload: RaceCell<MaybeUninit<[u64; PAYLOAD_BYTES / 8]>>,
}

// SAFETY: a slot is written by its owner before it is published and by exactly one thief
// after that thief's CAS claimed it; the deque protocol (core::deque) orders the two.
unsafe impl Sync for Slot {}
// SAFETY: as above; the jobs it holds are `Send`.
unsafe impl Send for Slot {}

/// What a `Task` slot holds: the job until it runs, then (if stolen) its outcome.
union Payload<B, R> {
    job: ManuallyDrop<B>,
    out: ManuallyDrop<std::thread::Result<R>>,
}

/// What a `Spawn` slot holds: the deque's link to the spawn slot below it (see
/// `crate::core::spawn`), which stays readable after a thief took the job, and the job.
#[repr(C)]
struct SpawnPayload<F> {
    link: *const Slot,
    job: ManuallyDrop<F>,
}

/// Whether a job `B` with result `R` can be stored directly in a slot.
pub(crate) const fn fits<B, R>() -> bool {
    size_of::<Payload<B, R>>() <= PAYLOAD_BYTES && align_of::<Payload<B, R>>() <= 16
}

/// Whether a spawned job `F` can be stored directly in a slot, beside its link.
pub(crate) const fn fits_spawn<F>() -> bool {
    size_of::<SpawnPayload<F>>() <= PAYLOAD_BYTES && align_of::<SpawnPayload<F>>() <= 16
}

impl Slot {
    pub(crate) fn new() -> Slot {
        Slot {
            thief: AtomicUsize::new(0),
            entry: RaceCell::new(None),
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
        C: Context,
        B: FnOnce(&C) -> R + Send,
        R: Send,
    {
        debug_assert!(fits::<B, R>());
        let job = Payload::<B, R> {
            job: ManuallyDrop::new(job),
        };
        // SAFETY: the caller's contract.
        unsafe { self.put_with(job, &TaskEntry::<C, B, R>::ENTRY) }
    }

    /// Writes a spawned job and its link into the slot.
    ///
    /// # Safety
    /// As for `put`, with `fits_spawn::<F>()`; `entry` runs a `SpawnPayload<F>`.
    #[inline(always)]
    pub(crate) unsafe fn put_spawn<F>(&self, link: *const Slot, job: F, entry: &'static Entry) {
        debug_assert!(fits_spawn::<F>() && entry.kind == Kind::Spawn);
        let job = SpawnPayload {
            link,
            job: ManuallyDrop::new(job),
        };
        // SAFETY: the caller's contract.
        unsafe { self.put_with(job, entry) }
    }

    /// Writes `payload` and the entry a thief runs it through.
    ///
    /// # Safety
    /// As for `put`; `P` fits the payload, and `entry` reads the payload as a `P`.
    #[inline(always)]
    unsafe fn put_with<P>(&self, payload: P, entry: &'static Entry) {
        // SAFETY: by the caller's contract nobody else reads the slot until it is published,
        // which happens after these writes with release ordering; the size and alignment
        // of `P` were checked (the field is at offset 16 of a 64-aligned slot).
        unsafe {
            self.entry.with_mut(|e| *e = Some(entry));
            self.payload
                .with_mut(|p| ptr::write(p.cast::<P>(), payload));
        }
    }

    /// Hands the slot to worker `thief` (relay), not yet started. Release: whoever starts
    /// it (`start_handed`) sees the job the owner wrote.
    pub(crate) fn hand_to(&self, thief: usize) {
        self.thief.store(HANDED | (thief + 1), Ordering::Release);
    }

    /// Starts a handed-out slot on worker `me`: true if it was handed and nobody started
    /// it, and then `me` is its thief. A stale hand-out (a batch whose slots were taken
    /// back and reused) starts only a slot handed out again, which is as good: each
    /// hand-out is started once, by one worker.
    pub(crate) fn start_handed(&self, me: usize) -> bool {
        let v = self.thief.load(Ordering::Relaxed);
        v != DONE
            && v & HANDED != 0
            && self
                .thief
                .compare_exchange(v, me + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    /// The worker index in a `thief` value that is neither 0 nor `DONE`.
    pub(crate) fn thief_index(v: usize) -> usize {
        (v & !HANDED) - 1
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

    /// Takes a spawned job out; its link stays in place.
    ///
    /// # Safety
    /// As for `take`, for a slot filled by `put_spawn::<F>`.
    #[inline(always)]
    pub(crate) unsafe fn take_spawn<F>(&self) -> F {
        // SAFETY: the caller's contract.
        unsafe {
            self.payload
                .with_mut(|p| ManuallyDrop::take(&mut (*p.cast::<SpawnPayload<F>>()).job))
        }
    }

    /// The link a `Spawn` slot was put with.
    ///
    /// # Safety
    /// The slot holds a spawned job (taken out or not), and no thief writes it: a thief
    /// only reads a spawn slot's payload.
    pub(crate) unsafe fn spawn_link(&self) -> *const Slot {
        // SAFETY: the caller's contract; `link` is the first field of every spawn payload.
        unsafe { self.payload.with_mut(|p| *p.cast::<*const Slot>()) }
    }

    /// What the slot holds.
    ///
    /// # Safety
    /// The slot is live in the caller's own deque (filled, not yet popped): only the owner
    /// writes the entry, and a thief only reads it.
    pub(crate) unsafe fn kind(&self) -> Kind {
        // SAFETY: the caller's contract.
        unsafe { self.entry() }.kind
    }

    /// # Safety
    /// The slot is filled, and nobody writes its entry meanwhile.
    unsafe fn entry(&self) -> &'static Entry {
        // SAFETY: the steal's acquire CAS (or the owner's own `put`) made the write of the
        // entry visible, and only the owner writes it, before publishing or while the
        // slot is private.
        let entry = unsafe { self.entry.with_mut(|e| *e) };
        entry.expect("a published slot always has a job")
    }

    /// Runs a stolen job with `cx` and publishes its outcome (or, for a spawned job, that
    /// it is done). A panic of the job is part of the outcome: this never unwinds.
    ///
    /// # Safety
    /// The caller won the steal of this slot (or its hand-out) and has written its index
    /// to `thief`; the job was put with context type `C`.
    pub(crate) unsafe fn run_stolen<C>(&self, cx: &C) {
        // SAFETY: the caller's contract.
        unsafe { (self.entry().run_stolen)(self, (cx as *const C).cast()) }
    }

    /// Runs a job the owner popped privately with `cx`, dropping its outcome; returns its
    /// panic. Never unwinds.
    ///
    /// # Safety
    /// The owner popped this slot privately, it still holds its job (or is claimed), and
    /// the job was put with context type `C`.
    pub(crate) unsafe fn run_popped<C>(&self, cx: &C) -> Option<Panic> {
        // SAFETY: the caller's contract.
        unsafe { (self.entry().run_popped)(self, (cx as *const C).cast()) }
    }

    /// Reads the outcome a thief wrote and frees the slot for reuse.
    ///
    /// # Safety
    /// `thief` has been seen equal to `DONE` with acquire ordering, and the slot was put
    /// with job type `B` and result `R`.
    pub(crate) unsafe fn take_outcome<B, R>(&self) -> std::thread::Result<R> {
        self.thief.store(0, Ordering::Relaxed);
        // SAFETY: as for `read_outcome`.
        unsafe { self.read_outcome::<B, R>() }
    }

    /// Reads the outcome a thief wrote, leaving the slot done.
    ///
    /// # Safety
    /// As for `take_outcome`; the outcome is read once.
    pub(crate) unsafe fn read_outcome<B, R>(&self) -> std::thread::Result<R> {
        // SAFETY: the thief wrote `out` before its release store of `DONE` and no longer
        // touches the slot; the owner's acquire load ordered this read after it.
        unsafe {
            self.payload
                .with_mut(|p| ManuallyDrop::take(&mut (*p.cast::<Payload<B, R>>()).out))
        }
    }

    /// Drops the outcome a thief wrote, frees the slot and returns the outcome's panic.
    ///
    /// # Safety
    /// `thief` has been seen equal to `DONE` with acquire ordering, and the slot's outcome
    /// has not been taken.
    pub(crate) unsafe fn discard_outcome(&self) -> Option<Panic> {
        // SAFETY: the caller's contract; the entry matches the outcome's type.
        let p = unsafe { (self.entry().discard)(self) };
        self.thief.store(0, Ordering::Relaxed);
        p
    }

    /// Moves the job out into a slot of the caller's (a bitwise move, as every Rust move
    /// is) and leaves this slot `Ran`, for the owner to run the job in place while the
    /// slot stays in the deque.
    ///
    /// # Safety
    /// As for `claim`, and the slot still holds its job.
    pub(crate) unsafe fn move_out(&self) -> Slot {
        let copy = Slot::new();
        // SAFETY: the caller has the slot to itself; after the copy, only `copy` holds the
        // job, since this slot's entry no longer reads its payload; a thief reads the new
        // entry only after a later publication, as for `claim`.
        unsafe {
            copy.entry.with_mut(|e| *e = Some(self.entry()));
            let from = self.payload.with_mut(|p| p.cast_const());
            copy.payload
                .with_mut(|p| ptr::copy_nonoverlapping(from, p, 1));
            self.entry.with_mut(|e| *e = Some(&RAN));
        }
        copy
    }

    /// Marks a slot whose job its owner took out (to run it in place) or whose outcome
    /// it read: a later pop finds nothing to do, and a thief that takes the slot after a
    /// grow only marks it done.
    ///
    /// # Safety
    /// The owner has the slot to itself: private, or done and its outcome read.
    pub(crate) unsafe fn claim(&self) {
        // SAFETY: the caller's contract; a thief reads the entry only after a later
        // publication (a grow's release CAS) of this slot.
        unsafe { self.entry.with_mut(|e| *e = Some(&CLAIMED)) };
    }
}

/// `Entry::run_stolen` of a `Task` slot: run the job with its context (a worker drains
/// what it left in its deque), write the outcome, mark the slot `DONE`.
///
/// # Safety
/// `slot` points to a live slot filled by `put::<C, B, R>` that the caller claimed (a
/// steal or a relay hand-out), and `cx` points to a `C` that is live for this call.
unsafe fn run_task_stolen<C, B, R>(slot: *const Slot, cx: *const ())
where
    C: Context,
    B: FnOnce(&C) -> R + Send,
    R: Send,
{
    // SAFETY: the contract above.
    let (job, cx) = unsafe { ((*slot).take::<B, R>(), &*cx.cast::<C>()) };
    let out = cx.run_slot(|| panic::catch_unwind(AssertUnwindSafe(|| job(cx))));
    cx.finishing_stolen();
    // SAFETY: claimed, and the job has been moved out.
    unsafe { Slot::finish::<B, R>(slot, out) };
}

/// `Entry::run_popped` of a `Task` slot (a promise whose handle was leaked).
///
/// # Safety
/// The owner popped `slot` privately; it holds the job `put::<C, B, R>` wrote, and `cx`
/// points to a `C` that is live for this call.
unsafe fn run_task_popped<C, B, R>(slot: *const Slot, cx: *const ()) -> Option<Panic>
where
    C: Context,
    B: FnOnce(&C) -> R + Send,
    R: Send,
{
    // SAFETY: the contract above.
    let (job, cx) = unsafe { ((*slot).take::<B, R>(), &*cx.cast::<C>()) };
    match cx.run_slot(|| panic::catch_unwind(AssertUnwindSafe(|| job(cx)))) {
        Ok(r) => drop_caught(r),
        Err(p) => Some(p),
    }
}

/// `Entry::discard` of a `Task` slot.
///
/// # Safety
/// The slot holds the outcome a thief wrote, which nobody took.
unsafe fn discard_task<B, R>(slot: *const Slot) -> Option<Panic> {
    // SAFETY: the contract above.
    match unsafe { (*slot).read_outcome::<B, R>() } {
        Ok(r) => drop_caught(r),
        Err(p) => Some(p),
    }
}

/// `Entry::run_popped` of a slot with nothing to run.
unsafe fn nothing_popped(_: *const Slot, _: *const ()) -> Option<Panic> {
    None
}

/// `Entry::discard` of a slot with no outcome.
unsafe fn nothing_to_discard(_: *const Slot) -> Option<Panic> {
    None
}

/// `Entry::run_stolen` of a claimed slot: nothing to run.
///
/// # Safety
/// The caller claimed `slot` by a steal.
unsafe fn run_claimed_stolen(slot: *const Slot, _: *const ()) {
    // SAFETY: the contract above; the store is the thief's last touch.
    unsafe { (*slot).thief.store(DONE, Ordering::Release) };
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
