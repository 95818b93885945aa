//! rayon's `MultiZip`: a tuple of indexed iterables, or a reference to one, is itself a
//! parallel iterable whose items are tuples, as if its parts were zipped. It runs as the
//! nested `zip` of its parts with the pairs flattened, so it cuts like `zip`.

use crate::par::engine::driver::Kernel;
use crate::par::iter::into::{
    IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator,
};
use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator, ProducerCallback};

/// The parts of a tuple zipped together: `(a, b, c).into_par_iter()` gives `(x, y, z)`
/// items, as many as the shortest part has (rayon's `MultiZip`).
///
/// ```
/// use heist::prelude::*;
/// let (a, b, c) = (vec![1, 2, 3], vec![10, 20, 30], vec![100, 200]);
/// let sums: Vec<i32> = (&a, &b, &c).into_par_iter().map(|(x, y, z)| x + y + z).collect();
/// assert_eq!(sums, [111, 222]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adapters are lazy"]
pub struct MultiZip<T> {
    tuple: T,
}

/// `$a.zip($b).zip($c)...`.
macro_rules! zip_all {
    ($a:expr) => { $a };
    ($a:expr, $b:expr $(, $rest:expr)*) => { zip_all!($a.zip($b) $(, $rest)*) };
}

/// The pattern of `zip_all!`'s items: `((a, b), c)...`.
macro_rules! zipped {
    (@ $acc:tt) => { $acc };
    (@ $acc:tt, $next:ident $(, $rest:ident)*) => { zipped!(@ ($acc, $next) $(, $rest)*) };
    ($a:ident $(, $rest:ident)*) => { zipped!(@ $a $(, $rest)*) };
}

macro_rules! multizip {
    ($(($T:ident, $t:ident, $i:tt)),+) => {
        impl<$($T),+> IntoParallelIterator for ($($T,)+)
        where
            $($T: IntoParallelIterator<Iter: IndexedParallelIterator>,)+
        {
            type Item = ($($T::Item,)+);
            type Iter = MultiZip<($($T::Iter,)+)>;
            fn into_par_iter(self) -> Self::Iter {
                MultiZip { tuple: ($(self.$i.into_par_iter(),)+) }
            }
        }

        impl<'a, $($T),+> IntoParallelIterator for &'a ($($T,)+)
        where
            $($T: IntoParallelRefIterator<'a, Iter: IndexedParallelIterator>,)+
        {
            type Item = ($($T::Item,)+);
            type Iter = MultiZip<($($T::Iter,)+)>;
            fn into_par_iter(self) -> Self::Iter {
                MultiZip { tuple: ($(self.$i.par_iter(),)+) }
            }
        }

        impl<'a, $($T),+> IntoParallelIterator for &'a mut ($($T,)+)
        where
            $($T: IntoParallelRefMutIterator<'a, Iter: IndexedParallelIterator>,)+
        {
            type Item = ($($T::Item,)+);
            type Iter = MultiZip<($($T::Iter,)+)>;
            fn into_par_iter(self) -> Self::Iter {
                MultiZip { tuple: ($(self.$i.par_iter_mut(),)+) }
            }
        }

        indexed_drive!([$($T),+] MultiZip<($($T,)+)>, Item = ($($T::Item,)+),
            where [$($T: IndexedParallelIterator,)+]);

        impl<$($T),+> IndexedParallelIterator for MultiZip<($($T,)+)>
        where
            $($T: IndexedParallelIterator,)+
        {
            fn len(&self) -> usize {
                let lens = [$(self.tuple.$i.len()),+];
                lens.into_iter().min().expect("a part")
            }
            fn with_producer<CB>(self, cb: CB) -> CB::Output
            where
                CB: ProducerCallback<($($T::Item,)+)>,
            {
                let ($($t,)+) = self.tuple;
                zip_all!($($t),+)
                    .map(|zipped!($($t),+)| ($($t,)+))
                    .with_producer(cb)
            }
        }
    };
}

/// `multizip!` for each prefix of the list: every arity up to rayon's twelve.
macro_rules! multizip_each {
    ([$($done:tt),*]) => {};
    ([$($done:tt),*] $next:tt $(, $rest:tt)*) => {
        multizip!($($done,)* $next);
        multizip_each!([$($done,)* $next] $($rest),*);
    };
}

multizip_each!(
    [](A, a, 0),
    (B, b, 1),
    (C, c, 2),
    (D, d, 3),
    (E, e, 4),
    (F, f, 5),
    (G, g, 6),
    (H, h, 7),
    (I, i, 8),
    (J, j, 9),
    (M, m, 10),
    (L, l, 11)
);
