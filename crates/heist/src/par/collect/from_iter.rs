//! `collect` and `par_extend` (rayon's `FromParallelIterator` and `ParallelExtend`):
//! an indexed iterator writes into a `Vec` in place (`par/collect/in_place.rs`); otherwise
//! pieces fill `Vec`s, kept in index order and joined at the end, so that the order of
//! the items is kept.

use crate::par::collect::in_place::extend_vec;
use crate::par::engine::driver::Kernel;
use crate::par::iter::consumers::{concat, Pieces, VecList};
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::ParallelIterator;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// A collection that can be built from a parallel iterator (rayon's
/// `FromParallelIterator`); the target of [`ParallelIterator::collect`].
pub trait FromParallelIterator<T: Send> {
    /// Builds the collection from the items, in order.
    fn from_par_iter<I: IntoParallelIterator<Item = T>>(par_iter: I) -> Self;
}

/// A collection that can be extended by a parallel iterator (rayon's `ParallelExtend`).
pub trait ParallelExtend<T: Send> {
    /// Appends the items, in order.
    fn par_extend<I: IntoParallelIterator<Item = T>>(&mut self, par_iter: I);
}

/// The items of `par_iter`, in order.
pub(crate) fn to_vec<T: Send, I: IntoParallelIterator<Item = T>>(par_iter: I) -> Vec<T> {
    let mut v = Vec::new();
    extend_vec(&mut v, par_iter.into_par_iter());
    v
}

impl<T: Send> FromParallelIterator<T> for Vec<T> {
    fn from_par_iter<I: IntoParallelIterator<Item = T>>(par_iter: I) -> Self {
        to_vec(par_iter)
    }
}

impl<T: Send> ParallelExtend<T> for Vec<T> {
    fn par_extend<I: IntoParallelIterator<Item = T>>(&mut self, par_iter: I) {
        extend_vec(self, par_iter.into_par_iter());
    }
}

/// Implements both traits for a collection that `Extend`s sequentially from the
/// collected items.
macro_rules! via_extend {
    ([$($g:tt)*] $ty:ty, $item:ty $(, where [$($b:tt)*])?) => {
        impl<$($g)*> FromParallelIterator<$item> for $ty $(where $($b)*)? {
            fn from_par_iter<I: IntoParallelIterator<Item = $item>>(par_iter: I) -> Self {
                let mut c = <$ty>::default();
                c.par_extend(par_iter);
                c
            }
        }

        extend_only!([$($g)*] $ty, $item $(, where [$($b)*])?);
    };
}

/// Implements `ParallelExtend` for a collection that `Extend`s sequentially from the
/// collected items (where rayon has no `FromParallelIterator` for those items, which
/// would leave `collect`'s item type open to inference).
macro_rules! extend_only {
    ([$($g:tt)*] $ty:ty, $item:ty $(, where [$($b:tt)*])?) => {
        impl<$($g)*> ParallelExtend<$item> for $ty $(where $($b)*)? {
            fn par_extend<I: IntoParallelIterator<Item = $item>>(&mut self, par_iter: I) {
                let pieces = par_iter.into_par_iter().drive(VecList);
                pieces.into_iter().for_each(|p| self.extend(p));
            }
        }
    };
}

