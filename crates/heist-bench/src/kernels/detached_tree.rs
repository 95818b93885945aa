//! detached-tree: a binary tree of detached tasks with 2^d leaves, then a task barrier
//! (issue "spawned tasks at join's cost"; seed 000 §4.1–4.2).
//!
//! Each inner task spawns its two children as detached tasks and returns; a leaf adds its
//! index to a [`Tally`]. The barrier at the root waits for the whole tree. heist uses
//! `spawn_detached`, rayon `rayon::spawn` with a count (see [`super::detached_flat`]).

use super::spawn_bench::{Shape, SpawnBench, SpawnInstance};
use crate::spawn::{Detach, Tally};

/// The detached-tree kernel of the catalogue.
pub const DETACHED_TREE: SpawnBench = SpawnBench::new(
    "detached-tree",
    "a binary tree of detached tasks with 2^d leaves, then a barrier (size \"d\")",
    |name, d| SpawnInstance::boxed(name, d, Shape::DetachedTree),
);

/// Node `id` at `depth` levels above the leaves.
pub(super) fn node<D: Detach>(cx: &D, depth: u32, id: u64, tally: &'static Tally) {
    if depth == 0 {
        tally.add(id);
        return;
    }
    cx.spawn(move |cx| node(cx, depth - 1, 2 * id, tally));
    cx.spawn(move |cx| node(cx, depth - 1, 2 * id + 1, tally));
}
