//! Promises: a spawned task with a handle (the futures of Prell, "Embracing Explicit
//! Communication in Work-Stealing Runtime Systems", §4.3–4.4, renamed so as not to clash
//! with `std::future::Future`). The task is pushed like the second branch of a `join`:
//! a promise nobody steals costs no allocation and runs on the spawner's stack when it is
//! joined; a stolen one is awaited by leapfrogging (Lace) or by stealing through requests
//! (relay).
//!
//! Handles may be joined in any order. One whose slot is on top of the deque (the newest,
//! once the newer ones were joined) is popped as `join` pops its branch. An older one is finished in place: if no thief has it, its
//! owner takes the job out (taking its slot back from the shared part under Lace), runs
//! it, and marks the slot claimed, so that the later pop (or a thief, should the slot be
//! shared again) finds nothing to run; if a thief has it, the owner waits for it and
//! marks the slot claimed once it has read the outcome.
//!
//! Handles live inside [`Worker::promises`], which finishes whatever is left when its
//! closure returns, so a handle that is dropped or leaked without being joined cannot
//! outlive what its task borrows; its task's panic reaches the caller of `promises`. A
//! full deque never fails a spawn: the task then runs at once, and its handle keeps the
//! result.

use crate::sched::Schedule;
use crate::spawn;
use crate::task::{self, Panic, Slot, DONE};
use crate::worker::Worker;
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::Ordering::Acquire;

/// Spawns promises inside [`Worker::promises`].
pub struct Promises<'w> {
    w: &'w Worker,
    /// The deque's `head` when the scope began; its tasks occupy the slots from there.
    base: *const Slot,
    /// Panics for the end of the scope, once there are any (null until then, so that a
    /// scope without panics only tests one word at its end).
    trouble: Cell<*mut Trouble>,
    /// Invariant in `'w`, so tasks cannot borrow anything that dies inside the scope.
    _inv: PhantomData<&'w mut &'w ()>,
}

/// The panics a scope keeps for its end.
#[derive(Default)]
struct Trouble {
    /// The first panic of a promise whose handle was not joined.
    first: Option<Panic>,
    /// Panics of tasks that ran at spawn, by the id their handle holds: kept here, not in
    /// the handle, so that a leaked handle's panic still reaches the end of the scope.
    ready: Vec<(u32, Panic)>,
    next_id: u32,
}

/// The handle of a spawned task; [`Promise::join`] waits for its result.
///
/// A handle that is dropped (or leaked) without being joined leaves its task to the end of
/// the [`Worker::promises`] scope, which finishes it, discards its result, and re-raises
/// its panic.
pub struct Promise<'f, 'w, R> {
    scope: &'f Promises<'w>,
    /// The scope's worker, held here too: a join that read it from the scope would load
    /// it from memory after the task's call, and every step of the pop would wait for it.
    w: &'w Worker,
    /// The task's slot, or null if it ran at spawn.
    slot: *const Slot,
    join: JoinFn<R>,
    /// The outcome of a task that ran at spawn (full deque, or not spawned from the
    /// innermost scope): its result, or the id of its panic in the scope's `Trouble`.
    ready: Option<Result<R, u32>>,
    _slot: PhantomData<&'w Slot>,
}

/// How a handle finishes its pushed task: on top of the innermost scope (pop it), or in
/// place.
type JoinFn<R> = fn(&Worker, &Slot, bool) -> R;

/// The `join` of a handle whose task ran at spawn.
fn never_pushed<R>(_: &Worker, _: &Slot, _: bool) -> R {
    unreachable!("a task that ran at spawn has no slot")
}

