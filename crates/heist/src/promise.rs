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
//! A full deque never fails a spawn: the task then runs at once, as it would without a
//! pool, and its handle keeps the result; a panic in it unwinds out of `spawn`.

use crate::sched::Schedule;
use crate::spawn;
use crate::task::{self, Slot, DONE};
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
    /// The deque's `head` when the scope began; its tasks occupy the slots from there.
    base: *const Slot,
    /// The scope's name among its worker's scopes (`Frames::enter_scope`): it may push
    /// while that is the innermost one. A name, not an address, so that the scope need not
    /// live in memory.
    id: usize,
    /// Handles spawned and not popped by their own join: unjoined ones, and ones finished
    /// in place or after a steal, whose slots the end drains.
    open: Cell<usize>,
    /// Invariant in `'w`, so tasks cannot borrow anything that dies inside the scope.
    _inv: PhantomData<&'w mut &'w ()>,
}

/// The handle of a spawned task; [`Promise::join`] waits for its result.
///
/// A handle that is dropped (or leaked) without being joined leaves its task to the end of
/// the [`Worker::promises`] scope, which finishes it, discards its result, and re-raises
/// its panic.
pub struct Promise<'f, 'w, R> {
    scope: &'f Promises<'w>,
    /// The task's slot (meaningless if it ran at spawn).
    slot: *const Slot,
    join: JoinFn<R>,
    /// The result of a task that ran at spawn (full deque, or not spawned from the
    /// innermost scope).
    ready: Option<R>,
    _slot: PhantomData<&'w Slot>,
}

/// How a handle finishes its pushed task: on top of the innermost scope (pop it), or in
/// place. Returns the result and whether the slot was popped by this fast path (if not,
/// the scope's end drains the deque to its base).
type JoinFn<R> = fn(&Worker, &Slot, bool) -> (R, bool);

/// Finishes the task in `slot`, put with `B` and `R`: a task on top of the deque, of the
/// innermost scope, is popped like a `join` branch, any other is finished in place.
#[inline(always)]
fn join_pushed<B, R>(w: &Worker, slot: &Slot, on_top: bool) -> (R, bool)
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    if on_top && w.owner().try_pop_private(slot) {
        // SAFETY: popped privately, so the slot still holds the `B` that `spawn` put.
        let job = unsafe { slot.take::<B, R>() };
        return (job(w), true);
    }
    (join_slow::<B, R>(w, slot, on_top), false)
}

/// `join_pushed` off the fast path: spawned tasks above the slot, a thief, a request, or
/// an out-of-order join.
#[cold]
#[inline(never)]
fn join_slow<B, R>(w: &Worker, slot: &Slot, on_top: bool) -> R
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    if on_top {
        return w.sync::<B, R>(slot);
    }
    match join_in_place::<B, R>(w, slot) {
        Ok(r) => r,
        Err(p) => panic::resume_unwind(p),
    }
}

