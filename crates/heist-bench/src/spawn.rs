//! Spawn-style contexts for the kernels that `join` cannot express (Prell's thesis §2.8 SPC and
//! BPC; §4.1–4.2 detached tasks and task barriers): a *scope* into which tasks are
//! spawned one at a time and which waits for all of them, and *detached* `'static` tasks
//! waited for by a barrier.
//!
//! Like [`crate::fork`], every kernel is written once, generic over the context, and its
//! sequential elision is the same code with every spawn turned into a plain call (and
//! every barrier into nothing). Scopes run on `seq`, heist (`heist::Scope`) and rayon
//! (`rayon::scope`); chili has no spawn. Detached tasks run on `seq` and heist only.

use crate::fork::Fork;
use crate::runtime::{Runtime, RuntimeKind, Task};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A scope in which tasks can be spawned; every task spawned in it (and every task those
/// spawn) has finished when the scope ends.
pub trait Spawner<'s>: Sync {
    /// Spawns `f`, which receives the scope so that it can spawn more tasks.
    fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 's;

    /// Gives the runtime a chance to hand out work in the middle of a long task body
    /// (heist's [`heist::poll`], for the relay scheduler); a no-op elsewhere.
    #[inline]
    fn poll(&self) {}
}

/// The sequential elision of a scope: `spawn(f)` is `f()`, right away.
#[derive(Debug, Clone, Copy, Default)]
pub struct SeqScope;

impl<'s> Spawner<'s> for SeqScope {
    #[inline(always)]
    fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 's,
    {
        f(self)
    }
}

impl<'s> Spawner<'s> for heist::Scope<'s> {
    #[inline]
    fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 's,
    {
        heist::Scope::spawn(self, f)
    }

    #[inline]
    fn poll(&self) {
        heist::poll()
    }
}

impl<'s> Spawner<'s> for rayon::Scope<'s> {
    #[inline]
    fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 's,
    {
        rayon::Scope::spawn(self, f)
    }
}

/// A piece of spawn-style work, generic over the runtime's scope.
pub trait ScopeTask<'s>: Send {
    /// What the task computes.
    type Output: Send;
    /// Runs the task in the scope `s`; the scope ends (waiting for every spawned task)
    /// after this returns.
    fn call<S: Spawner<'s>>(self, s: &S) -> Self::Output;
}

/// Whether scopes can be expressed on `kind` (everywhere but chili, which has no spawn).
pub fn supports_scope(kind: RuntimeKind) -> bool {
    kind != RuntimeKind::Chili && !kind.opt_in()
}

/// Runs `task` in a scope on `rt` and returns its result once every task spawned in the
/// scope has finished.
///
/// # Panics
/// On a runtime without scopes (see [`supports_scope`]); the harness reports the panic
/// as that runtime's failure.
pub fn exec_scope<'s, T: ScopeTask<'s>>(rt: &Runtime, task: T) -> T::Output {
    match rt.kind() {
        RuntimeKind::Seq => task.call(&SeqScope),
        RuntimeKind::HeistLace | RuntimeKind::HeistRelay | RuntimeKind::HeistJoin => {
            let pool = rt.heist_pool().expect("a heist runtime has a heist pool");
            pool.run(|w| w.scope(|s| task.call(s)))
        }
        // `exec` runs the closure inside the rayon pool's `install`, so `rayon::scope`
        // runs on that pool.
        RuntimeKind::Rayon | RuntimeKind::RayonTls => {
            rt.exec(Entered(move || rayon::scope(|s| task.call(s))))
        }
        RuntimeKind::Chili => panic!("chili has no spawn: spawn-style kernels cannot run on it"),
        RuntimeKind::RayonBest | RuntimeKind::HeistClaim | RuntimeKind::Orx => {
            unreachable!("{} runs only data-parallel kernels", rt.kind())
        }
        RuntimeKind::Tbb | RuntimeKind::Omp | RuntimeKind::OmpGuided | RuntimeKind::Gomp => {
            unreachable!("{} runs only the kernels' C++ versions", rt.kind())
        }
    }
}

/// A closure run by [`Runtime::exec`] inside the runtime (ignoring its fork context).
struct Entered<G>(G);

impl<G, R> Task for Entered<G>
where
    G: FnOnce() -> R + Send,
    R: Send,
{
    type Output = R;
    fn call<F: Fork>(self, _: F) -> R {
        (self.0)()
    }
}

/// A context for detached `'static` tasks and the barrier that waits for them.
pub trait Detach {
    /// Spawns `f` with no handle; [`Detach::barrier`] waits for it. `f` receives the
    /// context, so that it can spawn more.
    fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 'static;

    /// Waits until every task spawned so far has finished.
    fn barrier(&self);
}

/// The sequential elision of detached tasks: `spawn(f)` is `f()`, the barrier is nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct SeqDetach;

impl Detach for SeqDetach {
    #[inline(always)]
    fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 'static,
    {
        f(self)
    }

    #[inline(always)]
    fn barrier(&self) {}
}

impl Detach for heist::Worker {
    #[inline]
    fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 'static,
    {
        self.spawn_detached(f)
    }

