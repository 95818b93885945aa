//! The core: what every pool runs whichever scheduler it has. The task slot and the split
//! deque both schedulers keep ("Lace: non-blocking split deque for work-stealing", §3),
//! the worker and its scheduling loop, the state a pool's workers share, sleep, frames,
//! spawned and detached tasks in the deque, standing offers, the atomics they use, and the
//! loops' clock.

pub(crate) mod affinity;
pub(crate) mod clock;
pub(crate) mod deque;
pub(crate) mod detached;
pub(crate) mod frame;
pub(crate) mod latch;
#[cfg(all(test, loom))]
pub(crate) mod loom_deque;
#[cfg(all(test, loom))]
mod loom_latch;
#[cfg(all(test, loom))]
mod loom_sleep;
pub(crate) mod mem;
pub(crate) mod offer;
pub(crate) mod registry;
pub(crate) mod schedule;
pub(crate) mod sleep;
pub(crate) mod source;
pub(crate) mod spawn;
pub(crate) mod spill;
pub(crate) mod stats;
pub(crate) mod sync;
pub(crate) mod task;
pub mod trace;
pub(crate) mod worker;