/// Finishes the task in `slot`, put with `B` and `R`: a task on top of the deque, of the
/// innermost scope, is popped like a `join` branch, any other is finished in place.
#[inline(always)]
fn join_pushed<B, R>(w: &Worker, slot: &Slot, on_top: bool) -> R
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    if on_top && w.owner().try_pop_private(slot) {
        // SAFETY: popped privately, so the slot still holds the `B` that `spawn` put.
        let job = unsafe { slot.take::<B, R>() };
        return job(w);
    }
    join_slow::<B, R>(w, slot, on_top)
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
fn join_boxed<B, R>(w: &Worker, slot: &Slot, on_top: bool) -> R
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
    fn id(&self) -> *const () {
        self as *const Promises<'w> as *const ()
    }

    /// Whether this is the innermost scope of its worker, which alone may push.
    #[inline(always)]
    fn is_innermost(&self) -> bool {
        ptr::eq(self.w.frames().innermost_scope(), self.id())
    }

    /// Spawns `f`; it may run on another worker until the handle is joined.
    ///
    /// Called where this is not the innermost scope of its worker (inside a nested
    /// [`Worker::promises`] or [`Worker::scope`] body), or with the deque full, `f` runs
    /// at once and the handle keeps its result.
    #[inline]
    pub fn spawn<'f, F, R>(&'f self, f: F) -> Promise<'f, 'w, R>
    where
        F: FnOnce(&Worker) -> R + Send + 'w,
        R: Send + 'w,
    {
        let w = self.w;
        if !task::fits::<F, R>() {
            return self.spawn_boxed(f);
        }
        let pushed = if self.is_innermost() {
            w.push_task::<F, R>(f)
        } else {
            Err(f)
        };
        match pushed {
            Ok(slot) => self.pushed(slot, join_pushed::<F, R>),
            Err(f) => self.ran(self.run_at_spawn(f), join_pushed::<F, R>),
        }
    }

    /// The handle of a task that ran at spawn. (The cold paths return the outcome, not
    /// the handle, so that the handle stays out of memory on the hot path; `join` is the
    /// one the pushed path stores, never called here, so that the call stays direct.)
    #[inline(always)]
    fn ran<'f, R>(&'f self, out: Result<R, u32>, join: JoinFn<R>) -> Promise<'f, 'w, R> {
        Promise {
            scope: self,
            w: self.w,
            slot: ptr::null(),
            join,
            ready: Some(out),
            _slot: PhantomData,
        }
    }

    /// The handle of a task pushed into `slot`.
    #[inline(always)]
    fn pushed<'f, R>(&'f self, slot: *const Slot, join: JoinFn<R>) -> Promise<'f, 'w, R> {
        Promise {
            scope: self,
            w: self.w,
            slot,
            join,
            ready: None,
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
        if !self.is_innermost() {
            let out = self.run_at_spawn(move |w: &Worker| f(w));
            return self.ran(out, never_pushed::<R>);
        }
        self.push_boxed(move |w: &Worker| Box::new(f(w)))
    }

    fn push_boxed<'f, B, R>(&'f self, job: B) -> Promise<'f, 'w, R>
    where
        B: FnOnce(&Worker) -> Box<R> + Send + 'w,
        R: Send + 'w,
    {
        match self.w.push_task::<B, Box<R>>(job) {
            Ok(slot) => self.pushed(slot, join_boxed::<B, R>),
            Err(job) => self.ran(self.run_at_spawn(move |w| *job(w)), join_boxed::<B, R>),
        }
    }

    /// Runs a task at spawn: its result, or the id of its panic, kept in the scope. Inline,
    /// so that its result is not written through a pointer into the handle (which would
    /// keep the handle in memory on the hot path too).
    #[inline(always)]
    fn run_at_spawn<F, R>(&self, f: F) -> Result<R, u32>
    where
        F: FnOnce(&Worker) -> R,
    {
        panic::catch_unwind(AssertUnwindSafe(|| f(self.w))).map_err(|p| self.keep_ready(p))
    }

    /// Keeps the panic of a task that ran at spawn; returns its id.
    #[cold]
    #[inline(never)]
    fn keep_ready(&self, p: Panic) -> u32 {
        let t = self.trouble();
        let id = t.next_id;
        t.next_id += 1;
        t.ready.push((id, p));
        id
    }

    /// The scope's panics, made on first use.
    #[allow(clippy::mut_from_ref)]
    fn trouble(&self) -> &mut Trouble {
        if self.trouble.get().is_null() {
            self.trouble.set(Box::into_raw(Box::default()));
        }
        // SAFETY: made above and freed only by `take_trouble`; a scope is used by its own
        // thread alone (it is not `Sync`), and no caller keeps the reference across a call
        // that could reach this again.
        unsafe { &mut *self.trouble.get() }
    }

    /// Takes the scope's panics, if any, leaving none.
    fn take_trouble(&self) -> Option<Box<Trouble>> {
        let t = self.trouble.replace(ptr::null_mut());
        // SAFETY: `t` came from `Box::into_raw` in `trouble` and is owned by the scope.
        (!t.is_null()).then(|| unsafe { Box::from_raw(t) })
    }

    /// The panic of the task of handle `id`, which ran at spawn.
    fn take_ready(&self, id: u32) -> Panic {
        let ready = &mut self.trouble().ready;
        let i = ready.iter().position(|&(s, _)| s == id);
        ready
            .swap_remove(i.expect("a panicked task left its panic"))
            .1
    }

    /// Keeps the first panic of a promise whose handle was not joined.
    fn record(&self, p: Panic) {
        task::keep_first(&mut self.trouble().first, p);
    }

    /// Whether the handle of `slot` may pop it: it is the top of `w`'s deque (`w` is this
    /// scope's worker), and this scope is the innermost one, so that popping it pops
    /// nothing of another scope (an inner scope may not have pushed yet: its base is then
    /// just above `slot`). Otherwise the task is finished in place: newer handles of the
    /// scope not joined yet, spawned tasks or claimed slots lie above it.
    #[inline(always)]
    fn may_pop(&self, w: &Worker, slot: *const Slot) -> bool {
        ptr::eq(w.owner().head(), slot.wrapping_add(1))
            && ptr::eq(w.frames().innermost_scope(), self.id())
    }

    /// The deque depth where the scope began.
    fn depth(&self) -> u32 {
        self.w.owner().index_of(self.base)
    }

    /// Ends the scope after its closure returned `out`; `w` is its worker.
    #[inline(always)]
    fn end<T>(&self, w: &Worker, out: T) -> T {
        if w.owner().head() != self.base || !self.trouble.get().is_null() {
            return self.end_slow(out);
        }
        out
    }

    /// The end of a scope with tasks left (unjoined handles, or spawned tasks) or panics.
    #[cold]
    #[inline(never)]
    fn end_slow<T>(&self, out: T) -> T {
        spawn::drain_to(self.w, self.depth(), |p| self.record(p));
        let Some(t) = self.take_trouble() else {
            return out;
        };
        let mut first = t.first;
        for (_, p) in t.ready {
            task::keep_first(&mut first, p);
        }
        task::resume_first(Ok(out), first)
    }
}

