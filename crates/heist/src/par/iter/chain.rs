//! `chain`: one iterator's items, then another's. Two indexed iterators chain into one
//! producer that cuts either part, so that they run as one loop (and `collect` writes
//! both in place); otherwise the two loops run side by side, joined, as rayon's do.

use crate::par::engine::driver::{bridge_exact, IndexedProducer, Kernel, Producer};
use crate::par::engine::seam::worker;
use crate::par::iter::traits::{
    IndexedOrNot, IndexedParallelIterator, ParallelIterator, ProducerCallback,
};
use std::iter::Fuse;

/// One iterator's items, then another's (see [`ParallelIterator::chain`]).
#[derive(Clone, Debug)]
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
        self.with_producer_or_self(Run(kernel))
    }
    fn opt_len(&self) -> Option<usize> {
        self.a.opt_len()?.checked_add(self.b.opt_len()?)
    }
    /// Asks each part in turn for its producer.
    fn with_producer_or_self<CB: IndexedOrNot<A::Item>>(self, cb: CB) -> CB::Output {
        self.a.with_producer_or_self(First { b: self.b, cb })
    }
}

/// Runs a kernel over an iterator, through its producer if it has one.
struct Run<K>(K);

impl<T: Send, K: Kernel<T>> IndexedOrNot<T> for Run<K> {
    type Output = K::Output;
    fn indexed<P: IndexedProducer<Item = T>>(self, p: P) -> K::Output {
        bridge_exact(p, &self.0)
    }
    fn unindexed<I: ParallelIterator<Item = T>>(self, iter: I) -> K::Output {
        iter.drive(self.0)
    }
}

/// The chain's first part found indexed or not; the second is asked next.
struct First<B, CB> {
    b: B,
    cb: CB,
}

impl<T: Send, B: ParallelIterator<Item = T>, CB: IndexedOrNot<T>> IndexedOrNot<T> for First<B, CB> {
    type Output = CB::Output;
    fn indexed<P: IndexedProducer<Item = T>>(self, a: P) -> CB::Output {
        self.b.with_producer_or_self(Second { a, cb: self.cb })
    }
    fn unindexed<I: ParallelIterator<Item = T>>(self, a: I) -> CB::Output {
        self.cb.unindexed(Parts { a, b: self.b })
    }
}

/// The chain's second part found indexed or not, after an indexed first part.
struct Second<PA, CB> {
    a: PA,
    cb: CB,
}

impl<T: Send, PA: IndexedProducer<Item = T>, CB: IndexedOrNot<T>> IndexedOrNot<T>
    for Second<PA, CB>
{
    type Output = CB::Output;
    fn indexed<P: IndexedProducer<Item = T>>(self, b: P) -> CB::Output {
        self.cb.indexed(ChainProducer { a: self.a, b })
    }
    fn unindexed<I: ParallelIterator<Item = T>>(self, b: I) -> CB::Output {
        self.cb.unindexed(Parts {
            a: Bridged(self.a),
            b,
        })
    }
}

/// A producer as an (unindexed) parallel iterator.
struct Bridged<P>(P);

impl<P: IndexedProducer<Item: Send>> ParallelIterator for Bridged<P> {
    type Item = P::Item;
    fn drive<K: Kernel<P::Item>>(self, kernel: K) -> K::Output {
        bridge_exact(self.0, &kernel)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// A chain whose parts are not both indexed: their loops run side by side.
struct Parts<IA, IB> {
    a: IA,
    b: IB,
}

impl<IA, IB> ParallelIterator for Parts<IA, IB>
where
    IA: ParallelIterator,
    IB: ParallelIterator<Item = IA::Item>,
{
    type Item = IA::Item;
    fn drive<K: Kernel<IA::Item>>(self, kernel: K) -> K::Output {
        side_by_side(kernel, self.a, self.b)
    }
    fn opt_len(&self) -> Option<usize> {
        self.a.opt_len()?.checked_add(self.b.opt_len()?)
    }
}

/// Runs two loops of one kernel, joined on a worker (one after the other elsewhere), and
/// combines them in order. A panic in either reaches the caller once both have ended.
fn side_by_side<T, K, IA, IB>(kernel: K, a: IA, b: IB) -> K::Output
where
    K: Kernel<T>,
    IA: ParallelIterator<Item = T>,
    IB: ParallelIterator<Item = T>,
{
    let (l, r) = worker::with_current(|w| match w {
        Some(w) => w.join(|_| a.drive(&kernel), |_| b.drive(&kernel)),
        None => (a.drive(&kernel), b.drive(&kernel)),
    });
    kernel.combine(l, r)
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
        with_pair_producer!(self.a, self.b, cb, |a, b| ChainProducer { a, b })
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
