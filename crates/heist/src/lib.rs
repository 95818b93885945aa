//! STUB (being replaced): sequential placeholder with the final public signatures.
use std::marker::PhantomData;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler { Lace, Relay }

#[derive(Debug)]
pub enum BuildError { ZeroWorkers }

pub struct PoolBuilder { workers: usize, scheduler: Scheduler }
impl PoolBuilder {
    pub fn workers(mut self, n: usize) -> Self { self.workers = n; self }
    pub fn scheduler(mut self, s: Scheduler) -> Self { self.scheduler = s; self }
    pub fn build(self) -> Result<Pool, BuildError> { if self.workers == 0 { return Err(BuildError::ZeroWorkers) } Ok(Pool { workers: self.workers, _s: self.scheduler }) }
}

pub struct Pool { workers: usize, _s: Scheduler }
impl Pool {
    pub fn builder() -> PoolBuilder { PoolBuilder { workers: 1, scheduler: Scheduler::Lace } }
    pub fn workers(&self) -> usize { self.workers }
    pub fn run<R: Send, F: FnOnce(&Worker) -> R + Send>(&self, f: F) -> R { f(&Worker { _p: PhantomData }) }
}

pub struct Worker { _p: PhantomData<*const ()> }
impl Worker {
    #[inline]
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where A: FnOnce(&Worker) -> RA + Send, B: FnOnce(&Worker) -> RB + Send, RA: Send, RB: Send {
        (a(self), b(self))
    }
}

pub struct Scope<'scope> { _p: PhantomData<&'scope mut &'scope ()> }
impl<'scope> Scope<'scope> {
    pub fn spawn<F: FnOnce(&Scope<'scope>) + Send + 'scope>(&self, f: F) { f(self) }
}
pub fn scope<'scope, R: Send, F: FnOnce(&Scope<'scope>) -> R + Send>(f: F) -> R { f(&Scope { _p: PhantomData }) }
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where A: FnOnce() -> RA + Send, B: FnOnce() -> RB + Send, RA: Send, RB: Send { (a(), b()) }

/// Per-worker event counters (all zero unless the `stats` feature is on).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerStats {
    pub steals: u64,
    pub failed_steals: u64,
    pub leaps: u64,
    pub grows: u64,
    pub shrinks: u64,
    pub sleeps: u64,
    pub requests_sent: u64,
    pub requests_forwarded: u64,
    pub requests_returned: u64,
    pub steal_half: u64,
    pub tasks_stolen: u64,
}
/// Whether the `stats` feature is compiled in.
pub const STATS_ENABLED: bool = cfg!(feature = "stats");
impl Pool {
    /// Counters of each worker since the pool started or `reset_stats`.
    pub fn stats(&self) -> Vec<WorkerStats> { vec![WorkerStats::default(); self.workers] }
    /// Zeroes the counters.
    pub fn reset_stats(&self) {}
}
