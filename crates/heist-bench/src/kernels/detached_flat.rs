//! detached-flat: 2^d detached tasks spawned from one task, then a task barrier (issue
//! "spawned tasks at join's cost"; seed 000 §4.1–4.2 detached tasks and task barriers).
//!
//! heist spawns with `spawn_detached` and waits with its barrier; rayon, which has no
//! task barrier, spawns with `rayon::spawn` and counts tasks not yet finished (see
//! [`RayonDetach`]). Each task adds its index to a [`Tally`]; tasks are `'static`, so the
//! tally of an instance lives for the rest of the process. The elision calls each task at
//! once. The root task is shared with [`super::detached_tree`] (see
//! [`super::spawn_bench`]).

use super::spawn_bench::{Shape, SpawnBench, SpawnInstance};

/// The detached-flat kernel of the catalogue.
pub const DETACHED_FLAT: SpawnBench = SpawnBench::new(
    "detached-flat",
    "2^d empty detached tasks from one task, then a barrier (size \"d\")",
    |name, d| SpawnInstance::boxed(name, d, Shape::DetachedFlat),
);
