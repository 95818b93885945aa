//! heist: a work-stealing runtime.
//!
//! heist runs fork-join programs on a pool of worker threads. It carries two schedulers
//! that can be compared on the same program:
//!
//! - **Lace** (the default [`Scheduler`]): the non-blocking split deque of van Dijk and
//!   van de Pol ("Lace: non-blocking split deque for work-stealing"). Tasks are stored in
//!   the deque itself; the owner's push and pop use no atomic read-modify-write and no
//!   fence; a worker waiting for a stolen task steals back from its thief (leapfrogging).
//! - **Relay**: Prell's channel-based work stealing ("Embracing Explicit Communication in
//!   Work-Stealing Runtime Systems"), with private deques and steal requests that are
//!   forwarded instead of refused.
//!
//! # Fork-join with an explicit worker
//!
//! ```
//! fn fib(w: &heist::Worker, n: u64) -> u64 {
//!     if n < 2 {
//!         return n;
//!     }
//!     let (a, b) = w.join(|w| fib(w, n - 1), |w| fib(w, n - 2));
//!     a + b
//! }
//!
//! let pool = heist::Pool::builder().workers(4).build()?;
//! assert_eq!(pool.run(|w| fib(w, 25)), 75025);
//! # Ok::<(), heist::BuildError>(())
//! ```
//!
//! # The familiar shapes
//!
//! [`join`] and [`scope`] work from any thread: on a worker they run there, elsewhere on
//! the global pool (sized by `HEIST_WORKERS`, all cores if unset).
//!
//! ```
//! let v: Vec<u64> = (1..=1000).collect();
//! let (lo, hi) = v.split_at(500);
//! let (a, b) = heist::join(|| lo.iter().sum::<u64>(), || hi.iter().sum::<u64>());
//! assert_eq!(a + b, 500500);
//!
//! let mut parts = vec![0u64; 4];
//! heist::scope(|s| {
//!     for (i, p) in parts.iter_mut().enumerate() {
//!         s.spawn(move |_| *p = i as u64 * 10);
//!     }
//! });
//! assert_eq!(parts, [0, 10, 20, 30]);
//! ```
//!
//! # Moving from rayon
//!
//! rayon's pool API is here under rayon's names ([`ThreadPoolBuilder`], [`ThreadPool`],
//! [`spawn`], [`scope_fifo`], [`in_place_scope`], [`broadcast`], [`join_context`],
//! [`current_num_threads`], [`current_thread_index`], [`yield_now`], ...), so that code
//! written against them moves by changing `rayon::` to `heist::`. Where heist behaves
//! differently, the item says so. Inside a scope task, [`Scope::worker`] gives the worker
//! for [`Worker::join`] without a thread-local look-up.
//!
//! ```
//! let pool = heist::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
//! let ids = pool.broadcast(|cx| cx.index());
//! assert_eq!(ids, [0, 1]);
//! let (a, b) = pool.install(|| heist::join(|| 1, || 2));
//! assert_eq!(a + b, 3);
//! ```
//!
//! # Parallel iterators
//!
//! rayon's iterator API, under rayon's names: a rayon program moves by changing
//! `use rayon::prelude::*` to `use heist::prelude::*`. A loop is one task that its
//! worker folds in growing blocks and splits only when an idle worker asks, so there is
//! no grain size to choose; it runs on the current worker, or on the global pool.
//!
//! ```
//! use heist::prelude::*;
//!
//! let v: Vec<f64> = (1..=1000).map(f64::from).collect();
//! let s: f64 = v.par_iter().map(|x| x.sqrt()).sum();
//! assert!((s - v.iter().map(|x| x.sqrt()).sum::<f64>()).abs() < 1e-9);
//!
//! let pool = heist::Pool::builder().workers(2).build()?;
//! let words = ["split", " ", "only", " ", "on", " ", "demand"];
//! let line = pool.run(|_| words.par_iter().map(|w| w.to_string()).reduce(String::new, |a, b| a + &b));
//! assert_eq!(line, "split only on demand");
//!
//! let mut big: Vec<u32> = (0..10_000).rev().collect();
//! big.par_sort_unstable();
//! assert!(big.windows(2).all(|w| w[0] <= w[1]));
//! # Ok::<(), heist::BuildError>(())
//! ```
//!
//! # Panics
//!
//! A panic in a task reaches whoever joins it (after the sibling task has finished), and
//! the pool stays usable:
//!
//! ```
//! let pool = heist::Pool::builder().workers(2).build().unwrap();
//! let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
//!     pool.run(|w| w.join(|_| 1, |_| -> i32 { panic!("boom") }))
//! }));
//! assert!(r.is_err());
//! assert_eq!(pool.run(|w| w.join(|_| 1, |_| 2)), (1, 2));
//! ```

#![warn(missing_docs)]

pub mod affinity;
mod barrier;
mod compat;
mod frame;
mod lace;
mod latch;
#[cfg(all(test, loom))]
mod loom_latch;
#[cfg(all(test, loom))]
mod loom_offer;
#[cfg(all(test, loom))]
mod loom_sleep;
mod offer;
mod par;
mod pool;
mod promise;
mod reduce;
mod registry;
mod relay;
mod sched;
mod scope;
mod sleep;
mod spawn;
mod stats;
mod sync;
mod task;
mod team;
mod worker;

pub use compat::{
    broadcast, current_num_threads, current_thread_has_pending_tasks, current_thread_index,
    in_place_scope, in_place_scope_fifo, join_context, max_num_threads, scope_fifo, spawn,
    spawn_broadcast, spawn_fifo, yield_local, yield_now, BroadcastContext, FnContext, ScopeFifo,
    ThreadBuilder, ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder, Yield,
};
#[allow(deprecated)]
pub use compat::{initialize, Configuration};
pub use par::{
    array, collections, iter, option, prelude, range, range_inclusive, result, slice, str, string,
    tree, vec,
};
pub use pool::{global, BuildError, Pool, PoolBuilder, Scheduler, MAX_DEQUE_CAPACITY};
pub use promise::{Promise, Promises};
pub use reduce::ReduceCtx;
pub use scope::{scope, Scope};
pub use stats::WorkerStats;
pub use team::{Team, TeamError};
pub use worker::Worker;

/// Whether this build counts events (the `stats` feature).
pub const STATS_ENABLED: bool = cfg!(feature = "stats");

/// Handles waiting steal requests now (relay scheduler; a no-op elsewhere or off a
/// worker). Long task bodies that do not fork call this now and then, so that idle
/// workers are not kept waiting for work this worker could hand out (thesis §3.6).
pub fn poll() {
    worker::with_current(|w| {
        if let Some(w) = w {
            w.poll();
        }
    });
}

/// Runs `a` and `b`, potentially in parallel, and returns both results.
///
/// On a worker thread this is [`Worker::join`] on that worker; on any other thread the
/// pair runs on the global pool. A panic in either is re-raised after both finished.
///
/// # Panics
/// Off a worker thread, if the global pool cannot start (for example when
/// `HEIST_WORKERS` is not a positive integer); the message names the setting.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    // SAFETY: the worker runs this thread and outlives this call, which it is running.
    match unsafe { worker::current() } {
        Some(w) => w.join(|_| a(), |_| b()),
        None => join_outside(a, b),
    }
}

/// [`join`] off a worker: the pair runs on the global pool.
#[cold]
#[inline(never)]
fn join_outside<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    pool::global_or_panic().run(|w| w.join(|_| a(), |_| b()))
}
