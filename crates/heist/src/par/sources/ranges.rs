//! Ranges as parallel iterators (rayon's `range` and `range_inclusive`). Integer ranges
//! up to 64 bits and `char` ranges are indexed; 128-bit ones, which may hold more items
//! than a `usize` counts, are not (as in rayon). Each hands the driver a producer over
//! its index range (the index stealers of On Lock-Free Work-stealing Iterators for
//! Parallel Data Structures, §4, with the owner rather than the thief doing the split).

use crate::par::engine::driver::{bridge_exact, Cuts, IndexedProducer, Kernel, Producer};
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::{
    AsIndexed, Bridge, IndexedOrNot, IndexedParallelIterator, ParallelIterator, ProducerCallback,
};
use std::ops::{Range, RangeInclusive};

/// A parallel iterator over a range, `a..b` or `a..=b`, of integers or `char`s (rayon's
/// `range::Iter` and `range_inclusive::Iter`).
#[derive(Clone, Debug)]
pub struct RangeIter<T> {
    start: T,
    end: T,
    inclusive: bool,
}

/// The item types of ranges, sealed: each says how its ranges are driven.
mod sealed {
    use super::RangeIter;
    use crate::par::engine::driver::Kernel;
    use crate::par::iter::traits::{IndexedOrNot, ProducerCallback};

    /// An item type of [`RangeIter`]: integers and `char`.
    pub trait RangeItem: Sized + Send {
        fn drive<K: Kernel<Self>>(r: RangeIter<Self>, kernel: K) -> K::Output;
        fn opt_len(r: &RangeIter<Self>) -> Option<usize>;
        fn with_producer_or_self<CB: IndexedOrNot<Self>>(r: RangeIter<Self>, cb: CB) -> CB::Output;
    }

    /// An item type whose ranges are indexed (all but the 128-bit integers).
    pub trait IndexedRangeItem: RangeItem {
        fn len(r: &RangeIter<Self>) -> usize;
        fn with_producer<CB: ProducerCallback<Self>>(r: RangeIter<Self>, cb: CB) -> CB::Output;
    }
}

use sealed::{IndexedRangeItem, RangeItem};

// One impl of each trait for all item types, as rayon has, so that an integer literal's
// type is inferred from the items a range must give (as in `x.chain(0..9)`, or
// `(0..10).into_par_iter().sum::<usize>()`).
impl<T: RangeItem> ParallelIterator for RangeIter<T> {
    type Item = T;
    fn drive<K: Kernel<T>>(self, kernel: K) -> K::Output {
        T::drive(self, kernel)
    }
    fn opt_len(&self) -> Option<usize> {
        T::opt_len(self)
    }
    fn with_producer_or_self<CB: IndexedOrNot<T>>(self, cb: CB) -> CB::Output {
        T::with_producer_or_self(self, cb)
    }
}

impl<T: IndexedRangeItem> IndexedParallelIterator for RangeIter<T> {
    fn len(&self) -> usize {
        T::len(self)
    }
    fn with_producer<CB: ProducerCallback<T>>(self, cb: CB) -> CB::Output {
        T::with_producer(self, cb)
    }
}

/// The sealed traits of an indexed range item type, from its `len_` and `producer`.
macro_rules! indexed_item {
    ($t:ty) => {
        impl RangeItem for $t {
            fn drive<K: Kernel<$t>>(r: RangeIter<$t>, kernel: K) -> K::Output {
                r.with_producer(Bridge(kernel))
            }
            fn opt_len(r: &RangeIter<$t>) -> Option<usize> {
                Some(r.len_())
            }
            fn with_producer_or_self<CB: IndexedOrNot<$t>>(r: RangeIter<$t>, cb: CB) -> CB::Output {
                r.with_producer(AsIndexed(cb))
            }
        }

        impl IndexedRangeItem for $t {
            fn len(r: &RangeIter<$t>) -> usize {
                r.len_()
            }
            fn with_producer<CB: ProducerCallback<$t>>(r: RangeIter<$t>, cb: CB) -> CB::Output {
                cb.callback(r.producer())
            }
        }
    };
}

