//! Adapters that move items to other indices (`enumerate`, `zip`, `rev`, `take`, `skip`,
//! `step_by`, `chain`) or change how a loop may be cut (`with_min_len`,
//! `with_max_len`). They work on the producer, so they need indexed iterators (except
//! `chain`, which also joins two unindexed loops).

use crate::par::engine::driver::{bridge, IndexedProducer, Kernel, Producer};
use crate::par::iter::consumers::ForEach;
use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator, ProducerCallback};
use std::iter::StepBy as IterStepBy;
use std::ops::Range;

adapter_struct!(
    /// Items paired with their indices (see [`IndexedParallelIterator::enumerate`]).
    Enumerate<I> {}
);

indexed_drive!([I] Enumerate<I>, Item = (usize, I::Item), where [I: IndexedParallelIterator]);

impl<I: IndexedParallelIterator> IndexedParallelIterator for Enumerate<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<(usize, I::Item)>>(self, cb: CB) -> CB::Output {
        struct Cb<CB>(CB);
        impl<T, CB: ProducerCallback<(usize, T)>> ProducerCallback<T> for Cb<CB> {
            type Output = CB::Output;
            fn callback<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
                self.0.callback(EnumerateProducer { base, offset: 0 })
            }
        }
        self.base.with_producer(Cb(cb))
    }
}

struct EnumerateProducer<P> {
    base: P,
    offset: usize,
}

impl<P: IndexedProducer> Producer for EnumerateProducer<P> {
    type Item = (usize, P::Item);
    type IntoIter = std::iter::Zip<Range<usize>, P::IntoIter>;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let lo = EnumerateProducer {
            base: l,
            offset: self.offset,
        };
        let hi = EnumerateProducer {
            base: r,
            offset: self.offset + index,
        };
        (lo, hi)
    }
    fn into_iter(self) -> Self::IntoIter {
        let end = self.offset + self.base.len();
        (self.offset..end).zip(self.base.into_iter())
    }
    fn fold_block<K>(self, n: usize, kernel: &K, acc: K::Acc) -> (K::Acc, Self)
    where
        K: Kernel<(usize, P::Item)>,
    {
        let k = Numbered { inner: kernel };
        let ((offset, acc), base) = self.base.fold_block(n, &k, (self.offset, acc));
        (acc, EnumerateProducer { base, offset })
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

impl<P: IndexedProducer> IndexedProducer for EnumerateProducer<P> {}

/// A kernel seen through `enumerate`, for the base producer's own `fold_block`: the
/// accumulator carries the next item's index.
struct Numbered<'k, K> {
    inner: &'k K,
}

impl<T, K: Kernel<(usize, T)>> Kernel<T> for Numbered<'_, K> {
    type Acc = (usize, K::Acc);
    type Output = K::Output;
    fn start(&self) -> Self::Acc {
        (0, self.inner.start())
    }
    fn fold<I: Iterator<Item = T>>(&self, (mut i, acc): Self::Acc, items: I) -> Self::Acc {
        let acc = self.inner.fold(
            acc,
            items.map(|x| {
                i += 1;
                (i - 1, x)
            }),
        );
        (i, acc)
    }
    fn finish(&self, (_, acc): Self::Acc) -> K::Output {
        self.inner.finish(acc)
    }
    combine_and_done!(|acc| &acc.1);
}

/// Pairs of items of two iterators (see [`IndexedParallelIterator::zip`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adapters are lazy"]
pub struct Zip<A, B> {
    a: A,
    b: B,
}

impl<A, B> Zip<A, B> {
    pub(crate) fn new(a: A, b: B) -> Self {
        Zip { a, b }
    }
}

