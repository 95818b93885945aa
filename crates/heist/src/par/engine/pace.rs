//! The owner's blocks and the pace they go at: blocks that double from one item (the
//! batch growth of On Lock-Free Work-stealing Iterators for Parallel Data Structures,
//! §5), bounded in time by a pace measured between them, so that a thief's request
//! waits for little, and the loop splits only for what is worth a thief's start
//! (Embracing Explicit Communication in Work-Stealing Runtime Systems, §5.3).

use crate::par::engine::driver::{len_bounds, Producer};
use crate::par::engine::seam::clock::{self, nanos};
use std::time::Duration;

/// Each block is at most this fraction of what is left, so that a thief's request waits
/// for at most an eighth of the owner's remaining work, even when the pace changes within
/// a block.
const BLOCK_SHARE: usize = 8;

/// Blocks stop doubling at this much work, at the pace of the last timed blocks: a
/// thief's request is seen between blocks, so this bounds how long it waits, however
/// costly the items; a clock read per block of this length costs about 0.1 %.
const LONG_BLOCK: Duration = Duration::from_micros(20);

/// Near its end a piece does not shrink its blocks below this much work: a thief's
/// request then waits at most this long, and a split of less than [`MIN_SPLIT`] would
/// not be made anyway.
const TAIL: Duration = Duration::from_micros(4);

/// A split hands work to a thief, who may start it only a few microseconds later and
/// whose half the owner may then wait for: below this much work left it does not pay.
pub(in crate::par) const MIN_SPLIT: Duration = Duration::from_micros(10);

/// Blocks end on a multiple of this many items from the piece's start (or of the block's
/// own size, while that is smaller): a slice's blocks then start where a sequential loop's
/// vector steps would, and none splits a vector load across cache lines that the loop
/// over the whole slice would not. Blocks that doubled from 1 ended at odd positions, and
/// `dest.par_iter_mut().zip(src).for_each(|(d, s)| *d += *s)` ran at 1.2 to 1.5 times the
/// sequential loop's time on one worker, with about as many instructions.
const ALIGN: usize = 64;

/// Below this much time a sample of the pace says too little (a read of the loops' clock,
/// `core/clock.rs`, costs about 10 ns, 25 where it falls back to `Instant`); it is also
/// how often the clock is read while blocks are shorter.
const MIN_SAMPLE: Duration = Duration::from_micros(1);

/// The sizes of a piece's blocks, and the pace they go at. Blocks double from 1 (the
/// batch growth of the work-stealing iterators, §5) up to `LONG_BLOCK`'s worth of items
/// at the measured pace, and each is at most an eighth of what is left
/// (`BLOCK_SHARE`). Once that share binds, the piece is in its tail, where the share
/// alone would shrink blocks to single items; there blocks keep at least `TAIL`'s worth
/// of items, and take the rest along when less than that would be left.
///
/// The pace is measured by reading the clock between blocks, once the items folded since
/// the last read are worth `MIN_SAMPLE` at the pace known so far: every block once blocks
/// are that long, a few times in all while they are shorter. The same pace tells the
/// owner whether the rest of a piece is worth a split ([`Blocks::worth`]), so the first
/// request that comes after a long first item is answered at once.
#[derive(Clone, Copy)]
pub(in crate::par) struct Blocks {
    /// The next size, doubling (twice the last block).
    block: usize,
    min: usize,
    max: usize,
    /// Items worth `LONG_BLOCK` at the last pace (`usize::MAX` until one is measured).
    cap: usize,
    /// Items worth `TAIL` at the last pace (0 until one is measured).
    floor: usize,
    /// Whether one item took longer than `LONG_BLOCK` at the last pace.
    slow: bool,
    /// The last sample of the pace that was long enough: nanoseconds, items (0: none).
    sample: (u64, usize),
    /// When the clock was last read (the sample in progress started), if ever.
    since: Option<u64>,
    /// Items folded since then.
    unread: usize,
    /// Items folded in this piece.
    done: usize,
    /// Read the clock once `unread` reaches this.
    due: usize,
}

/// `n` (at least 1) moved so that a block from `done` ends on the nearest multiple of
/// `ALIGN`, or of the largest power of two not above `n` if that is smaller: by at most
/// half of that, so between `n / 2` and `n * 3 / 2`, and at least 1.
#[inline(always)]
fn aligned(done: usize, n: usize) -> usize {
    let a = ALIGN.min(1 << n.ilog2());
    let end = done.saturating_add(n).saturating_add(a / 2) / a * a;
    end.saturating_sub(done).max(1)
}

impl Blocks {
    /// The blocks of a fresh piece of `p`.
    pub(in crate::par) fn new<P: Producer>(p: &P) -> Blocks {
        let (min, max) = len_bounds(p);
        Blocks::bounded(min, max)
    }

    /// The blocks of a fresh piece whose blocks hold `min..=max` items.
    fn bounded(min: usize, max: usize) -> Blocks {
        Blocks {
            block: 1,
            min,
            max,
            cap: usize::MAX,
            floor: 0,
            slow: false,
            sample: (0, 0),
            since: None,
            unread: 0,
            done: 0,
            due: 0,
        }
    }

