//! Macros the adapters and sources share.

/// The `combine`, `done` and the early stops of a kernel adapter whose output is its
/// `inner` kernel's: those of `inner`. Its own `full` asks `inner` about the part of its
/// accumulator that `$inner_acc` picks out (`|acc| acc` if it is the whole). An adapter
/// that `holds` its items until its piece ends (`fold`) asks for eager pieces before a
/// search (`Kernel::EAGER`).
macro_rules! combine_and_done {
    (holds |$acc:ident| $inner_acc:expr) => {
        combine_and_done!(@common);
        fn full(&self, $acc: &Self::Acc) -> bool {
            self.inner.full($inner_acc)
        }
        const EAGER: bool = K::SEARCH || K::EAGER;
    };
    (|$acc:ident| $inner_acc:expr) => {
        combine_and_done!();
        fn full(&self, $acc: &Self::Acc) -> bool {
            self.inner.full($inner_acc)
        }
    };
    () => {
        combine_and_done!(@common);
        const EAGER: bool = K::EAGER;
    };
    (@common) => {
        fn combine(&self, l: K::Output, r: K::Output) -> K::Output {
            self.inner.combine(l, r)
        }
        fn done(&self) -> bool {
            self.inner.done()
        }
        const FROM_BACK: bool = K::FROM_BACK;
        const SEARCH: bool = K::SEARCH;
        fn output_full(&self, out: &K::Output) -> bool {
            self.inner.output_full(out)
        }
    };
}

/// Implements `Kernel<$t>` for a kernel adapter `$k` with an `inner` kernel: its `fold`
/// turns a block of `$t` into items of the inner kernel with `$adapt`; it is done when
/// the inner kernel is, or when `$done` holds.
macro_rules! kernel_adapter {
    (
        $k:ident<$($kp:tt),*>, [$($g:tt)*], T = $t:ty, where [$($bounds:tt)*],
        |$s:ident, $items:ident| $adapt:expr $(, done = |$ds:ident| $done:expr)?
    ) => {
        impl<$($g)*> Kernel<$t> for $k<$($kp),*>
        where
            $($bounds)*
        {
            type Acc = K::Acc;
            type Output = K::Output;
            fn start(&self) -> K::Acc {
                self.inner.start()
            }
            fn fold<It: Iterator<Item = $t>>(&self, acc: K::Acc, $items: It) -> K::Acc {
                let $s = self;
                self.inner.fold(acc, $adapt)
            }
            fn finish(&self, acc: K::Acc) -> K::Output {
                self.inner.finish(acc)
            }
            fn combine(&self, l: K::Output, r: K::Output) -> K::Output {
                self.inner.combine(l, r)
            }
            fn done(&self) -> bool {
                self.inner.done() $(|| { let $ds = self; $done })?
            }
            inner_stops!();
        }
    };
}

/// The early stops of a kernel adapter whose accumulator and output are its `inner`
/// kernel's: `inner`'s.
macro_rules! inner_stops {
    () => {
        const FROM_BACK: bool = K::FROM_BACK;
        const SEARCH: bool = K::SEARCH;
        const EAGER: bool = K::EAGER;
        fn full(&self, acc: &K::Acc) -> bool {
            self.inner.full(acc)
        }
        fn output_full(&self, out: &K::Output) -> bool {
            self.inner.output_full(out)
        }
    };
}

/// Defines a struct `$name { base, $field }` with `new`.
macro_rules! adapter_struct {
    ($(#[$doc:meta])* $name:ident<I $(, $p:ident)*> { $($field:ident: $ty:ty),* }) => {
        $(#[$doc])*
        #[derive(Clone)]
        #[must_use = "iterator adapters are lazy"]
        pub struct $name<I $(, $p)*> {
            base: I,
            $($field: $ty,)*
        }

        impl<I: std::fmt::Debug $(, $p)*> std::fmt::Debug for $name<I $(, $p)*> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("base", &self.base).finish()
            }
        }

        impl<I $(, $p)*> $name<I $(, $p)*> {
            pub(crate) fn new(base: I, $($field: $ty),*) -> Self {
                $name { base, $($field),* }
            }
        }
    };
}

