//! Slices cut where the items say: `par_split`, `par_split_inclusive`, `par_chunk_by`
//! and their `_mut` forms (rayon's `ParallelSlice` and `ParallelSliceMut`). A piece is
//! cut just after a separator (or between two items the predicate keeps apart), so the
//! parts on either side of a cut are whole; each piece then iterates with std's own
//! iterator.

use crate::par::engine::driver::{bridge, Kernel, Producer};
use crate::par::iter::traits::ParallelIterator;

/// Where a piece may be cut: after item `k - 1` for the first allowed `k` at or after
/// `i`, else the last one before it; `None` if nowhere.
fn cut_near(len: usize, i: usize, allowed: impl Fn(usize) -> bool) -> Option<usize> {
    let i = i.clamp(1, len.max(1));
    (i..=len)
        .find(|&k| allowed(k))
        .or_else(|| (1..i).rev().find(|&k| allowed(k)))
}

/// Defines a slice split source (shared or mutable): its iterator type and producer.
macro_rules! split_source {
    (
        $(#[$doc:meta])* $name:ident, $prod:ident, [$($mutb:tt)*], $bound:ident,
        $split_at:ident, $iter:ident -> $iter_ty:ident, inclusive = $inclusive:expr
    ) => {
        $(#[$doc])*
        pub struct $name<'a, T, P> {
            slice: &'a $($mutb)* [T],
            pat: P,
        }

        /// The slice only, as in rayon: the closure need not be `Debug`.
        impl<T: std::fmt::Debug, P> std::fmt::Debug for $name<'_, T, P> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("slice", &self.slice).finish()
            }
        }

        impl<'a, T, P> $name<'a, T, P> {
            pub(crate) fn new(slice: &'a $($mutb)* [T], pat: P) -> Self {
                $name { slice, pat }
            }
        }

        impl<'a, T: $bound, P: Fn(&T) -> bool + Sync + Send> ParallelIterator for $name<'a, T, P> {
            type Item = &'a $($mutb)* [T];
            fn drive<K: Kernel<Self::Item>>(self, kernel: K) -> K::Output {
                let p = $prod { s: Some(self.slice), last: true, pat: &self.pat };
                bridge(p, &kernel)
            }
        }

        /// A piece of a split slice; `None` has no parts. A piece that is not the last
        /// ends in a separator.
        struct $prod<'a, 'p, T, P> {
            s: Option<&'a $($mutb)* [T]>,
            last: bool,
            pat: &'p P,
        }

        impl<'a, 'p, T: $bound, P: Fn(&T) -> bool + Sync + Send> Producer for $prod<'a, 'p, T, P> {
            type Item = &'a $($mutb)* [T];
            type IntoIter = Parts<std::slice::$iter_ty<'a, T, &'p P>>;
            fn len(&self) -> usize {
                self.s.as_ref().map_or(0, |s| s.len() + 1)
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let pat = self.pat;
                let none = $prod { s: None, last: false, pat };
                let Some(s) = self.s else {
                    return (self, none);
                };
                // A cut goes after a separator inside the body (not the one that ends a
                // piece that is not the last).
                let body = s.len() - usize::from(!self.last && !s.is_empty());
                let Some(k) = cut_near(body, index, |k| pat(&s[k - 1])) else {
                    return ($prod { s: Some(s), ..self }, none);
                };
                let (l, r) = s.$split_at(k);
                ($prod { s: Some(l), last: false, pat }, $prod { s: Some(r), last: self.last, pat })
            }
            fn into_iter(self) -> Self::IntoIter {
                let (pat, last) = (self.pat, self.last);
                Parts(self.s.map(|s| {
                    if $inclusive || last || s.is_empty() {
                        s.$iter(pat)
                    } else {
                        let n = s.len() - 1;
                        s.$split_at(n).0.$iter(pat)
                    }
                }))
            }
        }
    };
}

split_source!(
    /// The parts of a slice between separators (see
    /// [`ParallelSlice::par_split`](crate::slice::ParallelSlice::par_split)).
    Split, SplitProducer, [], Sync, split_at, split -> Split, inclusive = false
);

split_source!(
    /// The parts of a slice, each with the separator that ends it (see
    /// [`ParallelSlice::par_split_inclusive`](crate::slice::ParallelSlice::par_split_inclusive)).
    SplitInclusive, SplitInclusiveProducer, [], Sync, split_at, split_inclusive -> SplitInclusive,
    inclusive = true
);

