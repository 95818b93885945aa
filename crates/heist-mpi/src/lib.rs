//! heist beyond one machine: task reductions across MPI ranks, with steal requests
//! relayed between nodes (Prell's thesis §7.2: one runtime per node, managers that relay
//! steal requests; the tasks are Blaze's, which push tasks and never wait).
//!
//! Every rank runs the same program. [`reduce_tasks`] starts from rank 0's root task;
//! each rank runs its tasks on its own heist pool with heist's one-node
//! [`heist::Worker::reduce_tasks`], and a rank that runs dry sends a steal request to a
//! random rank. A rank without work to spare forwards the request to another random rank
//! instead of refusing it (§3.3); once it has been forwarded P − 1 times it returns to
//! its thief, which waits a little and asks again. A rank with work answers with a batch of tasks: half
//! of what it holds, taken alternately from the oldest (or one task, or the thesis's
//! adaptive switch between the two, [`Split`]). Requests and answers are polled at task
//! boundaries by whichever worker of the rank comes by (no thread spins on MPI), and an
//! idle rank sleeps between polls, so ranks beyond the cores still progress.
//!
//! Termination is detected with Mattern's four-counter method over non-blocking
//! all-reduce waves, and the values are combined up a binomial tree and broadcast: every
//! rank returns the same result. A panic on any rank stops every rank and reaches every
//! rank as an [`Error`] naming that rank and its message. PROTOCOLS.md at the
//! repository's root argues the protocol ("Reductions across ranks").
//!
//! ```no_run
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Node { depth: u32 }
//!
//! let universe = heist_mpi::initialize().expect("MPI with MPI_THREAD_SERIALIZED");
//! let world = universe.world();
//! // The nodes of a complete binary tree of depth 20, counted across every rank.
//! let nodes = heist_mpi::reduce_tasks(&world, Node { depth: 20 }, || 0u64, |a, b| a + b,
//!     |ctx, n| {
//!         if n.depth > 0 {
//!             ctx.push(Node { depth: n.depth - 1 });
//!             ctx.push(Node { depth: n.depth - 1 });
//!         }
//!         1
//!     },
//! );
//! assert_eq!(nodes.unwrap(), (1 << 21) - 1);
//! ```
//!
//! # A hook heist lacks
//!
//! heist's reduction has no way for a caller outside it to take queued tasks. A rank
//! therefore answers a remote thief by draining its round (every task reaching a task
//! boundary is set aside instead of run, see `node.rs`), answering from what was set
//! aside, and starting a new round with the rest. A hook on heist's side, a
//! `ReduceCtx::take_oldest(n)` that moves the oldest queued tasks of the reduction out
//! (the relay's steal-half on the lanes' private queues), would make that a single call
//! without ending the round.

mod combine;
mod manager;
mod node;
mod rank;
mod raw;
#[doc(hidden)]
pub mod testing;
mod wire;

pub use node::Ctx;
/// How a rank splits what it holds for a thief (public for heist-mpi-bench's simulator).
#[doc(hidden)]
pub use rank::split_off;

use combine::{guarded, Part};
use manager::Manager;
use mpi::environment::Threading;
use mpi::ffi::MPI_Comm;
use mpi::raw::AsRaw;
use node::{Fns, Shared};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::any::Any;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// Environment variables that let `mpirun` run as root (Open MPI refuses otherwise); the
/// repository's scripts and tests set them for their own `mpirun`s only.
pub const ALLOW_RUN_AS_ROOT: [(&str, &str); 2] = [
    ("OMPI_ALLOW_RUN_AS_ROOT", "1"),
    ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
];

/// What went wrong, on which rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The rank where it happened.
    pub rank: i32,
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The panic's message, or what failed.
    pub message: String,
}

/// The kinds of [`Error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ErrorKind {
    /// A task, `identity`, `op` or a serde impl panicked.
    Panic = 0,
    /// A task or a result could not be encoded or decoded.
    Codec = 1,
    /// MPI or the pool is not set up as needed.
    Setup = 2,
}

impl ErrorKind {
    fn from_u8(b: u8) -> ErrorKind {
        match b {
            0 => ErrorKind::Panic,
            2 => ErrorKind::Setup,
            _ => ErrorKind::Codec,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Panic => "panicked",
            ErrorKind::Codec => "failed to encode or decode",
            ErrorKind::Setup => "is not set up",
        };
        write!(f, "rank {} {what}: {}", self.rank, self.message)
    }
}

impl std::error::Error for Error {}

/// How a rank with work answers a steal request (thesis §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Split {
    /// Half of what it holds, every other task from the oldest.
    #[default]
    Half,
    /// The oldest task.
    One,
    /// The thief switches between the two by the thesis's rule (every 25 steals).
    Adaptive,
}

