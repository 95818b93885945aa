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
//! its slots lie together above its base. Count and top change at every spawn and every
//! join, so where the compiler sees both (a spawn and its join in one function) they are
//! constants, and the scope and its handles live in registers: that is what makes an
//! unstolen promise cost about what a `join` costs.
//!
//! Scopes nest: a promises scope's spawner may be used inside a nested promises scope or
//! `Worker::scope` body. The rules that keep each one's slots its own (PROTOCOLS.md): a
//! scope pushes only at its `top`, and while no `Worker::scope` begun inside it is live
//! (one load, `Frames::innermost_scope`); it takes a slot off the top only while the slot
//! is the top of the deque, under the same condition; its end drains the deque only if it
//! has slots there. A task the scope may not push, or that the full deque does not take,
//! goes to a boxed slot of its own, the scope's overflow, and runs when its handle joins it
//! or when the scope ends. Its handle holds the slot's address tagged in the low bit (a
//! slot is cache-line aligned), so that it never passes the pop's check and the handle
//! needs no other field to tell the two apart.

use crate::sched::Schedule;
use crate::spawn;
use crate::task::{self, Panic, Slot, DONE};
use crate::worker::Worker;
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem;
use std::panic;
use std::ptr;
use std::sync::atomic::Ordering::Acquire;

/// Spawns promises inside [`Worker::promises`].
pub struct Promises<'w> {
    w: &'w Worker,
    /// Where `head` stands while nothing else lies on this scope's slots: its base, the
    /// slot above its newest slot in the deque, or (after an overflow slot, until a handle
    /// takes a slot off the top) a tagged address that `head` never equals. It may push
    /// only while `head` is here.
    top: Cell<*const Slot>,
    /// Handles spawned and not taken off the top by their own join: its slots in the
    /// deque (unjoined, or finished in place and claimed) and its overflow slots.
    open: Cell<usize>,
    /// What only the scope's slow paths read: a local of `Worker::promises`, which
    /// outlives the scope, kept in memory so that it holds no register on the fast path.
    rest: *const Rest,
    /// Invariant in `'w`, so tasks cannot borrow anything that dies inside the scope.
    _inv: PhantomData<&'w mut &'w ()>,
}

/// What only a scope's slow paths read.
struct Rest {
    /// The deque's `head` when the scope began; its tasks occupy the slots from there.
    base: *const Slot,
    /// How many [`Worker::scope`]s its worker was inside when this scope began
    /// (`Frames::enter_scope`): while that is still the count, no `Worker::scope` begun
    /// inside this one is live.
    mark: usize,
    overflow: Overflow,
}

/// Boxed slots of tasks the deque did not take, made on first use; run (or claimed by
/// their join) and freed at the end of the scope.
type Overflow = Cell<*mut Vec<Box<Slot>>>;

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

/// Finishes the task in `slot`, put with `B` and `R`: a task on top of the deque, of the
/// innermost scope, is popped like a `join` branch, any other is finished in place.
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

/// Finishes a task that is not on top: runs it here if no thief has it, else waits for
/// its thief; either way the slot is left claimed for the pop that reaches it.
#[cold]
#[inline(never)]
fn join_in_place<B, R>(w: &Worker, slot: &Slot) -> std::thread::Result<R>
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    if w.sched().take_back(w, slot) {
        // SAFETY: the slot is private: no thief can take it, and it holds the `B` that
        // `spawn` put. Claimed before the job runs, so that nothing depends on the job.
        let job = unsafe {
            let job = slot.take::<B, R>();
            slot.claim();
            job
        };
        return Ok(job(w));
    }
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

    /// Whether no `Worker::scope` begun inside this one is live: such a scope would drain
    /// (and pop) this one's slots pushed above its base, and would lose its own tasks
    /// pushed below its base after this one popped there.
    #[inline(always)]
    fn no_inner_scope(&self) -> bool {
        self.w.frames().innermost_scope() == self.rest().mark
    }

    /// Whether this scope may push: nothing else lies on its slots (a promises scope begun
    /// inside this one with slots of its own, spawned tasks, claimed slots of others),
    /// so that its slots stay together from its base, where its end drains them.
    #[inline(always)]
    fn may_push(&self) -> bool {
        ptr::eq(self.w.owner().head(), self.top.get()) && self.no_inner_scope()
    }

    /// Spawns `f`; it may run on another worker until the handle is joined.
    ///
    /// Called where the scope may not push (inside a nested [`Worker::scope`] body, or a
    /// nested [`Worker::promises`] body with tasks of its own in the deque), or with the
    /// deque full, `f` goes to a boxed slot of the scope's own and runs when the handle is
    /// joined (or when the scope ends).
    #[inline]
    pub fn spawn<'f, F, R>(&'f self, f: F) -> Promise<'f, 'w, R>
    where
        F: FnOnce(&Worker) -> R + Send + 'w,
        R: Send + 'w,
    {
        if !task::fits::<F, R>() {
            return self.spawn_boxed(f);
        }
        let pushed = if self.may_push() {
            self.w.push_task::<F, R>(f)
        } else {
            Err(f)
        };
        let slot = match pushed {
            Ok(slot) => slot as *const Slot,
            Err(f) => overflow::<F, R>(&self.rest().overflow, f),
        };
        self.handle(slot, join_pushed::<F, R>)
    }

    /// A handle, counted open until its join takes its slot off the top. `top` moves
    /// above `slot` on both paths, so that it is `slot`'s neighbour and needs no register
    /// of its own: above a pushed slot, or tagged above an overflow slot, which stops
    /// pushes until a handle takes a slot off the top (when `top` is known again).
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
        let pushed = if self.may_push() {
            self.w.push_task::<B, Box<R>>(job)
        } else {
            Err(job)
        };
        let slot = match pushed {
            Ok(slot) => slot as *const Slot,
            Err(job) => overflow::<B, Box<R>>(&self.rest().overflow, job),
        };
        self.handle(slot, join_boxed::<B, R>)
    }

    /// Whether the handle of `slot` may take it off the top: it is the top of the deque,
    /// and no `Worker::scope` begun inside this one is live. A promises scope begun inside
    /// this one has no slots in the deque then (they would lie above `slot`), and once
    /// `head` is below its `top` it never pushes again. Otherwise the task is finished in
    /// place: newer handles of the scope not joined yet, spawned tasks or claimed slots
    /// lie above it.
    #[inline(always)]
    fn may_pop(&self, slot: *const Slot) -> bool {
        ptr::eq(self.w.owner().head(), slot.wrapping_add(1)) && self.no_inner_scope()
    }

    /// The scope's base and overflow slots.
    #[inline(always)]
    fn rest(&self) -> &Rest {
        // SAFETY: `rest` points to a local of `Worker::promises` that outlives the scope
        // (declared before it).
        unsafe { &*self.rest }
    }

    /// Ends the scope after its closure returned `out`.
    #[inline(always)]
    fn end<T>(&self, out: T) -> T {
        if self.open.get() != 0 {
            let mut first = None;
            finish(self.w, self.rest(), self.open.get(), &mut |p| {
                task::keep_first(&mut first, p)
            });
            return task::resume_first(Ok(out), first);
        }
        out
    }
}