/// Ends a scope whose closure unwinds (or whose end re-raises a task's panic, after which
/// this finds nothing left): its tasks finish first, and their panics are dropped (the
/// closure's own panic goes on). On the normal path the scope is forgotten after `end`.
impl Drop for Promises<'_> {
    fn drop(&mut self) {
        spawn::drain_to(self.w, self.depth(), task::drop_panic);
        if let Some(t) = self.take_trouble() {
            t.first.into_iter().for_each(task::drop_panic);
            t.ready.into_iter().for_each(|(_, p)| task::drop_panic(p));
        }
    }
}

impl<R> Promise<'_, '_, R> {
    /// Waits for the task and returns its result, re-raising its panic. Handles may be
    /// joined in any order.
    #[inline]
    pub fn join(self) -> R {
        let Promise {
            scope,
            w,
            slot,
            join,
            ready,
            ..
        } = self;
        if !slot.is_null() {
            // SAFETY: a pushed task's slot stays in use until this handle finishes it.
            let pop = scope.may_pop(w, slot);
            return join(w, unsafe { &*slot }, pop);
        }
        match ready {
            Some(Ok(r)) => r,
            Some(Err(id)) => panic::resume_unwind(scope.take_ready(id)),
            None => unreachable!("a handle without a slot has its outcome"),
        }
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
    #[inline]
    pub fn promises<'w, T>(&'w self, op: impl FnOnce(&Promises<'w>) -> T) -> T {
        let scope = Promises {
            w: self,
            base: self.owner().head(),
            trouble: Cell::new(ptr::null_mut()),
            _inv: PhantomData,
        };
        // Popped before the scope ends, also when `op` unwinds (the guard drops first).
        let entered = self.frames().enter_scope(scope.id());
        let out = op(&scope);
        drop(entered);
        let out = scope.end(self, out);
        mem::forget(scope);
        out
    }
}
