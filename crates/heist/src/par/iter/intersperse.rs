//! rayon's `intersperse`: a separator between each two items. Over an indexed
//! iterator it is indexed too (as rayon's is): the separators take the odd indices, so
//! its producer cuts the base where a cut falls and says whether the part after it
//! starts with a separator. Otherwise separators go in between as the loop's pieces
//! fold and combine.

use crate::par::engine::driver::{IndexedProducer, Kernel, Producer};
use crate::par::iter::piece_state::CloneOf;
use crate::par::iter::traits::{
    IndexedOrNot, IndexedParallelIterator, ParallelIterator, ProducerCallback,
};
use std::fmt;

/// Items with a clone of a separator between each two (see
/// [`ParallelIterator::intersperse`]).
#[must_use = "iterator adapters are lazy"]
pub struct Intersperse<I: ParallelIterator> {
    base: I,
    sep: I::Item,
}

impl<I: ParallelIterator + Clone> Clone for Intersperse<I>
where
    I::Item: Clone,
{
    fn clone(&self) -> Self {
        Intersperse::new(self.base.clone(), self.sep.clone())
    }
}

impl<I: ParallelIterator + fmt::Debug> fmt::Debug for Intersperse<I>
where
    I::Item: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Intersperse");
        d.field("base", &self.base)
            .field("item", &self.sep)
            .finish()
    }
}

impl<I: ParallelIterator> Intersperse<I> {
    pub(crate) fn new(base: I, sep: I::Item) -> Self {
        Intersperse { base, sep }
    }
}

/// The kernel of `intersperse`: separators go between the items of a piece, and
/// between two pieces that both have items when they combine. Each piece clones the
/// separator once and clones its own copy after that.
struct IntersperseKernel<K, T> {
    inner: K,
    sep: CloneOf<T>,
}

impl<T: Clone + Send, K: Kernel<T>> Kernel<T> for IntersperseKernel<K, T> {
    /// The piece's separator once it has an item, and the inner accumulator.
    type Acc = (Option<T>, K::Acc);
    /// Whether the piece had items.
    type Output = (bool, K::Output);
    fn start(&self) -> Self::Acc {
        (None, self.inner.start())
    }
    fn fold<I: Iterator<Item = T>>(&self, (sep, acc): Self::Acc, items: I) -> Self::Acc {
        let mut items = items.peekable();
        if items.peek().is_none() {
            return (sep, acc);
        }
        let first = sep.is_none();
        let sep = sep.unwrap_or_else(|| self.sep.get());
        let mut skip = first;
        let spread = items.flat_map(|x| {
            let before = (!std::mem::take(&mut skip)).then(|| sep.clone());
            before.into_iter().chain(std::iter::once(x))
        });
        let acc = self.inner.fold(acc, spread);
        (Some(sep), acc)
    }
    fn finish(&self, (sep, acc): Self::Acc) -> Self::Output {
        (sep.is_some(), self.inner.finish(acc))
    }
    fn combine(&self, (la, l): Self::Output, (ra, r): Self::Output) -> Self::Output {
        if !(la && ra) {
            return (la || ra, self.inner.combine(l, r));
        }
        let sep = self
            .inner
            .fold(self.inner.start(), std::iter::once(self.sep.get()));
        let l = self.inner.combine(l, self.inner.finish(sep));
        (true, self.inner.combine(l, r))
    }
    fn done(&self) -> bool {
        self.inner.done()
    }
}

impl<I> ParallelIterator for Intersperse<I>
where
    I: ParallelIterator<Item: Clone>,
{
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, inner: K) -> K::Output {
        let sep = CloneOf::new(self.sep);
        self.base.drive(IntersperseKernel { inner, sep }).1
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len().and_then(spread_len)
    }
    fn with_producer_or_self<CB: IndexedOrNot<I::Item>>(self, cb: CB) -> CB::Output {
        self.base
            .with_producer_or_self(Spread { cb, sep: self.sep })
    }
}

impl<I> IndexedParallelIterator for Intersperse<I>
where
    I: IndexedParallelIterator<Item: Clone>,
{
    fn len(&self) -> usize {
        spread_len(self.base.len()).expect("intersperse: too long")
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, cb: CB) -> CB::Output {
        self.base.with_producer(Spread { cb, sep: self.sep })
    }
}

/// How many items `n` items give with separators between them.
fn spread_len(n: usize) -> Option<usize> {
    n.checked_mul(2).map(|m| m.saturating_sub(1))
}

/// Hands on the base's producer with separators put in, or else the base itself.
struct Spread<CB, T> {
    cb: CB,
    sep: T,
}

impl<T: Clone + Send, CB: ProducerCallback<T>> ProducerCallback<T> for Spread<CB, T> {
    type Output = CB::Output;
    fn callback<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
        self.cb.callback(SpreadProducer::new(base, self.sep))
    }
}

