//! The state a pool's workers share: their deques and counters, the heap job lists, the
//! injector for jobs from outside, the broadcast mailboxes, sleep, the scheduler, and the
//! work sources registered by the layers above (`source.rs`).
//! Workers, schedulers and the pool reach each other through it; the pool's public face
//! (`Pool`, its builder, the global pool) is in `pool/mod.rs`.

use crate::core::deque::Deque;
use crate::core::frame::Roots;
use crate::core::mem::OutOfMemory;
use crate::core::schedule::Schedule;
use crate::core::sleep::Sleep;
use crate::core::source::{Source, Sources};
use crate::core::stats::Counters;
use crate::core::sync::lock;
use crate::core::worker::{Job, Worker};
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::Mutex;

/// What a job submitted from outside is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Injected {
    /// A root of `Pool::run`: it runs only where `Frames::may_take_roots` allows.
    Root,
    /// Any other job (a scope task or detached task spawned off the pool).
    Job,
}

/// What one worker shares with the others.
pub(crate) struct WorkerInfo {
    pub(crate) deque: Deque,
    pub(crate) counters: Counters,
    /// Heap jobs this worker queued (relay's manager: jobs from outside); others may take
    /// them from the front.
    pub(crate) jobs: Mutex<VecDeque<Job>>,
    pub(crate) jobs_len: AtomicUsize,
    /// Jobs for this worker alone (`broadcast`, `spawn_broadcast`), first in, first out
    /// (rayon runs a thread's broadcasts in the order they were made); never stolen.
    pub(crate) mail: Mutex<VecDeque<Job>>,
    pub(crate) has_mail: AtomicBool,
    /// The part of a running loop this worker offers while inside a long block.
    pub(crate) offer: crate::core::offer::OfferSlot,
    /// Where the worker's own context lives while its thread runs (see `worker::main`):
    /// beside its deque, so that the owner reaches the gate at a fixed offset.
    pub(crate) seat: Seat,
}

/// Room for one `Worker`, built in place and dropped by that worker's thread. It has
/// cache lines of its own: thieves lock the job list and read the words around it.
#[repr(C, align(128))]
pub(crate) struct Seat(UnsafeCell<MaybeUninit<Worker>>);

// SAFETY: only the worker's own thread touches a seat: `worker::main` builds the `Worker`
// in it, uses it through `&Worker` on that thread alone (`Worker` is neither `Send` nor
// `Sync`), and drops it before returning. No other code reads the field, so sharing the
// registry shares nothing of the seat's contents.
unsafe impl Sync for Seat {}
// SAFETY: a seat holds a live `Worker` only while its thread runs, and that thread keeps
// the registry alive meanwhile; the registry moves or drops with the seat empty.
unsafe impl Send for Seat {}

/// The error for an allocation of `bytes` for `what` that failed.
pub(crate) fn out_of_memory(what: String, bytes: usize) -> OutOfMemory {
    OutOfMemory { what, bytes }
}

impl Seat {
    fn new() -> Seat {
        Seat(UnsafeCell::new(MaybeUninit::uninit()))
    }

    /// The seat's memory, for `worker::main`.
    pub(crate) fn get(&self) -> *mut MaybeUninit<Worker> {
        self.0.get()
    }
}

/// The state a pool's workers share.
pub(crate) struct Registry {
    pub(crate) infos: Box<[WorkerInfo]>,
    pub(crate) sched: Box<dyn Schedule>,
    pub(crate) sleep: Sleep,
    /// Jobs submitted from outside.
    injector: Mutex<VecDeque<(Job, Injected)>>,
    injected: AtomicUsize,
    /// How many of the `injected` are roots.
    roots: AtomicUsize,
    /// Roots and detached tasks submitted and not yet finished.
    pub(crate) in_flight: AtomicUsize,
    pub(crate) terminate: AtomicBool,
    pub(crate) detached: crate::core::detached::Detached,
    /// Work offered by the layers above (teams forming, reductions to help).
    pub(crate) sources: Sources,
    /// Detached tasks made and done on each worker (`crate::core::spawn`).
    pub(crate) spawns: crate::core::spawn::Counts,
}