via_extend!([T: Send] VecDeque<T>, T);
via_extend!([T: Send] LinkedList<T>, T);
via_extend!([T: Send + Ord] BinaryHeap<T>, T);
via_extend!([T: Send + Ord] BTreeSet<T>, T);
via_extend!([K: Send + Ord, V: Send] BTreeMap<K, V>, (K, V));
via_extend!([T: Send + Eq + Hash, S: BuildHasher + Default + Send] HashSet<T, S>, T);
via_extend!([K: Send + Eq + Hash, V: Send, S: BuildHasher + Default + Send] HashMap<K, V, S>, (K, V));
via_extend!([] String, char);
via_extend!(['a] String, &'a str);
via_extend!([] String, String);
via_extend!(['a] String, Cow<'a, str>);
via_extend!(['a] String, &'a char);
via_extend!([] String, Box<str>);
via_extend!(['a] OsString, &'a OsStr);
via_extend!([] OsString, OsString);
via_extend!(['a] OsString, Cow<'a, OsStr>);
extend_only!(['a, T: 'a + Copy + Send + Sync] VecDeque<T>, &'a T);
extend_only!(['a, T: 'a + Copy + Send + Sync] LinkedList<T>, &'a T);
extend_only!(['a, T: 'a + Copy + Send + Sync + Ord] BinaryHeap<T>, &'a T);
extend_only!(['a, T: 'a + Copy + Send + Sync + Ord] BTreeSet<T>, &'a T);
extend_only!(['a, T: 'a + Copy + Send + Sync + Eq + Hash, S: BuildHasher + Send] HashSet<T, S>, &'a T);
extend_only!(['a, K: 'a + Copy + Send + Sync + Ord, V: 'a + Copy + Send + Sync] BTreeMap<K, V>, (&'a K, &'a V));
extend_only!(['a, K: 'a + Copy + Send + Sync + Eq + Hash, V: 'a + Copy + Send + Sync, S: BuildHasher + Send] HashMap<K, V, S>, (&'a K, &'a V));

impl FromParallelIterator<()> for () {
    fn from_par_iter<I: IntoParallelIterator<Item = ()>>(par_iter: I) {
        par_iter.into_par_iter().for_each(drop)
    }
}

impl ParallelExtend<()> for () {
    fn par_extend<I: IntoParallelIterator<Item = ()>>(&mut self, par_iter: I) {
        par_iter.into_par_iter().for_each(drop)
    }
}

impl<'a, T: Send + Sync + Copy + 'a> ParallelExtend<&'a T> for Vec<T> {
    fn par_extend<I: IntoParallelIterator<Item = &'a T>>(&mut self, par_iter: I) {
        self.par_extend(par_iter.into_par_iter().copied())
    }
}

/// The kernel of collecting `Result`s: pieces fill `Vec`s until the first error, which
/// stops the loop; the leftmost error found wins.
struct OkList(AtomicBool);

impl<T: Send, E: Send> Kernel<Result<T, E>> for OkList {
    type Acc = Result<Vec<T>, E>;
    type Output = Result<Pieces<T>, E>;
    fn start(&self) -> Self::Acc {
        Ok(Vec::new())
    }
    fn fold<I: Iterator<Item = Result<T, E>>>(&self, acc: Self::Acc, items: I) -> Self::Acc {
        let mut v = acc?;
        for x in items {
            match x {
                Ok(t) => v.push(t),
                Err(e) => {
                    self.0.store(true, Relaxed);
                    return Err(e);
                }
            }
        }
        Ok(v)
    }
    fn finish(&self, acc: Self::Acc) -> Self::Output {
        acc.map(|v| vec![v])
    }
    fn combine(&self, l: Self::Output, r: Self::Output) -> Self::Output {
        let mut l = l?;
        l.extend(r?);
        Ok(l)
    }
    fn done(&self) -> bool {
        self.0.load(Relaxed)
    }
}

impl<C, T, E> FromParallelIterator<Result<T, E>> for Result<C, E>
where
    C: FromParallelIterator<T>,
    T: Send,
    E: Send,
{
    fn from_par_iter<I: IntoParallelIterator<Item = Result<T, E>>>(par_iter: I) -> Self {
        let pieces = par_iter
            .into_par_iter()
            .drive(OkList(AtomicBool::new(false)))?;
        Ok(C::from_par_iter(concat(pieces)))
    }
}

impl<C, T> FromParallelIterator<Option<T>> for Option<C>
where
    C: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I: IntoParallelIterator<Item = Option<T>>>(par_iter: I) -> Self {
        let items: Result<C, ()> = par_iter.into_par_iter().map(|o| o.ok_or(())).collect();
        items.ok()
    }
}
