//! Promises: a spawned task with a handle (the futures of Prell, "Embracing Explicit
//! Communication in Work-Stealing Runtime Systems", §4.3–4.4, renamed so as not to clash
//! with `std::future::Future`). The task is pushed like the second branch of a `join`:
//! a promise nobody steals costs no allocation and runs on the spawner's stack when it is
//! joined; a stolen one is awaited by leapfrogging (Lace) or by stealing through requests
//! (relay).
//!
//! Handles may be joined in any order. One whose slot is on top of the deque (the newest,
//! once the newer ones were joined) is popped as `join` pops its branch. An older one is
//! finished in place: if no thief has it, its owner takes the job out (taking its slot
//! back from the shared part under Lace), runs it, and marks the slot claimed, so that the
//! later pop (or a thief, should the slot be shared again) finds nothing to run; if a
//! thief has it, the owner waits for it and marks the slot claimed once it has read the
//! outcome.
//!
//! Handles live inside [`Worker::promises`], which finishes whatever is left when its
//! closure returns, so a handle that is dropped or leaked without being joined cannot
//! outlive what its task borrows; its task's panic reaches the caller of `promises`. The
//! scope counts its handles that were not taken off the top by their own join: when none
//! are left, its end has nothing to finish. It also keeps its `top`, where `head` stands
//! while nothing else lies on its slots, and pushes only while `head` is there, so that
//! its slots lie together from its base up to `top`, as many as the count: the base needs
//! no word of its own. Count and top change at every spawn and every join, so where the
//! compiler sees both (a spawn and its join in one function) they are constants, and the
//! scope and its handles live in registers: beginning a scope stores nothing. A scope
//! begun right after a spawn or a join of the enclosing one (the next level of a
//! recursion) is handed its position in a register: [`Worker::promises`] inlines only its
//! read of `head`, which the compiler knows there from the store just made, so that the
//! new scope's first push does not wait on reading back what was just stored. That is
//! what makes an unstolen promise cost about what a `join` costs.
//!
//! Scopes nest: a promises scope's spawner may be used inside a nested promises scope or
//! `Worker::scope` body. The rules that keep each one's slots its own (PROTOCOLS.md): a
//! scope pushes only at its `top`, and takes a slot off the top only while the slot is the
//! top of the deque; its end drains the deque only if it has slots there. A
//! `Worker::scope` body runs above a mark, a claimed slot (`Worker::push_mark`), so
//! `head` is neither at the `top` of a promises scope begun outside it nor just above one
//! of its slots: such a scope neither pushes nor pops inside the body. A task the scope may
//! not push, or that the full deque does not take, goes to a boxed slot of its own, an
//! overflow slot, and runs when its handle joins it or when the scope ends. Its handle
//! holds the slot's address tagged in the low bit (a slot is cache-line aligned), so that
//! it never passes the pop's check and the handle needs no other field to tell the two
//! apart. The list of overflow slots, and the base, go to the scope's `Overflow`, made at
//! the first one; from then on the scope's `top` stays tagged, which says that the
//! `Overflow` exists, and the scope pushes no more.

use crate::core::spawn;
use crate::core::task::{self, Panic, Slot, DONE};
use crate::core::worker::Worker;
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::{self, MaybeUninit};
use std::panic;
use std::ptr;
use std::sync::atomic::Ordering::Acquire;

/// Spawns promises inside [`Worker::promises`].
pub struct Promises<'w> {
    w: &'w Worker,
    /// Where `head` stands while nothing else lies on this scope's slots: its base, or the
    /// slot above its newest slot in the deque; once the scope has an overflow slot, an
    /// address tagged in the low bit, which `head` never equals. It may push only while
    /// `head` is here.
    top: Cell<*const Slot>,
    /// Handles spawned and not taken off the top by their own join: its slots in the
    /// deque (unjoined, or finished in place and claimed) and its overflow slots. Without
    /// overflow slots, its slots in the deque are the `open` slots below `top`.
    open: Cell<usize>,
    /// A local of `Worker::promises`, which outlives the scope: its `Overflow`, written at
    /// the first overflow slot (when `top` takes the tag), uninitialised before.
    overflow: *mut MaybeUninit<Box<Overflow>>,
    /// Invariant in `'w`, so tasks cannot borrow anything that dies inside the scope.
    _inv: PhantomData<&'w mut &'w ()>,
}

