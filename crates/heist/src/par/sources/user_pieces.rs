//! rayon's `split`: a parallel iterator over the pieces that a user's function cuts a
//! value into. The pieces are the loop's items, so a piece is cut only before it is
//! handed out: the owner cuts the piece it starts with a few times up front, as many
//! levels as it takes to give every worker one (a budget that halves with each level),
//! and then only when a thief asks (the lazy splitting of Embracing Explicit
//! Communication in Work-Stealing Runtime Systems, §5.3). A piece that goes to a thief
//! gets a fresh budget, so that the thief can in turn feed the others. Called outside
//! the pool, the loop moves onto a worker first (as rayon's does): the budget is the
//! pool's size, and a piece handed out whole would leave no one to share it with.

use crate::par::engine::driver::{on_worker, run, Kernel, Producer};
use crate::par::iter::traits::ParallelIterator;
use std::fmt;

/// The pieces of a value cut by a function (see [`split`]).
#[derive(Clone)]
#[must_use = "iterators are lazy"]
pub struct Split<D, S> {
    data: D,
    splitter: S,
}

impl<D: fmt::Debug, S> fmt::Debug for Split<D, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Split").field("data", &self.data).finish()
    }
}

/// The pieces that `splitter` cuts `data` into, in parallel (rayon's `split`).
///
/// `splitter` cuts a piece in two, `(left, Some(right))`, or says it cannot be cut,
/// `(piece, None)`. Pieces are cut while there are idle workers to give them to, so how
/// many there are depends on timing; they come in order, left before right.
///
/// ```
/// use heist::prelude::*;
/// use std::ops::Range;
///
/// fn halve(r: Range<usize>) -> (Range<usize>, Option<Range<usize>>) {
///     if r.len() <= 1 {
///         return (r, None);
///     }
///     let mid = r.start + r.len() / 2;
///     (r.start..mid, Some(mid..r.end))
/// }
///
/// let pieces: Vec<Range<usize>> = heist::iter::split(0..4096, halve).collect();
/// assert!(pieces.iter().all(|r| r.len().is_power_of_two()));
/// assert_eq!(pieces.iter().flat_map(|r| r.clone()).collect::<Vec<_>>(), (0..4096).collect::<Vec<_>>());
/// ```
pub fn split<D, S>(data: D, splitter: S) -> Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync,
{
    Split { data, splitter }
}

impl<D, S> ParallelIterator for Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync + Send,
{
    type Item = D;
    /// Runs on a worker (of the pool that serves this thread), whose pool size sets the
    /// budget of the first piece.
    fn drive<K: Kernel<D>>(self, kernel: K) -> K::Output {
        let kernel = &kernel;
        on_worker(move |w| {
            let budget = w.workers();
            let first = Piece {
                data: self.data,
                budget,
                whole: false,
            };
            let p = Pieces {
                stack: vec![first],
                splitter: &self.splitter,
                budget,
            };
            run(w, p, kernel)
        })
    }
}

/// A piece not yet handed out.
struct Piece<D> {
    data: D,
    /// How many more levels the owner may cut it by itself.
    budget: usize,
    /// Whether the splitter said it cannot be cut.
    whole: bool,
}

/// The producer of [`Split`]: the pieces still to come, the next on top.
struct Pieces<'s, D, S> {
    stack: Vec<Piece<D>>,
    splitter: &'s S,
    /// The budget of a piece that goes to a thief.
    budget: usize,
}

impl<D: Send, S: Fn(D) -> (D, Option<D>) + Sync> Iterator for Pieces<'_, D, S> {
    type Item = D;
    /// The next piece, cut first as far as its budget allows.
    fn next(&mut self) -> Option<D> {
        let mut piece = self.stack.pop()?;
        while piece.budget > 0 && !piece.whole {
            let (left, right) = (self.splitter)(piece.data);
            piece.data = left;
            piece.whole = right.is_none();
            piece.budget /= 2;
            self.stack.extend(right.map(|data| Piece {
                data,
                budget: piece.budget,
                whole: false,
            }));
        }
        Some(piece.data)
    }
}

impl<D: Send, S: Fn(D) -> (D, Option<D>) + Sync> Producer for Pieces<'_, D, S> {
    type Item = D;
    type IntoIter = Self;
    /// A piece that may still be cut counts as two items: a thief's request for one of
    /// them can be met.
    fn len(&self) -> usize {
        self.stack.iter().map(|p| 2 - usize::from(p.whole)).sum()
    }
    /// Gives the later half of the pieces, or if there is one piece, its right part
    /// (with a fresh budget); `index` only tells an empty side from a real cut.
    fn split_at(mut self, index: usize) -> (Self, Self) {
        let mut hi = Pieces {
            stack: Vec::new(),
            splitter: self.splitter,
            budget: self.budget,
        };
        if index == 0 {
            std::mem::swap(&mut self.stack, &mut hi.stack);
            return (self, hi);
        }
        if self.stack.len() >= 2 {
            // The bottom of the stack comes last.
            let top = self.stack.split_off(self.stack.len() / 2);
            hi.stack = std::mem::replace(&mut self.stack, top);
        } else if let Some(mut piece) = self.stack.pop() {
            if !piece.whole {
                let (left, right) = (self.splitter)(piece.data);
                piece.data = left;
                piece.whole = right.is_none();
                hi.stack.extend(right.map(|data| Piece {
                    data,
                    budget: self.budget,
                    whole: false,
                }));
            }
            self.stack.push(piece);
        }
        for p in &mut hi.stack {
            p.budget = p.budget.max(self.budget);
        }
        (self, hi)
    }
    own_iterator!(D);
    /// Pieces are meant to be large: the owner looks for thieves after each.
    fn max_len(&self) -> usize {
        1
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::ops::Range;

    fn halve(r: Range<u32>) -> (Range<u32>, Option<Range<u32>>) {
        if r.len() <= 3 {
            return (r, None);
        }
        let mid = r.start + r.len() as u32 / 2;
        (r.start..mid, Some(mid..r.end))
    }

    /// Whatever the budget and however often a thief asks, the pieces are whole ones of
    /// the splitter's, in order, and cover the data.
    #[test]
    fn pieces_cover_the_data_in_order() {
        for budget in [0, 1, 4] {
            for asks in 0..12 {
                let mut p = Pieces {
                    stack: vec![Piece {
                        data: 0..1000,
                        budget,
                        whole: false,
                    }],
                    splitter: &halve,
                    budget,
                };
                let mut later = Vec::new();
                let mut got: Vec<Range<u32>> = Vec::new();
                for _ in 0..asks {
                    let (l, r) = p.split_at(1);
                    later.push(r);
                    p = l;
                    got.extend(p.next());
                }
                got.extend(p);
                later.into_iter().rev().for_each(|r| got.extend(r));
                let items: Vec<u32> = got.iter().flat_map(Clone::clone).collect();
                assert_eq!(items, (0..1000).collect::<Vec<_>>(), "{budget}, {asks}");
                if budget == 0 && asks == 0 {
                    assert_eq!(got.len(), 1);
                }
            }
        }
    }
}
