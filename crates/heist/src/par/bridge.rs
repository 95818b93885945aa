//! `par_bridge`: a sequential iterator shared by the pieces of a loop, each pulling its
//! blocks from it under a lock (rayon's `ParallelBridge`). The loop's length is a
//! budget, not a count: it is cut like any other, and a piece ends when the source is
//! empty.

use super::driver::{bridge, Kernel, Producer};
use super::traits::ParallelIterator;
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
            },
            &kernel,
        )
    }
}

struct BridgeProducer<'a, I> {
    src: &'a Shared<I>,
    budget: usize,
}

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
        let lo = BridgeProducer { src, budget: index };
        (
            lo,
            BridgeProducer {
                src,
                budget: self.budget - index,
            },
        )
    }
    fn into_iter(self) -> BridgeBlock<'a, I> {
        BridgeBlock {
            src: self.src,
            left: self.budget,
        }
    }
}

/// Pulls up to `left` items from the shared source, one lock each.
struct BridgeBlock<'a, I> {
    src: &'a Shared<I>,
    left: usize,
}

impl<I: Iterator> Iterator for BridgeBlock<'_, I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.left == 0 || self.src.empty.load(Relaxed) {
            return None;
        }
        self.left -= 1;
        let next = self
            .src
            .iter
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .next();
        if next.is_none() {
            self.src.empty.store(true, Relaxed);
        }
        next
    }
}
