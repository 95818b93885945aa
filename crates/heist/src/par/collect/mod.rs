//! Collect.

pub(crate) mod from_iter;
pub(crate) mod in_place;
pub(crate) mod other_targets;
