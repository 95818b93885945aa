//! Adapters that group items: `chunks` and `fold_chunks` (one item per run of `size`
//! items), and `by_uniform_blocks` and `by_exponential_blocks` (the loop run as a
//! sequence of parallel loops over consecutive blocks, rayon's).

use crate::par::engine::driver::{bridge_exact, IndexedProducer, Kernel, Producer};
use crate::par::iter::piece_state::{CloneOf, Identity};
use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator, ProducerCallback};

/// What a run of items becomes: a `Vec` (`chunks`) or a fold (`fold_chunks`).
trait ChunkOp<T>: Sync {
    type Out: Send;
    fn chunk(&self, items: impl Iterator<Item = T>) -> Self::Out;
}

/// `chunks`: the run, gathered.
struct Gather;

impl<T: Send> ChunkOp<T> for Gather {
    type Out = Vec<T>;
    fn chunk(&self, items: impl Iterator<Item = T>) -> Vec<T> {
        items.collect()
    }
}

/// `fold_chunks`: the run, folded from the identity.
struct FoldOp<ID, F> {
    identity: ID,
    f: F,
}

impl<T, ID: Identity<Out: Send>, F: Fn(ID::Out, T) -> ID::Out + Sync> ChunkOp<T> for FoldOp<ID, F> {
    type Out = ID::Out;
    fn chunk(&self, items: impl Iterator<Item = T>) -> ID::Out {
        items.fold(self.identity.make(), &self.f)
    }
}

/// Implements both iterator traits for a chunk adapter, given its `ChunkOp`.
macro_rules! chunk_adapter {
    ([$($g:ident),*] $name:ident<$($p:ident),*>, Item = $item:ty, |$s:ident| $op:expr, where [$($b:tt)*]) => {
        indexed_drive!([I: IndexedParallelIterator, $($g),*] $name<I, $($p),*>, Item = $item,
            where [$($b)*]);

        impl<I: IndexedParallelIterator, $($g),*> IndexedParallelIterator for $name<I, $($p),*>
        where
            $($b)*
        {
            fn len(&self) -> usize {
                self.base.len().div_ceil(self.size)
            }
            fn with_producer<CB: ProducerCallback<$item>>(self, cb: CB) -> CB::Output {
                let $s = self;
                let (base, size, op) = $op;
                base.with_producer(ChunkCallback { cb, size, op })
            }
        }
    };
}

adapter_struct!(
    /// Items gathered into `Vec`s of `size`, the last possibly shorter (see
    /// [`IndexedParallelIterator::chunks`]).
    Chunks<I> { size: usize }
);

chunk_adapter!([] Chunks<>, Item = Vec<I::Item>, |s| (s.base, s.size, Gather), where []);

adapter_struct!(
    /// Runs of `size` items folded from `identity()`, the last run possibly shorter (see
    /// [`IndexedParallelIterator::fold_chunks`]).
    FoldChunks<I, ID, F> { size: usize, identity: ID, f: F }
);

chunk_adapter!([ID, F, T] FoldChunks<ID, F>, Item = T,
    |s| (s.base, s.size, FoldOp { identity: s.identity, f: s.f }),
    where [ID: Fn() -> T + Sync + Send, F: Fn(T, I::Item) -> T + Sync + Send, T: Send]);

adapter_struct!(
    /// Runs of `size` items folded from clones of a value, the last run possibly shorter
    /// (see [`IndexedParallelIterator::fold_chunks_with`]).
    FoldChunksWith<I, T, F> { size: usize, init: T, f: F }
);

chunk_adapter!([T, F] FoldChunksWith<T, F>, Item = T,
    |s| (s.base, s.size, FoldOp { identity: CloneOf::new(s.init), f: s.f }),
    where [F: Fn(T, I::Item) -> T + Sync + Send, T: Send + Clone]);

struct ChunkCallback<CB, C> {
    cb: CB,
    size: usize,
    op: C,
}

impl<T, CB: ProducerCallback<C::Out>, C: ChunkOp<T>> ProducerCallback<T> for ChunkCallback<CB, C> {
    type Output = CB::Output;
    fn callback<P: IndexedProducer<Item = T>>(self, base: P) -> CB::Output {
        let (size, op) = (self.size, &self.op);
        self.cb.callback(ChunksProducer { base, size, op })
    }
}

