//! hashbrown's `HashTable` in parallel, split by ranges of buckets (the hash-table
//! stealer of On Lock-Free Work-stealing Iterators for Parallel Data Structures, §4):
//! a piece is a bucket range, cut in O(1) anywhere, and a block visits its buckets
//! in order, skipping the empty ones. No copy, no walk.

use crate::par::engine::driver::{bridge, Kernel, Producer};
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::ParallelIterator;
use hashbrown::HashTable;

/// A parallel iterator over the entries of a `HashTable`, in bucket order.
#[derive(Debug)]
pub struct Buckets<'a, T> {
    table: &'a HashTable<T>,
}

impl<'a, T: Sync> IntoParallelIterator for &'a HashTable<T> {
    type Iter = Buckets<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> Buckets<'a, T> {
        Buckets { table: self }
    }
}

impl<'a, T: Sync> ParallelIterator for Buckets<'a, T> {
    type Item = &'a T;
    fn drive<K: Kernel<&'a T>>(self, kernel: K) -> K::Output {
        let range = BucketRange {
            table: self.table,
            lo: 0,
            hi: self.table.num_buckets(),
        };
        bridge(range, &kernel)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.table.len())
    }
}

/// The buckets `lo..hi` of a table; its length is the bucket count, which bounds the
/// entries.
struct BucketRange<'a, T> {
    table: &'a HashTable<T>,
    lo: usize,
    hi: usize,
}

impl<'a, T: Sync> Producer for BucketRange<'a, T> {
    type Item = &'a T;
    type IntoIter = BucketIter<'a, T>;
    fn len(&self) -> usize {
        self.hi - self.lo
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let mid = self.lo + index;
        let table = self.table;
        let lo = BucketRange {
            table,
            lo: self.lo,
            hi: mid,
        };
        (
            lo,
            BucketRange {
                table,
                lo: mid,
                hi: self.hi,
            },
        )
    }
    fn into_iter(self) -> BucketIter<'a, T> {
        BucketIter {
            table: self.table,
            next: self.lo,
            end: self.hi,
        }
    }
}

/// The occupied buckets of a range, in order.
struct BucketIter<'a, T> {
    table: &'a HashTable<T>,
    next: usize,
    end: usize,
}

impl<'a, T> Iterator for BucketIter<'a, T> {
    type Item = &'a T;
    fn next(&mut self) -> Option<&'a T> {
        while self.next < self.end {
            let i = self.next;
            self.next += 1;
            if let Some(x) = self.table.get_bucket(i) {
                return Some(x);
            }
        }
        None
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.end - self.next))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn bucket_ranges_split_everywhere() {
        let hasher = std::collections::hash_map::RandomState::new();
        let mut t = HashTable::new();
        for i in 0..100u32 {
            t.insert_unique(hasher.hash_one(i), i, |x| hasher.hash_one(*x));
        }
        let whole: Vec<&u32> = t.iter().collect();
        let n = t.num_buckets();
        let range = || BucketRange {
            table: &t,
            lo: 0,
            hi: n,
        };
        for at in 0..=n {
            for again in (0..=n - at).step_by(7) {
                let (l, r) = range().split_at(at);
                let (a, b) = r.split_at(again);
                assert_eq!(l.len() + a.len() + b.len(), n);
                let got: Vec<&u32> = l
                    .into_iter()
                    .chain(a.into_iter())
                    .chain(b.into_iter())
                    .collect();
                assert_eq!(got, whole, "split at {at}, then {again}");
            }
        }
    }
}
