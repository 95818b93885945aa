//! spawn-tree: a binary tree of scope spawns with 2^d leaves (issue "spawned tasks at
//! join's cost"; seed 000 §2.8 BPC builds its work the same way, through spawns).
//!
//! The root spawns two tasks, each of which spawns two more, down to depth `d`; a leaf
//! adds its index to a [`Tally`]. Every task is a spawn into one scope (heist's
//! `Scope::spawn`, rayon's `Scope::spawn`), so the time per leaf is the cost of a spawn
//! plus its share of stealing. The elision calls each task at once.

use super::spawn_bench::{Shape, SpawnBench, SpawnInstance};
use crate::spawn::{Spawner, Tally};

/// The spawn-tree kernel of the catalogue.
pub const SPAWN_TREE: SpawnBench = SpawnBench::new(
    "spawn-tree",
    "a binary tree of scope spawns with 2^d leaves (size \"d\")",
    |name, d| SpawnInstance::boxed(name, d, Shape::ScopeTree),
);

/// Node `id` at `depth` levels above the leaves.
pub(super) fn node<'s, S: Spawner<'s>>(s: &S, depth: u32, id: u64, tally: &'s Tally) {
    if depth == 0 {
        tally.add(id);
        return;
    }
    s.spawn(move |s| node(s, depth - 1, 2 * id, tally));
    s.spawn(move |s| node(s, depth - 1, 2 * id + 1, tally));
}
