//! What the four spawn kernels (spawn-tree, spawn-flat, detached-tree, detached-flat)
//! share: [`SpawnBench`] with their sizes, the root tasks that make their trees or flat
//! sets of tasks, and their instance, which counts every task in a [`Tally`].

use crate::bench::{Bench, Instance, Sizes};
use crate::runtime::{Runtime, RuntimeKind};
use crate::spawn::{self, Detach, DetachTask, RayonDetach, ScopeTask, Spawner, Tally};
use std::hint::black_box;

/// A spawn kernel: 2^d tasks made by spawning, each counted once in a [`Tally`].
pub struct SpawnBench {
    name: &'static str,
    about: &'static str,
    /// Builds an instance for kernel `name` and size `d`.
    make: fn(&'static str, u32) -> Box<dyn Instance>,
}

impl SpawnBench {
    pub(super) const fn new(
        name: &'static str,
        about: &'static str,
        make: fn(&'static str, u32) -> Box<dyn Instance>,
    ) -> SpawnBench {
        SpawnBench { name, about, make }
    }
}

/// Parses a size `d` (2^d tasks or leaves), `0..=30`.
fn parse_log2(kernel: &str, size: &str) -> Result<u32, String> {
    Ok(crate::bench::count(kernel, size, "d", 0, 30)? as u32)
}

impl Bench for SpawnBench {
    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.about
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "10",
            small: "18",
            quick: "20",
            full: "22",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        spawn::supports_scope(kind)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        Ok((self.make)(self.name, parse_log2(self.name, size)?))
    }
}

struct ScopeRoot<'a> {
    d: u32,
    tree: bool,
    tally: &'a Tally,
}

impl<'a> ScopeTask<'a> for ScopeRoot<'a> {
    type Output = ();
    fn call<S: Spawner<'a>>(self, s: &S) {
        let tally = self.tally;
        if self.tree {
            super::spawn_tree::node(s, self.d, 0, tally)
        } else {
            super::spawn_flat::spawn_all(s, 1 << self.d, tally)
        }
    }
}

/// The task of either detached kernel: spawn the flat set or the tree, then wait at the
/// barrier.
struct DetachedRoot {
    d: u32,
    tree: bool,
    tally: &'static Tally,
}

impl DetachTask for DetachedRoot {
    type Output = ();
    fn call<D: Detach>(self, cx: &D) {
        let tally = self.tally;
        if self.tree {
            super::detached_tree::node(cx, self.d, 0, tally);
        } else {
            for i in 0..1u64 << self.d {
                cx.spawn(move |_| tally.add(i));
            }
        }
        cx.barrier();
    }
}

/// How a spawn kernel makes its tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// A binary tree of scope spawns.
    ScopeTree,
    /// Scope spawns in a loop from one task.
    ScopeFlat,
    /// Detached tasks in a loop from one task, then a barrier.
    DetachedFlat,
    /// A binary tree of detached tasks, then a barrier.
    DetachedTree,
}

/// One run of a spawn kernel. Detached tasks are `'static`, so the tally of an instance
/// (and rayon's count of unfinished tasks) lives for the rest of the process.
pub(super) struct SpawnInstance {
    name: &'static str,
    d: u32,
    shape: Shape,
    tally: &'static Tally,
    rayon: RayonDetach,
    ran: bool,
}

impl SpawnInstance {
    pub(super) fn boxed(name: &'static str, d: u32, shape: Shape) -> Box<dyn Instance> {
        Box::new(SpawnInstance {
            name,
            d,
            shape,
            tally: Box::leak(Box::new(Tally::new())),
            rayon: RayonDetach::leak(),
            ran: false,
        })
    }
}

impl Instance for SpawnInstance {
    fn reset(&mut self) {
        self.tally.set(0);
        self.ran = false;
    }

    fn run(&mut self, rt: &Runtime) {
        let (d, tally) = (black_box(self.d), self.tally);
        match self.shape {
            Shape::ScopeTree | Shape::ScopeFlat => {
                let tree = self.shape == Shape::ScopeTree;
                spawn::exec_scope(rt, ScopeRoot { d, tree, tally })
            }
            Shape::DetachedFlat | Shape::DetachedTree => {
                let tree = self.shape == Shape::DetachedTree;
                spawn::exec_detached(rt, self.rayon, DetachedRoot { d, tree, tally })
            }
        }
        self.ran = true;
    }

    fn verify(&self) -> Result<(), String> {
        if !self.ran {
            return Err(format!("{}: not run", self.name));
        }
        self.tally.check(1 << self.d, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{detached_flat, detached_tree, spawn_flat, spawn_tree::SPAWN_TREE};

    #[test]
    fn every_runtime_counts_every_task_and_a_wrong_tally_fails() {
        let all = [
            SPAWN_TREE,
            spawn_flat::SPAWN_FLAT,
            detached_flat::DETACHED_FLAT,
            detached_tree::DETACHED_TREE,
        ];
        for b in &all {
            for kind in RuntimeKind::ALL.into_iter().filter(|&k| b.supports(k)) {
                let rt = Runtime::new(kind, 2).unwrap();
                let mut inst = b.instance("10").unwrap();
                assert!(inst.verify().is_err(), "not run yet");
                inst.run(&rt);
                assert_eq!(inst.verify(), Ok(()), "{} on {kind}", b.name);
                inst.reset();
                inst.run(&rt);
                assert_eq!(inst.verify(), Ok(()), "{} on {kind}, again", b.name);
            }
        }
        let rt = Runtime::new(RuntimeKind::HeistRelay, 2).unwrap();
        for shape in [
            Shape::ScopeTree,
            Shape::ScopeFlat,
            Shape::DetachedFlat,
            Shape::DetachedTree,
        ] {
            let mut inst = SpawnInstance::boxed("t", 6, shape);
            inst.run(&rt);
            assert_eq!(inst.verify(), Ok(()), "{shape:?}");
            inst.run(&rt); // counted twice without a reset
            assert!(inst.verify().is_err(), "{shape:?}");
        }
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_log2("k", "20"), Ok(20));
        assert!(parse_log2("k", "31").is_err());
        assert!(parse_log2("k", "x").is_err());
        assert!(!SPAWN_TREE.supports(RuntimeKind::Chili));
    }
}
