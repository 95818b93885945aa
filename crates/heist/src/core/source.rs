//! Work sources: the hook through which the layers above the core offer work to idle and
//! waiting workers. A pool registers its sources with its registry when it is built
//! (teams forming, "Work-stealing for mixed-mode parallelism by deterministic team-building";
//! reductions to help, "Blaze-Tasks", §4.1); the worker loop asks them in the order they
//! were registered, without knowing what they are.
//!
//! The hook sits on the idle and wait paths only (`Worker::back_off`, `Worker::find_work`,
//! the sleeper's last look): `join`'s fast path never reaches it. Everything the core owns
//! itself (broadcast mail, the worker's own spawned tasks, the job lists, standing offers,
//! steals) it still asks by name.

use crate::core::registry::Registry;
use crate::core::worker::Worker;
use std::any::Any;

/// A source of work outside the deques, registered with a pool's registry.
pub(crate) trait Source: Any + Send + Sync {
    /// A waiting worker's first look in each round of its back-off (and a wait that must
    /// not block a source, such as a reduction waiting for its helpers): runs work that
    /// `w` owes this source. True if it ran something.
    fn serve(&self, _w: &Worker) -> bool {
        false
    }

    /// An idle worker looking for work, after its own jobs and before stealing: joins
    /// work this source offers. True if it ran something.
    fn help(&self, _w: &Worker) -> bool {
        false
    }

    /// The sleeper's last look (PROTOCOLS.md, "Sleep and wake"): whether worker `me`
    /// is wanted here. A source publishes what it wants before it wakes the sleepers,
    /// so this sees every wake-up a sleeper could otherwise miss.
    fn wants(&self, _me: usize) -> bool {
        false
    }

    /// The source itself, for its own layer to find its state again (`Sources::get`).
    fn as_any(&self) -> &dyn Any;
}

/// The sources a pool registered, in the order the worker asks them.
pub(crate) struct Sources(Box<[Box<dyn Source>]>);

impl Sources {
    pub(crate) fn new(sources: Vec<Box<dyn Source>>) -> Sources {
        Sources(sources.into_boxed_slice())
    }

    /// The registered source of type `S`.
    ///
    /// # Panics
    /// If the pool registered none: the pool registers every source the crate has.
    pub(crate) fn get<S: Source>(&self) -> &S {
        self.0
            .iter()
            .find_map(|s| s.as_any().downcast_ref::<S>())
            .expect("heist: every pool registers each work source")
    }

    /// `Source::serve` on each source until one ran something.
    pub(crate) fn serve(&self, w: &Worker) -> bool {
        self.0.iter().any(|s| s.serve(w))
    }

    /// `Source::help` on each source until one ran something.
    pub(crate) fn help(&self, w: &Worker) -> bool {
        self.0.iter().any(|s| s.help(w))
    }

    /// Whether any source wants worker `me` (the sleeper's last look).
    pub(crate) fn wants(&self, me: usize) -> bool {
        self.0.iter().any(|s| s.wants(me))
    }
}

/// `Source::serve` on every source of `w`'s pool until one ran something.
pub(crate) fn serve(w: &Worker) -> bool {
    w.registry().sources.serve(w)
}

impl Registry {
    /// The registered source of type `S` (see `Sources::get`).
    pub(crate) fn source<S: Source>(&self) -> &S {
        self.sources.get()
    }
}