impl Registry {
    /// The shared state of a pool of `workers` whose deques hold `capacity` slots, with
    /// the scheduler `sched` makes once the deques are in, or an error that says what did
    /// not fit in memory (the deques first, as the larger part).
    pub(crate) fn new(
        workers: usize,
        sched: impl FnOnce() -> Result<Box<dyn Schedule>, OutOfMemory>,
        capacity: usize,
        sources: Vec<Box<dyn Source>>,
    ) -> Result<Registry, OutOfMemory> {
        let deques = || {
            let slots = capacity + crate::core::deque::SPARES;
            let each = crate::core::mem::bytes_of::<crate::core::task::Slot>(slots);
            let mib = each.saturating_mul(workers) >> 20;
            format!(
                "the deques of {workers} workers ({slots} slots of {} bytes each, {mib} MiB in all)",
                std::mem::size_of::<crate::core::task::Slot>()
            )
        };
        let mut infos = Vec::new();
        infos.try_reserve_exact(workers).map_err(|_| {
            out_of_memory(
                format!("the shared state of {workers} workers"),
                crate::core::mem::bytes_of::<WorkerInfo>(workers),
            )
        })?;
        for _ in 0..workers {
            let deque = Deque::try_new(capacity).map_err(|e| out_of_memory(deques(), e.bytes))?;
            infos.push(WorkerInfo {
                deque,
                counters: Counters::default(),
                jobs: Mutex::new(VecDeque::new()),
                jobs_len: AtomicUsize::new(0),
                mail: Mutex::new(VecDeque::new()),
                has_mail: AtomicBool::new(false),
                offer: crate::core::offer::OfferSlot::new(),
                seat: Seat::new(),
            });
        }
        Ok(Registry {
            infos: infos.into_boxed_slice(),
            sched: sched()?,
            sleep: Sleep::new(workers),
            injector: Mutex::new(VecDeque::new()),
            injected: AtomicUsize::new(0),
            roots: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            terminate: AtomicBool::new(false),
            detached: Default::default(),
            sources: Sources::new(sources),
            spawns: crate::core::spawn::Counts::new(workers),
        })
    }

    pub(crate) fn workers(&self) -> usize {
        self.infos.len()
    }

    /// Queues a job from outside the pool that is not a root (a scope task, a detached
    /// task) and wakes a worker that takes it.
    pub(crate) fn inject(&self, job: Job) {
        self.enqueue(job, Injected::Job);
    }

    /// Queues a root of `Pool::run` and wakes a worker that may take it up.
    pub(crate) fn inject_root(&self, job: Job) {
        self.enqueue(job, Injected::Root);
    }

    fn enqueue(&self, job: Job, kind: Injected) {
        let mut q = lock(&self.injector);
        q.push_back((job, kind));
        self.roots
            .fetch_add(usize::from(kind == Injected::Root), SeqCst);
        self.injected.store(q.len(), SeqCst);
        drop(q);
        self.sched.injected(self, kind);
    }

    /// Whether a job submitted from outside waits that a worker under `roots` may take.
    pub(crate) fn injector_has(&self, roots: Roots) -> bool {
        let skipped = match roots {
            Roots::Included => 0,
            Roots::Excluded => self.roots.load(SeqCst),
        };
        self.injected.load(SeqCst) > skipped
    }

    /// How many heap jobs worker `w`'s list holds.
    pub(crate) fn jobs_len(&self, w: usize) -> usize {
        self.infos[w].jobs_len.load(SeqCst)
    }

    /// Whether worker `w` has a posted job waiting.
    pub(crate) fn has_mail(&self, w: usize) -> bool {
        self.infos[w].has_mail.load(SeqCst)
    }

