//! Promises: a spawned task with a handle (the futures of Prell, "Embracing Explicit
//! Communication in Work-Stealing Runtime Systems", §4.3–4.4, renamed so as not to clash
//! with `std::future::Future`). The task is pushed like the second branch of a `join`:
//! a promise nobody steals costs no allocation and runs on the spawner's stack when it is
//! joined; a stolen one is awaited by leapfrogging (Lace) or by stealing through requests
//! (relay).
//!
//! Handles may be joined in any order. The newest one, on top of the deque, is popped as
//! `join` pops its branch. An older one is finished in place: if no thief has it, its
//! owner takes the job out (taking its slot back from the shared part under Lace), runs
//! it, and marks the slot claimed, so that the later pop (or a thief, should the slot be
//! shared again) finds nothing to run; if a thief has it, the owner waits for it and
//! marks the slot claimed once it has read the outcome.
//!
//! Handles live inside [`Worker::promises`], which finishes whatever is left when its
//! closure returns, so a handle leaked with `mem::forget` cannot outlive what its task
//! borrows; its panic reaches the caller of `promises`. A full deque never fails a spawn:
//! the task then runs at once, and its handle keeps the result.

use crate::spawn;
use crate::task::{self, Panic, Slot, DONE};
use crate::worker::Worker;
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::mem::{self, ManuallyDrop};
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::Ordering::Acquire;

/// Spawns promises inside [`Worker::promises`].
pub struct Promises<'w> {
    w: &'w Worker,
    /// Deque depth when the scope began; its tasks occupy the slots above it.
    base: u32,
    /// The innermost scope before this one (restored at the end).
    outer: *const (),
    /// A panic is kept in `panic` or `ready`.
    troubled: Cell<bool>,
    /// The first panic of a dropped or leaked promise.
    panic: Cell<Option<Panic>>,
    /// Panics of tasks that ran at spawn, by the id their handle holds: kept here, not in
    /// the handle, so that a leaked handle's panic still reaches the end of the scope.
    ready: RefCell<Vec<(u32, Panic)>>,
    next_ready: Cell<u32>,
    /// Invariant in `'w`, so tasks cannot borrow anything that dies inside the scope.
    _inv: PhantomData<&'w mut &'w ()>,
}

/// The handle of a spawned task; [`Promise::join`] waits for its result.
///
/// Dropping a handle without joining it waits for the task and discards its result (a
/// panic in it is re-raised when the [`Worker::promises`] scope ends).
pub struct Promise<'f, 'w, R> {
    scope: &'f Promises<'w>,
    state: State<'w, R>,
}

/// How a handle finishes its pushed task: on top of the innermost scope (pop it), or in
/// place.
type JoinFn<R> = fn(&Worker, &Slot, bool) -> R;

enum State<'w, R> {
    Pushed {
        slot: &'w Slot,
        join: JoinFn<R>,
    },
    /// The task ran at spawn (full deque, or not spawned from the innermost scope).
    Ready(R),
    /// As `Ready`, but the task panicked: the panic waits in the scope's `ready`.
    Panicked(u32),
    Joined,
}