impl<T: Send> IntoParallelIterator for Range<T>
where
    RangeIter<T>: ParallelIterator,
{
    type Iter = RangeIter<T>;
    type Item = <RangeIter<T> as ParallelIterator>::Item;
    fn into_par_iter(self) -> RangeIter<T> {
        RangeIter {
            start: self.start,
            end: self.end,
            inclusive: false,
        }
    }
}

impl<T: Send + PartialOrd> IntoParallelIterator for RangeInclusive<T>
where
    RangeIter<T>: ParallelIterator,
{
    type Iter = RangeIter<T>;
    type Item = <RangeIter<T> as ParallelIterator>::Item;
    fn into_par_iter(self) -> RangeIter<T> {
        // An exhausted range says so only through `is_empty`.
        let inclusive = !self.is_empty();
        let (start, end) = self.into_inner();
        RangeIter {
            start,
            end,
            inclusive,
        }
    }
}

/// How many items `start..end` (or `..=`) holds, for ends that fit in an `i128` with
/// room to spare.
fn span(start: i128, end: i128, inclusive: bool) -> usize {
    let n = end - start + i128::from(inclusive);
    usize::try_from(n.max(0)).expect("heist: the range is longer than usize::MAX")
}

/// The producer and block iterator of a range: `len` integers from `start`.
#[derive(Clone, Debug)]
pub struct RangeProducer<T> {
    start: T,
    len: usize,
}

/// The integers of one block.
#[derive(Clone, Debug)]
pub struct RangeBlock<T> {
    next: T,
    left: usize,
}

macro_rules! int_range {
    ($($t:ty),*) => {$(
        impl RangeIter<$t> {
            fn len_(&self) -> usize {
                span(self.start as i128, self.end as i128, self.inclusive)
            }
            fn producer(self) -> RangeProducer<$t> {
                RangeProducer { len: self.len_(), start: self.start }
            }
        }

        indexed_item!($t);

        impl Producer for RangeProducer<$t> {
            type Item = $t;
            type IntoIter = RangeBlock<$t>;
            fn len(&self) -> usize {
                self.len
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let mid = self.start.wrapping_add(index as $t);
                let lo = RangeProducer { start: self.start, len: index };
                (lo, RangeProducer { start: mid, len: self.len - index })
            }
            fn into_iter(self) -> RangeBlock<$t> {
                RangeBlock { next: self.start, left: self.len }
            }
            const CUTS: Option<Cuts<Self>> = Cuts::SHARED;
            unsafe fn cut(&self, from: usize, to: usize) -> Self {
                RangeProducer { start: self.start.wrapping_add(from as $t), len: to - from }
            }
        }

        impl IndexedProducer for RangeProducer<$t> {}

        impl Iterator for RangeBlock<$t> {
            type Item = $t;
            #[inline]
            fn next(&mut self) -> Option<$t> {
                if self.left == 0 {
                    return None;
                }
                let x = self.next;
                self.next = x.wrapping_add(1);
                self.left -= 1;
                Some(x)
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                (self.left, Some(self.left))
            }
            #[inline]
            fn fold<B, F: FnMut(B, $t) -> B>(self, init: B, mut f: F) -> B {
                let mut acc = init;
                let mut x = self.next;
                for _ in 0..self.left {
                    acc = f(acc, x);
                    x = x.wrapping_add(1);
                }
                acc
            }
        }

        impl DoubleEndedIterator for RangeBlock<$t> {
            fn next_back(&mut self) -> Option<$t> {
                if self.left == 0 {
                    return None;
                }
                self.left -= 1;
                Some(self.next.wrapping_add(self.left as $t))
            }
        }

        impl ExactSizeIterator for RangeBlock<$t> {}
    )*};
}

int_range!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

/// Where the surrogates, which are no `char`s, start in the code points, and how many.
const GAP: (u32, u32) = (0xD800, 0x800);

/// The index of `c` among all `char`s.
fn char_index(c: char) -> u32 {
    let c = u32::from(c);
    if c >= GAP.0 {
        c - GAP.1
    } else {
        c
    }
}

