//! rayon's methods of the pool (rayon's `ThreadPool`, heist's [`Pool`]), beside heist's
//! own in `pool/`. They are here, above the task kinds, because `scope`, `broadcast` and
//! `spawn_fifo` are task kinds of the layer above the pool (`tasks/`).

use super::free::{self, Yield};
use crate::core::worker::{self, Worker};
use crate::pool::Pool;
use crate::tasks::broadcast::{self, BroadcastContext};
use crate::tasks::scope::Scope;
use crate::tasks::scope_fifo::ScopeFifo;

/// `pool`'s worker running on the calling thread, if there is one; for use within the
/// calling method only.
fn here(pool: &Pool) -> Option<&Worker> {
    // SAFETY: `current_in` returns this thread's live worker, which lives at least as
    // long as the task that called this method, and every caller drops the reference
    // before it returns.
    worker::current_in(pool.registry()).map(|w| unsafe { &*w })
}

/// rayon's methods.
impl Pool {
    /// Runs `op` in this pool and returns its result: inside `op`, [`join`](crate::join),
    /// [`scope`](crate::scope) and the other free functions use this pool. Called on one
    /// of this pool's workers, `op` simply runs there.
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.run(|_| op())
    }

    /// Runs `oper_a` and `oper_b` in this pool, potentially in parallel.
    pub fn join<A, B, RA, RB>(&self, oper_a: A, oper_b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.run(|w| w.join(|_| oper_a(), |_| oper_b()))
    }

    /// Spawns `op` in this pool and returns at once (see [`spawn`](crate::spawn) for
    /// panics).
    pub fn spawn<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.spawn_detached(move |_| op())
    }

    /// Like [`Pool::spawn`], first in, first out (see
    /// [`spawn_fifo`](crate::spawn_fifo)).
    pub fn spawn_fifo<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        crate::tasks::fifo::spawn(self.registry(), op)
    }

    /// Runs `op` with a [`Scope`] in this pool; every task spawned in it finishes before
    /// this returns.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.run(|w| w.scope(op))
    }

    /// Like [`Pool::scope`], with a [`ScopeFifo`].
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.run(|w| w.scope(|s| op(ScopeFifo::of(s))))
    }

    /// Runs `op` on the calling thread with a [`Scope`] whose tasks run in this pool.
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        match here(self) {
            Some(w) => w.scope(op),
            None => crate::tasks::scope::scope_outside(self, op),
        }
    }

    /// [`Pool::in_place_scope`] with a [`ScopeFifo`].
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        self.in_place_scope(|s| op(ScopeFifo::of(s)))
    }

    /// Runs one pending task of this pool if the caller is one of its workers (see
    /// [`yield_now`](crate::yield_now)); `None` elsewhere.
    pub fn yield_now(&self) -> Option<Yield> {
        here(self).and_then(|_| free::yield_now())
    }

    /// Runs one task of the calling worker's own queue if the caller is one of this pool's
    /// workers (see [`yield_local`](crate::yield_local)); `None` elsewhere.
    pub fn yield_local(&self) -> Option<Yield> {
        here(self).and_then(|_| free::yield_local())
    }

    /// Whether the calling worker's own queue holds tasks not yet started, if the caller is
    /// one of this pool's workers (see
    /// [`current_thread_has_pending_tasks`](crate::current_thread_has_pending_tasks)).
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        here(self).and_then(|_| free::current_thread_has_pending_tasks())
    }

    /// Runs `op` once on every worker of this pool; the results come in worker order (see
    /// [`broadcast`](crate::broadcast)).
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        broadcast::run(self.registry(), op)
    }

    /// Runs `op` once on every worker of this pool, and returns at once (see
    /// [`spawn_broadcast`](crate::spawn_broadcast)).
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        broadcast::spawn_in(self.registry(), op)
    }

    /// The number of workers in this pool.
    pub fn current_num_threads(&self) -> usize {
        self.workers()
    }

    /// The index of the calling thread in this pool, if it is one of its workers.
    pub fn current_thread_index(&self) -> Option<usize> {
        here(self).map(Worker::index)
    }
}
