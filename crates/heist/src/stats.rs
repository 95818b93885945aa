//! Per-worker event counters, compiled in only with the `stats` feature. Each counter has
//! one writer, its worker, so it is bumped with a relaxed load and store, never a
//! read-modify-write; with the feature off `stat!` expands to nothing.

#[cfg(feature = "stats")]
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counts one event on a worker's counters, if the `stats` feature is on.
macro_rules! stat {
    ($counters:expr, $field:ident) => {
        stat!($counters, $field, 1)
    };
    ($counters:expr, $field:ident, $n:expr) => {{
        #[cfg(feature = "stats")]
        {
            let c = &$counters.$field;
            c.store(
                c.load(std::sync::atomic::Ordering::Relaxed) + ($n) as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        #[cfg(not(feature = "stats"))]
        {
            // Mentioned, never evaluated, so that its inputs count as used.
            let _ = &$counters;
            let _ = || $n;
        }
    }};
}
pub(crate) use stat;

/// Event counts of one worker, as reported by [`crate::Pool::stats`].
///
/// All fields stay zero unless heist is built with the `stats` feature.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// Tasks taken from another worker while idle.
    pub steals: u64,
    /// Steal attempts that found nothing or lost a race.
    pub failed_steals: u64,
    /// Tasks taken while waiting for a stolen task (leapfrogging, Lace §4.3).
    pub leaps: u64,
    /// Times the owner made more of its deque stealable (Lace `grow_shared`).
    pub grows: u64,
    /// Times the owner took back part of its shared deque (Lace `shrink_shared`).
    pub shrinks: u64,
    /// Times the worker went to sleep for lack of work.
    pub sleeps: u64,
    /// Times a sleeper's lifeline reached the private tasks of an owner that had not
    /// shared them (PROTOCOLS.md, "Lifelines").
    pub lifelines: u64,
    /// Steal requests this worker sent (relay).
    pub requests_sent: u64,
    /// Steal requests this worker passed on to another victim (relay).
    pub requests_forwarded: u64,
    /// Steal requests this worker gave back to their thief after n−1 failures (relay).
    pub requests_returned: u64,
    /// Requests this worker answered with half of its deque (relay).
    pub steal_half: u64,
    /// Requests this worker answered with a single task (relay).
    pub steal_one: u64,
    /// Tasks this worker received through steals (relay: tasks per answered request).
    pub tasks_stolen: u64,
    /// Nanoseconds from sending a request to receiving its answer, summed over the
    /// answered requests (relay).
    pub reply_wait_ns: u64,
    /// Nanoseconds spent in failed looks for work and the back-off after them.
    pub idle_ns: u64,
    /// Times a running loop split off part of its range for a thief, or a thief cut part
    /// of a claimed loop off (`par`).
    pub splits: u64,
    /// Blocks of items that loops folded between checks for thieves (`par`).
    pub blocks: u64,
    /// Offers of part of a loop that its owner stood while folding a block it could not
    /// bound in time (`par`, `offer.rs`).
    pub offers: u64,
    /// Such offers this worker took as a thief.
    pub offers_taken: u64,
    /// The loop driver's blocks by size: entry `b` counts blocks of `2^b` to
    /// `2^(b+1) - 1` items (the last entry also counts larger ones).
    pub block_sizes: [u64; BLOCK_BUCKETS],
}

/// Entries of [`WorkerStats::block_sizes`].
pub(crate) const BLOCK_BUCKETS: usize = 32;

/// Counts a block of `n` items in the histogram of block sizes, if the `stats` feature
/// is on.
#[inline(always)]
pub(crate) fn block_size(c: &Counters, n: usize) {
    #[cfg(feature = "stats")]
    {
        let b = (n.max(1).ilog2() as usize).min(BLOCK_BUCKETS - 1);
        let e = &c.block_sizes[b];
        e.store(e.load(Relaxed) + 1, Relaxed);
    }
    #[cfg(not(feature = "stats"))]
    let _ = (c, n);
}

macro_rules! counters {
    ($($field:ident),*) => {
        impl WorkerStats {
            /// The counter names, in field order.
            pub const NAMES: [&'static str; [$(stringify!($field)),*].len()] =
                [$(stringify!($field)),*];

            /// The counter values, in the order of [`WorkerStats::NAMES`].
            pub fn values(&self) -> [u64; Self::NAMES.len()] {
                [$(self.$field),*]
            }
        }

        impl std::ops::AddAssign for WorkerStats {
            fn add_assign(&mut self, o: WorkerStats) {
                $(self.$field += o.$field;)*
                for (a, b) in self.block_sizes.iter_mut().zip(o.block_sizes) {
                    *a += b;
                }
            }
        }

        /// The live counters of one worker.
        #[derive(Default)]
        pub(crate) struct Counters {
            $(#[cfg(feature = "stats")] pub(crate) $field: AtomicU64,)*
            #[cfg(feature = "stats")]
            block_sizes: [AtomicU64; BLOCK_BUCKETS],
        }

        impl Counters {
            pub(crate) fn snapshot(&self) -> WorkerStats {
                #[cfg(feature = "stats")]
                return WorkerStats {
                    $($field: self.$field.load(Relaxed),)*
                    block_sizes: std::array::from_fn(|b| self.block_sizes[b].load(Relaxed)),
                };
                #[cfg(not(feature = "stats"))]
                WorkerStats::default()
            }

            pub(crate) fn reset(&self) {
                $(#[cfg(feature = "stats")] self.$field.store(0, Relaxed);)*
                #[cfg(feature = "stats")]
                self.block_sizes.iter().for_each(|e| e.store(0, Relaxed));
            }
        }
    };
}

counters!(
    steals,
    failed_steals,
    leaps,
    grows,
    shrinks,
    sleeps,
    lifelines,
    requests_sent,
    requests_forwarded,
    requests_returned,
    steal_half,
    steal_one,
    tasks_stolen,
    reply_wait_ns,
    idle_ns,
    splits,
    blocks,
    offers,
    offers_taken
);

/// Measures a stretch of idle time; a no-op without the `stats` feature.
pub(crate) struct Stopwatch(#[cfg(feature = "stats")] std::time::Instant);

impl Stopwatch {
    #[inline(always)]
    pub(crate) fn start() -> Stopwatch {
        Stopwatch(
            #[cfg(feature = "stats")]
            std::time::Instant::now(),
        )
    }

    /// Nanoseconds since `start` (0 without the `stats` feature).
    pub(crate) fn ns(&self) -> u64 {
        #[cfg(feature = "stats")]
        return self.0.elapsed().as_nanos() as u64;
        #[cfg(not(feature = "stats"))]
        0
    }
}