/// The `char` at index `i` among all `char`s.
fn char_at(i: u32) -> char {
    let c = if i >= GAP.0 { i + GAP.1 } else { i };
    char::from_u32(c).expect("heist: a char range holds chars only")
}

impl RangeIter<char> {
    fn len_(&self) -> usize {
        let (start, end) = (char_index(self.start), char_index(self.end));
        span(start.into(), end.into(), self.inclusive)
    }
    fn producer(self) -> CharProducer {
        let len = self.len_();
        CharProducer(RangeProducer {
            start: char_index(self.start),
            len,
        })
    }
}

indexed_item!(char);

/// The producer of a `char` range: a range of indices among all `char`s, which skip
/// the surrogates.
#[derive(Debug)]
pub(crate) struct CharProducer(RangeProducer<u32>);

impl Producer for CharProducer {
    type Item = char;
    type IntoIter = std::iter::Map<RangeBlock<u32>, fn(u32) -> char>;
    fn len(&self) -> usize {
        self.0.len
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.0.split_at(index);
        (CharProducer(l), CharProducer(r))
    }
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().map(char_at)
    }
    const CUTS: Option<Cuts<Self>> = Cuts::SHARED;
    unsafe fn cut(&self, from: usize, to: usize) -> Self {
        // SAFETY: the caller's contract is `cut`'s, which `RangeProducer` allows.
        CharProducer(unsafe { self.0.cut(from, to) })
    }
}

impl IndexedProducer for CharProducer {}

/// The producer of a 128-bit range: its first and last item, or `None` if empty (the
/// whole of `i128` has more items than a `u128` counts).
#[derive(Debug)]
pub(crate) struct WideProducer<T>(Option<(T, T)>);

macro_rules! wide_range {
    ($($t:ty),*) => {$(
        impl RangeIter<$t> {
            fn producer(self) -> WideProducer<$t> {
                let last = if self.inclusive { Some(self.end) } else { self.end.checked_sub(1) };
                WideProducer(last.filter(|&l| l >= self.start).map(|l| (self.start, l)))
            }
        }

        impl RangeItem for $t {
            fn drive<K: Kernel<$t>>(r: RangeIter<$t>, kernel: K) -> K::Output {
                bridge_exact(r.producer(), &kernel)
            }
            fn opt_len(r: &RangeIter<$t>) -> Option<usize> {
                let p = r.clone().producer();
                p.0.map_or(Some(0), |(a, b)| usize::try_from(b.abs_diff(a)).ok()?.checked_add(1))
            }
            fn with_producer_or_self<CB: IndexedOrNot<$t>>(
                r: RangeIter<$t>,
                cb: CB,
            ) -> CB::Output {
                cb.unindexed(r)
            }
        }

        impl Producer for WideProducer<$t> {
            type Item = $t;
            type IntoIter = RangeInclusive<$t>;
            /// At most `usize::MAX`, which is all a length says of a longer range.
            fn len(&self) -> usize {
                self.0.map_or(0, |(a, b)| {
                    usize::try_from(b.abs_diff(a)).map_or(usize::MAX, |n| n.saturating_add(1))
                })
            }
            /// The first `index` items; of a range longer than `usize::MAX`, whose length
            /// saturates, the first `index / usize::MAX` of its items, so that a split
            /// in halves cuts it in halves (rayon's octillion ranges).
            fn split_at(self, index: usize) -> (Self, Self) {
                let Some((a, b)) = self.0 else {
                    return (self, WideProducer(None));
                };
                let Some(k) = wide_last(b.abs_diff(a), index) else {
                    return (WideProducer(None), self);
                };
                // `k <= b - a`, so the left part's last item is at most `b`.
                let last = a.wrapping_add(k as $t);
                let rest = (last < b).then(|| (last + 1, b));
                (WideProducer(Some((a, last))), WideProducer(rest))
            }
            fn into_iter(self) -> RangeInclusive<$t> {
                match self.0 {
                    Some((a, b)) => a..=b,
                    // An inclusive range can only be empty by being reversed.
                    #[allow(clippy::reversed_empty_ranges)]
                    None => 1..=0,
                }
            }
        }
    )*};
}

