//! The runtimes a kernel runs on, each built once per harness run with the same worker
//! count, and the dispatch that hands a kernel the matching [`Fork`] context.

use crate::fork::{self, Fork};
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The stack size of every worker thread (and of the harness thread that runs `seq`):
/// uts T3L recurses about 18 000 tree levels, ~1 KB each on heist and up to 2 KB on rayon.
pub const STACK_SIZE: usize = 256 << 20;

/// Which runtime executes a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuntimeKind {
    /// The sequential elision, on the calling thread.
    Seq,
    /// heist with Lace's split deque (the Lace paper).
    HeistLace,
    /// heist with the channel-based relay scheduler (Prell's thesis).
    HeistRelay,
    /// rayon's pool.
    Rayon,
    /// chili's pool.
    Chili,
    /// heist (default scheduler) running the `join` version of a reduction kernel.
    HeistJoin,
    /// rayon's `scope` plus per-thread accumulators from the `thread_local` crate, the
    /// way rayon users write a reduction over tasks.
    RayonTls,
    /// rayon with the best `with_max_len` of {1, 4, 16, ..., 4096} for the kernel, chosen
    /// by a sweep the harness runs first (data-parallel kernels only).
    RayonBest,
    /// heist with Lace's split deque, its data-parallel loops split by their thieves
    /// (`ThiefSplitting`; data-parallel kernels only).
    HeistClaim,
    /// orx-parallel's iterators, whose loops claim chunks from an atomic counter, on its
    /// own pool limited to the worker count (data-parallel kernels whose API fits).
    Orx,
    /// oneTBB (C++ through FFI; kernels with a C++ version, see [`crate::peers`]).
    Tbb,
    /// LLVM's OpenMP runtime, libomp (C++ through FFI): tasks, and loops with
    /// `schedule(dynamic)`.
    Omp,
    /// libomp with `schedule(guided)` loops (loop kernels only).
    OmpGuided,
    /// GCC's OpenMP runtime, libgomp (C++ through FFI), as `omp` otherwise.
    Gomp,
}

impl RuntimeKind {
    /// Every runtime, in the order the harness interleaves them.
    pub const ALL: [RuntimeKind; 14] = [
        RuntimeKind::Seq,
        RuntimeKind::HeistLace,
        RuntimeKind::HeistRelay,
        RuntimeKind::Rayon,
        RuntimeKind::Chili,
        RuntimeKind::HeistJoin,
        RuntimeKind::RayonTls,
        RuntimeKind::RayonBest,
        RuntimeKind::HeistClaim,
        RuntimeKind::Orx,
        RuntimeKind::Tbb,
        RuntimeKind::Omp,
        RuntimeKind::OmpGuided,
        RuntimeKind::Gomp,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeKind::Seq => "seq",
            RuntimeKind::HeistLace => "heist-lace",
            RuntimeKind::HeistRelay => "heist-relay",
            RuntimeKind::Rayon => "rayon",
            RuntimeKind::Chili => "chili",
            RuntimeKind::HeistJoin => "heist-join",
            RuntimeKind::RayonTls => "rayon-tls",
            RuntimeKind::RayonBest => "rayon-best",
            RuntimeKind::HeistClaim => "heist-lace-claim",
            RuntimeKind::Orx => "orx",
            RuntimeKind::Tbb => "tbb",
            RuntimeKind::Omp => "omp",
            RuntimeKind::OmpGuided => "omp-guided",
            RuntimeKind::Gomp => "gomp",
        }
    }

    /// Whether only the reduction kernels run on it (`heist-join`, `rayon-tls`): the
    /// other kernels do not list these runtimes unless they opt in.
    pub fn reductions_only(self) -> bool {
        matches!(self, RuntimeKind::HeistJoin | RuntimeKind::RayonTls)
    }

    /// Whether a kernel must opt in to run on it: the reduction-only runtimes, the
    /// data-parallel ones (`rayon-best`, `orx`) and the C++ peers.
    pub fn opt_in(self) -> bool {
        self.reductions_only()
            || crate::peers::is_peer(self)
            || matches!(
                self,
                RuntimeKind::RayonBest | RuntimeKind::HeistClaim | RuntimeKind::Orx
            )
    }
}

