//! Sources made from single values (rayon's `repeat`, `repeat_n`, `once`, `empty`):
//! clones of a value, endless or counted, one item, or none.

use crate::par::engine::driver::{IndexedProducer, Kernel, Producer};
use crate::par::iter::indexed::Zip;
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator, ProducerCallback};
use crate::par::sources::option_deque::OptionProducer;
use std::fmt;
use std::marker::PhantomData;
use std::num::NonZeroUsize;

/// Endless clones of a value, in parallel (see [`repeat`]).
#[derive(Debug, Clone)]
#[must_use = "iterators are lazy"]
pub struct Repeat<T> {
    element: T,
}

/// Endless clones of `element`, in parallel (rayon's `repeat`): a loop over it ends
/// only when its consumer is done (`find_any`, `take_any`, `while_some`, ...), or
/// through [`Repeat::take`] and [`Repeat::zip`].
///
/// ```
/// use heist::prelude::*;
/// let v: Vec<u8> = heist::iter::repeat(7).take_any(5).collect();
/// assert_eq!(v, [7; 5]);
/// ```
pub fn repeat<T: Clone + Send>(element: T) -> Repeat<T> {
    Repeat { element }
}

impl<T: Clone + Send> Repeat<T> {
    /// The first `n` clones: an indexed iterator.
    pub fn take(self, n: usize) -> RepeatN<T> {
        repeat_n(self.element, n)
    }

    /// A clone paired with each item of `zip_op`.
    pub fn zip<Z>(self, zip_op: Z) -> Zip<RepeatN<T>, Z::Iter>
    where
        Z: IntoParallelIterator<Iter: IndexedParallelIterator>,
    {
        let z = zip_op.into_par_iter();
        let n = z.len();
        self.take(n).zip(z)
    }
}

impl<T: Clone + Send> ParallelIterator for Repeat<T> {
    type Item = T;
    fn drive<K: Kernel<T>>(self, kernel: K) -> K::Output {
        crate::par::engine::driver::bridge(Endless(self.element), &kernel)
    }
}

/// The producer of [`Repeat`]: its length says "more than can be counted", and a split
/// leaves two endless halves.
struct Endless<T>(T);

impl<T: Clone + Send> Producer for Endless<T> {
    type Item = T;
    type IntoIter = std::iter::Repeat<T>;
    fn len(&self) -> usize {
        usize::MAX
    }
    fn split_at(self, _index: usize) -> (Self, Self) {
        (Endless(self.0.clone()), self)
    }
    fn into_iter(self) -> Self::IntoIter {
        std::iter::repeat(self.0)
    }
    fn fold_block<K: Kernel<T>>(self, n: usize, kernel: &K, acc: K::Acc) -> (K::Acc, Self) {
        let acc = kernel.fold(acc, std::iter::repeat_n(self.0.clone(), n));
        (acc, self)
    }
}

/// A parallel iterator over `n` clones of a value (see [`repeat_n`]).
#[derive(Clone)]
pub struct RepeatN<T> {
    clones: Clones<T>,
}

impl<T: fmt::Debug> fmt::Debug for RepeatN<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RepeatN");
        match &self.clones {
            Clones::Of(element, n) => d.field("count", n).field("element", element).finish(),
            Clones::Empty => d.field("count", &0usize).finish_non_exhaustive(),
        }
    }
}

/// `n` clones of `elt`, in parallel (rayon's `repeat_n`). With `n == 0`, `elt` is
/// dropped at once.
pub fn repeat_n<T: Clone + Send>(elt: T, n: usize) -> RepeatN<T> {
    let clones = match NonZeroUsize::new(n) {
        Some(n) => Clones::Of(elt, n),
        None => Clones::Empty,
    };
    RepeatN { clones }
}

/// `n` clones of `elt`, in parallel (rayon's older name for [`repeat_n`]).
#[deprecated(note = "use `repeat_n`")]
pub fn repeatn<T: Clone + Send>(elt: T, n: usize) -> RepeatN<T> {
    repeat_n(elt, n)
}

