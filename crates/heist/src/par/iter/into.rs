//! The conversions into parallel iterators (rayon's `IntoParallelIterator`,
//! `IntoParallelRefIterator`, `IntoParallelRefMutIterator`).

use crate::par::iter::traits::ParallelIterator;

/// Conversion into a parallel iterator (rayon's `IntoParallelIterator`).
pub trait IntoParallelIterator {
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items.
    type Item: Send;
    /// Converts.
    fn into_par_iter(self) -> Self::Iter;
}

impl<T: ParallelIterator> IntoParallelIterator for T {
    type Iter = T;
    type Item = T::Item;
    fn into_par_iter(self) -> T {
        self
    }
}

/// `par_iter()` over a borrowed collection (rayon's `IntoParallelRefIterator`).
pub trait IntoParallelRefIterator<'data> {
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items, usually `&'data T`.
    type Item: Send + 'data;
    /// A parallel iterator over references to the items.
    fn par_iter(&'data self) -> Self::Iter;
}

impl<'data, I: 'data + ?Sized> IntoParallelRefIterator<'data> for I
where
    &'data I: IntoParallelIterator,
{
    type Iter = <&'data I as IntoParallelIterator>::Iter;
    type Item = <&'data I as IntoParallelIterator>::Item;
    fn par_iter(&'data self) -> Self::Iter {
        self.into_par_iter()
    }
}

/// `par_iter_mut()` over a borrowed collection (rayon's `IntoParallelRefMutIterator`).
pub trait IntoParallelRefMutIterator<'data> {
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items, usually `&'data mut T`.
    type Item: Send + 'data;
    /// A parallel iterator over mutable references to the items.
    fn par_iter_mut(&'data mut self) -> Self::Iter;
}

impl<'data, I: 'data + ?Sized> IntoParallelRefMutIterator<'data> for I
where
    &'data mut I: IntoParallelIterator,
{
    type Iter = <&'data mut I as IntoParallelIterator>::Iter;
    type Item = <&'data mut I as IntoParallelIterator>::Item;
    fn par_iter_mut(&'data mut self) -> Self::Iter {
        self.into_par_iter()
    }
}
