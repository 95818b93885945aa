//! The coarse kernels: a few long tasks, in the shapes users write (issue "coarse tasks
//! run in parallel"). Each task spins for `t` ms of calibrated work and never calls into
//! the runtime, so a task made available while its owner computes is run in parallel only
//! if an idle worker takes it without the owner's help (PROTOCOLS.md, "Lifelines").
//!
//! Sizes are "k,t": `k` tasks (per loop, for `coarse-nested`) of `t` ms each. The ideal
//! time with `P` workers is the longest task chain, `ceil(k / P) · t` (for
//! `coarse-nested`, `ceil(2k / P) · t`). Every task adds its id to a [`Tally`], which the
//! check compares with the closed form, so a task lost or run twice fails the run.
//!
//! - `coarse-spawn`: a scope spawns `k - 1` tasks, then computes one itself;
//! - `coarse-join`: `k` tasks joined as a balanced tree (`join(A, B)` for `k = 2`);
//! - `coarse-loop`: `(0..k).into_par_iter().for_each(task)`;
//! - `coarse-promise`: `k - 1` promises, one task computed, then every handle joined;
//! - `coarse-detached`: `k - 1` detached tasks, one computed, then the barrier;
//! - `coarse-nested`: a join of two loops of `k` tasks each.

use super::par_loop::par_versions;
use super::work::spin;
use crate::bench::{parse_size, verify, whole, Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::runtime::{Runtime, RuntimeKind, Task};
use crate::spawn::{
    exec_heist_only, exec_scope, heist_only, supports_scope, ScopeTask, Spawner, Tally,
};
use std::hint::black_box;
use std::sync::Arc;

/// The shapes of the coarse family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Scope spawns, then the body computes.
    Spawn,
    /// A balanced tree of joins.
    Join,
    /// One parallel loop.
    Loop,
    /// Promises, then the caller computes and joins them.
    Promise,
    /// Detached tasks, then the caller computes and waits at the barrier.
    Detached,
    /// A join of two loops.
    Nested,
}

/// One coarse kernel of the catalogue.
pub struct Coarse(pub Shape);

impl Bench for Coarse {
    fn name(&self) -> &'static str {
        match self.0 {
            Shape::Spawn => "coarse-spawn",
            Shape::Join => "coarse-join",
            Shape::Loop => "coarse-loop",
            Shape::Promise => "coarse-promise",
            Shape::Detached => "coarse-detached",
            Shape::Nested => "coarse-nested",
        }
    }

    fn about(&self) -> &'static str {
        match self.0 {
            Shape::Spawn => "k-1 scope spawns of t ms, then t ms in the body (size \"k,t\")",
            Shape::Join => "k tasks of t ms joined as a balanced tree (size \"k,t\")",
            Shape::Loop => "a parallel loop of k items of t ms (size \"k,t\")",
            Shape::Promise => "k-1 promises of t ms, t ms computed, then joined (size \"k,t\")",
            Shape::Detached => "k-1 detached tasks of t ms, t ms computed, barrier (size \"k,t\")",
            Shape::Nested => "a join of two loops of k items of t ms (size \"k,t\")",
        }
    }

    fn sizes(&self) -> Sizes {
        let (small, quick, full) = match self.0 {
            Shape::Join => ("2,10", "2,20", "2,100"),
            Shape::Loop => ("8,2", "8,5", "64,10"),
            Shape::Nested => ("4,2", "4,5", "4,50"),
            Shape::Spawn | Shape::Promise | Shape::Detached => ("4,5", "4,10", "4,50"),
        };
        Sizes {
            test: "2,1",
            small,
            quick,
            full,
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        match self.0 {
            Shape::Spawn => supports_scope(kind),
            Shape::Join => !kind.opt_in(),
            Shape::Loop | Shape::Nested => matches!(
                kind,
                RuntimeKind::Seq
                    | RuntimeKind::HeistLace
                    | RuntimeKind::HeistRelay
                    | RuntimeKind::Rayon
            ),
            Shape::Promise | Shape::Detached => heist_only(kind),
        }
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let name = self.name();
        let [k, t] = parse_size(name, size, [("k", None), ("t", None)])?;
        let k = whole(name, "k", k, 1, 1 << 20)?;
        if !(t > 0.0 && t <= 60_000.0) {
            return Err(format!("{name}: t = {t} ms is not in (0, 60000]"));
        }
        Ok(Box::new(CoarseInstance {
            name,
            shape: self.0,
            k,
            micros: t * 1000.0,
            tally: Arc::new(Tally::new()),
            last: None,
        }))
    }
}

/// A coarse kernel with its size.
struct CoarseInstance {
    name: &'static str,
    shape: Shape,
    k: u64,
    micros: f64,
    tally: Arc<Tally>,
    last: Option<u64>,
}

/// One task: `t` of work, then its id into the tally.
#[inline]
fn task(micros: f64, tally: &Tally, id: u64) {
    black_box(spin(micros));
    tally.add(id);
}