impl<T: Clone + Send> RepeatN<T> {
    fn len_(&self) -> usize {
        ExactSizeIterator::len(&self.clones)
    }
    fn producer(self) -> Clones<T> {
        self.clones
    }
}

source!([T: Clone + Send] RepeatN<T>, Item = T);

/// The producer and block iterator of [`RepeatN`]: a value and how many times it is
/// given, or nothing. The value itself is the last item, and a part with nothing to give
/// holds no clone, so a count clones only what it gives out beyond one value per part
/// (as rayon's does).
#[derive(Clone, Debug)]
pub(crate) enum Clones<T> {
    /// The value, given `n` times.
    Of(T, NonZeroUsize),
    /// Nothing.
    Empty,
}

impl<T: Clone + Send> Producer for Clones<T> {
    type Item = T;
    type IntoIter = Clones<T>;
    fn len(&self) -> usize {
        ExactSizeIterator::len(self)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let Clones::Of(elt, n) = self else {
            return (Clones::Empty, Clones::Empty);
        };
        match (NonZeroUsize::new(index), NonZeroUsize::new(n.get() - index)) {
            (Some(l), Some(r)) => (Clones::Of(elt.clone(), l), Clones::Of(elt, r)),
            (Some(l), None) => (Clones::Of(elt, l), Clones::Empty),
            (None, Some(r)) => (Clones::Empty, Clones::Of(elt, r)),
            (None, None) => unreachable!("a count is never 0"),
        }
    }
    fn into_iter(self) -> Clones<T> {
        self
    }
}

impl<T: Clone + Send> IndexedProducer for Clones<T> {}

impl<T: Clone> Iterator for Clones<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        let Clones::Of(elt, n) = self else {
            return None;
        };
        match NonZeroUsize::new(n.get() - 1) {
            Some(left) => {
                *n = left;
                Some(elt.clone())
            }
            None => match std::mem::replace(self, Clones::Empty) {
                Clones::Of(elt, _) => Some(elt),
                Clones::Empty => unreachable!("matched above"),
            },
        }
    }
    /// Skips without cloning.
    fn nth(&mut self, skip: usize) -> Option<T> {
        if let Clones::Of(_, n) = self {
            match NonZeroUsize::new(n.get().saturating_sub(skip)) {
                Some(left) => *n = left,
                None => *self = Clones::Empty,
            }
        }
        self.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = ExactSizeIterator::len(self);
        (n, Some(n))
    }
}

impl<T: Clone> DoubleEndedIterator for Clones<T> {
    fn next_back(&mut self) -> Option<T> {
        self.next()
    }
    fn nth_back(&mut self, skip: usize) -> Option<T> {
        self.nth(skip)
    }
}

impl<T: Clone> ExactSizeIterator for Clones<T> {
    fn len(&self) -> usize {
        match self {
            Clones::Of(_, n) => n.get(),
            Clones::Empty => 0,
        }
    }
}

/// A parallel iterator over one item (see [`once`]).
#[derive(Debug, Clone)]
#[must_use = "iterators are lazy"]
pub struct Once<T> {
    item: T,
}

/// A parallel iterator over one item (rayon's `once`).
pub fn once<T: Send>(item: T) -> Once<T> {
    Once { item }
}

impl<T: Send> Once<T> {
    fn len_(&self) -> usize {
        1
    }
    fn producer(self) -> OptionProducer<T> {
        OptionProducer(Some(self.item))
    }
}

source!([T: Send] Once<T>, Item = T);

/// A parallel iterator over nothing (see [`empty`]).
#[must_use = "iterators are lazy"]
pub struct Empty<T> {
    marker: PhantomData<fn() -> T>,
}

/// A parallel iterator over nothing (rayon's `empty`).
pub fn empty<T: Send>() -> Empty<T> {
    Empty {
        marker: PhantomData,
    }
}

impl<T> Clone for Empty<T> {
    fn clone(&self) -> Self {
        Empty {
            marker: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Empty<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Empty")
    }
}

impl<T: Send> Empty<T> {
    fn len_(&self) -> usize {
        0
    }
    fn producer(self) -> OptionProducer<T> {
        OptionProducer(None)
    }
}

source!([T: Send] Empty<T>, Item = T);