    #[inline]
    fn barrier(&self) {
        heist::Worker::barrier(self)
    }
}

/// Detached tasks on rayon: `rayon::spawn`, and a count of tasks not yet finished that
/// the barrier waits for, running pending tasks meanwhile (rayon has no task barrier).
#[derive(Debug, Clone, Copy)]
pub struct RayonDetach {
    pending: &'static AtomicU64,
}

impl RayonDetach {
    /// A context with its own count, which lives for the rest of the process (one per
    /// kernel instance: tasks capture it by reference, at no cost per spawn).
    pub fn leak() -> RayonDetach {
        RayonDetach {
            pending: Box::leak(Box::new(AtomicU64::new(0))),
        }
    }
}

impl Detach for RayonDetach {
    #[inline]
    fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 'static,
    {
        let me = *self;
        me.pending.fetch_add(1, Relaxed);
        rayon::spawn(move || {
            f(&me);
            me.pending
                .fetch_sub(1, std::sync::atomic::Ordering::Release);
        })
    }

    fn barrier(&self) {
        while self.pending.load(std::sync::atomic::Ordering::Acquire) != 0 {
            if rayon::yield_now() != Some(rayon::Yield::Executed) {
                std::thread::yield_now();
            }
        }
    }
}

/// A piece of work with detached tasks, generic over the runtime's context.
pub trait DetachTask: Send {
    /// What the task computes.
    type Output: Send;
    /// Runs the task with the context `d`.
    fn call<D: Detach>(self, d: &D) -> Self::Output;
}

/// Runs `task` with detached tasks on `rt`: `seq`, heist (`spawn_detached` and its
/// barrier, at the root of `Pool::run`) or rayon (`rayon::spawn`, in the pool's `install`,
/// with `rayon_cx`'s count).
///
/// # Panics
/// On chili, which has no spawn.
pub fn exec_detached<T: DetachTask>(rt: &Runtime, rayon_cx: RayonDetach, task: T) -> T::Output {
    match rt.kind() {
        RuntimeKind::Seq => task.call(&SeqDetach),
        RuntimeKind::HeistLace | RuntimeKind::HeistRelay => {
            let pool = rt.heist_pool().expect("a heist runtime has a heist pool");
            pool.run(|w| task.call(w))
        }
        RuntimeKind::Rayon => rt.exec(Entered(move || task.call(&rayon_cx))),
        RuntimeKind::Chili => panic!("chili has no spawn: detached kernels cannot run on it"),
        RuntimeKind::HeistJoin
        | RuntimeKind::RayonTls
        | RuntimeKind::RayonBest
        | RuntimeKind::HeistClaim
        | RuntimeKind::Orx
        | RuntimeKind::Tbb
        | RuntimeKind::Omp
        | RuntimeKind::OmpGuided
        | RuntimeKind::Gomp => {
            unreachable!(
                "{} does not run the detached kernels (Bench::supports)",
                rt.kind()
            )
        }
    }
}

/// Whether `kind` runs kernels written with heist-only constructs (promises, detached
/// tasks): `seq` (their elision) and the two heist schedulers.
pub fn heist_only(kind: RuntimeKind) -> bool {
    matches!(
        kind,
        RuntimeKind::Seq | RuntimeKind::HeistLace | RuntimeKind::HeistRelay
    )
}

/// Runs a kernel written with heist-only constructs (see [`heist_only`]): `seq`, its
/// elision, on the `seq` runtime, and `on_worker` on a worker of a heist pool.
///
/// # Panics
/// On any other runtime (the harness reports the panic as that runtime's failure).
pub fn exec_heist_only<R: Send>(
    rt: &Runtime,
    kernel: &str,
    seq: impl FnOnce() -> R,
    on_worker: impl FnOnce(&heist::Worker) -> R + Send,
) -> R {
    match (rt.kind(), rt.heist_pool()) {
        (RuntimeKind::Seq, _) => seq(),
        (_, Some(pool)) => pool.run(on_worker),
        (kind, None) => panic!("{kernel}: heist-only constructs do not exist on {kind}"),
    }
}

/// Spins for about `micros` µs of calibrated work (see [`crate::kernels::work`]), calling
/// `s.poll()` after every `poll_micros` µs of it, and returns the loop's value. The
/// elision runs the same chunks with a no-op poll, so it does the same work.
#[inline]
pub fn spin_polling<'s, S: Spawner<'s>>(s: &S, micros: f64, poll_micros: f64) -> u64 {
    let rate = crate::kernels::work::iters_per_micro();
    let total = (micros.max(0.0) * rate).round() as u64;
    let chunk = ((poll_micros * rate).round() as u64).max(1);
    let (mut done, mut acc) = (0u64, 0u64);
    while done < total {
        let n = chunk.min(total - done);
        acc = acc.wrapping_add(crate::kernels::work::spin_iters(n));
        done += n;
        if done < total {
            s.poll();
        }
    }
    acc
}

