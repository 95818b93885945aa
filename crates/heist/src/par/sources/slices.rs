//! Slices in parallel: `par_chunks(_mut/_exact)`, `par_windows` and the parallel sorts
//! (rayon's `ParallelSlice` and `ParallelSliceMut`).

use crate::par::engine::driver::{IndexedProducer, Kernel, Producer};
use crate::par::iter::into::IntoParallelRefMutIterator;
use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator, ProducerCallback};
pub use crate::par::sources::slice_separated::{
    ChunkBy, ChunkByMut, Split, SplitInclusive, SplitInclusiveMut, SplitMut,
};
use crate::par::sources::sort::par_sort;
use std::cmp::Ordering;

/// `ParallelSliceMut`'s three sorts (by `Ord`, by `compare`, by a key) for `$stable`:
/// all three run [`par_sort`]; `$how` says in their docs how stable they are.
macro_rules! sorts {
    ($stable:literal, $how:literal, $by_ord:ident, $by:ident, $by_key:ident) => {
        #[doc = concat!("Sorts", $how, " by `Ord`.")]
        fn $by_ord(&mut self)
        where
            T: Ord,
        {
            par_sort(self.as_parallel_slice_mut(), &T::cmp, $stable, true);
        }

        #[doc = concat!("Sorts", $how, " by `compare`. If `compare` is not a total order,")]
        /// the order of the items is unspecified, but the sort does not panic (as rayon
        /// promises).
        fn $by<F>(&mut self, compare: F)
        where
            F: Fn(&T, &T) -> Ordering + Sync,
        {
            par_sort(self.as_parallel_slice_mut(), &compare, $stable, false);
        }

        #[doc = concat!("Sorts", $how, " by a key.")]
        fn $by_key<K, F>(&mut self, f: F)
        where
            K: Ord,
            F: Fn(&T) -> K + Sync,
        {
            let by_key = |a: &T, b: &T| f(a).cmp(&f(b));
            par_sort(self.as_parallel_slice_mut(), &by_key, $stable, true);
        }
    };
}

/// `chunk_size`, which must not be 0.
fn chunk_len(chunk_size: usize) -> usize {
    assert!(chunk_size != 0, "chunk_size must not be zero");
    chunk_size
}

/// Parallel views of a shared slice (rayon's `ParallelSlice`).
pub trait ParallelSlice<T: Sync> {
    /// The slice.
    fn as_parallel_slice(&self) -> &[T];

    /// Chunks of `chunk_size` items, the last possibly shorter.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_chunks(&self, chunk_size: usize) -> Chunks<'_, T> {
        Chunks {
            slice: self.as_parallel_slice(),
            size: chunk_len(chunk_size),
        }
    }

    /// Chunks of exactly `chunk_size` items; the rest is left out (see
    /// [`ChunksExact::remainder`]).
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_chunks_exact(&self, chunk_size: usize) -> ChunksExact<'_, T> {
        let s = self.as_parallel_slice();
        let (slice, rem) = s.split_at(s.len() - s.len() % chunk_len(chunk_size));
        ChunksExact {
            slice,
            rem,
            size: chunk_size,
        }
    }

    /// Every window of `window_size` consecutive items.
    ///
    /// # Panics
    /// If `window_size` is 0.
    fn par_windows(&self, window_size: usize) -> Windows<'_, T> {
        assert!(window_size != 0, "window_size must not be zero");
        Windows {
            slice: self.as_parallel_slice(),
            size: window_size,
        }
    }

    /// Every window of `N` consecutive items, as an array (`N` must not be 0).
    ///
    /// ```
    /// use heist::prelude::*;
    /// let w: Vec<&[i32; 2]> = [1, 2, 3].par_array_windows().collect();
    /// assert_eq!(w, [&[1, 2], &[2, 3]]);
    /// ```
    fn par_array_windows<const N: usize>(&self) -> ArrayWindows<'_, T, N> {
        ArrayWindows {
            slice: self.as_parallel_slice(),
        }
    }

    /// Chunks of `chunk_size` items from the end, the last (the slice's first items)
    /// possibly shorter.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_rchunks(&self, chunk_size: usize) -> RChunks<'_, T> {
        RChunks {
            slice: self.as_parallel_slice(),
            size: chunk_len(chunk_size),
        }
    }

    /// Chunks of exactly `chunk_size` items from the end; the first items that fill no
    /// chunk are left out (see [`RChunksExact::remainder`]).
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_rchunks_exact(&self, chunk_size: usize) -> RChunksExact<'_, T> {
        let s = self.as_parallel_slice();
        let (rem, slice) = s.split_at(s.len() % chunk_len(chunk_size));
        RChunksExact {
            slice,
            rem,
            size: chunk_size,
        }
    }

    /// The parts between items for which `separator` holds (as `slice::split`).
    fn par_split<P>(&self, separator: P) -> Split<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        Split::new(self.as_parallel_slice(), separator)
    }

    /// The parts, each with the separator that ends it (as `slice::split_inclusive`).
    fn par_split_inclusive<P>(&self, separator: P) -> SplitInclusive<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitInclusive::new(self.as_parallel_slice(), separator)
    }

    /// Runs of items where `pred` holds for each two neighbours (as `slice::chunk_by`).
    fn par_chunk_by<F>(&self, pred: F) -> ChunkBy<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Send + Sync,
    {
        ChunkBy::new(self.as_parallel_slice(), pred)
    }
}

