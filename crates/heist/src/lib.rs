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
//! There is one pool type: [`ThreadPool`] is [`Pool`], [`ThreadPoolBuilder`] is
//! [`PoolBuilder`] and [`ThreadPoolBuildError`] is [`BuildError`]. rayon's methods and
//! heist's are on the same value, so a program can mix them: `install` and `run`, `spawn`
//! and `barrier`, `num_threads` and `scheduler`.
//!
//! ```
//! let pool: heist::ThreadPool = heist::ThreadPoolBuilder::new()
//!     .num_threads(2)
//!     .scheduler(heist::Scheduler::Relay) // heist's option, on rayon's builder
//!     .build()
//!     .unwrap();
//! let ids = pool.broadcast(|cx| cx.index());
//! assert_eq!(ids, [0, 1]);
//! let (a, b) = pool.install(|| heist::join(|| 1, || 2));
//! assert_eq!(a + b, 3);
//! let c = pool.run(|w| w.join(|_| 3, |_| 4)); // heist's method, on rayon's pool
//! assert_eq!(c, (3, 4));
//! pool.spawn(|| ());
//! pool.barrier(); // waits for what `spawn` started
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
//! # Promises
//!
//! [`Worker::promises`] opens a scope in which [`Promises::spawn`] starts a task and
//! returns a [`Promise`], its handle: the thesis's futures, named so as not to clash with
//! `std::future::Future`. A promise is a slot of the spawner's deque, like `join`'s
//! second branch, and stays on its stack unless a thief takes it. Handles are joined in
//! any order; one not joined is finished when the scope ends.
//!
//! ```
//! let pool = heist::Pool::builder().workers(2).build()?;
//! let total = pool.run(|w| {
//!     w.promises(|s| {
//!         let evens = s.spawn(|_| (0..1000u64).filter(|x| x % 2 == 0).sum::<u64>());
//!         let odds = s.spawn(|_| (0..1000u64).filter(|x| x % 2 == 1).sum::<u64>());
//!         odds.join() + evens.join()
//!     })
//! });
//! assert_eq!(total, 499_500);
//! # Ok::<(), heist::BuildError>(())
//! ```
//!
//! # Detached tasks and the barrier
//!
//! [`Pool::spawn_detached`] (and [`Worker::spawn_detached`] on a worker) starts a
//! `'static` task with no handle; [`Pool::barrier`] waits for every detached task spawned
//! before it, and for those they spawned, then re-raises the first panic among them.
//! Under relay, a barrier called from outside the pool or at the root of [`Pool::run`] is
//! answered by termination detection from the steal requests (thesis §4.2).
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use std::sync::Arc;
//!
//! let pool = heist::Pool::builder().workers(2).build()?;
//! let sum = Arc::new(AtomicU64::new(0));
//! for i in 1..=10 {
//!     let sum = Arc::clone(&sum);
//!     pool.spawn_detached(move |w| {
//!         // A detached task may spawn more; the barrier waits for those too.
//!         let more = Arc::clone(&sum);
//!         w.spawn_detached(move |_| {
//!             more.fetch_add(i, Ordering::Relaxed);
//!         });
//!         sum.fetch_add(i, Ordering::Relaxed);
//!     });
//! }
//! pool.barrier();
//! assert_eq!(sum.load(Ordering::Relaxed), 110);
//! # Ok::<(), heist::BuildError>(())
//! ```
//!
//! # Reductions over tasks
//!
//! [`Pool::reduce_tasks`] (and [`Worker::reduce_tasks`]) runs a tree of tasks that push
//! tasks through their [`ReduceCtx`] and never wait, after Blaze-Tasks: each worker
//! folds the results of the tasks it runs into its own accumulator (`identity` runs at
//! most once per worker), and the accumulators are combined at the end. `op` must be
//! associative and commutative; the folding order is unspecified.
//!
//! ```
//! // The number of binary strings of length 16 with no two adjacent ones (Fibonacci):
//! // a task is a prefix (its length and whether it ends in a one).
//! let pool = heist::Pool::builder().workers(2).build()?;
//! let count = pool.reduce_tasks((0u32, false), || 0u64, |a, b| a + b, |ctx, (len, one)| {
//!     if len == 16 {
//!         return 1;
//!     }
//!     ctx.push((len + 1, false));
//!     if !one {
//!         ctx.push((len + 1, true));
//!     }
//!     0
//! });
//! assert_eq!(count, 2584);
//! # Ok::<(), heist::BuildError>(())
//! ```
//!
//! # Teams
//!
//! [`Pool::team`] (and [`Worker::team`]) runs one body on `r` workers at once and returns
//! the results by rank, after Wimmer and Träff's deterministic team building; the caller
//! is rank 0 and the bodies may borrow its stack. A [`Team`] gives its rank, its size
//! and a barrier. [`Pool::try_team`] returns a [`TeamError`] for a team of no workers or
//! one larger than the pool.
//!
//! ```
//! let pool = heist::Pool::builder().workers(2).build()?;
//! let data: Vec<u64> = (1..=1000).collect();
//! let halves = pool.team(2, |t| {
//!     let chunk = data.len() / t.size();
//!     let mine: u64 = data[t.rank() * chunk..(t.rank() + 1) * chunk].iter().sum();
//!     t.barrier();
//!     mine
//! });
//! assert_eq!(halves.iter().sum::<u64>(), 500_500);
//! assert!(pool.try_team(3, |t| t.rank()).is_err());
//! # Ok::<(), heist::BuildError>(())
//! ```
//!
//! # Choosing the scheduler: `HEIST_SCHEDULER`
//!
//! [`PoolBuilder::scheduler`] picks [`Scheduler::Lace`] or [`Scheduler::Relay`]. A
//! builder not given one, and the global pool, read `HEIST_SCHEDULER` (`lace` or
//! `relay`; Lace if unset), so that a program runs under either without a change. The
//! global pool's size comes from `HEIST_WORKERS` (all cores if unset). A bad value is an
//! error that names the variable.
//!
//! ```
//! use heist::{Pool, Scheduler};
//!
//! let relay = Pool::builder().workers(2).scheduler(Scheduler::Relay).build()?;
//! assert_eq!(relay.scheduler(), Scheduler::Relay);
//!
//! // What `HEIST_SCHEDULER=relay cargo run` does for every pool built without a scheduler.
//! std::env::set_var("HEIST_SCHEDULER", "relay");
//! assert_eq!(Pool::builder().workers(2).build()?.scheduler(), Scheduler::Relay);
//!
//! std::env::set_var("HEIST_SCHEDULER", "fifo");
//! let err = Pool::builder().workers(2).build().err().unwrap();
//! assert!(err.to_string().contains("HEIST_SCHEDULER"));
//! # Ok::<(), heist::BuildError>(())
//! ```
//!
//! # Cargo features
//!
//! All are off by default.
//!
//! - `stats`: per-worker event counters (steals, leaps, splits, sleeps, ...), read with
//!   [`Pool::stats`]; [`STATS_ENABLED`] says whether the build counts. Zero cost when off.
//! - `hashbrown`: `par_iter` over hashbrown's `HashTable`, split by bucket ranges.
//!
//! [`iter::Either`] is the `either` crate's type (as rayon's is): the one dependency that
//! is not optional.
//!
//! ```
//! let pool = heist::Pool::builder().workers(2).build()?;
//! pool.run(|w| w.join(|_| (), |_| ()));
//! let steals: u64 = pool.stats().iter().map(|s| s.steals).sum();
//! if !heist::STATS_ENABLED {
//!     assert_eq!(steals, 0); // without `stats`, every counter stays zero
//! }
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

mod compat;
mod core;
mod par;
mod pool;
mod reduce;
mod sched;
mod tasks;
mod team;

pub use crate::core::stats::WorkerStats;
pub use crate::core::trace;
pub use crate::core::worker::Worker;
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
pub use reduce::ReduceCtx;
pub use tasks::promise::{Promise, Promises};
pub use tasks::scope::{scope, Scope};
pub use team::{Team, TeamError};

/// Whether this build counts events (the `stats` feature).
pub const STATS_ENABLED: bool = cfg!(feature = "stats");

/// Handles waiting steal requests now (relay scheduler; a no-op elsewhere or off a
/// worker). Long task bodies that do not fork call this now and then, so that idle
/// workers are not kept waiting for work this worker could hand out (thesis §3.6).
pub fn poll() {
    crate::core::worker::with_current(|w| {
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
    match unsafe { crate::core::worker::current() } {
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

/// README.md's code blocks, compiled and run as doc tests (`cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