/// One rank's counters of a reduction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The rank.
    pub rank: i32,
    /// Wall time of the reduction on this rank, in seconds.
    pub time_s: f64,
    /// Time this rank had no task, in seconds.
    pub idle_s: f64,
    /// Tasks this rank ran.
    pub tasks_run: u64,
    /// Tasks sent to and received from other ranks.
    pub tasks_sent: u64,
    /// Tasks received from other ranks.
    pub tasks_received: u64,
    /// Batches of tasks sent and received.
    pub batches_sent: u64,
    /// Batches of tasks received.
    pub batches_received: u64,
    /// Bytes of the task batches sent.
    pub task_bytes_sent: u64,
    /// Messages and bytes sent and received, of every kind.
    pub messages_sent: u64,
    /// Messages received.
    pub messages_received: u64,
    /// Bytes sent.
    pub bytes_sent: u64,
    /// Bytes received.
    pub bytes_received: u64,
    /// Steal requests this rank sent for itself.
    pub requests_sent: u64,
    /// Other ranks' requests that reached this rank.
    pub requests_received: u64,
    /// Requests this rank forwarded to another rank.
    pub requests_forwarded: u64,
    /// Requests this rank answered with tasks.
    pub requests_answered: u64,
    /// Requests this rank sent back to their thief unanswered.
    pub requests_sent_home: u64,
    /// This rank's own requests that came back unanswered.
    pub requests_returned: u64,
    /// Rounds (local reductions) and those ended early to answer a thief.
    pub rounds: u64,
    /// Rounds drained for a thief.
    pub drains: u64,
    /// Polls made at task boundaries.
    pub polls: u64,
    /// Termination waves this rank contributed to.
    pub waves: u64,
}

/// A reduction's value on this rank, with the final bound and this rank's counters.
#[derive(Debug)]
pub struct Outcome<R> {
    /// The combined value (the same on every rank).
    pub value: R,
    /// The shared bound at the end (the highest raised on any rank).
    pub bound: i64,
    /// This rank's counters.
    pub report: Report,
}

/// Initialises MPI with the thread level heist-mpi needs (`MPI_THREAD_SERIALIZED`: a
/// rank's MPI calls come from whichever of its workers polls, one at a time).
pub fn initialize() -> Result<mpi::environment::Universe, Error> {
    let setup = |message: String| Error {
        rank: -1,
        kind: ErrorKind::Setup,
        message,
    };
    let (universe, level) = mpi::initialize_with_threading(Threading::Serialized)
        .ok_or_else(|| setup("MPI is already initialised".into()))?;
    if !serialized(level) {
        return Err(setup(format!(
            "the MPI library offers {level:?}, heist-mpi needs Serialized"
        )));
    }
    Ok(universe)
}

fn serialized(level: Threading) -> bool {
    matches!(level, Threading::Serialized | Threading::Multiple)
}

/// A distributed reduction over tasks, configured.
pub struct Reducer<'a, C> {
    comm: &'a C,
    pool: Option<&'a heist::Pool>,
    split: Split,
    max_hops: Option<u32>,
    bound: i64,
    poll: Duration,
}

impl<'a, C: AsRaw<Raw = MPI_Comm>> Reducer<'a, C> {
    /// A reduction over the ranks of `comm`, on the global heist pool, steal-half.
    pub fn new(comm: &'a C) -> Self {
        Reducer {
            comm,
            pool: None,
            split: Split::Half,
            max_hops: None,
            bound: i64::MIN,
            poll: Duration::from_micros(25),
        }
    }

    /// Runs each rank's tasks on `pool` instead of the global pool.
    pub fn pool(mut self, pool: &'a heist::Pool) -> Self {
        self.pool = Some(pool);
        self
    }

    /// How a rank answers a steal request.
    pub fn split(mut self, split: Split) -> Self {
        self.split = split;
        self
    }

    /// How many times a steal request is forwarded before it returns to its thief
    /// (default: P − 1, the thesis's rule; docs/heist-mpi-model.md compares it with a
    /// cap of 2·log2 P + 2).
    pub fn max_hops(mut self, hops: u32) -> Self {
        self.max_hops = Some(hops.max(1));
        self
    }

    /// The shared bound's starting value (default `i64::MIN`).
    pub fn bound(mut self, v: i64) -> Self {
        self.bound = v;
        self
    }

    /// About how often each worker polls for messages while it runs tasks.
    pub fn poll_interval(mut self, d: Duration) -> Self {
        self.poll = d;
        self
    }

