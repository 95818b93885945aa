//! Futures (thesis §4.3–4.4): a spawned task with a handle. The task is stored in the
//! spawner's deque like the second half of a `join`, so a future nobody steals costs no
//! allocation and runs on the spawner's stack when joined; a stolen one is awaited by
//! leapfrogging (Lace) or by stealing through requests (relay).
//!
//! Handles live inside [`Worker::futures`], which joins whatever is left when its closure
//! returns, so a handle that is leaked with `mem::forget` cannot outlive what its task
//! borrows; its panic reaches the caller of `futures`. Handles are joined newest first
//! (the order in which they drop): the order is checked against the order of spawning,
//! not against the deque, so it holds alike whether a task was pushed or (with the deque
//! full) ran at once.

use crate::frame::Frame;
use crate::task::{self, Panic, Slot};
use crate::worker::Worker;
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};

/// Spawns futures inside [`Worker::futures`].
pub struct Futures<'w> {
    w: &'w Worker,
    /// Deque depth when the scope began; futures occupy the slots above it.
    base: u32,
    /// Futures of this scope in the deque.
    live: Cell<u32>,
    /// Handles spawned and neither joined nor dropped (leaked ones stay counted).
    open: Cell<u32>,
    dropped_panic: Cell<Option<Panic>>,
    /// Panics of tasks that ran at spawn (the deque was full), by their handle's `seq`:
    /// kept here, not in the handle, so that a leaked handle's panic still reaches the end
    /// of the scope.
    ready_panics: RefCell<Vec<(u32, Panic)>>,
    /// Invariant in `'w`, so tasks cannot borrow anything that dies inside the scope.
    _inv: PhantomData<&'w mut &'w ()>,
}

/// The handle of a spawned task; [`Future::join`] waits for its result.
///
/// Dropping a handle without joining it waits for the task and discards its result (a
/// panic in it is re-raised when the [`Worker::futures`] scope ends).
pub struct Future<'f, 'w, R> {
    state: State<'w, R>,
    scope: &'f Futures<'w>,
    /// How many handles of the scope were open when this one was spawned.
    seq: u32,
}

enum State<'w, R> {
    Pending {
        slot: &'w Slot,
        sync: fn(&Worker, &Slot) -> std::thread::Result<R>,
    },
    /// The deque was full and the task ran at once.
    Ready(std::thread::Result<R>),
    /// As `Ready`, but the task panicked: the panic waits in the scope's `ready_panics`.
    ReadyPanicked,
    Joined,
}

fn sync_erased<B, R>(w: &Worker, slot: &Slot) -> std::thread::Result<R>
where
    B: FnOnce(&Worker) -> R + Send,
    R: Send,
{
    panic::catch_unwind(AssertUnwindSafe(|| w.sync::<B, R>(slot)))
}

fn sync_unbox<B, R>(w: &Worker, slot: &Slot) -> std::thread::Result<R>
where
    B: FnOnce(&Worker) -> Box<R> + Send,
    R: Send,
{
    panic::catch_unwind(AssertUnwindSafe(|| *w.sync::<B, Box<R>>(slot)))
}

impl<'w> Futures<'w> {
    /// Spawns `f`; it may run on another worker until the handle is joined.
    ///
    /// # Panics
    /// If called while a task pushed after this scope began is still pending on this
    /// worker (futures must nest like the scopes that spawn them).
    pub fn spawn<'f, F, R>(&'f self, f: F) -> Future<'f, 'w, R>
    where
        F: FnOnce(&Worker) -> R + Send + 'w,
        R: Send + 'w,
    {
        let w = self.w;
        // Only the innermost scope may spawn, and only at its own level: so the slots
        // above `base` are this scope's futures, and its end drains nothing else.
        let innermost = w.frames().innermost_futures() == self as *const Futures<'w> as *const ();
        assert!(
            innermost && w.owner().depth() == self.base + self.live.get(),
            "heist: a future must be spawned directly in the innermost `futures` scope"
        );
        let state = if task::fits::<F, R>() {
            match w.push_task::<F, R>(f) {
                Ok(slot) => {
                    self.live.set(self.live.get() + 1);
                    State::Pending {
                        slot,
                        sync: sync_erased::<F, R>,
                    }
                }
                Err(f) => State::Ready(panic::catch_unwind(AssertUnwindSafe(|| f(w)))),
            }
        } else {
            // Too large for a slot: the job and its result go to the heap instead.
            let f = Box::new(f);
            self.push_boxed(move |w: &Worker| Box::new(f(w)))
        };
        let seq = self.open.get();
        self.open.set(seq + 1);
        let state = match state {
            State::Ready(Err(p)) => {
                self.ready_panics.borrow_mut().push((seq, p));
                State::ReadyPanicked
            }
            state => state,
        };
        Future {
            state,
            scope: self,
            seq,
        }
    }

    fn push_boxed<B, R>(&self, job: B) -> State<'w, R>
    where
        B: FnOnce(&Worker) -> Box<R> + Send + 'w,
        R: Send + 'w,
    {
        match self.w.push_task::<B, Box<R>>(job) {
            Ok(slot) => {
                self.live.set(self.live.get() + 1);
                State::Pending {
                    slot,
                    sync: sync_unbox::<B, R>,
                }
            }
            Err(job) => State::Ready(panic::catch_unwind(AssertUnwindSafe(|| *job(self.w)))),
        }
    }

    fn is_top(&self, slot: &Slot) -> bool {
        self.w.owner().top().map(|s| s as *const Slot) == Some(slot as *const Slot)
    }

    /// Waits for `slot`, the newest open future's.
    fn finish<R>(
        &self,
        slot: &Slot,
        sync: fn(&Worker, &Slot) -> std::thread::Result<R>,
    ) -> std::thread::Result<R> {
        debug_assert!(self.is_top(slot));
        self.live.set(self.live.get() - 1);
        sync(self.w, slot)
    }

    /// The panic of the task of handle `seq`, which ran at spawn.
    fn take_ready_panic(&self, seq: u32) -> Panic {
        let mut ready = self.ready_panics.borrow_mut();
        let i = ready.iter().position(|&(s, _)| s == seq);
        ready
            .swap_remove(i.expect("a panicked ready task left its panic"))
            .1
    }

    /// Keeps the first panic of a dropped or leaked future for the end of the scope.
    fn record(&self, p: Panic) {
        let mut first = self.dropped_panic.take();
        task::keep_first(&mut first, p);
        self.dropped_panic.set(first);
    }
}