wide_range!(u128, i128);

/// Where the first `index` (of `len()`) of the `span + 1` items of a 128-bit range end:
/// the offset of the last of them from the first item, `None` if there are none. They
/// are `index` items if the range counts at most `usize::MAX`, else that share of them,
/// rounded down (all at `index == usize::MAX`). No step overflows, also for the
/// `2^128` items of the whole of `i128`.
fn wide_last(span: u128, index: usize) -> Option<u128> {
    let whole = usize::MAX as u128;
    let i = index as u128;
    let k = if span < whole {
        i
    } else if index == usize::MAX {
        return Some(span);
    } else {
        // span + 1 = q * whole + r, worked out without forming span + 1.
        let (mut q, mut r) = (span / whole, span % whole + 1);
        if r == whole {
            q += 1;
            r = 0;
        }
        // q <= 2^64 + 1 and i < 2^64 - 1, so q * i < 2^128; r * i < whole^2; and the
        // share is less than span + 1.
        q * i + r * i / whole
    };
    k.checked_sub(1)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A 128-bit range split anywhere keeps its items; one longer than `usize::MAX`
    /// splits in proportion.
    #[test]
    fn wide_ranges_split_anywhere() {
        for (a, b) in [(-5i128, 5i128), (i128::MAX - 6, i128::MAX), (3, 3)] {
            let whole: Vec<i128> = (a..=b).collect();
            for at in 0..=whole.len() {
                let (l, r) = WideProducer(Some((a, b))).split_at(at);
                assert_eq!(l.len(), at);
                let got: Vec<i128> = l.into_iter().chain(r.into_iter()).collect();
                assert_eq!(got, whole, "{a}..={b} at {at}");
            }
        }
        // The whole of `i128` counts as `usize::MAX`, and splits in proportion: half of
        // its length is half of its items.
        let all = WideProducer(Some((i128::MIN, i128::MAX)));
        assert_eq!(all.len(), usize::MAX);
        let (l, r) = WideProducer(all.0).split_at(usize::MAX / 2);
        let mid = (l.0.unwrap().1, r.0.unwrap().0);
        assert!(
            mid.0 < 0 && mid.1 >= -(1i128 << 65) && mid.1 == mid.0 + 1,
            "{mid:?}"
        );
        let (l, r) = WideProducer(all.0).split_at(usize::MAX);
        assert_eq!((l.0, r.0), (all.0, None));
        assert_eq!(WideProducer(all.0).split_at(0).0 .0, None);
        // 10^27 items: a block of one is its share of them, and halves are halves.
        let oct = 1_000_000_000_000_000_000_000_000_000u128;
        let (l, _) = WideProducer(Some((0, oct - 1))).split_at(1);
        assert_eq!(l.0, Some((0, oct / usize::MAX as u128 - 1)));
        let (l, r) = WideProducer(Some((0, oct - 1))).split_at(usize::MAX / 2);
        let half = l.0.unwrap().1 + 1;
        assert!(half <= oct / 2 && oct / 2 - half < 1 << 64, "{half}");
        assert_eq!(r.0, Some((half, oct - 1)));
        let last = WideProducer(Some((u128::MAX - 1, u128::MAX))).split_at(2);
        assert_eq!(
            (last.0 .0, last.1 .0),
            (Some((u128::MAX - 1, u128::MAX)), None)
        );
    }

    /// A char range split anywhere around the surrogates keeps its chars.
    #[test]
    fn char_ranges_skip_the_surrogates() {
        let it = ('\u{D7FD}'..='\u{E002}').into_par_iter();
        let whole: Vec<char> = ('\u{D7FD}'..='\u{E002}').collect();
        assert_eq!(it.len_(), 6);
        for at in 0..=6 {
            let (l, r) = it.clone().producer().split_at(at);
            let got: Vec<char> = l.into_iter().chain(r.into_iter()).collect();
            assert_eq!(got, whole);
        }
    }
}