/// What a scope keeps once it has overflow slots.
struct Overflow {
    /// The deque's `head` when the scope began: its slots in the deque lie from there.
    /// (Known at the first overflow slot, after which `top` is a tagged address.)
    base: *const Slot,
    /// Boxed slots of tasks the deque did not take: run (or claimed by their join) and
    /// freed at the end of the scope. Boxed because their handles hold their addresses,
    /// which must not move when the vector grows.
    #[allow(clippy::vec_box)]
    slots: Vec<Box<Slot>>,
}

/// The handle of a spawned task; [`Promise::join`] waits for its result.
///
/// A handle that is dropped (or leaked) without being joined leaves its task to the end of
/// the [`Worker::promises`] scope, which finishes it, discards its result, and re-raises
/// its panic.
pub struct Promise<'f, 'w, R> {
    scope: &'f Promises<'w>,
    /// The task's slot in the deque, or its overflow slot tagged in the low bit.
    slot: *const Slot,
    join: JoinFn<R>,
    _slot: PhantomData<&'w Slot>,
}

/// How a handle finishes its task: on top (pop it, or sync it if stolen), in place, or
/// in its overflow slot.
type JoinFn<R> = fn(&Worker, *const Slot, bool) -> R;

/// The low bit of an overflow slot's address in its handle.
const OVERFLOW_TAG: usize = 1;

/// Finishes the task in `slot`, put with `B` and `R`: a task on top of the deque is popped
/// like a `join` branch, any other is finished in place.
#[inline(always)]
fn join_pushed<B, R>(w: &Worker, slot: *const Slot, on_top: bool) -> R
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    // SAFETY (of `&*slot`): on top, `slot` is `head - 1`, an untagged slot of the deque,
    // in use until this handle finishes it.
    if on_top && w.owner().try_pop_private(unsafe { &*slot }) {
        // SAFETY: popped privately, so the slot still holds the `B` that `spawn` put.
        let job = unsafe { (*slot).take::<B, R>() };
        return job(w);
    }
    join_slow::<B, R>(w, slot, on_top)
}

/// `join_pushed` off the fast path: spawned tasks above the slot, a thief, a request, an
/// out-of-order join, or an overflow slot.
#[cold]
#[inline(never)]
fn join_slow<B, R>(w: &Worker, slot: *const Slot, on_top: bool) -> R
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    if slot.addr() & OVERFLOW_TAG != 0 {
        // SAFETY: the scope keeps its overflow slots until it ends, which this handle
        // cannot outlive; only this handle takes the job out of this one.
        let slot = unsafe { &*slot.wrapping_byte_sub(OVERFLOW_TAG) };
        // SAFETY: nobody else sees an overflow slot; it holds the `B` that `spawn` put,
        // unless its handle took it, and the handle is consumed by this join. Claimed
        // before the job runs, so that the end of the scope finds nothing to run.
        let job = unsafe {
            let job = slot.take::<B, R>();
            slot.claim();
            job
        };
        return job(w);
    }
    // SAFETY: an untagged slot of the deque, in use until this handle finishes it.
    let slot = unsafe { &*slot };
    if on_top {
        return w.sync::<B, R>(slot);
    }
    match join_in_place::<B, R>(w, slot) {
        Ok(r) => r,
        Err(p) => panic::resume_unwind(p),
    }
}

/// `join_pushed` for a task whose job and result were boxed.
fn join_boxed<B, R>(w: &Worker, slot: *const Slot, on_top: bool) -> R
where
    B: FnOnce(&Worker) -> Box<R> + Send,
    R: Send,
{
    *join_pushed::<B, Box<R>>(w, slot, on_top)
}

/// Finishes a task that is not on top: runs it here if no thief has it (or its relay
/// thief has not begun it), else waits for its thief; either way the slot is left
/// claimed for the pop that reaches it.
#[cold]
#[inline(never)]
fn join_in_place<B, R>(w: &Worker, slot: &Slot) -> std::thread::Result<R>
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    if let Some(held) = w.sched().take_back(w, slot) {
        // SAFETY: the slot is private, and the hold keeps lifelines off it until the
        // claim is written (its release publishes the claim): no thief can take it, and
        // it holds the `B` that `spawn` put. Claimed before the job runs, so that nothing
        // depends on the job.
        let job = unsafe {
            let job = slot.take::<B, R>();
            slot.claim();
            job
        };
        drop(held);
        return Ok(job(w));
    }
    if slot.start_handed(w.index()) {
        // SAFETY: `start_handed` made this worker the thief of a relay hand-out that its
        // thief had not begun; the job was put with context `Worker`. It writes the
        // outcome and `DONE`, read below.
        unsafe { slot.run_stolen(w) };
    }
    // The scope's later promises come first, as a thief of this worker's own would run
    // them while this one runs.
    while slot.thief.load(Acquire) != DONE && w.sched().steal_own(w) {}
    w.wait_until(|| slot.thief.load(Acquire) == DONE);
    // SAFETY: `DONE` was read with acquire ordering; the thief wrote the outcome of the
    // `B` put with `R`, which only this handle reads. The slot stays done for its pop.
    unsafe {
        let out = slot.read_outcome::<B, R>();
        slot.claim();
        out
    }
}

