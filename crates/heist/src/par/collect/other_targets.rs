//! The rest of rayon's collection targets: boxed, shared and borrowed collections,
//! pairs of collections (from pairs or from `Either`s), and `Either` itself as a
//! parallel iterator or a target to extend.

use crate::par::collect::from_iter::{FromParallelIterator, ParallelExtend};
use crate::par::engine::driver::Kernel;
use crate::par::iter::consumers::{concat, Halves, Sides};
use crate::par::iter::either::Either;
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::{
    IndexedOrNot, IndexedParallelIterator, ParallelIterator, ProducerCallback,
};
use std::borrow::{Cow, ToOwned};
use std::rc::Rc;
use std::sync::Arc;

/// Collects through a `Vec` or a `String` into a type that converts from it.
macro_rules! via {
    ([$($g:tt)*] $ty:ty, $item:ty, $via:ty) => {
        impl<$($g)*> FromParallelIterator<$item> for $ty {
            fn from_par_iter<I: IntoParallelIterator<Item = $item>>(par_iter: I) -> Self {
                <$via>::from_par_iter(par_iter).into()
            }
        }
    };
}

via!([T: Send] Box<[T]>, T, Vec<T>);
via!([T: Send] Rc<[T]>, T, Vec<T>);
via!([T: Send] Arc<[T]>, T, Vec<T>);
via!([] Box<str>, char, String);
via!(['a] Box<str>, &'a char, String);
via!(['a] Box<str>, &'a str, String);
via!([] Box<str>, String, String);
via!([] Box<str>, Box<str>, String);
via!(['a] Box<str>, Cow<'a, str>, String);

impl<'a, C, T> FromParallelIterator<T> for Cow<'a, C>
where
    C: ToOwned<Owned: FromParallelIterator<T>> + ?Sized,
    T: Send,
{
    fn from_par_iter<I: IntoParallelIterator<Item = T>>(par_iter: I) -> Self {
        Cow::Owned(C::Owned::from_par_iter(par_iter))
    }
}

/// Implements both traits for pairs of collections, from items that `$kernel` sorts
/// into two sides (`$a` and `$b`), each kept in order.
macro_rules! pair_target {
    ($item:ty, [$a:ident, $b:ident], $kernel:expr) => {
        impl<$a, $b, FromA, FromB> FromParallelIterator<$item> for (FromA, FromB)
        where
            $a: Send,
            $b: Send,
            FromA: Send + FromParallelIterator<$a>,
            FromB: Send + FromParallelIterator<$b>,
        {
            fn from_par_iter<I: IntoParallelIterator<Item = $item>>(par_iter: I) -> Self {
                let (a, b) = par_iter.into_par_iter().drive($kernel);
                (
                    FromA::from_par_iter(concat(a)),
                    FromB::from_par_iter(concat(b)),
                )
            }
        }

        impl<$a, $b, FromA, FromB> ParallelExtend<$item> for (FromA, FromB)
        where
            $a: Send,
            $b: Send,
            FromA: Send + ParallelExtend<$a>,
            FromB: Send + ParallelExtend<$b>,
        {
            fn par_extend<I: IntoParallelIterator<Item = $item>>(&mut self, par_iter: I) {
                let (a, b) = par_iter.into_par_iter().drive($kernel);
                self.0.par_extend(concat(a));
                self.1.par_extend(concat(b));
            }
        }
    };
}

pair_target!((A, B), [A, B], Halves);
pair_target!(Either<L, R>, [L, R], Sides);

/// `$body` on whichever side `$e` holds, named `$x`.
macro_rules! either_side {
    ($e:expr, $x:ident => $body:expr) => {
        match $e {
            Either::Left($x) => $body,
            Either::Right($x) => $body,
        }
    };
}

/// Extends whichever collection the `Either` holds.
impl<L, R, T> ParallelExtend<T> for Either<L, R>
where
    L: ParallelExtend<T>,
    R: ParallelExtend<T>,
    T: Send,
{
    fn par_extend<I: IntoParallelIterator<Item = T>>(&mut self, par_iter: I) {
        either_side!(self, x => x.par_extend(par_iter))
    }
}

/// Either of two parallel iterators with the same items (rayon's `Either` is one).
impl<L, R> ParallelIterator for Either<L, R>
where
    L: ParallelIterator,
    R: ParallelIterator<Item = L::Item>,
{
    type Item = L::Item;
    fn drive<K: Kernel<L::Item>>(self, kernel: K) -> K::Output {
        either_side!(self, x => x.drive(kernel))
    }
    fn opt_len(&self) -> Option<usize> {
        either_side!(self, x => x.opt_len())
    }
    fn with_producer_or_self<CB: IndexedOrNot<L::Item>>(self, cb: CB) -> CB::Output {
        either_side!(self, x => x.with_producer_or_self(cb))
    }
}

impl<L, R> IndexedParallelIterator for Either<L, R>
where
    L: IndexedParallelIterator,
    R: IndexedParallelIterator<Item = L::Item>,
{
    fn len(&self) -> usize {
        either_side!(self, x => x.len())
    }
    fn with_producer<CB: ProducerCallback<L::Item>>(self, cb: CB) -> CB::Output {
        either_side!(self, x => x.with_producer(cb))
    }
}
