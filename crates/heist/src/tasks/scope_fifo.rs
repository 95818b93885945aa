//! `ScopeFifo`, rayon's name for a scope whose tasks are spawned with `spawn_fifo`, and
//! rayon's `spawn_broadcast` on both kinds of scope.

use super::broadcast::{self, BroadcastContext};
use crate::core::worker::Worker;
use crate::tasks::scope::Scope;

impl<'scope> Scope<'scope> {
    /// Spawns `body` to run once on every worker of the scope's pool before the scope
    /// ends (rayon's `Scope::spawn_broadcast`); each call receives the scope and where it
    /// runs. A panic in a call is re-raised at the end of the scope.
    ///
    /// **Difference from rayon:** the calls are one scope task, which runs its own
    /// worker's call and then waits, working on other tasks meanwhile, until every worker
    /// has run its call.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = heist::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let seen = AtomicUsize::new(0);
    /// pool.scope(|s| {
    ///     s.spawn_broadcast(|_, cx| {
    ///         seen.fetch_add(1 << cx.index(), Ordering::SeqCst);
    ///     })
    /// });
    /// assert_eq!(seen.into_inner(), 0b111);
    /// ```
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.spawn(move |s| {
            let w = s
                .worker()
                .expect("a scope task runs on its worker's thread");
            broadcast::run(w.registry(), |cx| body(s, cx));
        })
    }
}

/// A scope made by [`scope_fifo`](crate::scope_fifo) (rayon's `ScopeFifo`): the tasks
/// that one worker spawns with [`spawn_fifo`](ScopeFifo::spawn_fifo) run in the order
/// they were spawned where that worker runs them itself (those of [`Scope::spawn`] run
/// newest first); a thief takes the oldest.
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
        super::fifo::spawn_in_scope(self, body)
    }

    /// The [`Scope`] this is a view of.
    pub(crate) fn as_scope(&self) -> &Scope<'scope> {
        &self.0
    }

    /// Spawns `body` to run once on every worker of the scope's pool before the scope
    /// ends (rayon's `ScopeFifo::spawn_broadcast`; see [`Scope::spawn_broadcast`]).
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.0
            .spawn_broadcast(move |s, cx| body(ScopeFifo::of(s), cx))
    }

    /// The worker running this task, if the caller is on its thread (see
    /// [`Scope::worker`]).
    pub fn worker(&self) -> Option<&Worker> {
        self.0.worker()
    }
}