/// `join_pushed` for a task whose job and result were boxed.
fn join_boxed<B, R>(w: &Worker, slot: &Slot, on_top: bool) -> (R, bool)
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
    /// [`Worker::promises`] or [`Worker::scope`] body), or with the deque full, `f` runs
    /// at once (a panic in it unwinds from here) and the handle keeps its result.
    #[inline]
    pub fn spawn<'f, F, R>(&'f self, f: F) -> Promise<'f, 'w, R>
    where
        F: FnOnce(&Worker) -> R + Send + 'w,
        R: Send + 'w,
    {
        if !task::fits::<F, R>() {
            return self.spawn_boxed(f);
        }
        let at = self.w.owner().head();
        let pushed = if self.is_innermost() {
            self.w.push_task::<F, R>(f)
        } else {
            Err(f)
        };
        match pushed {
            Ok(slot) => self.handle(slot, None, join_pushed::<F, R>),
            Err(f) => self.ran(at, f(self.w), join_pushed::<F, R>),
        }
    }

    /// The handle of a task that ran at spawn with result `r`. Its slot is `at`, the
    /// `head` before the spawn, where a pushed task's would be, so that the handle holds
    /// the same slot on both paths; `join` is the one the pushed path stores, never called
    /// for it, so that the call stays direct.
    #[inline(always)]
    fn ran<'f, R>(&'f self, at: *const Slot, r: R, join: JoinFn<R>) -> Promise<'f, 'w, R> {
        self.handle(at, Some(r), join)
    }

    /// A handle, counted open until its join pops its slot (or takes its result).
    #[inline(always)]
    fn handle<'f, R>(
        &'f self,
        slot: *const Slot,
        ready: Option<R>,
        join: JoinFn<R>,
    ) -> Promise<'f, 'w, R> {
        self.open.set(self.open.get() + 1);
        Promise {
            scope: self,
            slot,
            join,
            ready,
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
        let at = self.w.owner().head();
        let pushed = if self.is_innermost() {
            self.w.push_task::<B, Box<R>>(job)
        } else {
            Err(job)
        };
        match pushed {
            Ok(slot) => self.handle(slot, None, join_boxed::<B, R>),
            Err(job) => self.ran(at, *job(self.w), join_boxed::<B, R>),
        }
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

    /// Ends the scope after its closure returned `out`.
    #[inline(always)]
    fn end<T>(&self, out: T) -> T {
        if self.open.get() != 0 {
            return end_slow(self.w, self.base, out);
        }
        out
    }
}

/// The end of a scope with handles left open (unjoined, or finished off the fast path):
/// finishes what is left above `base` in `w`'s deque, and re-raises the first panic of a
/// task whose handle was not joined.
#[cold]
#[inline(never)]
fn end_slow<T>(w: &Worker, base: *const Slot, out: T) -> T {
    let mut first = None;
    spawn::drain_to(w, w.owner().index_of(base), |p| {
        task::keep_first(&mut first, p)
    });
    task::resume_first(Ok(out), first)
}

/// The end of a scope whose closure unwinds (or whose end re-raises a task's panic, after
/// which this finds nothing left): its tasks finish first, and their panics are dropped
/// (the closure's own panic goes on).
#[cold]
#[inline(never)]
fn end_unwinding(w: &Worker, base: *const Slot) {
    spawn::drain_to(w, w.owner().index_of(base), task::drop_panic);
}

/// On the normal path the scope is forgotten after `end`.
impl Drop for Promises<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        end_unwinding(self.w, self.base);
    }
}

impl<R> Promise<'_, '_, R> {
    /// Waits for the task and returns its result, re-raising its panic. Handles may be
    /// joined in any order.
    #[inline]
    pub fn join(self) -> R {
        let Promise {
            scope,
            slot,
            join,
            ready,
            ..
        } = self;
        let open = &scope.open;
        if let Some(r) = ready {
            open.set(open.get() - 1);
            return r;
        }
        let pop = scope.may_pop(slot);
        // SAFETY: a pushed task's slot stays in use until this handle finishes it.
        let (r, popped) = join(scope.w, unsafe { &*slot }, pop);
        if popped {
            open.set(open.get() - 1);
        }
        r
    }
}

impl Worker {
    /// Runs `op` with a [`Promises`] spawner. Every promise spawned in it has finished
    /// when this returns, including promises whose handles were leaked.
    ///
    /// ```
    /// fn fib(w: &heist::Worker, n: u64) -> u64 {
    ///     if n < 2 {
    ///         return n;
    ///     }
    ///     w.promises(|s| {
    ///         let f = s.spawn(move |w| fib(w, n - 1));
    ///         let y = fib(w, n - 2);
    ///         f.join() + y
    ///     })
    /// }
    /// let pool = heist::Pool::builder().workers(2).build().unwrap();
    /// assert_eq!(pool.run(|w| fib(w, 20)), 6765);
    /// ```
    #[inline(never)]
    pub fn promises<'w, T>(&'w self, op: impl FnOnce(&Promises<'w>) -> T) -> T {
        let entered = self.frames().enter_scope();
        let scope = Promises {
            w: self,
            base: self.owner().head(),
            id: entered.id(),
            open: Cell::new(0),
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
