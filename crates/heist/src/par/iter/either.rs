//! `Either`, the item type of `partition_map`: the `either` crate's type, which rayon
//! re-exports too, so that a program that names `either::Either` (or rayon's) gets the
//! same type from heist.

pub use either::Either;