impl<'w> Promises<'w> {
    /// The worker this scope runs on (the one `Worker::promises` was called on). Code in
    /// the scope that uses it, rather than a worker captured from outside, holds one
    /// reference where it would otherwise hold two.
    #[inline(always)]
    pub fn worker(&self) -> &'w Worker {
        self.w
    }

    /// Whether this scope may push: nothing else lies on its slots (a promises scope begun
    /// inside this one with slots of its own, spawned tasks, ran or claimed slots of
    /// others, the mark of a `Worker::scope` begun inside it), so that its slots stay
    /// together from its base, where its end drains them.
    #[inline(always)]
    fn may_push(&self) -> bool {
        ptr::eq(self.w.owner().head(), self.top.get())
    }

    /// Spawns `f`; it may run on another worker until the handle is joined.
    ///
    /// Called where the scope may not push (inside a nested [`Worker::scope`] body, or a
    /// nested [`Worker::promises`] body with tasks of its own in the deque), or with the
    /// deque full, `f` goes to a boxed slot of the scope's own and runs when the handle is
    /// joined (or when the scope ends); so do the scope's later spawns.
    #[inline]
    pub fn spawn<'f, F, R>(&'f self, f: F) -> Promise<'f, 'w, R>
    where
        F: FnOnce(&Worker) -> R + Send + 'w,
        R: Send + 'w,
    {
        #[cfg(feature = "trace")]
        let f =
            crate::core::trace::task::<{ crate::core::trace::EventKind::Promise as u8 }, F, R>(f);
        self.spawn_untraced(f)
    }

    /// `spawn` of `f` as it is (`crate::trace` may have wrapped it).
    #[inline(always)]
    fn spawn_untraced<'f, F, R>(&'f self, f: F) -> Promise<'f, 'w, R>
    where
        F: FnOnce(&Worker) -> R + Send + 'w,
        R: Send + 'w,
    {
        if !task::fits::<F, R>() {
            return self.spawn_boxed(f);
        }
        let slot = self.push::<F, R>(f);
        self.handle(slot, join_pushed::<F, R>)
    }

    /// Puts `job` (put with `R`, fitting a slot) into a slot of the deque if the scope may
    /// push, else into an overflow slot; returns the slot, tagged if an overflow one.
    #[inline(always)]
    fn push<B, R>(&self, job: B) -> *const Slot
    where
        B: FnOnce(&Worker) -> R + Send,
        R: Send,
    {
        let owner = self.w.owner();
        match owner.fast_slot() {
            Some(slot) if self.may_push() => {
                // SAFETY: `slot` is the free slot at `head`, not yet visible to thieves,
                // and the caller checked `fits::<B, R>()`.
                unsafe { slot.put::<Worker, B, R>(job) };
                if owner.advance(slot) {
                    self.w.push_slow();
                }
                slot
            }
            _ => {
                let (open, top) = (self.open.get(), self.top.get());
                // SAFETY: `self.overflow` is this scope's, written once `top` is tagged.
                let (slot, head) =
                    unsafe { push_slow::<B, R>(self.w, self.overflow, open, top, job) };
                // Stored again, so that the compiler knows `head` after either path: a
                // scope begun next (by a nested call) is then given its position in a
                // register rather than by a read of what was just stored.
                owner.restate_head(head);
                slot
            }
        }
    }

    /// A handle, counted open until its join takes its slot off the top. `top` moves
    /// above `slot` on both paths, so that it is `slot`'s neighbour and needs no register
    /// of its own: above a pushed slot, or tagged above an overflow slot.
    #[inline(always)]
    fn handle<'f, R>(&'f self, slot: *const Slot, join: JoinFn<R>) -> Promise<'f, 'w, R> {
        self.top.set(slot.wrapping_add(1));
        self.open.set(self.open.get() + 1);
        Promise {
            scope: self,
            slot,
            join,
            _slot: PhantomData,
        }
    }

    /// A task too large for a slot: its job and result go to the heap.
    #[inline(never)]
    fn spawn_boxed<'f, F, R>(&'f self, f: F) -> Promise<'f, 'w, R>
    where
        F: FnOnce(&Worker) -> R + Send + 'w,
        R: Send + 'w,
    {
        let f = Box::new(f);
        self.push_boxed(move |w: &Worker| Box::new(f(w)))
    }

    fn push_boxed<'f, B, R>(&'f self, job: B) -> Promise<'f, 'w, R>
    where
        B: FnOnce(&Worker) -> Box<R> + Send + 'w,
        R: Send + 'w,
    {
        let slot = self.push::<B, Box<R>>(job);
        self.handle(slot, join_boxed::<B, R>)
    }

    /// Whether the handle of `slot` may take it off the top: it is the top of the deque.
    /// A promises scope begun inside this one has no slots then (they would lie above
    /// `slot`), and once `head` is below its `top` it never pushes again; nor does a
    /// `Worker::scope` begun inside this one run (its mark would lie above). Otherwise the
    /// task is finished in place: newer handles of the scope not joined yet, spawned tasks
    /// or claimed slots lie above it.
    #[inline(always)]
    fn may_pop(&self, slot: *const Slot) -> bool {
        ptr::eq(self.w.owner().head(), slot.wrapping_add(1))
    }

    /// Ends the scope after its closure returned `out`. Leaves the count at zero, so that
    /// a drop after a re-raised panic finds nothing to finish.
    #[inline(always)]
    fn end<T>(&self, out: T) -> T {
        let open = self.open.replace(0);
        if open != 0 {
            let mut first = None;
            // SAFETY: `open` and `top` are this scope's, and `self.overflow` its own.
            unsafe {
                finish(self.w, self.top.get(), open, self.overflow, &mut |p| {
                    task::keep_first(&mut first, p)
                })
            };
            return task::resume_first(Ok(out), first);
        }
        out
    }
}

