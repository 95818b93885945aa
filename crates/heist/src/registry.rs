//! The state a pool's workers share: their deques and counters, the heap job lists, the
//! injector for jobs from outside, the broadcast mailboxes, sleep, and the scheduler.
//! Workers, schedulers and the pool reach each other through it; the pool's public face
//! (`Pool`, its builder, the global pool) is in `pool.rs`.

use crate::pool::Scheduler;
use crate::sched::{Deque, Sched, Schedule};
use crate::sleep::Sleep;
use crate::stats::Counters;
use crate::sync::lock;
use crate::worker::{Job, Worker};
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::Mutex;

/// What one worker shares with the others.
pub(crate) struct WorkerInfo {
    pub(crate) deque: Deque,
    pub(crate) counters: Counters,
    /// Heap jobs this worker spawned (scope tasks); others may take them from the front.
    pub(crate) jobs: Mutex<VecDeque<Job>>,
    pub(crate) jobs_len: AtomicUsize,
    /// Jobs for this worker alone (`broadcast`); never stolen.
    pub(crate) mail: Mutex<Vec<Job>>,
    pub(crate) has_mail: AtomicBool,
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
    pub(crate) sched: Sched,
    pub(crate) sleep: Sleep,
    /// Jobs submitted from outside; `true` marks a root of `Pool::run`.
    injector: Mutex<VecDeque<(Job, bool)>>,
    injected: AtomicUsize,
    /// How many of the `injected` are roots.
    roots: AtomicUsize,
    /// Roots and detached tasks submitted and not yet finished.
    pub(crate) in_flight: AtomicUsize,
    pub(crate) terminate: AtomicBool,
    pub(crate) detached: crate::barrier::Detached,
    pub(crate) teams: crate::team::Teams,
}

impl Registry {
    pub(crate) fn new(workers: usize, scheduler: Scheduler, capacity: usize) -> Registry {
        let infos = (0..workers)
            .map(|_| WorkerInfo {
                deque: Deque::new(capacity),
                counters: Counters::default(),
                jobs: Mutex::new(VecDeque::new()),
                jobs_len: AtomicUsize::new(0),
                mail: Mutex::new(Vec::new()),
                has_mail: AtomicBool::new(false),
                seat: Seat::new(),
            })
            .collect();
        Registry {
            infos,
            sched: Sched::new(scheduler, workers),
            sleep: Sleep::new(workers),
            injector: Mutex::new(VecDeque::new()),
            injected: AtomicUsize::new(0),
            roots: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            terminate: AtomicBool::new(false),
            detached: Default::default(),
            teams: crate::team::Teams::new(workers),
        }
    }

    pub(crate) fn workers(&self) -> usize {
        self.infos.len()
    }

    /// Queues a job from outside the pool (a root of `Pool::run` if `root`) and wakes a
    /// worker that takes it.
    pub(crate) fn inject(&self, job: Job, root: bool) {
        let mut q = lock(&self.injector);
        q.push_back((job, root));
        self.roots.fetch_add(usize::from(root), SeqCst);
        self.injected.store(q.len(), SeqCst);
        drop(q);
        self.sched.injected(self, root);
    }

    /// Whether a job submitted from outside waits, counting roots only if `roots`.
    pub(crate) fn has_injected(&self, roots: bool) -> bool {
        self.injected.load(SeqCst) > usize::from(!roots) * self.roots.load(SeqCst)
    }

    pub(crate) fn jobs_len(&self, w: usize) -> usize {
        self.infos[w].jobs_len.load(SeqCst)
    }

    /// Whether no heap job is queued anywhere. Roots not yet started do not count: they
    /// have spawned nothing a barrier waits for.
    pub(crate) fn no_jobs_queued(&self) -> bool {
        !self.has_injected(false) && (0..self.workers()).all(|w| self.jobs_len(w) == 0)
    }

    /// The oldest job submitted from outside; a root only if `roots`. A root runs at the
    /// bottom of a worker's stack, or above a task that waits for another pool's `run`:
    /// taken up inside other waits, a root's barrier could wait for the very task that
    /// the wait is for.
    pub(crate) fn take_injected(&self, roots: bool) -> Option<Job> {
        if !self.has_injected(roots) {
            return None;
        }
        let mut q = lock(&self.injector);
        let i = q.iter().position(|&(_, root)| roots || !root)?;
        let (job, root) = q.remove(i).expect("the position is in the queue");
        self.roots.fetch_sub(usize::from(root), SeqCst);
        self.injected.store(q.len(), SeqCst);
        Some(job)
    }

    /// Queues a heap job on worker `w`'s own job list and wakes a worker for it.
    pub(crate) fn push_job(&self, w: usize, job: Job) {
        self.push_job_quiet(w, job);
        self.sleep.wake_one();
    }

    /// Queues a heap job on worker `w`'s own job list.
    /// Returns how many jobs the list holds now.
    pub(crate) fn push_job_quiet(&self, w: usize, job: Job) -> usize {
        let info = &self.infos[w];
        let mut q = lock(&info.jobs);
        q.push_back(job);
        info.jobs_len.store(q.len(), SeqCst);
        q.len()
    }

    /// Takes a heap job of worker `w`: the newest if `own`, else the oldest.
    pub(crate) fn take_job(&self, w: usize, own: bool) -> Option<Job> {
        let info = &self.infos[w];
        if info.jobs_len.load(Relaxed) == 0 {
            return None;
        }
        let mut q = lock(&info.jobs);
        let job = if own { q.pop_back() } else { q.pop_front() };
        info.jobs_len.store(q.len(), Relaxed);
        job
    }

    /// Takes the oldest heap job of worker `w`, or the older half of them.
    pub(crate) fn take_oldest_jobs(&self, w: usize, half: bool) -> Vec<Job> {
        let info = &self.infos[w];
        if info.jobs_len.load(Relaxed) == 0 {
            return Vec::new();
        }
        let mut q = lock(&info.jobs);
        let k = if half {
            q.len().div_ceil(2)
        } else {
            q.len().min(1)
        };
        let jobs: Vec<Job> = q.drain(..k).collect();
        info.jobs_len.store(q.len(), Relaxed);
        jobs
    }

    /// Posts `job` to worker `w` alone and wakes it (`broadcast`'s mailbox). The job
    /// is never stolen; `w` takes it up in its scheduling loop or in any wait.
    pub(crate) fn post(&self, w: usize, job: Job) {
        let info = &self.infos[w];
        lock(&info.mail).push(job);
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
        let job = q.pop();
        info.has_mail.store(!q.is_empty(), SeqCst);
        job
    }

    /// Whether any work is visible to a thief (a sleeper's last look), counting roots
    /// only if `roots`.
    pub(crate) fn has_visible_work(&self, roots: bool) -> bool {
        self.has_injected(roots)
            || self
                .infos
                .iter()
                .any(|i| i.jobs_len.load(SeqCst) > 0 || i.deque.has_shared())
    }
}
