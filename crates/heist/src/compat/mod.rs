//! rayon's pool API under rayon's names, over heist's own [`Pool`](crate::Pool): a rayon
//! program that uses `ThreadPoolBuilder`, `ThreadPool`, `spawn`, `scope_fifo`,
//! `broadcast`, `join_context` and the rest moves to heist by changing `rayon::` to
//! `heist::`. Where heist behaves differently, the item's documentation says so.
//!
//! The pool underneath is a work-stealing pool of either scheduler (Lace's split deque,
//! or the relay scheduler of Prell's thesis); the names here only translate.

mod builder;
mod config;
mod free;
mod thread_pool;

pub use crate::pool::threads::ThreadBuilder;
pub use crate::tasks::broadcast::{broadcast, spawn_broadcast, BroadcastContext};
pub use crate::tasks::scope_fifo::ScopeFifo;
pub use builder::{max_num_threads, ThreadPoolBuildError, ThreadPoolBuilder};
#[allow(deprecated)]
pub use config::{initialize, Configuration};
pub use free::{
    current_num_threads, current_thread_has_pending_tasks, current_thread_index, in_place_scope,
    in_place_scope_fifo, join_context, scope_fifo, spawn, spawn_fifo, yield_local, yield_now,
    FnContext, Yield,
};
pub use thread_pool::ThreadPool;