/// `Promises::push` when the gate is down (the deque full, a thief or request waiting, or
/// publishing) or the scope may not push, for the scope on `w` whose `Overflow` is kept at
/// `at` (written if `top` is tagged), whose count is `open` and whose top is `top`: puts
/// `job` (put with `R`, fitting a slot) into the deque if the scope may push and the deque
/// takes it, else into a new overflow slot. Returns the slot (an overflow slot tagged),
/// and `head`.
///
/// # Safety
/// `at` is the scope's, valid for writes, and holds its `Overflow` if `top` is tagged.
#[cold]
#[inline(never)]
unsafe fn push_slow<B, R>(
    w: &Worker,
    at: *mut MaybeUninit<Box<Overflow>>,
    open: usize,
    top: *const Slot,
    job: B,
) -> (*const Slot, *const Slot)
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    let job = if ptr::eq(w.owner().head(), top) {
        match w.push_task_slow::<B, R>(job) {
            Ok(slot) => return (slot, w.owner().head()),
            Err(job) => job,
        }
    } else {
        job
    };
    debug_assert!(task::fits::<B, R>());
    let slot = Box::new(Slot::new());
    // SAFETY: a new slot that no deque holds, so nobody else sees it; `fits::<B, R>()`
    // holds (`spawn` boxes the job otherwise).
    unsafe { slot.put::<Worker, B, R>(job) };
    let addr = &*slot as *const Slot;
    // SAFETY: the caller's contract. Before the first overflow slot `top` is untagged,
    // and every handle counted in `open` has a slot in the deque below it.
    let list = unsafe {
        if top.addr() & OVERFLOW_TAG == 0 {
            let base = top.wrapping_sub(open);
            (*at).write(Box::new(Overflow {
                base,
                slots: Vec::new(),
            }))
        } else {
            (*at).assume_init_mut()
        }
    };
    list.slots.push(slot);
    (addr.wrapping_byte_add(OVERFLOW_TAG), w.owner().head())
}