/// The task count and identity check shared by the spawn-style kernels: each task adds
/// `2^40 + id` (wrapping) to one atomic, so the total encodes both how many tasks ran
/// and the sum of their ids, and is compared with the closed form for ids `0..n`.
#[derive(Debug, Default)]
pub struct Tally(AtomicU64);

/// The weight of one task in a [`Tally`].
const ONE_TASK: u64 = 1 << 40;

impl Tally {
    /// A tally with no task counted.
    pub fn new() -> Tally {
        Tally(AtomicU64::new(0))
    }

    /// Counts the task with identifier `id`.
    #[inline]
    pub fn add(&self, id: u64) {
        self.0.fetch_add(ONE_TASK.wrapping_add(id), Relaxed);
    }

    /// The value counted so far.
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }

    /// Sets the value (to start over, or to corrupt it in tests).
    pub fn set(&self, v: u64) {
        self.0.store(v, Relaxed)
    }

    /// The value after tasks `0..n` each ran once: `n·2^40 + n(n−1)/2`, modulo 2^64.
    pub fn expected(n: u64) -> u64 {
        let n = u128::from(n);
        (n * u128::from(ONE_TASK) + n * n.saturating_sub(1) / 2) as u64
    }

    /// Checks the value against `expected(n)`; the error names `what` and both values.
    pub fn check(&self, n: u64, what: &str) -> Result<(), String> {
        let (got, want) = (self.get(), Tally::expected(n));
        if got == want {
            return Ok(());
        }
        let ran = |v: u64| v >> 40;
        Err(format!(
            "{what}: tally {got:#x} (≈{} tasks), expected {want:#x} for {n} tasks",
            ran(got)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn tally_detects_missing_and_repeated_tasks() {
        let t = Tally::new();
        (0..100).for_each(|i| t.add(i));
        assert_eq!(t.check(100, "x"), Ok(()));
        t.add(7);
        assert!(t.check(100, "x").is_err());
        let t = Tally::new();
        (0..100).filter(|&i| i != 5).for_each(|i| t.add(i));
        t.add(2);
        t.add(3); // the same id sum, but one task too many
        assert!(t.check(100, "x").is_err());
        assert_eq!(Tally::expected(0), 0);
    }

    /// Spawns `n` tasks, each counting its index, from one loop.
    struct SpawnAll<'a> {
        n: u64,
        t: &'a Tally,
    }

    impl<'a> ScopeTask<'a> for SpawnAll<'a> {
        type Output = u64;
        fn call<S: Spawner<'a>>(self, s: &S) -> u64 {
            let t = self.t;
            for i in 0..self.n {
                s.spawn(move |_| t.add(i));
            }
            self.n
        }
    }

    #[test]
    fn scopes_wait_for_every_task_on_each_runtime() {
        for kind in RuntimeKind::ALL.into_iter().filter(|&k| supports_scope(k)) {
            let rt = Runtime::new(kind, 2).unwrap();
            let t = Tally::new();
            assert_eq!(exec_scope(&rt, SpawnAll { n: 500, t: &t }), 500);
            assert_eq!(t.check(500, kind.name()), Ok(()));
        }
    }

    #[test]
    #[should_panic(expected = "chili has no spawn")]
    fn chili_has_no_scope() {
        let rt = Runtime::new(RuntimeKind::Chili, 1).unwrap();
        let t = Tally::new();
        exec_scope(&rt, SpawnAll { n: 1, t: &t });
    }

    /// A sequential scope that counts its polls.
    #[derive(Default)]
    struct Polls(AtomicUsize);

    impl<'s> Spawner<'s> for Polls {
        fn spawn<F>(&self, f: F)
        where
            F: FnOnce(&Self) + Send + 's,
        {
            f(self)
        }
        fn poll(&self) {
            self.0.fetch_add(1, Relaxed);
        }
    }

    #[test]
    fn spin_polling_polls_between_chunks() {
        let p = Polls::default();
        spin_polling(&p, 10.0, 1.0);
        // Ten chunks of 1 µs (±1 for rounding), polled between them, not after the last.
        let polls = p.0.load(Relaxed);
        assert!((8..=10).contains(&polls), "{polls} polls");
        let p = Polls::default();
        spin_polling(&p, 1.0, 5.0);
        assert_eq!(p.0.load(Relaxed), 0);
    }

    #[test]
    fn detached_elision_runs_at_once() {
        use std::sync::Arc;
        let t = Arc::new(Tally::new());
        let t2 = Arc::clone(&t);
        SeqDetach.spawn(move |_| t2.add(0));
        assert_eq!(t.check(1, "seq"), Ok(()));
        SeqDetach.barrier();
    }

    #[test]
    fn heist_detached_tasks_finish_by_the_barrier() {
        use std::sync::Arc;
        let pool = heist::Pool::builder().workers(2).build().unwrap();
        let t = Arc::new(Tally::new());
        pool.run(|w| {
            for i in 0..200 {
                let t = Arc::clone(&t);
                Detach::spawn(w, move |_| t.add(i));
            }
            Detach::barrier(w);
        });
        assert_eq!(t.check(200, "heist"), Ok(()));
    }
}