    /// Whether no heap job is queued anywhere, posted jobs included (a `spawn_broadcast`'s
    /// calls are detached tasks a barrier waits for). Roots not yet started do not count:
    /// they have spawned nothing a barrier waits for.
    pub(crate) fn no_jobs_queued(&self) -> bool {
        !self.injector_has(Roots::Excluded)
            && (0..self.workers()).all(|w| self.jobs_len(w) == 0 && !self.has_mail(w))
    }

    /// The oldest job submitted from outside that a worker under `roots` may take (see
    /// `Frames::may_take_roots`).
    pub(crate) fn take_from_injector(&self, roots: Roots) -> Option<Job> {
        if !self.injector_has(roots) {
            return None;
        }
        let mut q = lock(&self.injector);
        let i = q
            .iter()
            .position(|&(_, kind)| roots == Roots::Included || kind == Injected::Job)?;
        let (job, kind) = q.remove(i).expect("the position is in the queue");
        self.roots
            .fetch_sub(usize::from(kind == Injected::Root), SeqCst);
        self.injected.store(q.len(), SeqCst);
        Some(job)
    }

    /// Queues a heap job on worker `w`'s own list; returns how many the list holds now.
    pub(crate) fn queue_job(&self, w: usize, job: Job) -> usize {
        let info = &self.infos[w];
        let mut q = lock(&info.jobs);
        q.push_back(job);
        info.jobs_len.store(q.len(), SeqCst);
        q.len()
    }

    /// Takes the newest heap job of worker `w` (its own, LIFO).
    pub(crate) fn take_newest_job(&self, w: usize) -> Option<Job> {
        self.take_jobs(w, VecDeque::pop_back).flatten()
    }

    /// Takes the oldest heap job of worker `w` (a thief's, from the front).
    pub(crate) fn take_oldest_job(&self, w: usize) -> Option<Job> {
        self.take_jobs(w, VecDeque::pop_front).flatten()
    }

    /// Takes the older half of worker `w`'s heap jobs, rounded up.
    pub(crate) fn take_older_half(&self, w: usize) -> Vec<Job> {
        self.take_jobs(w, |q| q.drain(..q.len().div_ceil(2)).collect())
            .unwrap_or_default()
    }

    /// Runs `take` on worker `w`'s job list unless it is empty.
    fn take_jobs<T>(&self, w: usize, take: impl FnOnce(&mut VecDeque<Job>) -> T) -> Option<T> {
        let info = &self.infos[w];
        if info.jobs_len.load(Relaxed) == 0 {
            return None;
        }
        let mut q = lock(&info.jobs);
        let out = take(&mut q);
        info.jobs_len.store(q.len(), Relaxed);
        Some(out)
    }

    /// Posts `job` to worker `w` alone and wakes it (`broadcast`'s mailbox). The job
    /// is never stolen; `w` takes it up in its scheduling loop or in any wait.
    pub(crate) fn post(&self, w: usize, job: Job) {
        let info = &self.infos[w];
        lock(&info.mail).push_back(job);
        info.has_mail.store(true, SeqCst);
        self.sleep.wake(w);
    }

    /// A job posted to worker `w`, if any.
    pub(crate) fn take_mail(&self, w: usize) -> Option<Job> {
        let info = &self.infos[w];
        if !info.has_mail.load(SeqCst) {
            return None;
        }
        let mut q = lock(&info.mail);
        let job = q.pop_front();
        info.has_mail.store(!q.is_empty(), SeqCst);
        job
    }

    /// Whether any work is visible to a thief under `roots` (a sleeper's last look).
    pub(crate) fn has_visible_work(&self, roots: Roots) -> bool {
        self.injector_has(roots)
            || self
                .infos
                .iter()
                .any(|i| i.jobs_len.load(SeqCst) > 0 || i.deque.has_shared())
    }
}