indexed_drive!([A, B] Zip<A, B>, Item = (A::Item, B::Item),
    where [A: IndexedParallelIterator, B: IndexedParallelIterator]);

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> IndexedParallelIterator for Zip<A, B> {
    fn len(&self) -> usize {
        self.a.len().min(self.b.len())
    }
    fn with_producer<CB: ProducerCallback<(A::Item, B::Item)>>(self, cb: CB) -> CB::Output {
        struct Cb<CB>(CB);
        impl<TA, TB, CB: ProducerCallback<(TA, TB)>> PairCallback<TA, TB> for Cb<CB> {
            type Output = CB::Output;
            fn callback<PA, PB>(self, a: PA, b: PB) -> CB::Output
            where
                PA: IndexedProducer<Item = TA>,
                PB: IndexedProducer<Item = TB>,
            {
                let n = a.len().min(b.len());
                let (a, _) = a.split_at(n);
                let (b, _) = b.split_at(n);
                self.0.callback(ZipProducer { a, b })
            }
        }
        with_producers(self.a, self.b, Cb(cb))
    }
}

/// Pairs of items of two iterators of the same length (see
/// [`IndexedParallelIterator::zip_eq`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adapters are lazy"]
pub struct ZipEq<A, B> {
    zip: Zip<A, B>,
}

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> ZipEq<A, B> {
    pub(crate) fn new(a: A, b: B) -> Self {
        let (la, lb) = (a.len(), b.len());
        assert_eq!(la, lb, "zip_eq: the iterators have different lengths");
        ZipEq {
            zip: Zip::new(a, b),
        }
    }
}

indexed_drive!([A, B] ZipEq<A, B>, Item = (A::Item, B::Item),
    where [A: IndexedParallelIterator, B: IndexedParallelIterator]);

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> IndexedParallelIterator
    for ZipEq<A, B>
{
    fn len(&self) -> usize {
        self.zip.len()
    }
    fn with_producer<CB: ProducerCallback<(A::Item, B::Item)>>(self, cb: CB) -> CB::Output {
        self.zip.with_producer(cb)
    }
}

/// Receives the producers of two indexed iterators (see [`with_producers`]).
pub(crate) trait PairCallback<TA, TB> {
    type Output;
    fn callback<PA, PB>(self, a: PA, b: PB) -> Self::Output
    where
        PA: IndexedProducer<Item = TA>,
        PB: IndexedProducer<Item = TB>;
}

/// Hands the producers of `a` and `b` to `cb` (for `zip` and `chain`).
pub(crate) fn with_producers<A, B, CB>(a: A, b: B, cb: CB) -> CB::Output
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator,
    CB: PairCallback<A::Item, B::Item>,
{
    struct First<CB, B> {
        cb: CB,
        b: B,
    }
    impl<TA, CB, B> ProducerCallback<TA> for First<CB, B>
    where
        B: IndexedParallelIterator,
        CB: PairCallback<TA, B::Item>,
    {
        type Output = CB::Output;
        fn callback<PA: IndexedProducer<Item = TA>>(self, a: PA) -> CB::Output {
            self.b.with_producer(Second { cb: self.cb, a })
        }
    }
    struct Second<CB, PA> {
        cb: CB,
        a: PA,
    }
    impl<TB, CB, PA> ProducerCallback<TB> for Second<CB, PA>
    where
        PA: IndexedProducer,
        CB: PairCallback<PA::Item, TB>,
    {
        type Output = CB::Output;
        fn callback<PB: IndexedProducer<Item = TB>>(self, b: PB) -> CB::Output {
            self.cb.callback(self.a, b)
        }
    }
    a.with_producer(First { cb, b })
}

struct ZipProducer<A, B> {
    a: A,
    b: B,
}

impl<A: IndexedProducer, B: IndexedProducer> Producer for ZipProducer<A, B> {
    type Item = (A::Item, B::Item);
    type IntoIter = std::iter::Zip<A::IntoIter, B::IntoIter>;
    fn len(&self) -> usize {
        self.a.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a1, a2) = self.a.split_at(index);
        let (b1, b2) = self.b.split_at(index);
        (ZipProducer { a: a1, b: b1 }, ZipProducer { a: a2, b: b2 })
    }
    fn into_iter(self) -> Self::IntoIter {
        self.a.into_iter().zip(self.b.into_iter())
    }
    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }
    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }
}