    /// The smallest block (`with_min_len`).
    pub(in crate::par) fn min(&self) -> usize {
        self.min
    }

    /// Whether no block has been sized yet: `block` doubles from what each block took.
    #[inline(always)]
    pub(in crate::par) fn fresh(&self) -> bool {
        self.done == 0
    }

    /// Whether one item took longer than `LONG_BLOCK` at the last pace, so that even a
    /// block of one would keep a thief's request waiting longer than planned. The owner
    /// stands an offer while it folds such a block, as while it folds a fresh piece's
    /// first, whose items are not timed yet (`par/engine/standing.rs`).
    #[inline(always)]
    pub(in crate::par) fn slow(&self) -> bool {
        self.slow
    }

    /// When the clock was last read (for a fresh piece's first block or a slow one, by
    /// the `next` that sized it).
    pub(in crate::par) fn last_read(&self) -> Option<u64> {
        self.since
    }

    /// The size of the next block when `len` items are left (at least 1): within
    /// `min` and `max` (`with_min_len`, `with_max_len`), and no more than `len`. The
    /// caller folds all of it.
    #[inline(always)]
    pub(in crate::par) fn next(&mut self, len: usize) -> usize {
        if self.unread >= self.due {
            self.look();
        }
        let mut n = self.block.min(self.cap);
        if n.saturating_mul(BLOCK_SHARE) > len && len / BLOCK_SHARE < self.max {
            n = self.tail(n, len);
        }
        let n = if n < len { aligned(self.done, n) } else { n };
        let n = n.min(self.max).max(self.min).min(len);
        self.unread = self.unread.saturating_add(n);
        self.done = self.done.saturating_add(n);
        self.block = n.saturating_mul(2);
        n
    }

    /// A block of the tail: an eighth of what is left or `TAIL`'s worth, whichever is
    /// more, and the rest at once when less than `TAIL`'s worth would be left. Before any
    /// pace is measured (no read of the clock has yet seen `MIN_SAMPLE` go by), the last
    /// block's size stands in for `TAIL`'s worth: a block no larger than the last keeps a
    /// thief waiting no longer than the doubling already could, and a loop that short
    /// ends in a few blocks, not in dozens that shrink to single items.
    fn tail(&self, n: usize, len: usize) -> usize {
        let floor = if self.sample.1 == 0 {
            self.block / 2
        } else {
            self.floor
        };
        let n = n.min(len.div_ceil(BLOCK_SHARE).max(floor));
        if len.saturating_sub(n) < floor {
            len
        } else {
            n
        }
    }

    /// Whether `left` more items are likely to take at least `min` at the pace measured
    /// so far (false until a sample of `MIN_SAMPLE` or more is in).
    #[cold]
    #[inline(never)]
    pub(in crate::par) fn worth(&mut self, left: usize, min: Duration) -> bool {
        if self.unread >= self.due {
            self.look();
        }
        let (ns, items) = self.sample;
        items > 0 && left as u128 * u128::from(ns) >= u128::from(nanos(min)) * items as u128
    }

    /// Reads the clock: a sample long enough sets the pace and starts the next one; a
    /// shorter one grows until it is (the next read waits for it to double at least).
    #[inline(never)]
    fn look(&mut self) {
        let now = clock::now_ns();
        let Some(t0) = self.since else {
            self.since = Some(now);
            self.due = 1;
            return;
        };
        let ns = now.saturating_sub(t0);
        let least = nanos(MIN_SAMPLE);
        if ns < least {
            let grow = usize::try_from(least / ns.max(1)).unwrap_or(usize::MAX);
            self.due = self.unread.saturating_mul(grow.clamp(2, 64)).max(1);
            return;
        }
        self.sample = (ns, self.unread);
        let long = self.items_worth(LONG_BLOCK);
        self.cap = long.max(1);
        self.slow = long == 0;
        self.floor = self.items_worth(TAIL);
        self.due = self.items_worth(MIN_SAMPLE).max(1);
        self.since = Some(now);
        self.unread = 0;
    }

