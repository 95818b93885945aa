//! `interleave` and `interleave_shortest` (rayon's): items of two iterators taken in
//! turn. Interleaving keeps indices, so its producer cuts both sides where the turns put
//! the cut.

use crate::par::engine::driver::{IndexedProducer, Kernel, Producer};
use crate::par::iter::indexed::Take;
use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator, ProducerCallback};

/// Items of two iterators in turn, then the rest of the longer (see
/// [`IndexedParallelIterator::interleave`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adapters are lazy"]
pub struct Interleave<I, J> {
    a: I,
    b: J,
}

impl<I, J> Interleave<I, J> {
    pub(crate) fn new(a: I, b: J) -> Self {
        Interleave { a, b }
    }
}

indexed_drive!([I, J] Interleave<I, J>, Item = I::Item,
    where [I: IndexedParallelIterator, J: IndexedParallelIterator<Item = I::Item>]);

impl<I, J> IndexedParallelIterator for Interleave<I, J>
where
    I: IndexedParallelIterator,
    J: IndexedParallelIterator<Item = I::Item>,
{
    fn len(&self) -> usize {
        self.a
            .len()
            .checked_add(self.b.len())
            .expect("interleave: too long")
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, cb: CB) -> CB::Output {
        with_pair_producer!(self.a, self.b, cb, |a, b| InterleaveProducer {
            a,
            b,
            a_next: true
        })
    }
}

/// Two producers taken in turn, `a`'s next when `a_next`.
struct InterleaveProducer<A, B> {
    a: A,
    b: B,
    a_next: bool,
}

impl<A, B> Producer for InterleaveProducer<A, B>
where
    A: IndexedProducer,
    B: IndexedProducer<Item = A::Item>,
{
    type Item = A::Item;
    type IntoIter = InterleaveIter<A::IntoIter, B::IntoIter>;
    fn len(&self) -> usize {
        self.a.len() + self.b.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (la, lb) = (self.a.len(), self.b.len());
        // Turns alternate while both last, then the longer goes on alone.
        let turns = if self.a_next {
            index.div_ceil(2)
        } else {
            index / 2
        };
        let na = la.min(turns.max(index.saturating_sub(lb)));
        let (a1, a2) = self.a.split_at(na);
        let (b1, b2) = self.b.split_at(index - na);
        let a_next = self.a_next ^ (index % 2 == 1);
        let lo = InterleaveProducer {
            a: a1,
            b: b1,
            a_next: self.a_next,
        };
        (
            lo,
            InterleaveProducer {
                a: a2,
                b: b2,
                a_next,
            },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        InterleaveIter {
            a: self.a.into_iter(),
            b: self.b.into_iter(),
            a_next: self.a_next,
        }
    }
    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }
    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }
}

impl<A, B> IndexedProducer for InterleaveProducer<A, B>
where
    A: IndexedProducer,
    B: IndexedProducer<Item = A::Item>,
{
}

/// The items of one block, in turn.
struct InterleaveIter<A, B> {
    a: A,
    b: B,
    a_next: bool,
}

impl<A, B> Iterator for InterleaveIter<A, B>
where
    A: ExactSizeIterator,
    B: ExactSizeIterator<Item = A::Item>,
{
    type Item = A::Item;
    fn next(&mut self) -> Option<A::Item> {
        let from_a = if self.a_next {
            self.a.len() > 0
        } else {
            self.b.len() == 0
        };
        self.a_next = !from_a;
        if from_a {
            self.a.next()
        } else {
            self.b.next()
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.a.len() + self.b.len();
        (n, Some(n))
    }
}

impl<A, B> DoubleEndedIterator for InterleaveIter<A, B>
where
    A: ExactSizeIterator + DoubleEndedIterator,
    B: ExactSizeIterator<Item = A::Item> + DoubleEndedIterator,
{
    fn next_back(&mut self) -> Option<A::Item> {
        let (la, lb) = (self.a.len(), self.b.len());
        // With equal lengths the turns end on the side that did not start.
        let last_from_a = if self.a_next { la > lb } else { la >= lb };
        if last_from_a {
            self.a.next_back()
        } else {
            self.b.next_back()
        }
    }
}

impl<A, B> ExactSizeIterator for InterleaveIter<A, B>
where
    A: ExactSizeIterator,
    B: ExactSizeIterator<Item = A::Item>,
{
}

/// Items of two iterators in turn, until one runs out (see
/// [`IndexedParallelIterator::interleave_shortest`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adapters are lazy"]
pub struct InterleaveShortest<I, J> {
    inner: Interleave<Take<I>, Take<J>>,
}

impl<I: IndexedParallelIterator, J: IndexedParallelIterator> InterleaveShortest<I, J> {
    pub(crate) fn new(a: I, b: J) -> Self {
        let (la, lb) = (a.len(), b.len());
        // `a` goes first: it gives one more item than `b` when it is the longer.
        let (na, nb) = if la > lb { (lb + 1, lb) } else { (la, la) };
        InterleaveShortest {
            inner: Interleave::new(a.take(na), b.take(nb)),
        }
    }
}

indexed_drive!([I, J] InterleaveShortest<I, J>, Item = I::Item,
    where [I: IndexedParallelIterator, J: IndexedParallelIterator<Item = I::Item>]);

impl<I, J> IndexedParallelIterator for InterleaveShortest<I, J>
where
    I: IndexedParallelIterator,
    J: IndexedParallelIterator<Item = I::Item>,
{
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, cb: CB) -> CB::Output {
        self.inner.with_producer(cb)
    }
}