impl Instance for CoarseInstance {
    fn reset(&mut self) {
        self.tally.set(0);
    }

    fn run(&mut self, rt: &Runtime) {
        let (k, t, tally) = (self.k, self.micros, &*self.tally);
        match self.shape {
            Shape::Spawn => exec_scope(rt, SpawnAll { k, t, tally }),
            Shape::Join => rt.exec(JoinTree {
                lo: 0,
                hi: k,
                t,
                tally,
            }),
            Shape::Loop => on_loops(rt, &[(0, k)], t, tally),
            Shape::Nested => on_loops(rt, &[(0, k), (k, 2 * k)], t, tally),
            Shape::Promise => exec_heist_only(
                rt,
                self.name,
                || (0..k).for_each(|i| task(t, tally, i)),
                |w| {
                    w.promises(|p| {
                        let handles: Vec<_> = (1..k)
                            .map(|i| p.spawn(move |_| task(t, tally, i)))
                            .collect();
                        task(t, tally, 0);
                        handles.into_iter().for_each(|h| h.join());
                    })
                },
            ),
            Shape::Detached => {
                let shared = Arc::clone(&self.tally);
                exec_heist_only(
                    rt,
                    self.name,
                    || (0..k).for_each(|i| task(t, tally, i)),
                    move |w| {
                        for i in 1..k {
                            let tally = Arc::clone(&shared);
                            w.spawn_detached(move |_| task(t, &tally, i));
                        }
                        task(t, &shared, 0);
                        w.barrier();
                    },
                )
            }
        }
        self.last = Some(self.tally.get());
    }

    fn verify(&self) -> Result<(), String> {
        let n = match self.shape {
            Shape::Nested => 2 * self.k,
            _ => self.k,
        };
        verify(self.name, self.last, |_| self.tally.check(n, self.name))
    }
}

/// `coarse-spawn`: the body spawns tasks `1..k`, then runs task 0.
struct SpawnAll<'a> {
    k: u64,
    t: f64,
    tally: &'a Tally,
}

impl<'s> ScopeTask<'s> for SpawnAll<'s> {
    type Output = ();
    fn call<S: Spawner<'s>>(self, s: &S) {
        let (t, tally) = (self.t, self.tally);
        for i in 1..self.k {
            s.spawn(move |_| task(t, tally, i));
        }
        task(t, tally, 0);
    }
}

/// `coarse-join`: tasks `lo..hi` as a balanced tree of joins.
struct JoinTree<'a> {
    lo: u64,
    hi: u64,
    t: f64,
    tally: &'a Tally,
}

impl Task for JoinTree<'_> {
    type Output = ();
    fn call<F: Fork>(self, f: F) {
        join_tree(f, self.lo, self.hi, self.t, self.tally);
    }
}

fn join_tree<F: Fork>(f: F, lo: u64, hi: u64, t: f64, tally: &Tally) {
    if hi - lo <= 1 {
        if hi > lo {
            task(t, tally, lo);
        }
        return;
    }
    let mid = lo + (hi - lo) / 2;
    f.join(
        move |f| join_tree(f, lo, mid, t, tally),
        move |f| join_tree(f, mid, hi, t, tally),
    );
}

/// `coarse-loop` and `coarse-nested`: one parallel loop per range, the ranges joined.
fn on_loops(rt: &Runtime, ranges: &[(u64, u64)], t: f64, tally: &Tally) {
    match rt.kind() {
        RuntimeKind::Seq => ranges
            .iter()
            .for_each(|&(lo, hi)| (lo..hi).for_each(|i| task(t, tally, i))),
        RuntimeKind::Rayon => rt.install(|| {
            let one = |lo, hi| one_loop::rayon(lo, hi, t, tally);
            joined(ranges, &one, |a, b| {
                rayon::join(a, b);
            })
        }),
        _ if rt.heist_pool().is_some() => rt.install(|| {
            let one = |lo, hi| one_loop::heist(lo, hi, t, tally);
            joined(ranges, &one, |a, b| {
                heist::join(a, b);
            })
        }),
        kind => panic!("coarse loops do not run on {kind}"),
    }
}

/// Runs `one` on the one range, or on the two joined by `join`.
fn joined(
    ranges: &[(u64, u64)],
    one: &(dyn Fn(u64, u64) + Sync),
    join: impl FnOnce(&(dyn Fn() + Sync), &(dyn Fn() + Sync)),
) {
    match *ranges {
        [(lo, hi)] => one(lo, hi),
        [(a, b), (c, d)] => join(&|| one(a, b), &|| one(c, d)),
        _ => unreachable!("one or two loops"),
    }
}

// One loop over `usize` (what users write), against heist's and rayon's preludes.
par_versions!(one_loop, |lo: u64, hi: u64, t: f64, tally: &Tally| -> () {
    (lo as usize..hi as usize)
        .into_par_iter()
        .for_each(|i| task(t, tally, i as u64))
});
