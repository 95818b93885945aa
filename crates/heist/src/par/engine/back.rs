//! Loops folded from their end (`find_last`, whose kernel sets `Kernel::FROM_BACK`), over
//! producers whose lengths are exact. The mirror image of the driver's pieces: a piece
//! folds its last block first and stops as soon as what it has found cannot change
//! (`Kernel::output_full`); a split for a thief keeps the upper part and hands over the
//! lower one (the lazy splitting of Embracing Explicit Communication in Work-Stealing
//! Runtime Systems, §5.3, with the ends swapped). Each block is a piece of its own, so
//! pieces and blocks still combine in index order.

use crate::par::engine::demand::split_demanded;
use crate::par::engine::driver::{join_parts, thieves, Here, Kernel, Loop, Producer};
use crate::par::engine::pace::{Blocks, MIN_SPLIT};
use crate::par::engine::seam::worker::Worker;

/// Runs one piece of a loop, from its end (what `driver::bounded` calls its leaf).
pub(super) fn leaf<P, K>(w: &Worker, lp: &Loop<'_, K>, p: P) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let blocks = Blocks::new(&p);
    piece(w, lp, p, None, blocks)
}

/// The owner's loop over one piece, from its end: `right` is what the items after `p`
/// gave.
fn piece<P, K>(
    w: &Worker,
    lp: &Loop<'_, K>,
    mut p: P,
    mut right: Option<K::Output>,
    mut blocks: Blocks,
) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let kernel = lp.kernel;
    let min = blocks.min();
    loop {
        let len = p.len();
        if len == 0 || lp.stopped() || right.as_ref().is_some_and(|r| kernel.output_full(r)) {
            break;
        }
        if len / 2 >= min && split_demanded(w) && blocks.worth(len, MIN_SPLIT) {
            if let Some((waiting, _)) = thieves(w) {
                // The thief gets the lower half; the owner goes on with the upper one.
                let (lo, hi) = p.split_at(len / 2);
                let mine = Here((right, waiting));
                return join_parts(
                    w,
                    kernel,
                    true,
                    move |w| {
                        let mine = mine;
                        let (right, waiting) = mine.0;
                        waiting.answer();
                        piece(w, lp, hi, right, blocks)
                    },
                    move |w| {
                        let blocks = Blocks::new(&lo);
                        piece(w, lp, lo, None, blocks)
                    },
                );
            }
        }
        let n = blocks.next(len);
        let (rest, block) = p.split_at(len - n);
        let b = kernel.finish(kernel.fold(kernel.start(), block.into_iter()));
        right = Some(match right {
            Some(r) => kernel.combine(b, r),
            None => b,
        });
        p = rest;
    }
    right.unwrap_or_else(|| kernel.finish(kernel.start()))
}
