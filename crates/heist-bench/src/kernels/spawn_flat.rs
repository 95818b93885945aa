//! spawn-flat: 2^d scope spawns from one task (issue "spawned tasks at join's cost"; the
//! shape of seed 000 §2.8 SPC with empty tasks).
//!
//! The root spawns every task in a loop; each adds its index to a
//! [`Tally`]. With no work in the tasks, the time per task is the cost of a spawn and of
//! handing spawned tasks from the one producer to the other workers. The elision calls
//! each task at once. The instance is shared with [`super::spawn_bench`].

use super::spawn_bench::{Shape, SpawnBench, SpawnInstance};
use crate::spawn::{Spawner, Tally};

/// The spawn-flat kernel of the catalogue.
pub const SPAWN_FLAT: SpawnBench = SpawnBench::new(
    "spawn-flat",
    "2^d empty scope spawns from one task (size \"d\")",
    |name, d| SpawnInstance::boxed(name, d, Shape::ScopeFlat),
);

/// Spawns tasks `0..n` from this task, one at a time.
pub(super) fn spawn_all<'s, S: Spawner<'s>>(s: &S, n: u64, tally: &'s Tally) {
    for i in 0..n {
        s.spawn(move |_| tally.add(i));
    }
}
