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