impl<A: IndexedProducer, B: IndexedProducer> IndexedProducer for ZipProducer<A, B> {}

adapter_struct!(
    /// The items in reverse order (see [`IndexedParallelIterator::rev`]).
    Rev<I> {}
);

indexed_drive!([I] Rev<I>, Item = I::Item, where [I: IndexedParallelIterator]);

impl<I: IndexedParallelIterator> IndexedParallelIterator for Rev<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, cb: CB) -> CB::Output {
        struct Cb<CB>(CB);
        impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Cb<CB> {
            type Output = CB::Output;
            fn callback<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
                self.0.callback(RevProducer(base))
            }
        }
        self.base.with_producer(Cb(cb))
    }
}

struct RevProducer<P>(P);

impl<P: IndexedProducer> Producer for RevProducer<P> {
    type Item = P::Item;
    type IntoIter = std::iter::Rev<P::IntoIter>;
    fn len(&self) -> usize {
        self.0.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let n = self.0.len();
        let (lo, hi) = self.0.split_at(n - index);
        (RevProducer(hi), RevProducer(lo))
    }
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().rev()
    }
    fn min_len(&self) -> usize {
        self.0.min_len()
    }
    fn max_len(&self) -> usize {
        self.0.max_len()
    }
}

impl<P: IndexedProducer> IndexedProducer for RevProducer<P> {}

/// Defines an adapter that cuts the producer once before the loop starts: `take`, `skip`.
/// `$cut` gets the callback, the producer and where to cut.
macro_rules! cut_adapter {
    ($(#[$doc:meta])* $name:ident, |$len:ident, $n:ident| $len_expr:expr, |$cb:ident, $p:ident, $k:ident| $cut:expr) => {
        adapter_struct!($(#[$doc])* $name<I> { n: usize });

        indexed_drive!([I] $name<I>, Item = I::Item, where [I: IndexedParallelIterator]);

        impl<I: IndexedParallelIterator> IndexedParallelIterator for $name<I> {
            fn len(&self) -> usize {
                let ($len, $n) = (self.base.len(), self.n);
                $len_expr
            }
            fn with_producer<CB: ProducerCallback<I::Item>>(self, cb: CB) -> CB::Output {
                struct Cb<CB>(CB, usize);
                impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Cb<CB> {
                    type Output = CB::Output;
                    fn callback<P: IndexedProducer<Item = T>>(self, $p: P) -> CB::Output {
                        let ($cb, $k) = (self.0, self.1.min($p.len()));
                        $cut
                    }
                }
                self.base.with_producer(Cb(cb, self.n))
            }
        }
    };
}

cut_adapter!(
    /// The first `n` items (see [`IndexedParallelIterator::take`]); the rest are never
    /// produced.
    Take, |len, n| len.min(n), |cb, p, k| cb.callback(p.split_at(k).0)
);

cut_adapter!(
    /// All but the first `n` items (see [`IndexedParallelIterator::skip`]). The first `n`
    /// are still produced, in parallel with the rest, for what producing them does (a
    /// `map` before the `skip` runs on every item, as in rayon), and dropped.
    Skip, |len, n| len - len.min(n), |cb, p, k| {
        let (skipped, rest) = p.split_at(k);
        crate::in_place_scope(|s| {
            s.spawn(move |_| bridge(skipped, &ForEach(drop::<T>)));
            cb.callback(rest)
        })
    }
);

adapter_struct!(
    /// Every `step`-th item (see [`IndexedParallelIterator::step_by`]).
    StepBy<I> { step: usize }
);

indexed_drive!([I] StepBy<I>, Item = I::Item, where [I: IndexedParallelIterator]);

impl<I: IndexedParallelIterator> IndexedParallelIterator for StepBy<I> {
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.step)
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, cb: CB) -> CB::Output {
        struct Cb<CB>(CB, usize);
        impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Cb<CB> {
            type Output = CB::Output;
            fn callback<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
                self.0.callback(StepByProducer { base, step: self.1 })
            }
        }
        self.base.with_producer(Cb(cb, self.step))
    }
}

