//! Macros the adapters and sources share.

/// The `combine` and `done` of a kernel adapter: those of its `inner` kernel.
macro_rules! combine_and_done {
    () => {
        fn combine(&self, l: K::Output, r: K::Output) -> K::Output {
            self.inner.combine(l, r)
        }
        fn done(&self) -> bool {
            self.inner.done()
        }
    };
}

/// Defines a struct `$name { base, $field }` with `new`.
macro_rules! adapter_struct {
    ($(#[$doc:meta])* $name:ident<I $(, $p:ident)*> { $($field:ident: $ty:ty),* }) => {
        $(#[$doc])*
        #[must_use = "iterator adapters are lazy"]
        pub struct $name<I $(, $p)*> {
            base: I,
            $($field: $ty,)*
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
        impl<$($g)*> ParallelIterator for $ty $(where $($b)*)? {
            type Item = $item;
            fn drive<K: Kernel<$item>>(self, kernel: K) -> K::Output {
                bridge(self.producer(), &kernel)
            }
            fn opt_len(&self) -> Option<usize> {
                Some(self.len_())
            }
            fn with_producer_or_self<CB: $crate::par::traits::IndexedOrNot<$item>>(self, cb: CB) -> CB::Output {
                self.with_producer($crate::par::traits::AsIndexed(cb))
            }
        }

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
