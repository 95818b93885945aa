//! std's maps and sets iterated in place, with O(1) extra memory (rayon copies every
//! entry into a `Vec` first). std gives no access to buckets or nodes, only iterators
//! that can be cloned and know their length, so a piece of the loop is an iterator, a
//! count of items to skip and a count to take (the sequential-access case of On
//! Lock-Free Work-stealing Iterators for Parallel Data Structures, §4). A split clones
//! the owner's iterator where it stands; the thief skips the owner's half itself, so
//! the owner never walks for it.

use crate::par::engine::driver::{bridge, Kernel, Producer};
use crate::par::iter::consumers::fold_exactly;
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::ParallelIterator;
use std::collections::{binary_heap, btree_map, btree_set, hash_map, hash_set, linked_list};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList};

/// A parallel iterator over a std collection, walked in place (see the module docs).
#[derive(Debug, Clone)]
pub struct InPlace<I> {
    iter: I,
}

impl<I> ParallelIterator for InPlace<I>
where
    I: Iterator + ExactSizeIterator + Clone + Send,
    I::Item: Send,
{
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, kernel: K) -> K::Output {
        let len = self.iter.len();
        bridge(
            Walk {
                iter: self.iter,
                skip: 0,
                len,
            },
            &kernel,
        )
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// The items `skip..skip + len` of `iter`.
struct Walk<I> {
    iter: I,
    skip: usize,
    len: usize,
}

impl<I> Walk<I>
where
    I: Iterator,
{
    /// Moves to the piece's first item (a thief's first act on a piece it took).
    fn settle(&mut self) {
        if self.skip > 0 {
            self.iter.nth(self.skip - 1);
            self.skip = 0;
        }
    }
}

impl<I> Producer for Walk<I>
where
    I: Iterator + Clone + Send,
{
    type Item = I::Item;
    type IntoIter = std::iter::Take<std::iter::Skip<I>>;
    fn len(&self) -> usize {
        self.len
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let lo = Walk {
            iter: self.iter.clone(),
            skip: self.skip,
            len: index,
        };
        let hi = Walk {
            iter: self.iter,
            skip: self.skip + index,
            len: self.len - index,
        };
        (lo, hi)
    }
    fn into_iter(self) -> Self::IntoIter {
        self.iter.skip(self.skip).take(self.len)
    }
    fn fold_block<K: Kernel<I::Item>>(
        mut self,
        n: usize,
        kernel: &K,
        acc: K::Acc,
    ) -> (K::Acc, Self) {
        self.settle();
        let acc = fold_exactly(&mut self.iter, n, kernel, acc);
        self.len -= n;
        (acc, self)
    }
}

/// Implements `IntoParallelIterator` for a borrowed std collection through its iterator.
macro_rules! in_place {
    ([$($g:tt)*] $coll:ty, $iter:ty, $item:ty) => {
        impl<'a, $($g)*> IntoParallelIterator for &'a $coll {
            type Iter = InPlace<$iter>;
            type Item = $item;
            fn into_par_iter(self) -> InPlace<$iter> {
                InPlace { iter: self.iter() }
            }
        }
    };
}

in_place!([K: Sync, V: Sync, S] HashMap<K, V, S>, hash_map::Iter<'a, K, V>, (&'a K, &'a V));
in_place!([T: Sync, S] HashSet<T, S>, hash_set::Iter<'a, T>, &'a T);
in_place!([K: Sync, V: Sync] BTreeMap<K, V>, btree_map::Iter<'a, K, V>, (&'a K, &'a V));
in_place!([T: Sync] BTreeSet<T>, btree_set::Iter<'a, T>, &'a T);
in_place!([T: Sync] LinkedList<T>, linked_list::Iter<'a, T>, &'a T);
in_place!([T: Sync] BinaryHeap<T>, binary_heap::Iter<'a, T>, &'a T);

/// Implements `IntoParallelIterator` for an owned std collection (or a mutable borrow):
/// its items are moved into a `Vec` first, as rayon does, since its iterators cannot be
/// cloned.
macro_rules! via_vec {
    ([$($g:tt)*] $coll:ty, $item:ty) => {
        impl<$($g)*> IntoParallelIterator for $coll {
            type Iter = crate::par::sources::vec_slice::IntoIter<$item>;
            type Item = $item;
            fn into_par_iter(self) -> Self::Iter {
                self.into_iter().collect::<Vec<_>>().into_par_iter()
            }
        }
    };
}

via_vec!([K: Send, V: Send, S] HashMap<K, V, S>, (K, V));
via_vec!([T: Send, S] HashSet<T, S>, T);
via_vec!([K: Send, V: Send] BTreeMap<K, V>, (K, V));
via_vec!([T: Send] BTreeSet<T>, T);
via_vec!([T: Send] LinkedList<T>, T);
via_vec!([T: Send] BinaryHeap<T>, T);
via_vec!(['a, T: Send] &'a mut LinkedList<T>, &'a mut T);
via_vec!(['a, K: Sync, V: Send, S] &'a mut HashMap<K, V, S>, (&'a K, &'a mut V));
via_vec!(['a, K: Sync, V: Send] &'a mut BTreeMap<K, V>, (&'a K, &'a mut V));

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::par::iter::consumers::{concat, VecList};

    /// Splits a walk at every position, and the right piece again, folding blocks of
    /// every size: the pieces hold the collection's items, in order.
    #[test]
    fn walks_split_everywhere() {
        let m: HashMap<u32, u32> = (0..40).map(|i| (i * 7, i)).collect();
        let whole: Vec<_> = m.iter().collect();
        let n = whole.len();
        let walk = || Walk {
            iter: m.iter(),
            skip: 0,
            len: n,
        };
        for at in 0..=n {
            for again in 0..=n - at {
                for block in [1, 3, n] {
                    let (l, r) = walk().split_at(at);
                    let (a, b) = r.split_at(again);
                    let mut got = Vec::new();
                    for mut p in [l, a, b] {
                        while p.len() > 0 {
                            let k = block.min(p.len());
                            let acc;
                            (acc, p) = p.fold_block(k, &VecList, Vec::new());
                            got.extend(concat(vec![acc]));
                        }
                    }
                    assert_eq!(got, whole, "split at {at}, then {again}, blocks of {block}");
                }
            }
        }
        let set: BTreeSet<i32> = (-20..20).collect();
        let (l, r) = Walk {
            iter: set.iter(),
            skip: 0,
            len: 40,
        }
        .split_at(13);
        let got: Vec<_> = l.into_iter().chain(r.into_iter()).copied().collect();
        assert_eq!(got, (-20..20).collect::<Vec<_>>());
    }
}
