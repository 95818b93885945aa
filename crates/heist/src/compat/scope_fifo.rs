//! `ScopeFifo`: rayon's name for a scope whose tasks are spawned with `spawn_fifo`.

use crate::scope::Scope;
use crate::worker::Worker;

/// A scope made by [`scope_fifo`](crate::scope_fifo) (rayon's `ScopeFifo`).
///
/// **Difference from rayon:** rayon runs the tasks that one thread spawns with
/// `spawn_fifo` in the order they were spawned, where that thread runs them itself. heist
/// schedules them like [`Scope::spawn`] (the spawning worker runs its newest first; thieves
/// take the oldest): every task still runs before the scope ends, but a program must not
/// rely on their order.
#[repr(transparent)]
pub struct ScopeFifo<'scope>(Scope<'scope>);

impl<'scope> ScopeFifo<'scope> {
    /// The `ScopeFifo` view of `s`.
    pub(crate) fn of<'a>(s: &'a Scope<'scope>) -> &'a ScopeFifo<'scope> {
        // SAFETY: `ScopeFifo` is a `repr(transparent)` wrapper of `Scope`, so the two
        // references have the same layout and the same lifetime.
        unsafe { &*(s as *const Scope<'scope>).cast::<ScopeFifo<'scope>>() }
    }

    /// Spawns `body` to run before the scope ends; it receives the scope so that it can
    /// spawn more tasks (see the note on order above).
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        self.0.spawn(move |s| body(ScopeFifo::of(s)))
    }

    /// The worker running this task, if the caller is on its thread (see
    /// [`Scope::worker`]).
    pub fn worker(&self) -> Option<&Worker> {
        self.0.worker()
    }
}