/// Implements `ParallelIterator` and `IndexedParallelIterator` for a source type whose
/// `producer(self)` gives its producer and whose `len(&self)` its length.
macro_rules! source {
    ([$($g:tt)*] $ty:ty, Item = $item:ty $(, where [$($b:tt)*])?) => {
        indexed_drive!([$($g)*] $ty, Item = $item, where [$($($b)*)?]);

        impl<$($g)*> IndexedParallelIterator for $ty $(where $($b)*)? {
            fn len(&self) -> usize {
                self.len_()
            }
            fn with_producer<CB: ProducerCallback<$item>>(self, cb: CB) -> CB::Output {
                cb.callback(self.producer())
            }
        }
    };
}

/// `with_producers($a, $b, ..)` handing `$cb` the producer that `$make` builds from the
/// producers `$pa` and `$pb` of the two sides, whose items are of one type (`chain`,
/// `interleave`).
macro_rules! with_pair_producer {
    ($a:expr, $b:expr, $cb:expr, |$pa:ident, $pb:ident| $make:expr) => {{
        use $crate::par::engine::driver::IndexedProducer;
        use $crate::par::iter::indexed::{with_producers, PairCallback};
        use $crate::par::iter::traits::ProducerCallback;
        struct Cb<CB>(CB);
        impl<T, CB: ProducerCallback<T>> PairCallback<T, T> for Cb<CB> {
            type Output = CB::Output;
            fn callback<PA, PB>(self, $pa: PA, $pb: PB) -> CB::Output
            where
                PA: IndexedProducer<Item = T>,
                PB: IndexedProducer<Item = T>,
            {
                self.0.callback($make)
            }
        }
        with_producers($a, $b, Cb($cb))
    }};
}

/// Implements `ParallelIterator` for an indexed iterator by bridging its producer.
macro_rules! indexed_drive {
    ([$($g:tt)*] $ty:ty, Item = $item:ty, where [$($bounds:tt)*]) => {
        impl<$($g)*> ParallelIterator for $ty
        where
            $($bounds)*
        {
            type Item = $item;
            fn drive<K: Kernel<$item>>(self, kernel: K) -> K::Output {
                self.with_producer($crate::par::iter::traits::Bridge(kernel))
            }
            fn opt_len(&self) -> Option<usize> {
                Some(IndexedParallelIterator::len(self))
            }
            fn with_producer_or_self<CB>(self, cb: CB) -> CB::Output
            where
                CB: $crate::par::iter::traits::IndexedOrNot<$item>,
            {
                self.with_producer($crate::par::iter::traits::AsIndexed(cb))
            }
        }
    };
}

/// The `into_iter` and `fold_block` of a producer that is itself the iterator over its
/// items (a walk that cannot be cut at an index, only handed out in parts).
macro_rules! own_iterator {
    ($item:ty) => {
        fn into_iter(self) -> Self {
            self
        }
        fn fold_block<K: Kernel<$item>>(
            mut self,
            n: usize,
            kernel: &K,
            acc: K::Acc,
        ) -> (K::Acc, Self) {
            let acc = $crate::par::iter::consumers::fold_exactly(&mut self, n, kernel, acc);
            (acc, self)
        }
    };
}

/// `Clone` for views of a shared slice, field by field (rayon's are `Clone` whatever
/// the items; a derive would ask `T: Clone`).
macro_rules! clone_views {
    ($($name:ident<$($p:ident),*> { $($field:ident),* });* $(;)?) => {$(
        impl<T $(, $p: Clone)*> Clone for $name<'_, T $(, $p)*> {
            fn clone(&self) -> Self {
                $name { $($field: self.$field.clone()),* }
            }
        }
    )*};
}