split_source!(
    /// The mutable parts of a slice between separators (see
    /// [`ParallelSliceMut::par_split_mut`](crate::slice::ParallelSliceMut::par_split_mut)).
    SplitMut, SplitMutProducer, [mut], Send, split_at_mut, split_mut -> SplitMut,
    inclusive = false
);

split_source!(
    /// The mutable parts of a slice, each with the separator that ends it (see
    /// [`ParallelSliceMut::par_split_inclusive_mut`](crate::slice::ParallelSliceMut::par_split_inclusive_mut)).
    SplitInclusiveMut, SplitInclusiveMutProducer, [mut], Send, split_at_mut,
    split_inclusive_mut -> SplitInclusiveMut, inclusive = true
);

clone_views!(
    Split<P> { slice, pat };
    SplitInclusive<P> { slice, pat };
    ChunkBy<P> { slice, pred };
);

/// The parts of one block, or none.
pub(crate) struct Parts<I>(Option<I>);

impl<I: Iterator> Iterator for Parts<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        self.0.as_mut()?.next()
    }
}

/// Defines a chunk-by source (shared or mutable): runs of items that `pred` keeps
/// together, cut between two items it keeps apart.
macro_rules! chunk_by_source {
    (
        $(#[$doc:meta])* $name:ident, $prod:ident, [$($mutb:tt)*], $bound:ident,
        $split_at:ident, $iter:ident -> $iter_ty:ident
    ) => {
        $(#[$doc])*
        pub struct $name<'a, T, P> {
            slice: &'a $($mutb)* [T],
            pred: P,
        }

        /// The slice only, as in rayon: the closure need not be `Debug`.
        impl<T: std::fmt::Debug, P> std::fmt::Debug for $name<'_, T, P> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("slice", &self.slice).finish()
            }
        }

        impl<'a, T, P> $name<'a, T, P> {
            pub(crate) fn new(slice: &'a $($mutb)* [T], pred: P) -> Self {
                $name { slice, pred }
            }
        }

        impl<'a, T: $bound, P> ParallelIterator for $name<'a, T, P>
        where
            P: Fn(&T, &T) -> bool + Sync + Send,
        {
            type Item = &'a $($mutb)* [T];
            fn drive<K: Kernel<Self::Item>>(self, kernel: K) -> K::Output {
                let known = self.slice.len();
                bridge($prod { s: self.slice, pred: &self.pred, known }, &kernel)
            }
        }

        /// A part of the slice. Each two neighbours are given to `pred` once in all, as
        /// in rayon: the neighbours `(j - 1, j)` for `j >= known` were found together
        /// while looking for a cut, and are not asked again.
        struct $prod<'a, 'p, T, P> {
            s: &'a $($mutb)* [T],
            pred: &'p P,
            known: usize,
        }

        impl<'a, 'p, T: $bound, P> Producer for $prod<'a, 'p, T, P>
        where
            P: Fn(&T, &T) -> bool + Sync + Send,
        {
            type Item = &'a $($mutb)* [T];
            type IntoIter = std::iter::Chain<
                std::slice::$iter_ty<'a, T, &'p P>,
                std::option::IntoIter<&'a $($mutb)* [T]>,
            >;
            fn len(&self) -> usize {
                self.s.len()
            }
            /// Cuts at the first run boundary from `index` on among the neighbours not
            /// yet known, else at the last one before it, else not at all.
            fn split_at(self, index: usize) -> (Self, Self) {
                let (s, pred, known) = (self.s, self.pred, self.known);
                let n = s.len();
                let apart = |j: usize| !pred(&s[j - 1], &s[j]);
                let mid = index.clamp(1, n.max(2) - 1);
                // Cut at `j`: the left part knows its neighbours from `left_known` on, the
                // right one from `right_known` (relative to its start).
                let (cut, left_known, right_known) = match (mid..known.min(n)).find(|&j| apart(j)) {
                    Some(j) => (j, mid, known - j),
                    // All of the right part's neighbours were looked at.
                    None => match (1..mid.min(known)).rev().find(|&j| apart(j)) {
                        Some(j) => (j, j, 0),
                        None => {
                            let empty: &'a $($mutb)* [T] = &$($mutb)* [];
                            let rest = $prod { s: empty, pred, known: 0 };
                            return ($prod { s, pred, known: 0 }, rest);
                        }
                    },
                };
                let (l, r) = s.$split_at(cut);
                ($prod { s: l, pred, known: left_known }, $prod { s: r, pred, known: right_known })
            }
            /// std's runs up to the last boundary before the known neighbours, then the
            /// known ones as one run.
            fn into_iter(self) -> Self::IntoIter {
                let (s, pred) = (self.s, self.pred);
                let n = s.len();
                if self.known >= n {
                    return s.$iter(pred).chain(None);
                }
                let last = (1..self.known).rev().find(|&j| !pred(&s[j - 1], &s[j])).unwrap_or(0);
                let (runs, tail) = s.$split_at(last);
                runs.$iter(pred).chain(Some(tail))
            }
        }
    };
}

