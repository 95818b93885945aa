//! reduce-uts: the UTS node count as a reduction over tasks: a node's task pushes its
//! children but the first and goes on with that one down the tree, counting the nodes,
//! leaves and depth it passes. The `join` version is the catalogue's
//! [`count`](super::uts::count); both use its tree code, and the counts are checked
//! against the published ones.

use super::uts::{self, Counts, State, Tree};
use crate::bench::{Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::reduction::{self, Reduce};
use crate::runtime::{Runtime, RuntimeKind};

/// The reduce-uts kernel of the catalogue.
pub struct ReduceUts;

impl Bench for ReduceUts {
    fn name(&self) -> &'static str {
        "reduce-uts"
    }

    fn about(&self) -> &'static str {
        "UTS node count with pushed children, counts folded per worker"
    }

    fn sizes(&self) -> Sizes {
        super::uts::Uts.sizes()
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        reduction::supports(kind, false)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let (tree, expected) = uts::tree_of_size(size)?;
        Ok(Box::new(UtsRun {
            tree,
            expected,
            result: None,
        }))
    }
}

struct UtsRun {
    tree: Tree,
    expected: Counts,
    result: Option<Counts>,
}

impl Reduce for UtsRun {
    /// A node's random state and depth.
    type Task = (State, u32);
    type Out = Counts;

    fn root(&self) -> (State, u32) {
        (self.tree.root_state(), 0)
    }

    fn identity(&self) -> Counts {
        Counts::default()
    }

    fn op(&self, a: Counts, b: Counts) -> Counts {
        Counts {
            nodes: a.nodes + b.nodes,
            leaves: a.leaves + b.leaves,
            max_depth: a.max_depth.max(b.max_depth),
        }
    }

    fn expand(&self, (mut s, mut d): (State, u32), push: &mut impl FnMut((State, u32))) -> Counts {
        let mut c = Counts::default();
        loop {
            c.nodes += 1;
            let n = self.tree.num_children(&s, d);
            if n == 0 {
                c.leaves += 1;
                c.max_depth = c.max_depth.max(d);
                return c;
            }
            for i in 1..n {
                push((uts::spawn(&s, i), d + 1));
            }
            s = uts::spawn(&s, 0);
            d += 1;
        }
    }

    fn join<F: Fork>(&self, f: F) -> Counts {
        uts::count(f, &self.tree)
    }

    fn describe(&self) -> String {
        "reduce-uts".into()
    }
}

impl Instance for UtsRun {
    fn run(&mut self, rt: &Runtime) {
        self.result = Some(reduction::run(&*self, rt));
    }

    fn verify(&self) -> Result<(), String> {
        let got = self.result.ok_or("reduce-uts: not run")?;
        if got == self.expected {
            return Ok(());
        }
        let e = self.expected;
        Err(format!(
            "reduce-uts: counted {} nodes, {} leaves, depth {}; expected {} nodes, {} \
             leaves, depth {}",
            got.nodes, got.leaves, got.max_depth, e.nodes, e.leaves, e.max_depth
        ))
    }
}