/// Finishes the task in `slot`, put with `B` and `R`: the newest task of the innermost
/// scope is synced like a `join` branch, any other is finished in place.
fn join_pushed<B, R>(w: &Worker, slot: &Slot, on_top: bool) -> R
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
    if w.owner().take_back(slot) {
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

    /// Spawns `f`; it may run on another worker until the handle is joined.
    ///
    /// Called where this is not the innermost scope of its worker (inside a nested
    /// [`Worker::promises`] or [`Worker::scope`] body), or with the deque full, `f` runs
    /// at once and the handle keeps its result.
    pub fn spawn<'f, F, R>(&'f self, f: F) -> Promise<'f, 'w, R>
    where
        F: FnOnce(&Worker) -> R + Send + 'w,
        R: Send + 'w,
    {
        let w = self.w;
        let state = if !ptr::eq(w.spawn.innermost.get(), self.id()) {
            self.run_at_spawn(f)
        } else if task::fits::<F, R>() {
            match w.push_task::<F, R>(f) {
                Ok(slot) => State::Pushed {
                    slot,
                    join: join_pushed::<F, R>,
                },
                Err(f) => self.run_at_spawn(f),
            }
        } else {
            self.spawn_boxed(f)
        };
        Promise { scope: self, state }
    }

    /// A task too large for a slot: its job and result go to the heap.
    #[inline(never)]
    fn spawn_boxed<F, R>(&self, f: F) -> State<'w, R>
    where
        F: FnOnce(&Worker) -> R + Send + 'w,
        R: Send + 'w,
    {
        let f = Box::new(f);
        self.push_boxed(move |w: &Worker| Box::new(f(w)))
    }

    fn push_boxed<B, R>(&self, job: B) -> State<'w, R>
    where
        B: FnOnce(&Worker) -> Box<R> + Send + 'w,
        R: Send + 'w,
    {
        match self.w.push_task::<B, Box<R>>(job) {
            Ok(slot) => State::Pushed {
                slot,
                join: join_boxed::<B, R>,
            },
            Err(job) => self.run_at_spawn(move |w| *job(w)),
        }
    }

    #[cold]
    #[inline(never)]
    fn run_at_spawn<F, R>(&self, f: F) -> State<'w, R>
    where
        F: FnOnce(&Worker) -> R,
    {
        match panic::catch_unwind(AssertUnwindSafe(|| f(self.w))) {
            Ok(r) => State::Ready(r),
            Err(p) => {
                let id = self.next_ready.get();
                self.next_ready.set(id + 1);
                self.ready.borrow_mut().push((id, p));
                self.troubled.set(true);
                State::Panicked(id)
            }
        }
    }

    /// The panic of the task of handle `id`, which ran at spawn.
    fn take_ready(&self, id: u32) -> Panic {
        let mut ready = self.ready.borrow_mut();
        let i = ready.iter().position(|&(s, _)| s == id);
        ready
            .swap_remove(i.expect("a panicked task left its panic"))
            .1
    }

    /// Keeps the first panic of a dropped or leaked promise for the end of the scope.
    fn record(&self, p: Panic) {
        let mut first = self.panic.take();
        task::keep_first(&mut first, p);
        self.panic.set(first);
        self.troubled.set(true);
    }

    /// Whether `slot` is on top of the deque and this scope is the innermost one, so that
    /// popping it pops nothing that belongs to another scope.
    #[inline(always)]
    fn on_top(&self, slot: &Slot) -> bool {
        let w = self.w;
        ptr::eq(w.spawn.innermost.get(), self.id())
            && w.owner().top().is_some_and(|(s, _)| ptr::eq(s, slot))
    }

    /// Ends the scope after its closure returned `out`.
    #[inline(always)]
    fn end<T>(&self, out: T) -> T {
        let w = self.w;
        w.spawn.innermost.set(self.outer);
        if w.owner().depth() != self.base || self.troubled.get() {
            return self.end_slow(out);
        }
        out
    }

    /// The end of a scope with tasks left (leaked handles, or spawned tasks) or panics.
    #[cold]
    #[inline(never)]
    fn end_slow<T>(&self, out: T) -> T {
        spawn::drain_to(self.w, self.base, |p| self.record(p));
        for (_, p) in self.ready.take() {
            self.record(p);
        }
        task::resume_first(Ok(out), self.panic.take())
    }
}

/// Ends a scope whose closure unwinds: its tasks finish first, and their panics are
/// dropped (the closure's own panic goes on).
struct EndOnUnwind<'a, 'w>(&'a Promises<'w>);

impl Drop for EndOnUnwind<'_, '_> {
    fn drop(&mut self) {
        let s = self.0;
        s.w.spawn.innermost.set(s.outer);
        spawn::drain_to(s.w, s.base, task::drop_panic);
        s.ready
            .take()
            .into_iter()
            .for_each(|(_, p)| task::drop_panic(p));
        s.panic.take().into_iter().for_each(task::drop_panic);
    }
}

impl<R> Promise<'_, '_, R> {
    /// Waits for the task and returns its result, re-raising its panic. Handles may be
    /// joined in any order.
    pub fn join(self) -> R {
        let mut this = ManuallyDrop::new(self);
        let scope = this.scope;
        match mem::replace(&mut this.state, State::Joined) {
            State::Pushed { slot, join } => join(scope.w, slot, scope.on_top(slot)),
            State::Ready(r) => r,
            State::Panicked(id) => panic::resume_unwind(scope.take_ready(id)),
            State::Joined => unreachable!("a promise is joined once"),
        }
    }
}

impl<R> Drop for Promise<'_, '_, R> {
    fn drop(&mut self) {
        let scope = self.scope;
        let lost = match mem::replace(&mut self.state, State::Joined) {
            State::Joined => return,
            State::Pushed { slot, join } => {
                let on_top = scope.on_top(slot);
                match panic::catch_unwind(AssertUnwindSafe(|| join(scope.w, slot, on_top))) {
                    Ok(r) => task::drop_caught(r),
                    Err(p) => Some(p),
                }
            }
            State::Ready(r) => task::drop_caught(r),
            State::Panicked(id) => Some(scope.take_ready(id)),
        };
        if let Some(p) = lost {
            scope.record(p);
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
            base: self.owner().depth(),
            outer: self.spawn.innermost.get(),
            troubled: Cell::new(false),
            panic: Cell::new(None),
            ready: RefCell::new(Vec::new()),
            next_ready: Cell::new(0),
            _inv: PhantomData,
        };
        self.spawn.innermost.set(scope.id());
        let guard = EndOnUnwind(&scope);
        let out = op(&scope);
        mem::forget(guard);
        scope.end(out)
    }
}
