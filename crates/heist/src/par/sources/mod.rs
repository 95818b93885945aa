//! The sources of parallel iterators: slices, `Vec`s, arrays, ranges, strings, std's
//! collections, trees and user-split values, each handing the engine a producer over its
//! items (the per-structure splitting of On Lock-Free Work-stealing Iterators for Parallel
//! Data Structures, §3–4), and rayon's `par_bridge`, `repeat` and tree walks.

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
pub(crate) mod sort;
pub(crate) mod str_patterns;
pub(crate) mod strings;
pub(crate) mod tree_set;
pub(crate) mod tree_stealer;
pub(crate) mod user_pieces;
pub(crate) mod vec_slice;
pub(crate) mod walk_tree;