struct ChunksProducer<'c, P, C> {
    base: P,
    size: usize,
    op: &'c C,
}

impl<'c, P: IndexedProducer, C: ChunkOp<P::Item>> Producer for ChunksProducer<'c, P, C> {
    type Item = C::Out;
    type IntoIter = ChunkIter<'c, P::IntoIter, C>;
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.base.len());
        let (l, r) = self.base.split_at(at);
        let (size, op) = (self.size, self.op);
        (
            ChunksProducer { base: l, size, op },
            ChunksProducer { base: r, size, op },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        ChunkIter {
            it: self.base.into_iter(),
            size: self.size,
            op: self.op,
        }
    }
}

impl<P: IndexedProducer, C: ChunkOp<P::Item>> IndexedProducer for ChunksProducer<'_, P, C> {}

/// The chunks of one block.
struct ChunkIter<'c, I, C> {
    it: I,
    size: usize,
    op: &'c C,
}

impl<I: ExactSizeIterator, C: ChunkOp<I::Item>> Iterator for ChunkIter<'_, I, C> {
    type Item = C::Out;
    fn next(&mut self) -> Option<C::Out> {
        let k = self.size.min(self.it.len());
        (k > 0).then(|| self.op.chunk(self.it.by_ref().take(k)))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.it.len().div_ceil(self.size);
        (n, Some(n))
    }
}

impl<I, C> DoubleEndedIterator for ChunkIter<'_, I, C>
where
    I: ExactSizeIterator + DoubleEndedIterator,
    C: ChunkOp<I::Item>,
{
    fn next_back(&mut self) -> Option<C::Out> {
        let left = self.it.len();
        let k = match left % self.size {
            0 => self.size.min(left),
            r => r,
        };
        if k == 0 {
            return None;
        }
        let mut run: Vec<I::Item> = self.it.by_ref().rev().take(k).collect();
        run.reverse();
        Some(self.op.chunk(run.into_iter()))
    }
}

impl<I: ExactSizeIterator, C: ChunkOp<I::Item>> ExactSizeIterator for ChunkIter<'_, I, C> {}

/// The loop as a sequence of parallel loops over blocks of a fixed size (see
/// [`IndexedParallelIterator::by_uniform_blocks`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adapters are lazy"]
pub struct UniformBlocks<I> {
    base: I,
    size: usize,
}

/// The loop as a sequence of parallel loops over blocks that double, from the number of
/// workers (see [`IndexedParallelIterator::by_exponential_blocks`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adapters are lazy"]
pub struct ExponentialBlocks<I> {
    base: I,
}

impl<I> UniformBlocks<I> {
    pub(crate) fn new(base: I, size: usize) -> Self {
        UniformBlocks { base, size }
    }
}

impl<I> ExponentialBlocks<I> {
    pub(crate) fn new(base: I) -> Self {
        ExponentialBlocks { base }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for UniformBlocks<I> {
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, kernel: K) -> K::Output {
        let size = self.size;
        self.base.with_producer(InBlocks {
            kernel,
            first: size,
            grow: 1,
        })
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.base.len())
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for ExponentialBlocks<I> {
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, kernel: K) -> K::Output {
        let first = crate::current_num_threads().max(1);
        self.base.with_producer(InBlocks {
            kernel,
            first,
            grow: 2,
        })
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.base.len())
    }
}

/// Runs a kernel over consecutive blocks, one parallel loop each, from `first` items,
/// each block `grow` times the last; stops early when the kernel is done.
struct InBlocks<K> {
    kernel: K,
    first: usize,
    grow: usize,
}

impl<T, K: Kernel<T>> ProducerCallback<T> for InBlocks<K> {
    type Output = K::Output;
    fn callback<P: IndexedProducer<Item = T>>(self, mut p: P) -> K::Output {
        let k = &self.kernel;
        let mut out: Option<K::Output> = None;
        let mut size = self.first;
        while p.len() > 0 && !k.done() {
            let n = size.min(p.len());
            let (block, rest) = p.split_at(n);
            let o = bridge_exact(block, k);
            out = Some(match out {
                Some(l) => k.combine(l, o),
                None => o,
            });
            p = rest;
            size = size.saturating_mul(self.grow);
        }
        out.unwrap_or_else(|| k.finish(k.start()))
    }
}
