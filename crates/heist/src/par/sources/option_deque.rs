//! More indexed sources: `Option`, `Result` and `VecDeque`.

use crate::par::engine::driver::{IndexedProducer, Kernel, Producer};
use crate::par::iter::chain::{Chain, ChainIter};
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator, ProducerCallback};
use crate::par::sources::vec_slice::{IntoIter, IterMut};
use std::collections::VecDeque;

/// A parallel iterator over an `Option`'s item, if any.
#[derive(Debug, Clone)]
pub struct OptionIter<T> {
    opt: Option<T>,
}

/// The producer of an `Option`.
#[derive(Debug)]
pub(crate) struct OptionProducer<T>(pub(crate) Option<T>);

impl<T: Send> OptionIter<T> {
    fn len_(&self) -> usize {
        usize::from(self.opt.is_some())
    }
    fn producer(self) -> OptionProducer<T> {
        OptionProducer(self.opt)
    }
}

source!([T: Send] OptionIter<T>, Item = T);

impl<T: Send> Producer for OptionProducer<T> {
    type Item = T;
    type IntoIter = std::option::IntoIter<T>;
    fn len(&self) -> usize {
        usize::from(self.0.is_some())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        if index == 0 {
            (OptionProducer(None), self)
        } else {
            (self, OptionProducer(None))
        }
    }
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<T: Send> IndexedProducer for OptionProducer<T> {}

impl<T: Send> IntoParallelIterator for Option<T> {
    type Iter = OptionIter<T>;
    type Item = T;
    fn into_par_iter(self) -> OptionIter<T> {
        OptionIter { opt: self }
    }
}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a Option<T> {
    type Iter = OptionIter<&'a T>;
    type Item = &'a T;
    fn into_par_iter(self) -> OptionIter<&'a T> {
        OptionIter { opt: self.as_ref() }
    }
}

impl<'a, T: Send + 'a> IntoParallelIterator for &'a mut Option<T> {
    type Iter = OptionIter<&'a mut T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> OptionIter<&'a mut T> {
        OptionIter { opt: self.as_mut() }
    }
}

impl<T: Send> IntoParallelIterator for VecDeque<T> {
    type Iter = IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> IntoIter<T> {
        Vec::from(self).into_par_iter()
    }
}

/// A parallel iterator over `&T` of a `VecDeque`: its two slices, chained.
#[derive(Debug)]
pub struct DequeIter<'a, T> {
    front: &'a [T],
    back: &'a [T],
}

/// The producer of a `VecDeque`'s two slices.
#[derive(Debug)]
pub(crate) struct DequeProducer<'a, T> {
    front: &'a [T],
    back: &'a [T],
}

impl<T> Clone for DequeIter<'_, T> {
    fn clone(&self) -> Self {
        DequeIter {
            front: self.front,
            back: self.back,
        }
    }
}

impl<'a, T: Sync> DequeIter<'a, T> {
    fn len_(&self) -> usize {
        self.front.len() + self.back.len()
    }
    fn producer(self) -> DequeProducer<'a, T> {
        DequeProducer {
            front: self.front,
            back: self.back,
        }
    }
}

source!(['a, T: Sync + 'a] DequeIter<'a, T>, Item = &'a T);

impl<'a, T: Sync> Producer for DequeProducer<'a, T> {
    type Item = &'a T;
    type IntoIter = ChainIter<std::slice::Iter<'a, T>, std::slice::Iter<'a, T>>;
    fn len(&self) -> usize {
        self.front.len() + self.back.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let nf = self.front.len();
        let (f1, f2) = self.front.split_at(index.min(nf));
        let (b1, b2) = self.back.split_at(index.saturating_sub(nf));
        (
            DequeProducer {
                front: f1,
                back: b1,
            },
            DequeProducer {
                front: f2,
                back: b2,
            },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        ChainIter::new(self.front.iter(), self.back.iter())
    }
}

impl<T: Sync> IndexedProducer for DequeProducer<'_, T> {}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a VecDeque<T> {
    type Iter = DequeIter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> DequeIter<'a, T> {
        let (front, back) = self.as_slices();
        DequeIter { front, back }
    }
}

impl<'a, T: Send + 'a> IntoParallelIterator for &'a mut VecDeque<T> {
    type Iter = Chain<IterMut<'a, T>, IterMut<'a, T>>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> Self::Iter {
        let (front, back) = self.as_mut_slices();
        Chain::new(front.into_par_iter(), back.into_par_iter())
    }
}

impl<T: Send, E> IntoParallelIterator for Result<T, E> {
    type Iter = OptionIter<T>;
    type Item = T;
    fn into_par_iter(self) -> OptionIter<T> {
        self.ok().into_par_iter()
    }
}

impl<'a, T: Sync + 'a, E> IntoParallelIterator for &'a Result<T, E> {
    type Iter = OptionIter<&'a T>;
    type Item = &'a T;
    fn into_par_iter(self) -> OptionIter<&'a T> {
        self.as_ref().ok().into_par_iter()
    }
}

impl<'a, T: Send + 'a, E> IntoParallelIterator for &'a mut Result<T, E> {
    type Iter = OptionIter<&'a mut T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> OptionIter<&'a mut T> {
        self.as_mut().ok().into_par_iter()
    }
}