/// Puts `job` (put with `R`) into a new overflow slot of the scope whose overflow is
/// `overflow`; returns its tagged address.
#[cold]
#[inline(never)]
fn overflow<B, R>(overflow: &Overflow, job: B) -> *const Slot
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    debug_assert!(task::fits::<B, R>());
    let slot = Box::new(Slot::new());
    // SAFETY: a new slot that no deque holds, so nobody else sees it; `fits::<B, R>()`
    // holds (`spawn` boxes the job otherwise).
    unsafe { slot.put::<Worker, B, R>(job) };
    let at = &*slot as *const Slot;
    if overflow.get().is_null() {
        overflow.set(Box::into_raw(Box::default()));
    }
    // SAFETY: made above by `Box::into_raw` and freed only by `finish` at the end of the
    // scope; only the scope's thread touches it, and no other reference to it is alive.
    unsafe { (*overflow.get()).push(slot) };
    at.wrapping_byte_add(OVERFLOW_TAG)
}

/// Finishes the tasks left at the end of a scope (`w` and `rest` are its, `open` its
/// count of handles not taken off the top): the slots above its base in `w`'s deque if
/// some of them are its own, then the overflow slots not joined; their panics go to
/// `sink`. Never unwinds.
#[cold]
#[inline(never)]
fn finish(w: &Worker, rest: &Rest, open: usize, sink: &mut dyn FnMut(Panic)) {
    let list = rest.overflow.replace(ptr::null_mut());
    // SAFETY: null, or made by `Box::into_raw` in `overflow`; the scope ends, and its
    // handles with it, so nothing else refers to it.
    let list = (!list.is_null()).then(|| unsafe { Box::from_raw(list) });
    // The open handles not in the overflow have slots in the deque. With none, what lies
    // above the base belongs to others: a scope outside this one may have pushed there
    // while this one had nothing in the deque.
    if open > list.as_ref().map_or(0, |l| l.len()) {
        spawn::drain_to(w, w.owner().index_of(rest.base), &mut *sink);
    }
    let Some(list) = list else {
        return;
    };
    for slot in list.into_iter() {
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
        finish(self.w, self.rest(), self.open.get(), &mut task::drop_panic);
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
            // Taken off the top whatever happens: popped, or synced with its thief.
            scope.open.set(scope.open.get() - 1);
            scope.top.set(slot);
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
    /// Not inlined: a recursion through promises then recurses through this function,
    /// with the caller's own base case inlined into `op`. A `move` closure passes what it
    /// captures in registers, and [`Promises::worker`] saves holding the worker twice.
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
    #[inline(never)]
    pub fn promises<'w, T>(&'w self, op: impl FnOnce(&Promises<'w>) -> T) -> T {
        let base = self.owner().head();
        let rest = Rest {
            base,
            mark: self.frames().innermost_scope(),
            overflow: Cell::new(ptr::null_mut()),
        };
        let scope = Promises {
            w: self,
            top: Cell::new(base),
            open: Cell::new(0),
            rest: &rest,
            _inv: PhantomData,
        };
        let out = op(&scope);
        let out = scope.end(out);
        mem::forget(scope);
        out
    }
}
