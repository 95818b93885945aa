//! `chain`: one iterator's items, then another's. Two indexed iterators chain into one
//! producer that cuts either part; two unindexed ones run one loop after the other.

use super::driver::{IndexedProducer, Kernel, Producer};
use super::indexed::{with_producers, PairCallback};
use super::traits::{IndexedParallelIterator, ParallelIterator, ProducerCallback};
use std::iter::Fuse;

/// One iterator's items, then another's (see [`ParallelIterator::chain`]).
#[must_use = "iterator adapters are lazy"]
pub struct Chain<A, B> {
    a: A,
    b: B,
}

impl<A, B> Chain<A, B> {
    pub(crate) fn new(a: A, b: B) -> Self {
        Chain { a, b }
    }
}

impl<A, B> ParallelIterator for Chain<A, B>
where
    A: ParallelIterator,
    B: ParallelIterator<Item = A::Item>,
{
    type Item = A::Item;
    fn drive<K: Kernel<A::Item>>(self, kernel: K) -> K::Output {
        let l = self.a.drive(&kernel);
        let r = self.b.drive(&kernel);
        kernel.combine(l, r)
    }
    fn opt_len(&self) -> Option<usize> {
        self.a.opt_len()?.checked_add(self.b.opt_len()?)
    }
}

impl<A, B> IndexedParallelIterator for Chain<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    fn len(&self) -> usize {
        self.a.len() + self.b.len()
    }
    fn with_producer<CB: ProducerCallback<A::Item>>(self, cb: CB) -> CB::Output {
        struct Cb<CB>(CB);
        impl<T, CB: ProducerCallback<T>> PairCallback<T, T> for Cb<CB> {
            type Output = CB::Output;
            fn callback<PA, PB>(self, a: PA, b: PB) -> CB::Output
            where
                PA: IndexedProducer<Item = T>,
                PB: IndexedProducer<Item = T>,
            {
                self.0.callback(ChainProducer { a, b })
            }
        }
        with_producers(self.a, self.b, Cb(cb))
    }
}

struct ChainProducer<A, B> {
    a: A,
    b: B,
}

impl<A, B> Producer for ChainProducer<A, B>
where
    A: IndexedProducer,
    B: IndexedProducer<Item = A::Item>,
{
    type Item = A::Item;
    type IntoIter = ChainIter<A::IntoIter, B::IntoIter>;
    fn len(&self) -> usize {
        self.a.len() + self.b.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let na = self.a.len();
        if index <= na {
            let (a1, a2) = self.a.split_at(index);
            let (b1, b2) = self.b.split_at(0);
            (
                ChainProducer { a: a1, b: b1 },
                ChainProducer { a: a2, b: b2 },
            )
        } else {
            let (a1, a2) = self.a.split_at(na);
            let (b1, b2) = self.b.split_at(index - na);
            (
                ChainProducer { a: a1, b: b1 },
                ChainProducer { a: a2, b: b2 },
            )
        }
    }
    fn into_iter(self) -> Self::IntoIter {
        ChainIter {
            a: self.a.into_iter().fuse(),
            b: self.b.into_iter().fuse(),
        }
    }
    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }
    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }
}

impl<A, B> IndexedProducer for ChainProducer<A, B>
where
    A: IndexedProducer,
    B: IndexedProducer<Item = A::Item>,
{
}

/// `Iterator::chain` with an exact size (std's has none, for overflow's sake; here the
/// two lengths are parts of one loop's length).
pub(crate) struct ChainIter<A, B> {
    a: Fuse<A>,
    b: Fuse<B>,
}

impl<A: Iterator, B: Iterator<Item = A::Item>> Iterator for ChainIter<A, B> {
    type Item = A::Item;
    fn next(&mut self) -> Option<A::Item> {
        self.a.next().or_else(|| self.b.next())
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let (a, ah) = self.a.size_hint();
        let (b, bh) = self.b.size_hint();
        let hi = match (ah, bh) {
            (Some(x), Some(y)) => x.checked_add(y),
            _ => None,
        };
        (a.saturating_add(b), hi)
    }
    fn fold<Acc, F: FnMut(Acc, A::Item) -> Acc>(self, init: Acc, mut f: F) -> Acc {
        let acc = self.a.fold(init, &mut f);
        self.b.fold(acc, f)
    }
}

impl<A, B> DoubleEndedIterator for ChainIter<A, B>
where
    A: DoubleEndedIterator,
    B: DoubleEndedIterator<Item = A::Item>,
{
    fn next_back(&mut self) -> Option<A::Item> {
        self.b.next_back().or_else(|| self.a.next_back())
    }
    fn rfold<Acc, F: FnMut(Acc, A::Item) -> Acc>(self, init: Acc, mut f: F) -> Acc {
        let acc = self.b.rfold(init, &mut f);
        self.a.rfold(acc, f)
    }
}

impl<A: ExactSizeIterator, B: ExactSizeIterator<Item = A::Item>> ExactSizeIterator
    for ChainIter<A, B>
{
}

impl<A: Iterator, B: Iterator<Item = A::Item>> ChainIter<A, B> {
    pub(crate) fn new(a: A, b: B) -> Self {
        ChainIter {
            a: a.fuse(),
            b: b.fuse(),
        }
    }
}