impl<T: Sync> ParallelSlice<T> for [T] {
    fn as_parallel_slice(&self) -> &[T] {
        self
    }
}

/// Parallel views and sorts of a mutable slice (rayon's `ParallelSliceMut`).
pub trait ParallelSliceMut<T: Send> {
    /// The slice.
    fn as_parallel_slice_mut(&mut self) -> &mut [T];

    /// Mutable chunks of `chunk_size` items, the last possibly shorter.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_chunks_mut(&mut self, chunk_size: usize) -> ChunksMut<'_, T> {
        ChunksMut {
            slice: self.as_parallel_slice_mut(),
            size: chunk_len(chunk_size),
        }
    }

    /// Mutable chunks of exactly `chunk_size` items; the rest is left out.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_chunks_exact_mut(&mut self, chunk_size: usize) -> ChunksExactMut<'_, T> {
        let s = self.as_parallel_slice_mut();
        let n = s.len() - s.len() % chunk_len(chunk_size);
        let (slice, rem) = s.split_at_mut(n);
        ChunksExactMut {
            slice,
            rem,
            size: chunk_size,
        }
    }

    /// Mutable chunks of `chunk_size` items from the end, the last possibly shorter.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_rchunks_mut(&mut self, chunk_size: usize) -> RChunksMut<'_, T> {
        RChunksMut {
            slice: self.as_parallel_slice_mut(),
            size: chunk_len(chunk_size),
        }
    }

    /// Mutable chunks of exactly `chunk_size` items from the end; the first items that
    /// fill no chunk are left out.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_rchunks_exact_mut(&mut self, chunk_size: usize) -> RChunksExactMut<'_, T> {
        let s = self.as_parallel_slice_mut();
        let (rem, slice) = s.split_at_mut(s.len() % chunk_len(chunk_size));
        RChunksExactMut {
            slice,
            rem,
            size: chunk_size,
        }
    }

    /// The mutable parts between items for which `separator` holds.
    fn par_split_mut<P>(&mut self, separator: P) -> SplitMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitMut::new(self.as_parallel_slice_mut(), separator)
    }

    /// The mutable parts, each with the separator that ends it.
    fn par_split_inclusive_mut<P>(&mut self, separator: P) -> SplitInclusiveMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitInclusiveMut::new(self.as_parallel_slice_mut(), separator)
    }

    /// Mutable runs of items where `pred` holds for each two neighbours.
    fn par_chunk_by_mut<F>(&mut self, pred: F) -> ChunkByMut<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Send + Sync,
    {
        ChunkByMut::new(self.as_parallel_slice_mut(), pred)
    }

    /// Sorts stably by a key that is computed once per item (in parallel), as
    /// `slice::sort_by_cached_key`.
    fn par_sort_by_cached_key<K, F>(&mut self, f: F)
    where
        F: Fn(&T) -> K + Sync,
        K: Ord + Send,
    {
        let v = self.as_parallel_slice_mut();
        let mut keys: Vec<(K, usize)> = v
            .par_iter_mut()
            .enumerate()
            .map(|(i, x)| (f(x), i))
            .collect();
        keys.par_sort_unstable();
        permute(v, &mut keys);
    }

    sorts!(true, " stably", par_sort, par_sort_by, par_sort_by_key);
    sorts!(
        false,
        ", not necessarily stably,",
        par_sort_unstable,
        par_sort_unstable_by,
        par_sort_unstable_by_key
    );
}