impl<T: Clone + Send, CB: IndexedOrNot<T>> IndexedOrNot<T> for Spread<CB, T> {
    type Output = CB::Output;
    fn indexed<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
        self.cb.indexed(SpreadProducer::new(base, self.sep))
    }
    fn unindexed<I: ParallelIterator<Item = T>>(self, base: I) -> CB::Output {
        self.cb.unindexed(Intersperse::new(base, self.sep))
    }
}

/// A piece of an indexed `intersperse`: `len` items, from the base's next item, or
/// from a separator if `sep_first`.
struct SpreadProducer<P, T> {
    base: P,
    sep: T,
    len: usize,
    sep_first: bool,
}

impl<P: IndexedProducer<Item = T>, T: Clone + Send> SpreadProducer<P, T> {
    fn new(base: P, sep: T) -> Self {
        let len = spread_len(base.len()).expect("intersperse: too long");
        SpreadProducer {
            base,
            sep,
            len,
            sep_first: false,
        }
    }
}

impl<P: IndexedProducer<Item = T>, T: Clone + Send> Producer for SpreadProducer<P, T> {
    type Item = T;
    type IntoIter = SpreadIter<P::IntoIter, T>;
    fn len(&self) -> usize {
        self.len
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // Of the first `index` items, every other one is a base item.
        let items = if self.sep_first {
            index / 2
        } else {
            index.div_ceil(2)
        };
        let (l, r) = self.base.split_at(items);
        let lo = SpreadProducer {
            base: l,
            sep: self.sep.clone(),
            len: index,
            sep_first: self.sep_first,
        };
        let hi = SpreadProducer {
            base: r,
            sep: self.sep,
            len: self.len - index,
            sep_first: self.sep_first ^ (index % 2 == 1),
        };
        (lo, hi)
    }
    fn into_iter(self) -> Self::IntoIter {
        SpreadIter {
            it: self.base.into_iter(),
            sep: self.sep,
            left: self.len,
            sep_next: self.sep_first,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

impl<P: IndexedProducer<Item = T>, T: Clone + Send> IndexedProducer for SpreadProducer<P, T> {}

/// The items of one block: `left` of them, a separator next if `sep_next`.
struct SpreadIter<I, T> {
    it: I,
    sep: T,
    left: usize,
    sep_next: bool,
}

impl<I: Iterator<Item = T>, T: Clone> Iterator for SpreadIter<I, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.left = self.left.checked_sub(1)?;
        self.sep_next = !self.sep_next;
        if self.sep_next {
            self.it.next()
        } else {
            Some(self.sep.clone())
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<I: DoubleEndedIterator<Item = T>, T: Clone> DoubleEndedIterator for SpreadIter<I, T> {
    fn next_back(&mut self) -> Option<T> {
        self.left = self.left.checked_sub(1)?;
        // The item at offset `left` is a separator when its parity is the first's.
        if (self.left % 2 == 0) == self.sep_next {
            Some(self.sep.clone())
        } else {
            self.it.next_back()
        }
    }
}

impl<I: Iterator<Item = T>, T: Clone> ExactSizeIterator for SpreadIter<I, T> {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::par::sources::vec_slice::SliceProducer;

    /// Cut anywhere, twice, the parts give the separated items in order, from either
    /// end.
    #[test]
    fn cuts_anywhere_keep_the_separators() {
        for n in 0..6 {
            let items: Vec<u32> = (1..=n).collect();
            let whole: Vec<u32> = items.iter().flat_map(|&x| [0, x]).skip(1).collect();
            let len = SpreadProducer::new(SliceProducer(&items), &0).len;
            assert_eq!(len, whole.len());
            for i in 0..=whole.len() {
                for j in 0..=whole.len() - i {
                    let p = SpreadProducer::new(SliceProducer(&items), &0);
                    let (a, rest) = p.split_at(i);
                    let (b, c) = rest.split_at(j);
                    let lens = [a.len(), b.len(), c.len()];
                    assert_eq!(lens, [i, j, whole.len() - i - j]);
                    let fwd = [a, b, c].into_iter().flat_map(Producer::into_iter);
                    assert!(fwd.copied().eq(whole.iter().copied()), "{n}: {i}, {j}");
                    let p = SpreadProducer::new(SliceProducer(&items), &0);
                    let (a, rest) = p.split_at(i);
                    let (b, c) = rest.split_at(j);
                    let back = [c, b, a].into_iter().flat_map(|p| p.into_iter().rev());
                    assert!(
                        back.copied().eq(whole.iter().rev().copied()),
                        "{n}: {i}, {j}"
                    );
                }
            }
        }
    }
}
