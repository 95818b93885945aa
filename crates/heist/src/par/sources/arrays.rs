//! Arrays moved into a parallel iterator (rayon's `array::IntoIter`): the items are
//! moved out of the array in place, with no `Vec` in between.

use crate::par::engine::driver::Kernel;
use crate::par::iter::into::IntoParallelIterator;
use crate::par::iter::traits::{IndexedParallelIterator, ParallelIterator, ProducerCallback};
use crate::par::sources::vec_slice::DrainProducer;
use std::mem::ManuallyDrop;

/// A parallel iterator that moves the items out of an array.
#[derive(Debug, Clone)]
pub struct IntoIter<T, const N: usize> {
    array: [T; N],
}

impl<T: Send, const N: usize> IntoParallelIterator for [T; N] {
    type Iter = IntoIter<T, N>;
    type Item = T;
    fn into_par_iter(self) -> IntoIter<T, N> {
        IntoIter { array: self }
    }
}

indexed_drive!([T: Send, const N: usize] IntoIter<T, N>, Item = T, where []);

impl<T: Send, const N: usize> IndexedParallelIterator for IntoIter<T, N> {
    fn len(&self) -> usize {
        N
    }
    fn with_producer<CB: ProducerCallback<T>>(self, cb: CB) -> CB::Output {
        // The producer takes the items over: it moves out or drops each once, also if
        // `cb` unwinds, so the array itself is never dropped.
        let mut array = ManuallyDrop::new(self.array);
        cb.callback(DrainProducer::new(&mut array[..]))
    }
}
