//! The one door between the parallel iterators and the core, as rayon's iterators reach
//! their pool through `join_context` alone. Every file of `par/` that needs the runtime
//! imports it from here, and only the items below; `.ci/layers` fails the build of a
//! `par/` file that names `crate::core`, `crate::sched` or `crate::pool` itself.
//!
//! What the loop engine needs of the runtime ("Embracing Explicit Communication in
//! Work-Stealing Runtime Systems", ch. 5; "On Lock-Free Work-stealing Iterators for
//! Parallel Data Structures", §3): the worker it runs on, to fork (`Worker::join`), to ask
//! whether a thief wants a split (`Schedule::split_demanded`, `Schedule::waiting_requests`),
//! to stand an offer in its slot (`Worker::offer_slot`, `Schedule::offer_stood`) and to
//! wait working (`Worker::wait_until`); heap jobs and latches for the hand-offs of loops
//! called from outside a pool, and that pool (`Pool::registry` for its injector, sleep and
//! count of work in flight); task panics; the slot-free atomics and cells of
//! `core/sync.rs`, which loom swaps for its own in the models; and the event counters.

/// The loops' clock, which their pace reads.
pub(crate) use crate::core::clock;
/// Latches: a loop from outside waits for the pieces it handed to a pool.
pub(crate) use crate::core::latch::Latch;
/// Standing offers (`core/offer.rs`): what a thief runs, and the owner's ticket.
pub(crate) use crate::core::offer::{Offer, Ticket};
/// The scheduler seam (`Worker::sched`, a `dyn Schedule` whose methods need no import):
/// `split_demanded`, `waiting_requests` and the requests they give, `offer_stood`.
pub(crate) use crate::core::schedule::Waiting;
/// Event counters (`stats` feature).
pub(crate) use crate::core::stats::{block_size, stat};
/// How every loom model is explored (a default preemption bound of its own).
#[cfg(all(test, loom))]
pub(crate) use crate::core::sync::loom_model;
/// Atomics and cells that loom replaces in the models.
pub(crate) use crate::core::sync::{AtomicBool, AtomicU64, AtomicUsize, RaceCell};
/// The pool a loop from outside runs on: the current one, or the global pool.
pub(crate) use crate::pool::{global_or_panic, Pool};

/// Heap jobs and task panics.
pub(crate) mod task {
    pub(crate) use crate::core::task::{drop_caught, drop_panic, keep_first, JobRef, Panic};
}

/// Trace spans of loop pieces (`trace` feature).
pub(crate) mod trace {
    pub(crate) use crate::core::trace::{span, EventKind, ENABLED};
}

/// The worker a loop runs on.
pub(crate) mod worker {
    pub(crate) use crate::core::worker::{current, with_current, Worker};
}