    /// Runs the reduction: collective over the communicator (every rank calls it with
    /// the same functions; rank 0's `root` is the first task, the other ranks' are
    /// dropped). `f(ctx, task)` solves one task, may push more with `ctx.push`, never
    /// waits for them and returns a partial result; results are folded with `op`, which
    /// must be associative and commutative, from `identity()`, which may run more than
    /// once per worker. Every rank returns the same value, or the same error: the failure
    /// of the lowest failing rank.
    pub fn run<T, R, I, O, F>(&self, root: T, identity: I, op: O, f: F) -> Result<Outcome<R>, Error>
    where
        T: Serialize + DeserializeOwned + Send + 'static,
        R: Serialize + DeserializeOwned + Send + 'static,
        I: Fn() -> R + Sync,
        O: Fn(R, R) -> R + Sync,
        F: Fn(&Ctx<'_, T>, T) -> R + Sync,
    {
        let setup = |message: String| Error {
            rank: -1,
            kind: ErrorKind::Setup,
            message,
        };
        if !mpi::environment::is_initialized() || mpi::environment::is_finalized() {
            return Err(setup("MPI is not initialised".into()));
        }
        let level = mpi::environment::threading_support();
        if !serialized(level) {
            return Err(setup(format!(
                "MPI runs at thread level {level:?}; heist-mpi needs Serialized \
                 (initialise with heist_mpi::initialize())"
            )));
        }
        let pool = match self.pool {
            Some(p) => p,
            None => heist::global().map_err(|e| setup(e.to_string()))?,
        };
        let start = Instant::now();
        let comm = raw::Comm::dup(self.comm.as_raw());
        let (me, p) = (comm.rank, comm.size);
        let hops = self.max_hops.unwrap_or_else(|| default_hops(p));
        let sh = Shared::new(
            Manager::new(comm, hops, self.bound),
            pool.workers(),
            self.bound,
            self.poll.as_nanos() as u64,
        );
        let fns = Fns { identity, op, f };
        let root = if me == 0 {
            Some(root)
        } else {
            drop_quietly(root);
            None
        };
        let split = self.split;
        let acc = pool.run(|w| rank::run(w, &sh, root, &fns, split));
        let mut m = node::lock(&sh.manager);
        let mine = match m.failure.clone() {
            Some(e) => Part::Err(e),
            None => {
                let bound = sh.bound.load(std::sync::atomic::Ordering::Relaxed);
                match guarded(me, ErrorKind::Codec, || {
                    wire::encode_value(&acc.unwrap_or_else(&fns.identity))
                }) {
                    Ok(bytes) => Part::Ok { bound, bytes },
                    Err(e) => Part::Err(e),
                }
            }
        };
        let out = combine::combine(&mut m, mine, &fns.op);
        m.stats.time_s = start.elapsed().as_secs_f64();
        let report = m.stats.clone();
        drop(m);
        drop(sh);
        match out {
            Part::Ok { bound, bytes } => {
                let value = guarded(me, ErrorKind::Codec, || wire::decode_value(&bytes))?;
                Ok(Outcome {
                    value,
                    bound,
                    report,
                })
            }
            Part::Err(e) => Err(e),
        }
    }
}

/// Forwards before a request returns to its thief: P − 1, as the thesis does on one node
/// (§3.3). The model (docs/heist-mpi-model.md) found it as good as or better than a cap
/// of 2·log2 P + 2 at 1024 and 4096 ranks.
fn default_hops(p: i32) -> u32 {
    (p - 1).max(1) as u32
}

/// A reduction over tasks across the ranks of `comm`, on the global heist pool:
/// [`Reducer::run`] with the defaults, returning the value.
pub fn reduce_tasks<C, T, R, I, O, F>(
    comm: &C,
    root: T,
    identity: I,
    op: O,
    f: F,
) -> Result<R, Error>
where
    C: AsRaw<Raw = MPI_Comm>,
    T: Serialize + DeserializeOwned + Send + 'static,
    R: Serialize + DeserializeOwned + Send + 'static,
    I: Fn() -> R + Sync,
    O: Fn(R, R) -> R + Sync,
    F: Fn(&Ctx<'_, T>, T) -> R + Sync,
{
    Reducer::new(comm)
        .run(root, identity, op, f)
        .map(|o| o.value)
}

/// The message of a panic payload.
pub(crate) fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a payload that is not a string".into()
    }
}

/// Drops `v`; a panic in its drop is swallowed (and that panic's payload leaked if
/// dropping it panics too).
pub(crate) fn drop_quietly<V>(v: V) {
    if let Err(p) = panic::catch_unwind(AssertUnwindSafe(move || drop(v))) {
        if let Err(q) = panic::catch_unwind(AssertUnwindSafe(move || drop(p))) {
            std::mem::forget(q);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn requests_visit_every_other_rank_before_going_home() {
        use super::default_hops;
        assert_eq!([1, 2, 3, 4, 4096].map(default_hops), [1, 1, 2, 3, 4095]);
    }

    #[test]
    fn steal_half_alternates_from_the_oldest() {
        let mut stash: Vec<(u32, char)> = vec![(3, 'd'), (0, 'a'), (2, 'c'), (1, 'b'), (4, 'e')];
        let give = super::rank::split_off(&mut stash, false);
        assert_eq!(give, ['a', 'c']);
        assert_eq!(stash, [(1, 'b'), (3, 'd'), (4, 'e')]);
        assert_eq!(super::rank::split_off(&mut stash, true), ['b']);
    }
}