impl<T: Send> ParallelSliceMut<T> for [T] {
    fn as_parallel_slice_mut(&mut self) -> &mut [T] {
        self
    }
}

/// Moves `v[keys[i].1]` to place `i`, following each cycle of the permutation (what
/// `slice::sort_by_cached_key` does after sorting its keys).
fn permute<T, K>(v: &mut [T], keys: &mut [(K, usize)]) {
    for i in 0..v.len() {
        let mut from = keys[i].1;
        while from < i {
            from = keys[from].1;
        }
        keys[i].1 = from;
        v.swap(i, from);
    }
}

/// Defines a chunked slice source: its parallel iterator, producer and both traits.
macro_rules! chunk_source {
    (
        $(#[$doc:meta])* $name:ident, $prod:ident, [$($mutb:tt)*], $bound:ident, $item:ty,
        len = |$s:ident, $n:ident| $len:expr,
        split = |$x:ident, $i:ident, $sz:ident| $split:expr,
        iter = $iter:ident -> $iter_ty:ty
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'a, T> {
            slice: &'a $($mutb)* [T],
            size: usize,
        }

        indexed_drive!(['a, T: $bound] $name<'a, T>, Item = $item, where []);

        impl<'a, T: $bound> IndexedParallelIterator for $name<'a, T> {
            fn len(&self) -> usize {
                let ($s, $n) = (&self.slice, self.size);
                $len
            }
            fn with_producer<CB: ProducerCallback<$item>>(self, cb: CB) -> CB::Output {
                cb.callback($prod { slice: self.slice, size: self.size })
            }
        }

        struct $prod<'a, T> {
            slice: &'a $($mutb)* [T],
            size: usize,
        }

        impl<'a, T: $bound> Producer for $prod<'a, T> {
            type Item = $item;
            type IntoIter = $iter_ty;
            fn len(&self) -> usize {
                let ($s, $n) = (&self.slice, self.size);
                $len
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let ($x, $i, $sz) = (self.slice, index, self.size);
                let (l, r) = $split;
                ($prod { slice: l, size: $sz }, $prod { slice: r, size: $sz })
            }
            fn into_iter(self) -> Self::IntoIter {
                self.slice.$iter(self.size)
            }
        }

        impl<T: $bound> IndexedProducer for $prod<'_, T> {}
    };
}

chunk_source!(
    /// Chunks of a slice (see [`ParallelSlice::par_chunks`]).
    Chunks, ChunksProducer, [], Sync, &'a [T],
    len = |s, n| s.len().div_ceil(n),
    split = |x, i, sz| x.split_at((i * sz).min(x.len())),
    iter = chunks -> std::slice::Chunks<'a, T>
);

chunk_source!(
    /// Mutable chunks of a slice (see [`ParallelSliceMut::par_chunks_mut`]).
    ChunksMut, ChunksMutProducer, [mut], Send, &'a mut [T],
    len = |s, n| s.len().div_ceil(n),
    split = |x, i, sz| x.split_at_mut((i * sz).min(x.len())),
    iter = chunks_mut -> std::slice::ChunksMut<'a, T>
);

chunk_source!(
    /// Windows of a slice (see [`ParallelSlice::par_windows`]).
    Windows, WindowsProducer, [], Sync, &'a [T],
    len = |s, n| (s.len() + 1).saturating_sub(n),
    split = |x, i, sz| (&x[..(i + sz - 1).min(x.len())], &x[i.min(x.len())..]),
    iter = windows -> std::slice::Windows<'a, T>
);

/// Windows of a slice as arrays (see [`ParallelSlice::par_array_windows`]).
#[derive(Debug)]
pub struct ArrayWindows<'a, T, const N: usize> {
    slice: &'a [T],
}

impl<T, const N: usize> Clone for ArrayWindows<'_, T, N> {
    fn clone(&self) -> Self {
        ArrayWindows { slice: self.slice }
    }
}