struct StepByProducer<P> {
    base: P,
    step: usize,
}

impl<P: IndexedProducer> Producer for StepByProducer<P> {
    type Item = P::Item;
    type IntoIter = IterStepBy<P::IntoIter>;
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.step)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.step).min(self.base.len());
        let (l, r) = self.base.split_at(at);
        let step = self.step;
        (
            StepByProducer { base: l, step },
            StepByProducer { base: r, step },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter().step_by(self.step)
    }
    fn min_len(&self) -> usize {
        self.base.min_len().div_ceil(self.step)
    }
    fn max_len(&self) -> usize {
        (self.base.max_len() / self.step).max(1)
    }
}

impl<P: IndexedProducer> IndexedProducer for StepByProducer<P> {}

/// Defines `with_min_len` / `with_max_len`: the same items, a bound on cutting.
macro_rules! len_bound {
    ($(#[$doc:meta])* $name:ident, $prod:ident, min = |$p1:ident, $m1:ident| $min:expr, max = |$p2:ident, $m2:ident| $max:expr) => {
        adapter_struct!($(#[$doc])* $name<I> { bound: usize });

        indexed_drive!([I] $name<I>, Item = I::Item, where [I: IndexedParallelIterator]);

        impl<I: IndexedParallelIterator> IndexedParallelIterator for $name<I> {
            fn len(&self) -> usize {
                self.base.len()
            }
            fn with_producer<CB: ProducerCallback<I::Item>>(self, cb: CB) -> CB::Output {
                struct Cb<CB>(CB, usize);
                impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Cb<CB> {
                    type Output = CB::Output;
                    fn callback<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
                        self.0.callback($prod { base, bound: self.1 })
                    }
                }
                self.base.with_producer(Cb(cb, self.bound))
            }
        }

        struct $prod<P> {
            base: P,
            bound: usize,
        }

        impl<P: IndexedProducer> Producer for $prod<P> {
            type Item = P::Item;
            type IntoIter = P::IntoIter;
            fn len(&self) -> usize {
                self.base.len()
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let (l, r) = self.base.split_at(index);
                let bound = self.bound;
                ($prod { base: l, bound }, $prod { base: r, bound })
            }
            fn into_iter(self) -> P::IntoIter {
                self.base.into_iter()
            }
            fn fold_block<K: Kernel<P::Item>>(self, n: usize, kernel: &K, acc: K::Acc) -> (K::Acc, Self) {
                let (acc, base) = self.base.fold_block(n, kernel, acc);
                (acc, $prod { base, bound: self.bound })
            }
            fn min_len(&self) -> usize {
                let ($p1, $m1) = (&self.base, self.bound);
                $min
            }
            fn max_len(&self) -> usize {
                let ($p2, $m2) = (&self.base, self.bound);
                $max
            }
        }

        impl<P: IndexedProducer> IndexedProducer for $prod<P> {}
    };
}

len_bound!(
    /// Never cut into pieces smaller than a bound (see
    /// [`IndexedParallelIterator::with_min_len`]).
    MinLen, MinLenProducer, min = |p, m| p.min_len().max(m), max = |p, _m| p.max_len()
);

len_bound!(
    /// At most a bound of items folded between checks for thieves (see
    /// [`IndexedParallelIterator::with_max_len`]).
    MaxLen, MaxLenProducer, min = |p, _m| p.min_len(), max = |p, m| p.max_len().min(m)
);

adapter_struct!(
    /// The indices of the items for which a predicate holds (see
    /// [`IndexedParallelIterator::positions`]).
    Positions<I, P> { predicate: P }
);

impl<I, P> ParallelIterator for Positions<I, P>
where
    I: IndexedParallelIterator,
    P: Fn(I::Item) -> bool + Sync + Send,
{
    type Item = usize;
    fn drive<K: Kernel<usize>>(self, kernel: K) -> K::Output {
        let found = self.base.map(self.predicate).enumerate();
        found.filter_map(|(i, b)| b.then_some(i)).drive(kernel)
    }
}
