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
//! scope counts its handles that were not popped by their own join: when none are left,
//! its end has nothing to drain. The count goes up at every spawn and down at every such
//! join, so where the compiler sees both (a spawn and its join in one function) it is a
//! constant, and the scope and its handles live in registers: that is what makes an
//! unstolen promise cost about what a `join` costs.
//!
//! A full deque never fails a spawn, and a scope that is not the innermost one (its
//! spawner used inside a nested scope's body) never pushes: such a task goes to a boxed
//! slot of its own, the scope's overflow, and runs when its handle joins it or when the
//! scope ends. Its handle holds the slot's address tagged in the low bit (a slot is
//! cache-line aligned), so that it never passes the pop's check and the handle needs no
//! other field to tell the two apart.

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
    /// The scope's name among its worker's scopes (`Frames::enter_scope`): it may push
    /// while that is the innermost one. A name, not an address, so that the scope need not
    /// live in memory.
    id: usize,
    /// Handles spawned and not popped by their own join: unjoined ones, ones finished in
    /// place or after a steal, whose slots the end drains, and overflow ones.
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

/// How a handle finishes its task: on top of the innermost scope (pop it), in place, or
/// in its overflow slot. Returns the result and whether the slot was popped by the fast
/// path (if not, the scope's end drains the deque to its base).
type JoinFn<R> = fn(&Worker, *const Slot, bool) -> (R, bool);

/// The low bit of an overflow slot's address in its handle.
const OVERFLOW_TAG: usize = 1;

/// Finishes the task in `slot`, put with `B` and `R`: a task on top of the deque, of the
/// innermost scope, is popped like a `join` branch, any other is finished in place.
#[inline(always)]
fn join_pushed<B, R>(w: &Worker, slot: *const Slot, on_top: bool) -> (R, bool)
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    // SAFETY (of `&*slot`): on top, `slot` is `head - 1`, an untagged slot of the deque,
    // in use until this handle finishes it.
    if on_top && w.owner().try_pop_private(unsafe { &*slot }) {
        // SAFETY: popped privately, so the slot still holds the `B` that `spawn` put.
        let job = unsafe { (*slot).take::<B, R>() };
        return (job(w), true);
    }
    (join_slow::<B, R>(w, slot, on_top), false)
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
fn join_boxed<B, R>(w: &Worker, slot: *const Slot, on_top: bool) -> (R, bool)
where
    B: FnOnce(&Worker) -> Box<R> + Send,
    R: Send,
{
    let (r, popped) = join_pushed::<B, Box<R>>(w, slot, on_top);
    (*r, popped)
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

    /// Whether this is the innermost scope of its worker, which alone may push.
    #[inline(always)]
    fn is_innermost(&self) -> bool {
        self.w.frames().innermost_scope() == self.id
    }

    /// Spawns `f`; it may run on another worker until the handle is joined.
    ///
    /// Called where this is not the innermost scope of its worker (inside a nested
    /// [`Worker::promises`] or [`Worker::scope`] body), or with the deque full, `f` goes to
    /// a boxed slot of the scope's own and runs when the handle is joined (or when the
    /// scope ends).
    #[inline]
    pub fn spawn<'f, F, R>(&'f self, f: F) -> Promise<'f, 'w, R>
    where
        F: FnOnce(&Worker) -> R + Send + 'w,
        R: Send + 'w,
    {
        if !task::fits::<F, R>() {
            return self.spawn_boxed(f);
        }
        let pushed = if self.is_innermost() {
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

    /// A handle, counted open until its join pops its slot.
    #[inline(always)]
    fn handle<'f, R>(&'f self, slot: *const Slot, join: JoinFn<R>) -> Promise<'f, 'w, R> {
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
        let pushed = if self.is_innermost() {
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

    /// Whether the handle of `slot` may pop it: it is the top of the deque, and this scope
    /// is the innermost one, so that popping it pops nothing of another scope (an inner
    /// scope may not have pushed yet: its base is then just above `slot`). Otherwise the
    /// task is finished in place: newer handles of the scope not joined yet, spawned tasks
    /// or claimed slots lie above it.
    #[inline(always)]
    fn may_pop(&self, slot: *const Slot) -> bool {
        ptr::eq(self.w.owner().head(), slot.wrapping_add(1)) && self.is_innermost()
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
            finish(self.w, self.rest(), &mut |p| {
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

/// Finishes the tasks left at the end of a scope (`w` and `rest` are its): the slots
/// above its base in `w`'s deque, then the overflow slots not joined; their panics go to
/// `sink`. Never unwinds.
#[cold]
#[inline(never)]
fn finish(w: &Worker, rest: &Rest, sink: &mut dyn FnMut(Panic)) {
    spawn::drain_to(w, w.owner().index_of(rest.base), &mut *sink);
    let list = rest.overflow.replace(ptr::null_mut());
    if list.is_null() {
        return;
    }
    // SAFETY: made by `Box::into_raw` in `overflow`; the scope ends, and its handles
    // with it, so nothing else refers to it.
    let list = unsafe { Box::from_raw(list) };
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
        finish(self.w, self.rest(), &mut task::drop_panic);
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
        let (r, popped) = join(scope.w, slot, scope.may_pop(slot));
        if popped {
            scope.open.set(scope.open.get() - 1);
        }
        r
    }
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
        let rest = Rest {
            base: self.owner().head(),
            overflow: Cell::new(ptr::null_mut()),
        };
        let entered = self.frames().enter_scope();
        let scope = Promises {
            w: self,
            id: entered.id(),
            open: Cell::new(0),
            rest: &rest,
            _inv: PhantomData,
        };
        // Popped before the scope ends, also when `op` unwinds (moved here, the guard
        // drops before the scope).
        let entered = entered;
        let out = op(&scope);
        drop(entered);
        let out = scope.end(out);
        mem::forget(scope);
        out
    }
}