indexed_drive!(['a, T: Sync, const N: usize] ArrayWindows<'a, T, N>, Item = &'a [T; N], where []);

impl<'a, T: Sync, const N: usize> IndexedParallelIterator for ArrayWindows<'a, T, N> {
    fn len(&self) -> usize {
        self.slice.len().saturating_sub(const { N - 1 })
    }
    fn with_producer<CB: ProducerCallback<&'a [T; N]>>(self, cb: CB) -> CB::Output {
        let windows = Windows {
            slice: self.slice,
            size: const { N - 1 } + 1,
        };
        windows.map(as_array::<T, N>).with_producer(cb)
    }
}

/// A window of `N` items as an array.
fn as_array<T, const N: usize>(window: &[T]) -> &[T; N] {
    window.try_into().expect("a window holds N items")
}

chunk_source!(
    /// Chunks of a slice from its end (see [`ParallelSlice::par_rchunks`]).
    RChunks, RChunksProducer, [], Sync, &'a [T],
    len = |s, n| s.len().div_ceil(n),
    split = |x, i, sz| {
        let (l, r) = x.split_at(x.len().saturating_sub(i * sz));
        (r, l)
    },
    iter = rchunks -> std::slice::RChunks<'a, T>
);

chunk_source!(
    /// Mutable chunks of a slice from its end (see [`ParallelSliceMut::par_rchunks_mut`]).
    RChunksMut, RChunksMutProducer, [mut], Send, &'a mut [T],
    len = |s, n| s.len().div_ceil(n),
    split = |x, i, sz| {
        let k = x.len().saturating_sub(i * sz);
        let (l, r) = x.split_at_mut(k);
        (r, l)
    },
    iter = rchunks_mut -> std::slice::RChunksMut<'a, T>
);

/// Defines an exact-chunks source over the part of the slice that chunks cover.
macro_rules! exact_source {
    ($(#[$doc:meta])* $name:ident, $inner:ident, [$($mutb:tt)*], $bound:ident, $item:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'a, T> {
            slice: &'a $($mutb)* [T],
            rem: &'a $($mutb)* [T],
            size: usize,
        }

        indexed_drive!(['a, T: $bound] $name<'a, T>, Item = $item, where []);

        impl<'a, T: $bound> IndexedParallelIterator for $name<'a, T> {
            fn len(&self) -> usize {
                self.slice.len() / self.size
            }
            fn with_producer<CB: ProducerCallback<$item>>(self, cb: CB) -> CB::Output {
                $inner { slice: self.slice, size: self.size }.with_producer(cb)
            }
        }
    };
}

exact_source!(
    /// Chunks of exactly one size (see [`ParallelSlice::par_chunks_exact`]).
    ChunksExact, Chunks, [], Sync, &'a [T]
);

exact_source!(
    /// Mutable chunks of exactly one size (see [`ParallelSliceMut::par_chunks_exact_mut`]).
    ChunksExactMut, ChunksMut, [mut], Send, &'a mut [T]
);

exact_source!(
    /// Chunks of exactly one size from the end (see [`ParallelSlice::par_rchunks_exact`]).
    RChunksExact, RChunks, [], Sync, &'a [T]
);

exact_source!(
    /// Mutable chunks of exactly one size from the end (see
    /// [`ParallelSliceMut::par_rchunks_exact_mut`]).
    RChunksExactMut, RChunksMut, [mut], Send, &'a mut [T]
);

clone_views!(
    Chunks<> { slice, size };
    Windows<> { slice, size };
    RChunks<> { slice, size };
    ChunksExact<> { slice, rem, size };
    RChunksExact<> { slice, rem, size };
);

impl<'a, T> RChunksExact<'a, T> {
    /// The first items, that fill no chunk.
    pub fn remainder(&self) -> &'a [T] {
        self.rem
    }
}

impl<'a, T> RChunksExactMut<'a, T> {
    /// The first items, that fill no chunk.
    pub fn into_remainder(self) -> &'a mut [T] {
        self.rem
    }

    /// The first items, that fill no chunk. (borrowed through `self`).
    pub fn remainder(&mut self) -> &mut [T] {
        self.rem
    }

    /// The first items, that fill no chunk.
    pub fn take_remainder(&mut self) -> &'a mut [T] {
        std::mem::take(&mut self.rem)
    }
}

impl<'a, T> ChunksExact<'a, T> {
    /// The items after the last whole chunk.
    pub fn remainder(&self) -> &'a [T] {
        self.rem
    }
}

impl<'a, T> ChunksExactMut<'a, T> {
    /// The items after the last whole chunk.
    pub fn into_remainder(self) -> &'a mut [T] {
        self.rem
    }

    /// The items after the last whole chunk. (borrowed through `self`).
    pub fn remainder(&mut self) -> &mut [T] {
        self.rem
    }

    /// The items after the last whole chunk.
    pub fn take_remainder(&mut self) -> &'a mut [T] {
        std::mem::take(&mut self.rem)
    }
}
