//! Collecting a parallel iterator (rayon's `FromParallelIterator` and `ParallelExtend`):
//! `from_iter.rs` for the traits and `Vec`, `in_place.rs` for indexed iterators written
//! straight into their places, `other_targets.rs` for the rest of rayon's targets.

pub(crate) mod from_iter;
pub(crate) mod in_place;
pub(crate) mod other_targets;
