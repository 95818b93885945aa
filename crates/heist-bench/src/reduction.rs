//! The runtimes of the reduction kernels (after "Blaze-Tasks: A Framework for Computing
//! Parallel Reductions over Tasks"): each kernel is written once as a task body that
//! pushes subtasks and returns a partial result, and once with `join`.
//!
//! - `heist-lace`, `heist-relay`: `Pool::reduce_tasks` with the task body;
//! - `rayon-tls`: `rayon::scope`, a spawn per pushed task, results folded into
//!   per-thread accumulators of the `thread_local` crate;
//! - every other runtime (`seq`, `heist-join`, `rayon`, `chili`): the `join` version
//!   through [`Runtime::exec`], whose `seq` is the sequential elision.

use crate::bench::Instance;
use crate::fork::Fork;
use crate::runtime::{Runtime, RuntimeKind, Task};
use std::cell::RefCell;
use std::fmt::Debug;
use thread_local::ThreadLocal;

/// A reduction kernel in both shapes.
pub trait Reduce: Sync {
    /// A task of the task-body version.
    type Task: Send;
    /// A partial result.
    type Out: Send;
    /// The first task.
    fn root(&self) -> Self::Task;
    /// The neutral element of `op`.
    fn identity(&self) -> Self::Out;
    /// The associative, commutative fold.
    fn op(&self, a: Self::Out, b: Self::Out) -> Self::Out;
    /// Solves `t`, handing subtasks to `push`; they are never waited for.
    fn expand(&self, t: Self::Task, push: &mut impl FnMut(Self::Task)) -> Self::Out;
    /// The whole computation written with `join`.
    fn join<F: Fork>(&self, f: F) -> Self::Out;
    /// Untimed: clears what a run leaves behind.
    fn reset(&self) {}
    /// The computation as the error of a wrong answer names it, e.g. `reduce-fib(40)`.
    fn describe(&self) -> String;
    /// The computation on a C++ peer, for a kernel that has a C++ version (see
    /// [`supports`]).
    fn on_peer(&self, p: &crate::peers::Peer) -> Self::Out {
        let _ = p;
        unreachable!("{} has no C++ version (Bench::supports)", self.describe())
    }
}

/// A reduction kernel and the answer it must give, as a benchmark instance.
pub struct Checked<K: Reduce> {
    kernel: K,
    expected: K::Out,
    result: Option<K::Out>,
}

impl<K> Checked<K>
where
    K: Reduce + Send + 'static,
    K::Out: PartialEq + Debug,
{
    /// The instance of `kernel`, whose every run must give `expected`.
    pub fn boxed(kernel: K, expected: K::Out) -> Box<dyn Instance> {
        Box::new(Checked {
            kernel,
            expected,
            result: None,
        })
    }
}

impl<K> Instance for Checked<K>
where
    K: Reduce + Send,
    K::Out: PartialEq + Debug,
{
    fn reset(&mut self) {
        self.kernel.reset();
        self.result = None;
    }

    fn run(&mut self, rt: &Runtime) {
        self.result = Some(run(&self.kernel, rt));
    }

    fn verify(&self) -> Result<(), String> {
        match &self.result {
            None => Err(format!("{}: not run", self.kernel.describe())),
            Some(r) if *r == self.expected => Ok(()),
            Some(r) => Err(format!(
                "{} = {r:?}, expected {:?}",
                self.kernel.describe(),
                self.expected
            )),
        }
    }
}

/// Runs `k` on `rt` in the shape that runtime stands for.
pub fn run<K: Reduce>(k: &K, rt: &Runtime) -> K::Out {
    match rt.kind() {
        RuntimeKind::HeistLace | RuntimeKind::HeistRelay => {
            let pool = rt.heist_pool().expect("a heist runtime has a heist pool");
            pool.reduce_tasks(
                k.root(),
                || k.identity(),
                |a, b| k.op(a, b),
                |ctx, t| k.expand(t, &mut |c| ctx.push(c)),
            )
        }
        RuntimeKind::RayonTls => {
            let pool = rt.rayon_pool().expect("rayon-tls has a rayon pool");
            let acc = ThreadLocal::new();
            pool.install(|| rayon::scope(|s| spawned(s, k, &acc, k.root())));
            acc.into_iter()
                .filter_map(RefCell::into_inner)
                .fold(k.identity(), |a, b| k.op(a, b))
        }
        _ => match rt.peer() {
            Some(p) => k.on_peer(p),
            None => rt.exec(Joined(k)),
        },
    }
}

/// One task of the `rayon-tls` version: its pushes become spawns.
fn spawned<'s, K: Reduce>(
    s: &rayon::Scope<'s>,
    k: &'s K,
    acc: &'s ThreadLocal<RefCell<Option<K::Out>>>,
    t: K::Task,
) where
    K::Task: 's,
{
    let r = k.expand(t, &mut |c| s.spawn(move |s| spawned(s, k, acc, c)));
    let mut slot = acc.get_or(|| RefCell::new(None)).borrow_mut();
    let a = slot.take().unwrap_or_else(|| k.identity());
    *slot = Some(k.op(a, r));
}

/// The `join` version as a runtime task.
struct Joined<'a, K>(&'a K);

impl<K: Reduce> Task for Joined<'_, K> {
    type Output = K::Out;
    fn call<F: Fork>(self, f: F) -> K::Out {
        self.0.join(f)
    }
}

/// Whether a reduction kernel runs on `kind`: every runtime but the data-parallel ones
/// (`rayon-best`, `heist-lace-claim` and `orx` would run rayon's, heist's and seq's
/// `join` version under another name), and the C++ peers if the kernel has a C++
/// version (`peer`).
pub fn supports(kind: RuntimeKind, peer: bool) -> bool {
    match kind {
        RuntimeKind::RayonBest | RuntimeKind::HeistClaim | RuntimeKind::Orx => false,
        k if crate::peers::is_peer(k) => peer && crate::peers::supports(k, false),
        _ => true,
    }
}
