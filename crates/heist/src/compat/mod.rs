//! rayon's names for heist's pool API: a rayon program that uses `ThreadPoolBuilder`,
//! `ThreadPool`, `spawn`, `scope_fifo`, `broadcast`, `join_context` and the rest moves to
//! heist by changing `rayon::` to `heist::`. Where heist behaves differently, the item's
//! documentation says so.
//!
//! Nothing here is a mechanism of its own. rayon's pool, builder and error types are
//! aliases of heist's one [`Pool`], [`PoolBuilder`] and [`BuildError`]; rayon's methods of
//! the pool are `Pool`'s own (`thread_pool.rs`); the free functions (`free.rs`) and the
//! deprecated `Configuration` (`config.rs`) act on the pool of the calling worker or on
//! the global pool.

mod config;
mod free;
mod thread_pool;

use crate::pool::threads::DefaultSpawn;
use crate::pool::{BuildError, Pool, PoolBuilder};

pub use crate::pool::threads::ThreadBuilder;
pub use crate::tasks::broadcast::{broadcast, spawn_broadcast, BroadcastContext};
pub use crate::tasks::scope_fifo::ScopeFifo;
#[allow(deprecated)]
pub use config::{initialize, Configuration};
pub use free::{
    current_num_threads, current_thread_has_pending_tasks, current_thread_index, in_place_scope,
    in_place_scope_fifo, join_context, max_num_threads, scope_fifo, spawn, spawn_fifo, yield_local,
    yield_now, FnContext, Yield,
};

/// rayon's name for [`Pool`]: the same type, with rayon's methods (`install`, `join`,
/// `spawn`, `scope`, `broadcast`, `current_num_threads`, ...) and heist's.
///
/// Its drop waits for no task and no start or exit handler, as rayon's (see "Dropping a
/// pool" on [`Pool`]); [`Pool::barrier`] waits for the tasks.
pub type ThreadPool = Pool;

/// rayon's name for [`PoolBuilder`]: the same type, with rayon's options (`num_threads`,
/// `spawn_handler`, `start_handler`, `use_current_thread`, ...) and heist's. The type
/// parameter says how threads are started, as in rayon.
pub type ThreadPoolBuilder<S = DefaultSpawn> = PoolBuilder<S>;

/// rayon's name for [`BuildError`], the one error of building a pool: rayon programs use
/// its `Display` (rayon's texts where rayon has the case) and `std::error::Error`.
pub type ThreadPoolBuildError = BuildError;
