//! detached-flat: 2^d detached tasks spawned from one task, then a task barrier (issue
//! "spawned tasks at join's cost"; seed 000 §4.1–4.2 detached tasks and task barriers).
//!
//! heist spawns with `spawn_detached` and waits with its barrier; rayon, which has no
//! task barrier, spawns with `rayon::spawn` and counts tasks not yet finished (see
//! [`RayonDetach`]). Each task adds its index to a [`Tally`]; tasks are `'static`, so the
//! tally of an instance lives for the rest of the process. The elision calls each task at
//! once. The root task is shared with [`super::detached_tree`].

use super::detached_tree;
use super::spawn_tree::{Shape, SpawnBench, SpawnInstance};
use crate::spawn::{Detach, DetachTask, Tally};

/// The detached-flat kernel of the catalogue.
pub const DETACHED_FLAT: SpawnBench = SpawnBench::new(
    "detached-flat",
    "2^d empty detached tasks from one task, then a barrier (size \"d\")",
    |name, d| SpawnInstance::boxed(name, d, Shape::DetachedFlat),
);

/// The task of either detached kernel: spawn the flat set or the tree, then wait at the
/// barrier.
pub(super) struct DetachedRoot {
    pub(super) d: u32,
    pub(super) tree: bool,
    pub(super) tally: &'static Tally,
}

impl DetachTask for DetachedRoot {
    type Output = ();
    fn call<D: Detach>(self, cx: &D) {
        let tally = self.tally;
        if self.tree {
            detached_tree::node(cx, self.d, 0, tally);
        } else {
            for i in 0..1u64 << self.d {
                cx.spawn(move |_| tally.add(i));
            }
        }
        cx.barrier();
    }
}