impl<R> Future<'_, '_, R> {
    /// Waits for the task and returns its result, re-raising its panic.
    ///
    /// # Panics
    /// If a future spawned after this one in the same scope is still unjoined (or was
    /// leaked), whether or not its task has already run. The task itself still finishes
    /// before the scope ends.
    pub fn join(mut self) -> R {
        assert!(
            self.is_newest(),
            "heist: futures must be joined newest first"
        );
        match self.take() {
            Ok(r) => r,
            Err(p) => panic::resume_unwind(p),
        }
    }

    /// Whether this is the newest open handle of its scope (and, if its task is in the
    /// deque, that task is on top: not so for a handle joined inside a nested scope).
    fn is_newest(&self) -> bool {
        self.seq + 1 == self.scope.open.get()
            && match &self.state {
                State::Pending { slot, .. } => self.scope.is_top(slot),
                _ => true,
            }
    }

    fn take(&mut self) -> std::thread::Result<R> {
        let out = match std::mem::replace(&mut self.state, State::Joined) {
            State::Pending { slot, sync } => self.scope.finish(slot, sync),
            State::Ready(out) => out,
            State::ReadyPanicked => Err(self.scope.take_ready_panic(self.seq)),
            State::Joined => unreachable!("a future is joined once"),
        };
        self.scope.open.set(self.seq);
        out
    }
}

impl<R> Drop for Future<'_, '_, R> {
    fn drop(&mut self) {
        let out = match std::mem::replace(&mut self.state, State::Joined) {
            State::Joined => return,
            // A newer handle is open or was leaked: the scope's end finishes this task.
            pending @ State::Pending { .. } if !self.is_newest() => {
                self.state = pending;
                return;
            }
            // Ran at spawn; nothing waits, but later joins must still see it open.
            State::Ready(out) if !self.is_newest() => out,
            State::ReadyPanicked if !self.is_newest() => Err(self.scope.take_ready_panic(self.seq)),
            state => {
                self.state = state;
                self.take()
            }
        };
        if let Some(p) = match out {
            Ok(r) => task::drop_caught(r),
            Err(p) => Some(p),
        } {
            self.scope.record(p);
        }
    }
}

impl Worker {
    /// Runs `op` with a [`Futures`] spawner. Every future spawned in it has finished when
    /// this returns, including futures whose handles were leaked.
    ///
    /// ```
    /// fn fib(w: &heist::Worker, n: u64) -> u64 {
    ///     if n < 2 {
    ///         return n;
    ///     }
    ///     w.futures(|s| {
    ///         let f = s.spawn(move |w| fib(w, n - 1));
    ///         let y = fib(w, n - 2);
    ///         f.join() + y
    ///     })
    /// }
    /// let pool = heist::Pool::builder().workers(2).build().unwrap();
    /// assert_eq!(pool.run(|w| fib(w, 20)), 6765);
    /// ```
    pub fn futures<'w, T>(&'w self, op: impl FnOnce(&Futures<'w>) -> T) -> T {
        let scope = Futures {
            w: self,
            base: self.owner().depth(),
            live: Cell::new(0),
            open: Cell::new(0),
            dropped_panic: Cell::new(None),
            ready_panics: RefCell::new(Vec::new()),
            _inv: PhantomData,
        };
        let entered = self
            .frames()
            .enter(Frame::Futures(&scope as *const Futures<'w> as *const ()));
        let out = panic::catch_unwind(AssertUnwindSafe(|| op(&scope)));
        drop(entered);
        self.drain_leaked(&scope);
        for (_, p) in scope.ready_panics.take() {
            scope.record(p);
        }
        task::resume_first(out, scope.dropped_panic.take())
    }

    /// Finishes the tasks of leaked handles, newest first, dropping their results; their
    /// panics go to the scope.
    fn drain_leaked(&self, scope: &Futures<'_>) {
        while self.owner().depth() > scope.base {
            let slot = self.owner().top().expect("depth > base");
            let p = if self.try_pop_any(slot) {
                // SAFETY: popped privately; the slot still holds its job, put with context
                // `Worker` like every slot of a worker's deque.
                unsafe { slot.run_and_discard(self) }
            } else {
                self.await_done(slot);
                // SAFETY: `await_done` saw `DONE` with acquire ordering; the outcome of a
                // leaked handle is taken by nobody else.
                unsafe { slot.discard_outcome() }
            };
            p.into_iter().for_each(|p| scope.record(p));
        }
    }
}
