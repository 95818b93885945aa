//! Sources.

pub(crate) mod arrays;
pub(crate) mod bridge;
#[cfg(feature = "hashbrown")]
pub(crate) mod buckets;
pub(crate) mod drain;
pub(crate) mod maps;
pub(crate) mod option_deque;
pub(crate) mod ranges;
pub(crate) mod repeat;
pub(crate) mod slice_separated;
pub(crate) mod slices;
pub(crate) mod str_patterns;
pub(crate) mod strings;
pub(crate) mod tree_set;
pub(crate) mod tree_stealer;
pub(crate) mod user_pieces;
pub(crate) mod vec_slice;
pub(crate) mod walk_tree;
