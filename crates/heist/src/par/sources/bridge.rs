//! `par_bridge`: a sequential iterator shared by the pieces of a loop, each pulling its
//! blocks from it in batches of up to `BATCH` items a lock (rayon's `ParallelBridge`). The loop's length is a
//! budget, not a count: it is cut like any other, and a piece ends when the source is
//! empty.

use crate::par::engine::driver::{bridge, Kernel, Producer};
use crate::par::iter::traits::ParallelIterator;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};

/// Turns a sequential iterator into a parallel one (rayon's `ParallelBridge`).
pub trait ParallelBridge: Sized {
    /// A parallel iterator over this iterator's items, in no particular order.
    fn par_bridge(self) -> IterBridge<Self>;
}

impl<T: Iterator + Send> ParallelBridge for T
where
    T::Item: Send,
{
    fn par_bridge(self) -> IterBridge<Self> {
        IterBridge { iter: self }
    }
}

/// A sequential iterator run in parallel (see [`ParallelBridge::par_bridge`]).
#[derive(Debug)]
pub struct IterBridge<I> {
    iter: I,
}

/// The source all pieces pull from.
struct Shared<I> {
    iter: Mutex<I>,
    empty: AtomicBool,
}

impl<I: Iterator + Send> ParallelIterator for IterBridge<I>
where
    I::Item: Send,
{
    type Item = I::Item;
    fn drive<K: Kernel<I::Item>>(self, kernel: K) -> K::Output {
        let shared = Shared {
            iter: Mutex::new(self.iter),
            empty: AtomicBool::new(false),
        };
        let budget = usize::MAX / 2;
        bridge(
            BridgeProducer {
                src: &shared,
                budget,
                batch: Vec::new(),
            },
            &kernel,
        )
    }
}

struct BridgeProducer<'a, I: Iterator> {
    src: &'a Shared<I>,
    budget: usize,
    /// Items pulled from the source and not yet folded; empty between blocks.
    batch: Vec<I::Item>,
}

/// The most items a piece pulls from the source under one lock.
const BATCH: usize = 256;

impl<'a, I: Iterator + Send> Producer for BridgeProducer<'a, I>
where
    I::Item: Send,
{
    type Item = I::Item;
    type IntoIter = BridgeBlock<'a, I>;
    fn len(&self) -> usize {
        if self.src.empty.load(Relaxed) {
            0
        } else {
            self.budget
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let src = self.src;
        let lo = BridgeProducer {
            src,
            budget: index,
            batch: self.batch,
        };
        let hi = BridgeProducer {
            src,
            budget: self.budget - index,
            batch: Vec::new(),
        };
        (lo, hi)
    }
    fn into_iter(self) -> Self::IntoIter {
        BridgeBlock {
            src: self.src,
            batch: self.batch.into_iter(),
            left: self.budget,
        }
    }
    fn fold_block<K: Kernel<I::Item>>(
        mut self,
        n: usize,
        kernel: &K,
        acc: K::Acc,
    ) -> (K::Acc, Self) {
        let mut acc = acc;
        let mut left = n;
        while left > 0 && self.src.pull(&mut self.batch, left.min(BATCH)) {
            left -= self.batch.len();
            acc = kernel.fold(acc, self.batch.drain(..));
        }
        self.budget -= n;
        (acc, self)
    }
}

impl<I: Iterator> Shared<I> {
    /// Moves up to `k` items into `batch` under one lock; false once the source is dry.
    fn pull(&self, batch: &mut Vec<I::Item>, k: usize) -> bool {
        if self.empty.load(Relaxed) {
            return false;
        }
        let mut iter = self.iter.lock().unwrap_or_else(PoisonError::into_inner);
        batch.extend(iter.by_ref().take(k));
        if batch.len() < k {
            self.empty.store(true, Relaxed);
        }
        !batch.is_empty()
    }
}

/// The items of a block: what the piece had pulled, then batches from the source, up to
/// `left` items in all.
struct BridgeBlock<'a, I: Iterator> {
    src: &'a Shared<I>,
    batch: std::vec::IntoIter<I::Item>,
    left: usize,
}

impl<I: Iterator> Iterator for BridgeBlock<'_, I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.left == 0 {
            return None;
        }
        if self.batch.len() == 0 {
            let mut more = Vec::new();
            if !self.src.pull(&mut more, self.left.min(BATCH)) {
                return None;
            }
            self.batch = more.into_iter();
        }
        self.left -= 1;
        self.batch.next()
    }
}
