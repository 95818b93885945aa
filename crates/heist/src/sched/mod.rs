//! The two schedulers behind the core's seam (`crate::core::schedule::Schedule`), and the
//! one place that picks between them: [`build`]. Everything the schedulers share (the
//! task slot, the owner's fast push and pop through the gate, spawned tasks in the deque,
//! sleep) is in the core; everything in which Lace ("Lace: non-blocking split deque for
//! work-stealing") and the relay scheduler ("Embracing Explicit Communication in
//! Work-Stealing Runtime Systems") differ is in `lace.rs` and `relay/`.

pub(crate) mod lace;
pub(crate) mod relay;

use crate::core::mem::OutOfMemory;
use crate::core::schedule::{Schedule, Scheduler};
use crate::sched::lace::Lace;
use crate::sched::relay::Relay;

/// The scheduler `kind` for a pool of `workers`, or what did not fit in memory.
pub(crate) fn build(kind: Scheduler, workers: usize) -> Result<Box<dyn Schedule>, OutOfMemory> {
    Ok(match kind {
        Scheduler::Lace => Box::new(Lace),
        Scheduler::Relay => Box::new(Relay::try_new(workers)?),
    })
}