chunk_by_source!(
    /// Runs of a slice's items that a predicate keeps together (see
    /// [`ParallelSlice::par_chunk_by`](crate::slice::ParallelSlice::par_chunk_by)).
    ChunkBy, ChunkByProducer, [], Sync, split_at, chunk_by -> ChunkBy
);

chunk_by_source!(
    /// Mutable runs of a slice's items that a predicate keeps together (see
    /// [`ParallelSliceMut::par_chunk_by_mut`](crate::slice::ParallelSliceMut::par_chunk_by_mut)).
    ChunkByMut, ChunkByMutProducer, [mut], Send, split_at_mut, chunk_by_mut -> ChunkByMut
);

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::par::sources::strings::tests::check;

    /// A chunk-by split anywhere, twice, asks about each two neighbours exactly once, and
    /// either half split again, too (rayon's `slice_chunk_by` counts the calls).
    #[test]
    fn chunk_by_asks_about_each_two_neighbours_once() {
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        let v: Vec<u32> = (0..40).map(|i| (i * 7 / 5) % 4).collect();
        let calls = AtomicUsize::new(0);
        let same = |a: &u32, b: &u32| {
            calls.fetch_add(1, Relaxed);
            a / 2 == b / 2
        };
        let whole: Vec<&[u32]> = v.chunk_by(|a, b| a / 2 == b / 2).collect();
        let n = v.len();
        for at in 0..=n {
            for again in 0..=n {
                for left_again in 0..=at {
                    calls.store(0, Relaxed);
                    let p = ChunkByProducer {
                        s: &v[..],
                        pred: &same,
                        known: n,
                    };
                    let (l, r) = p.split_at(at);
                    let (a, b) = r.split_at(again);
                    let (l1, l2) = l.split_at(left_again);
                    let got: Vec<&[u32]> = [l1, l2, a, b]
                        .into_iter()
                        .flat_map(|p| p.into_iter())
                        .collect();
                    assert_eq!(got, whole, "at {at}, {again}, {left_again}");
                    assert_eq!(calls.load(Relaxed), n - 1, "at {at}, {again}, {left_again}");
                }
            }
        }
    }

    /// Splits and runs, split everywhere: the parts are std's.
    #[test]
    fn slice_splits_split_everywhere() {
        let inputs: [&[u8]; 7] = [b"", b",", b"a", b"a,b,,c", b",,x,", b"ab,", b"aabbbcd"];
        let comma = |x: &u8| *x == b',';
        let same = |a: &u8, b: &u8| a == b;
        for s in inputs {
            let n = s.len();
            let split = || SplitProducer {
                s: Some(s),
                last: true,
                pat: &comma,
            };
            check(split, s.split(comma).collect(), n + 1);
            let inclusive = || SplitInclusiveProducer {
                s: Some(s),
                last: true,
                pat: &comma,
            };
            check(inclusive, s.split_inclusive(comma).collect(), n + 1);
            let runs = || ChunkByProducer {
                s,
                pred: &same,
                known: s.len(),
            };
            check(runs, s.chunk_by(same).collect(), n);
            let mut m = s.to_vec();
            let expect: Vec<Vec<u8>> = s.split(comma).map(<[u8]>::to_vec).collect();
            for at in 0..=n + 1 {
                let (l, r) = SplitMutProducer {
                    s: Some(&mut m[..]),
                    last: true,
                    pat: &comma,
                }
                .split_at(at);
                let got: Vec<Vec<u8>> = l
                    .into_iter()
                    .chain(r.into_iter())
                    .map(|p| p.to_vec())
                    .collect();
                assert_eq!(got, expect, "split_mut at {at}");
            }
        }
    }
}
