//! Slices cut where the items say: `par_split`, `par_split_inclusive`, `par_chunk_by`
//! and their `_mut` forms (rayon's `ParallelSlice` and `ParallelSliceMut`). A piece is
//! cut just after a separator (or between two items the predicate keeps apart), so the
//! parts on either side of a cut are whole; each piece then iterates with std's own
//! iterator.

use super::driver::{bridge, Kernel, Producer};
use super::traits::ParallelIterator;

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
                bridge($prod { s: self.slice, pred: &self.pred }, &kernel)
            }
        }

        struct $prod<'a, 'p, T, P> {
            s: &'a $($mutb)* [T],
            pred: &'p P,
        }

        impl<'a, 'p, T: $bound, P> Producer for $prod<'a, 'p, T, P>
        where
            P: Fn(&T, &T) -> bool + Sync + Send,
        {
            type Item = &'a $($mutb)* [T];
            type IntoIter = std::slice::$iter_ty<'a, T, &'p P>;
            fn len(&self) -> usize {
                self.s.len()
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let (s, pred) = (self.s, self.pred);
                let n = s.len();
                let k = cut_near(n.saturating_sub(1), index, |k| !pred(&s[k - 1], &s[k]));
                let (l, r) = s.$split_at(k.unwrap_or(n));
                ($prod { s: l, pred }, $prod { s: r, pred })
            }
            fn into_iter(self) -> Self::IntoIter {
                self.s.$iter(self.pred)
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
    use super::super::strings::tests::check;
    use super::*;

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
            let runs = || ChunkByProducer { s, pred: &same };
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