/// Finishes the tasks left at the end of a scope (`w`, `top` and `open` are its, and its
/// `Overflow` is kept at `at`): the slots above its base in `w`'s deque if some of them are
/// its own, then the overflow slots not joined; their panics go to `sink`. Never unwinds.
///
/// # Safety
/// As for `push_slow`; the scope ends, and its `Overflow` is read here for the last time.
#[cold]
#[inline(never)]
unsafe fn finish(
    w: &Worker,
    top: *const Slot,
    open: usize,
    at: *mut MaybeUninit<Box<Overflow>>,
    sink: &mut dyn FnMut(Panic),
) {
    // SAFETY: the caller's contract: written if `top` is tagged, and not read again.
    let list = (top.addr() & OVERFLOW_TAG != 0).then(|| unsafe { (*at).assume_init_read() });
    // The open handles not in the overflow have slots in the deque. With none, what lies
    // above the base belongs to others: a scope outside this one may have pushed there
    // while this one had nothing in the deque.
    let in_deque = open - list.as_ref().map_or(0, |l| l.slots.len());
    if in_deque > 0 {
        // Without overflow slots `top` is untagged, with the open slots below it.
        let base = list.as_ref().map_or(top.wrapping_sub(open), |l| l.base);
        spawn::drain_to(w, w.owner().index_of(base), &mut *sink);
    }
    let Some(list) = list else {
        return;
    };
    for slot in list.slots.into_iter() {
        // SAFETY: an overflow slot holds its job until its handle took it (and claimed
        // the slot); nobody else sees it, and its job was put with the worker as context.
        if let Some(p) = unsafe { slot.run_popped(w) } {
            sink(p);
        }
    }
}

/// Ends a scope whose closure unwinds (or whose end re-raises a task's panic, after which
/// this finds nothing left): its tasks finish first, and their panics are dropped (the
/// closure's own panic goes on). On the normal path the scope is forgotten after `end`.
impl Drop for Promises<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        let open = self.open.replace(0);
        if open != 0 {
            // SAFETY: as in `end`.
            unsafe {
                finish(
                    self.w,
                    self.top.get(),
                    open,
                    self.overflow,
                    &mut task::drop_panic,
                )
            };
        }
    }
}

impl<R> Promise<'_, '_, R> {
    /// Waits for the task and returns its result, re-raising its panic. Handles may be
    /// joined in any order.
    #[inline]
    pub fn join(self) -> R {
        let Promise {
            scope, slot, join, ..
        } = self;
        if scope.may_pop(slot) {
            // Taken off the top whatever happens: popped, or synced with its thief. A
            // tagged `top` stays tagged: the scope has overflow slots.
            scope.open.set(scope.open.get() - 1);
            let tag = scope.top.get().addr() & OVERFLOW_TAG;
            scope.top.set(slot.wrapping_byte_add(tag));
            return join(scope.w, slot, true);
        }
        join_elsewhere(join, scope.w, slot)
    }
}

/// A join whose slot is not on top (or an overflow slot's). A call of its own, so that
/// the compiler does not merge it with the join on top and keep a flag for the two.
#[cold]
#[inline(never)]
fn join_elsewhere<R>(join: JoinFn<R>, w: &Worker, slot: *const Slot) -> R {
    join(w, slot, false)
}

impl Worker {
    /// Runs `op` with a [`Promises`] spawner. Every promise spawned in it has finished
    /// when this returns, including promises whose handles were leaked.
    ///
    /// Only the read of where the scope begins is inlined: right after a spawn or a join
    /// of an enclosing scope the compiler knows it, so the scope's position is passed in
    /// a register rather than through memory. The rest is not inlined: a recursion
    /// through promises then recurses through it, with the caller's own base case inlined
    /// into `op`. A `move` closure passes what it captures in registers, and
    /// [`Promises::worker`] saves holding the worker twice.
    ///
    /// ```
    /// fn fib(w: &heist::Worker, n: u64) -> u64 {
    ///     if n < 2 {
    ///         return n;
    ///     }
    ///     w.promises(move |s| {
    ///         let f = s.spawn(move |w| fib(w, n - 1));
    ///         let y = fib(s.worker(), n - 2);
    ///         f.join() + y
    ///     })
    /// }
    /// let pool = heist::Pool::builder().workers(2).build().unwrap();
    /// assert_eq!(pool.run(|w| fib(w, 20)), 6765);
    /// ```
    #[inline(always)]
    pub fn promises<'w, T>(&'w self, op: impl FnOnce(&Promises<'w>) -> T) -> T {
        self.promises_at(self.owner().head(), op)
    }

    /// `promises`, for a scope that begins at `base`, where `head` stands.
    #[inline(never)]
    fn promises_at<'w, T>(&'w self, base: *const Slot, op: impl FnOnce(&Promises<'w>) -> T) -> T {
        debug_assert_eq!(base, self.owner().head());
        let mut overflow = MaybeUninit::uninit();
        let scope = Promises {
            w: self,
            top: Cell::new(base),
            open: Cell::new(0),
            overflow: &mut overflow,
            _inv: PhantomData,
        };
        let out = op(&scope);
        let out = scope.end(out);
        mem::forget(scope);
        out
    }
}