    /// How many items take `d` at the pace of the last sample.
    fn items_worth(&self, d: Duration) -> usize {
        let (ns, items) = self.sample;
        let n = items as u128 * u128::from(nanos(d)) / u128::from(ns.max(1));
        usize::try_from(n).unwrap_or(usize::MAX)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{Blocks, LONG_BLOCK, MIN_SPLIT, TAIL};
    use std::time::Duration;

    /// A piece with no pace measured yet, whose clock is not due before `due` items.
    fn fresh(due: usize) -> Blocks {
        Blocks {
            due,
            ..Blocks::bounded(1, usize::MAX)
        }
    }

    /// A piece in its tail, with a pace measured and `floor` items worth `TAIL` at it.
    fn tail(floor: usize) -> Blocks {
        Blocks {
            block: usize::MAX / 2,
            floor,
            sample: (1, 1),
            ..fresh(usize::MAX)
        }
    }

    /// A piece whose last sample took `ns` for `items`, with the bounds that follow.
    fn paced(ns: u64, items: usize) -> Blocks {
        let mut b = fresh(usize::MAX);
        b.sample = (ns, items);
        b.cap = b.items_worth(LONG_BLOCK).max(1);
        b.floor = b.items_worth(TAIL);
        b
    }

    #[test]
    fn a_tail_block_is_a_share_or_the_floor_and_takes_a_short_rest_along() {
        // With a floor of 0 (items slower than `TAIL`), an eighth of the rest (to the
        // nearest multiple of `ALIGN`: 125 to 128), down to single items.
        assert_eq!(tail(0).next(1000), 128);
        assert_eq!(tail(0).next(3), 1);
        assert_eq!(tail(0).next(2), 1);
        // The floor, when it is more than the share (100, to the nearest multiple of 64).
        assert_eq!(tail(100).next(1000), 128);
        assert_eq!(tail(100).next(500), 128);
        assert_eq!(tail(40).next(500), 64);
        assert_eq!(tail(1).next(2), 1);
        // The rest at once, when less than the floor would be left.
        assert_eq!(tail(100).next(150), 150);
        assert_eq!(tail(4000).next(1526), 1526);
    }

    #[test]
    fn without_a_pace_the_tail_keeps_the_last_block() {
        // The last block was 512 items, after 1024 in all, and no sample has reached
        // `MIN_SAMPLE`.
        let mut b = Blocks {
            block: 1024,
            done: 1024,
            ..fresh(usize::MAX)
        };
        assert_eq!(b.next(2000), 512);
        // Less than the last block would be left: the rest at once.
        assert_eq!(b.next(977), 977);
        // A short loop from its first item: 16 blocks (7 doubling to 256 items, then
        // tail blocks of about 192 that end on multiples of 64); the tail shrinking to
        // single items made 53.
        let mut b = fresh(usize::MAX);
        let (mut left, mut blocks) = (2000, 0);
        while left > 0 {
            left -= b.next(left);
            blocks += 1;
        }
        assert_eq!(blocks, 16);
    }

    #[test]
    fn blocks_double_from_one_until_the_share_binds() {
        let mut b = fresh(usize::MAX);
        let sizes: Vec<usize> = (0..5).map(|_| b.next(1 << 20)).collect();
        // Doubling from 1, each moved to end on a multiple of its own power of two.
        assert_eq!(sizes, [1, 3, 8, 20, 32]);
        let ends: Vec<usize> = sizes
            .iter()
            .scan(0, |t, n| {
                *t += n;
                Some(*t)
            })
            .collect();
        assert_eq!(ends, [1, 4, 12, 32, 64]);
        // `with_max_len` caps every block.
        let mut b = tail(0);
        b.max = 3;
        assert_eq!(b.next(1000), 3);
    }

    #[test]
    fn blocks_stop_doubling_at_a_long_blocks_worth() {
        // 100 ns an item: `LONG_BLOCK` is 200 items, `TAIL` 40.
        let mut b = paced(1000, 10);
        assert_eq!((b.cap, b.floor), (200, 40));
        let sizes: Vec<usize> = (0..11).map(|_| b.next(1 << 20)).collect();
        // Capped at 200, blocks end on multiples of 64: 256 + 192 = 448, and so on.
        assert_eq!(sizes, [1, 3, 8, 20, 32, 64, 128, 192, 192, 192, 192]);
        // A slower pace shrinks the next block at once, not by halves (5, ending on a
        // multiple of 4: 1028).
        b.cap = 5;
        assert_eq!(b.next(1 << 20), 4);
        // and it grows from there by doubling (8, ending on a multiple of 8: 1040).
        b.cap = 1000;
        assert_eq!(b.next(1 << 20), 12);
    }

    #[test]
    fn the_clock_is_read_when_due_and_the_first_read_only_starts_it() {
        let mut b = fresh(0);
        assert_eq!(b.next(1 << 20), 1);
        assert!(b.since.is_some());
        assert_eq!((b.due, b.unread), (1, 1));
        // Not due: the block is counted, the clock not read.
        let mut b = fresh(10);
        b.next(1 << 20);
        b.next(1 << 20);
        assert!(b.since.is_none());
        assert_eq!(b.unread, 4);
    }

    #[test]
    fn a_split_is_worth_it_only_with_a_pace_that_says_so() {
        // No sample yet: never.
        assert!(!fresh(usize::MAX).worth(usize::MAX, MIN_SPLIT));
        // 100 ns an item: 100 items are worth `MIN_SPLIT`, 99 are not.
        let per = Duration::from_nanos(100);
        assert_eq!(MIN_SPLIT.as_nanos() / per.as_nanos(), 100);
        assert!(paced(1000, 10).worth(100, MIN_SPLIT));
        assert!(!paced(1000, 10).worth(99, MIN_SPLIT));
    }
}
