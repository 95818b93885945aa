//! `Either`, the item type of `partition_map` (rayon re-exports the `either` crate's).
//! heist has its own two-variant enum so that the library stays free of dependencies;
//! with the `either` feature, `heist::iter::Either` is the `either` crate's type instead,
//! for programs that name `either::Either` themselves. The methods here are a subset of
//! that type's, so turning the feature on breaks nothing.

/// A value of one of two types (see [`ParallelIterator::partition_map`]).
///
/// [`ParallelIterator::partition_map`]: crate::iter::ParallelIterator::partition_map
#[cfg(not(feature = "either"))]
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Either<L, R> {
    /// A value of the left type.
    Left(L),
    /// A value of the right type.
    Right(R),
}

#[cfg(not(feature = "either"))]
impl<L, R> Either<L, R> {
    /// Whether this is a `Left`.
    pub fn is_left(&self) -> bool {
        matches!(self, Either::Left(_))
    }

    /// Whether this is a `Right`.
    pub fn is_right(&self) -> bool {
        !self.is_left()
    }

    /// The left value, if any.
    pub fn left(self) -> Option<L> {
        match self {
            Either::Left(l) => Some(l),
            Either::Right(_) => None,
        }
    }

    /// The right value, if any.
    pub fn right(self) -> Option<R> {
        match self {
            Either::Left(_) => None,
            Either::Right(r) => Some(r),
        }
    }
}

#[cfg(feature = "either")]
pub use either::Either;