impl fmt::Display for RuntimeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RuntimeKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        RuntimeKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = RuntimeKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown runtime `{s}` (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// A piece of fork-join work, generic over the runtime's context.
pub trait Task: Send {
    /// What the task computes.
    type Output: Send;
    /// Runs the task with the fork-join context `f`.
    fn call<F: Fork>(self, f: F) -> Self::Output;
}

/// Whether heist's pools let a loop called outside them start on the calling thread
/// (`PoolBuilder::caller_helps`; `tiny-outside` measures both ways): set
/// `HEIST_BENCH_CALLER_HELPS=1` (default 0, heist's default).
fn caller_helps() -> Result<bool, String> {
    match std::env::var("HEIST_BENCH_CALLER_HELPS").as_deref() {
        Err(_) | Ok("0") => Ok(false),
        Ok("1") => Ok(true),
        Ok(v) => Err(format!(
            "HEIST_BENCH_CALLER_HELPS must be 0 or 1, got {v:?}"
        )),
    }
}

enum Engine {
    Seq,
    Heist(heist::Pool),
    Rayon(rayon::ThreadPool),
    Chili(chili::ThreadPool),
    Peer(crate::peers::Peer),
}

/// A started runtime.
pub struct Runtime {
    kind: RuntimeKind,
    workers: usize,
    engine: Engine,
    /// `rayon-best`: the `with_max_len` its loops use (`usize::MAX`: none).
    max_len: AtomicUsize,
}

impl Runtime {
    /// Starts `kind` with `workers` threads (ignored by `seq`).
    pub fn new(kind: RuntimeKind, workers: usize) -> Result<Runtime, String> {
        Runtime::start(kind, workers, false)
    }

    /// Starts `kind` with `workers` threads, each pinned to a CPU of its own if `pin`
    /// (heist and rayon; chili has no hook for it).
    ///
    /// On this project's shared 2-core machine pinning helped the finest-grained kernels
    /// (fib 36 on 2 workers: 1.29 to 1.51 over seq on heist-lace) and hurt others badly
    /// (nqueens 12 on heist-lace: 0.49 to 0.70 of seq's time): a pinned worker cannot move
    /// off a CPU that the host slows down. So it is off by default.
    pub fn start(kind: RuntimeKind, workers: usize, pin: bool) -> Result<Runtime, String> {
        let engine = match kind {
            RuntimeKind::Seq => Engine::Seq,
            RuntimeKind::HeistLace
            | RuntimeKind::HeistRelay
            | RuntimeKind::HeistJoin
            | RuntimeKind::HeistClaim => {
                let scheduler = if kind == RuntimeKind::HeistRelay {
                    heist::Scheduler::Relay
                } else {
                    heist::Scheduler::Lace
                };
                let pool = heist::Pool::builder()
                    .workers(workers)
                    .scheduler(scheduler)
                    .stack_size(STACK_SIZE)
                    .pin_workers(pin)
                    .caller_helps(caller_helps()?)
                    .build()
                    .map_err(|e| format!("{kind}: {e:?}"))?;
                Engine::Heist(pool)
            }
            RuntimeKind::Rayon | RuntimeKind::RayonTls | RuntimeKind::RayonBest => Engine::Rayon(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(workers)
                    .stack_size(STACK_SIZE)
                    .start_handler(move |i| {
                        if pin {
                            crate::affinity::pin_nth(i);
                        }
                    })
                    .build()
                    .map_err(|e| format!("rayon: {e}"))?,
            ),
            // chili has no stack setting; its threads take `RUST_MIN_STACK` (see `main`).
            // Nor has it a start hook, so its workers are not pinned like the others.
            RuntimeKind::Chili => Engine::Chili(chili::ThreadPool::with_config(chili::Config {
                thread_count: std::num::NonZero::new(workers),
                ..chili::Config::default()
            })),
            // orx runs on its own process-wide pool (as many threads as cores); each loop
            // is limited to `workers` of them (`num_threads`). It has no pinning hook.
            RuntimeKind::Orx => Engine::Seq,
            RuntimeKind::Tbb | RuntimeKind::Omp | RuntimeKind::OmpGuided | RuntimeKind::Gomp => {
                Engine::Peer(crate::peers::Peer::start(kind, workers)?)
            }
        };
        Ok(Runtime {
            kind,
            workers,
            engine,
            max_len: AtomicUsize::new(usize::MAX),
        })
    }

    /// `rayon-best`: the `with_max_len` its loops use from now on.
    pub fn set_max_len(&self, m: usize) {
        self.max_len.store(m, Relaxed);
    }

    /// `rayon-best`: the `with_max_len` its loops use (`usize::MAX`: none).
    pub fn max_len(&self) -> usize {
        self.max_len.load(Relaxed)
    }

    /// Which runtime this is.
    pub fn kind(&self) -> RuntimeKind {
        self.kind
    }

    /// The worker count it was started with.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The heist pool behind a heist runtime, for kernels that use more than `join`.
    pub fn heist_pool(&self) -> Option<&heist::Pool> {
        match &self.engine {
            Engine::Heist(p) => Some(p),
            _ => None,
        }
    }

    /// Runs `f` where this runtime's parallel iterators run: on a worker of its pool
    /// (heist's `run`, rayon's `install`), or on this thread (seq, chili).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.engine {
            Engine::Heist(pool) => pool.run(|_| f()),
            Engine::Rayon(pool) => pool.install(f),
            Engine::Seq | Engine::Chili(_) | Engine::Peer(_) => f(),
        }
    }

    /// The C++ runtime behind a peer (`tbb`, `omp`, `omp-guided`).
    pub fn peer(&self) -> Option<&crate::peers::Peer> {
        match &self.engine {
            Engine::Peer(p) => Some(p),
            _ => None,
        }
    }

    /// The rayon pool behind a rayon runtime.
    pub fn rayon_pool(&self) -> Option<&rayon::ThreadPool> {
        match &self.engine {
            Engine::Rayon(p) => Some(p),
            _ => None,
        }
    }

    /// Runs `task` on this runtime and returns its result.
    pub fn exec<T: Task>(&self, task: T) -> T::Output {
        match &self.engine {
            Engine::Seq => task.call(fork::SEQ),
            Engine::Heist(pool) => pool.run(|w| task.call(fork::heist(w))),
            Engine::Rayon(pool) => pool.install(|| task.call(fork::RAYON)),
            Engine::Chili(pool) => {
                let mut scope = pool.scope();
                task.call(fork::chili(&mut scope))
            }
            Engine::Peer(_) => panic!("{} runs only the kernels' C++ versions", self.kind),
        }
    }
}
