//! `par_sort*`: halves sorted in parallel and merged (stable), or partitions sorted in
//! parallel (unstable). Parts below a leaf's size are sorted sequentially.
//!
//! With an order that `Ord` promises to be total (`par_sort`, `par_sort_unstable`, and
//! the `_by_key` forms), the sequential parts are std's sorts. rayon promises more for
//! `par_sort_by` and `par_sort_unstable_by`: a comparison that is not a total order
//! leaves the items in an unspecified order, but never panics, while std's sorts may
//! panic there ("does not correctly implement a total order"). Those two use the sorts
//! of this module instead: insertion sort on short runs merged bottom-up through a buffer
//! (stable), and quicksort with a three-way partition that falls back to heapsort when it
//! goes too deep (unstable). Whatever the comparison answers, every index they use stays
//! in bounds; and a panic of the comparison leaves every item in the slice exactly once,
//! in its latest state (the buffer's copies are put back).

use crate::par::engine::driver::on_worker;
use crate::par::engine::seam::worker::Worker;
use std::cmp::Ordering;
use std::mem::MaybeUninit;
use std::ptr;

/// Below this many items a part is sorted sequentially.
const SORT_LEAF: usize = 1 << 12;

/// Parts are cut down to a 64th of the input at the finest: enough to keep dozens of
/// workers busy, while each level of cutting costs a pass over the items.
const SORT_PARTS: usize = 64;

/// Runs this short are sorted by insertion before they are merged.
const RUN: usize = 20;

/// How a part is compared and sorted sequentially.
pub(super) struct Sorter<'f, F> {
    cmp: &'f F,
    stable: bool,
    /// Whether the order is total (`Ord`), so that std's sorts may be used.
    total: bool,
}

// Not derived: that would ask `F: Copy`.
impl<F> Clone for Sorter<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F> Copy for Sorter<'_, F> {}

impl<F> Sorter<'_, F> {
    fn is_less<T>(&self, a: &T, b: &T) -> bool
    where
        F: Fn(&T, &T) -> Ordering,
    {
        (self.cmp)(a, b) == Ordering::Less
    }

    /// Sorts a part sequentially.
    fn leaf<T>(&self, v: &mut [T])
    where
        F: Fn(&T, &T) -> Ordering,
    {
        match (self.total, self.stable) {
            (true, true) => v.sort_by(self.cmp),
            (true, false) => v.sort_unstable_by(self.cmp),
            (false, true) => stable_sort(v, &|a: &T, b: &T| self.is_less(a, b)),
            (false, false) => unstable_sort(v, &|a: &T, b: &T| self.is_less(a, b)),
        }
    }

    /// Merges the sorted runs `v[..mid]` and `v[mid..]`.
    fn merge<T>(&self, v: &mut [T], mid: usize)
    where
        F: Fn(&T, &T) -> Ordering,
    {
        if !self.is_less(&v[mid], &v[mid - 1]) {
            return;
        }
        if self.total {
            // std's stable sort finds the two runs and merges them in one linear pass
            // (and stays panic-safe).
            v.sort_by(self.cmp);
        } else {
            let mut buf = Vec::with_capacity(mid.min(v.len() - mid));
            merge(v, mid, buf.spare_capacity_mut(), &|a: &T, b: &T| {
                self.is_less(a, b)
            });
        }
    }
}

/// Sorts `v` in parallel by `cmp`: stably by merging sorted halves, or unstably by
/// quicksort. `total`: the order is `Ord`'s (see the module's note).
pub(super) fn par_sort<T, F>(v: &mut [T], cmp: &F, stable: bool, total: bool)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let s = Sorter { cmp, stable, total };
    if v.len() <= SORT_LEAF {
        s.leaf(v);
        return;
    }
    let leaf = SORT_LEAF.max(v.len() / SORT_PARTS);
    if stable {
        on_worker(|w| merge_sort(w, v, s, leaf));
    } else {
        let depth = 2 * (usize::BITS - v.len().leading_zeros());
        on_worker(|w| quick_sort(w, v, s, leaf, depth));
    }
}

/// Sorts halves in parallel, then merges them.
fn merge_sort<T: Send, F>(w: &Worker, v: &mut [T], s: Sorter<'_, F>, leaf: usize)
where
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if v.len() <= leaf {
        s.leaf(v);
        return;
    }
    let mid = v.len() / 2;
    let (a, b) = v.split_at_mut(mid);
    w.join(|w| merge_sort(w, a, s, leaf), |w| merge_sort(w, b, s, leaf));
    s.merge(v, mid);
}

/// Partitions around a pivot and sorts both sides in parallel. Only swaps move items,
/// so a panicking comparison leaves a permutation of the input. A part cut lopsidedly
/// `depth` times over is sorted sequentially.
fn quick_sort<T: Send, F>(w: &Worker, v: &mut [T], s: Sorter<'_, F>, leaf: usize, depth: u32)
where
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if v.len() <= leaf || depth == 0 {
        s.leaf(v);
        return;
    }
    let (lo, hi) = if s.total {
        let mut mid = partition(v, &|a: &T, b: &T| s.is_less(a, b));
        // A lopsided cut (many equal items, or an unlucky pivot): cut at the median.
        if mid < v.len() / 16 || mid > v.len() - v.len() / 16 {
            mid = v.len() / 2;
            v.select_nth_unstable_by(mid, s.cmp);
        }
        (mid, mid + 1)
    } else {
        // Items equal to the pivot stay in the middle, so many equal items cut evenly.
        partition3(v, &|a: &T, b: &T| s.is_less(a, b))
    };
    let (a, rest) = v.split_at_mut(lo);
    let b = &mut rest[hi - lo..];
    w.join(
        |w| quick_sort(w, a, s, leaf, depth - 1),
        |w| quick_sort(w, b, s, leaf, depth - 1),
    );
}

/// Moves the median of the first, middle and last items to the front.
fn pivot_first<T, F: Fn(&T, &T) -> bool>(v: &mut [T], is_less: &F) {
    let (lo, mid, hi) = (0, v.len() / 2, v.len() - 1);
    let less = |i: usize, j: usize| is_less(&v[i], &v[j]);
    let median = match (less(lo, mid), less(mid, hi), less(lo, hi)) {
        (true, true, _) | (false, false, _) => mid,
        (true, false, true) | (false, true, false) => hi,
        _ => lo,
    };
    v.swap(0, median);
}

/// Lomuto's partition around the median of the first, middle and last items: returns
/// the pivot's place, with smaller items before it and the others after. Branch-free:
/// every item is swapped, and the store index moves by the comparison's outcome.
fn partition<T, F: Fn(&T, &T) -> bool>(v: &mut [T], is_less: &F) -> usize {
    pivot_first(v, is_less);
    let (pivot, rest) = v.split_first_mut().expect("more than a leaf of items");
    let mut store = 0;
    for j in 0..rest.len() {
        let less = is_less(&rest[j], pivot);
        rest.swap(store, j);
        store += usize::from(less);
    }
    v.swap(0, store);
    store
}

/// A three-way partition around the median of the first, middle and last items (at
/// least two): returns `(lt, gt)`, with the items before `lt` less than the pivot, those
/// from `gt` on greater, and the pivot among those between, so that both sides are
/// shorter than `v`.
fn partition3<T, F: Fn(&T, &T) -> bool>(v: &mut [T], is_less: &F) -> (usize, usize) {
    pivot_first(v, is_less);
    let (mut lt, mut i, mut gt) = (1, 1, v.len());
    while i < gt {
        if is_less(&v[i], &v[0]) {
            v.swap(lt, i);
            lt += 1;
            i += 1;
        } else if is_less(&v[0], &v[i]) {
            gt -= 1;
            v.swap(i, gt);
        } else {
            i += 1;
        }
    }
    v.swap(0, lt - 1);
    (lt - 1, gt)
}

/// Sorts stably by insertion, swapping neighbours.
fn insertion_sort<T, F: Fn(&T, &T) -> bool>(v: &mut [T], is_less: &F) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && is_less(&v[j], &v[j - 1]) {
            v.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// Sorts stably: runs of `RUN` items by insertion, merged bottom-up.
fn stable_sort<T, F: Fn(&T, &T) -> bool>(v: &mut [T], is_less: &F) {
    let n = v.len();
    v.chunks_mut(RUN)
        .for_each(|run| insertion_sort(run, is_less));
    if n <= RUN {
        return;
    }
    // A merge copies its shorter run, at most half of the items.
    let mut buf: Vec<T> = Vec::with_capacity(n / 2);
    let mut width = RUN;
    while width < n {
        for lo in (0..n).step_by(2 * width) {
            let hi = (lo + 2 * width).min(n);
            let mid = lo + width;
            if mid < hi && is_less(&v[mid], &v[mid - 1]) {
                merge(&mut v[lo..hi], width, buf.spare_capacity_mut(), is_less);
            }
        }
        width *= 2;
    }
}

/// Sorts unstably: quicksort with a three-way partition, heapsort past a depth of twice
/// the length's bits, insertion sort for short parts.
fn unstable_sort<T, F: Fn(&T, &T) -> bool>(mut v: &mut [T], is_less: &F) {
    let mut depth = 2 * (usize::BITS - v.len().leading_zeros());
    loop {
        if v.len() <= RUN {
            return insertion_sort(v, is_less);
        }
        if depth == 0 {
            return heapsort(v, is_less);
        }
        depth -= 1;
        let (lt, gt) = partition3(v, is_less);
        let (a, rest) = v.split_at_mut(lt);
        let b = &mut rest[gt - lt..];
        // Recurse into the shorter side, loop on the longer.
        let (short, long) = if a.len() < b.len() { (a, b) } else { (b, a) };
        unstable_sort(short, is_less);
        v = long;
    }
}

/// Sorts by heapsort, swapping items.
fn heapsort<T, F: Fn(&T, &T) -> bool>(v: &mut [T], is_less: &F) {
    let sift_down = |v: &mut [T], mut node: usize| loop {
        let mut child = 2 * node + 1;
        if child >= v.len() {
            return;
        }
        if child + 1 < v.len() && is_less(&v[child], &v[child + 1]) {
            child += 1;
        }
        if !is_less(&v[node], &v[child]) {
            return;
        }
        v.swap(node, child);
        node = child;
    };
    for i in (0..v.len() / 2).rev() {
        sift_down(v, i);
    }
    for end in (1..v.len()).rev() {
        v.swap(0, end);
        sift_down(&mut v[..end], 0);
    }
}

/// Copies `[src, end)` to `dst` when dropped: the items a merge holds in its buffer go
/// back into the gap they left, also when a comparison panics.
struct Hole<T> {
    src: *const T,
    end: *const T,
    dst: *mut T,
}

impl<T> Drop for Hole<T> {
    fn drop(&mut self) {
        // SAFETY: `src..end` are the buffer's items not yet placed, initialised and
        // owned by the merge, and `dst` is the start of a gap in the slice of exactly
        // that many slots (the invariants in `merge`); buffer and slice do not overlap.
        unsafe {
            let n = self.end.offset_from(self.src) as usize;
            ptr::copy_nonoverlapping(self.src, self.dst, n);
        }
    }
}

/// Merges the sorted runs `v[..mid]` and `v[mid..]` (both non-empty) stably, copying the
/// shorter one into `buf` (room for at least that many). A comparison that panics, or
/// that is not a total order, leaves a permutation of the items.
fn merge<T, F: Fn(&T, &T) -> bool>(
    v: &mut [T],
    mid: usize,
    buf: &mut [MaybeUninit<T>],
    is_less: &F,
) {
    let len = v.len();
    let v = v.as_mut_ptr();
    let buf = buf.as_mut_ptr().cast::<T>();
    if mid <= len - mid {
        // SAFETY: the left run is moved to the buffer (room for `mid` items), leaving a
        // gap of `mid` slots at the start. Invariant: the gap is `hole.dst..right`,
        // exactly as long as `hole.src..hole.end`, the left items not yet placed; each
        // step fills the gap's first slot from the buffer or from `right` (which then
        // moves up, so the gap moves along), and the comparison reads only initialised
        // items. On a panic, the hole puts the left items back into the gap. Pointers
        // stay within `v` and the buffer's first `mid` slots.
        unsafe {
            ptr::copy_nonoverlapping(v, buf, mid);
            let mut hole = Hole {
                src: buf,
                end: buf.add(mid),
                dst: v,
            };
            let (mut right, end) = (v.add(mid), v.add(len));
            while hole.src < hole.end && right < end {
                let take_right = is_less(&*right, &*hole.src);
                let from = if take_right { right } else { hole.src };
                ptr::copy_nonoverlapping(from, hole.dst, 1);
                hole.dst = hole.dst.add(1);
                if take_right {
                    right = right.add(1);
                } else {
                    hole.src = hole.src.add(1);
                }
            }
        }
    } else {
        // SAFETY: the mirror image: the right run is moved to the buffer, leaving a gap
        // at the end. Invariant: the gap is `hole.dst..out`, exactly as long as
        // `hole.src..hole.end`, the right items not yet placed; each step fills the
        // gap's last slot from the buffer's last item or from the left run's last
        // (`hole.dst`, which then moves down).
        unsafe {
            let n = len - mid;
            ptr::copy_nonoverlapping(v.add(mid), buf, n);
            let mut hole = Hole {
                src: buf,
                end: buf.add(n),
                dst: v.add(mid),
            };
            let mut out = v.add(len);
            while v < hole.dst && hole.src < hole.end {
                let (left, right) = (hole.dst.sub(1), hole.end.sub(1));
                out = out.sub(1);
                // The left item goes last only if it is greater: equal ones keep order.
                if is_less(&*right, &*left) {
                    ptr::copy_nonoverlapping(left, out, 1);
                    hole.dst = left;
                } else {
                    ptr::copy_nonoverlapping(right, out, 1);
                    hole.end = right;
                }
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A deterministic stream of pseudo-random numbers.
    fn noise(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// The sequential sorts sort, stably where they should, at every short length and a
    /// few long ones, with few and many distinct keys.
    #[test]
    fn the_own_sorts_sort() {
        let mut next = noise(7);
        for n in (0..70).chain([500, 4097]) {
            for keys in [2, 10, 1000] {
                let v: Vec<(u64, usize)> = (0..n).map(|i| (next() % keys, i)).collect();
                let mut want = v.clone();
                want.sort();
                let by_key = |a: &(u64, usize), b: &(u64, usize)| a.0 < b.0;
                let mut s = v.clone();
                stable_sort(&mut s, &by_key);
                assert_eq!(s, want, "stable {n} {keys}");
                let mut u = v.clone();
                unstable_sort(&mut u, &by_key);
                assert!(
                    u.windows(2).all(|w| w[0].0 <= w[1].0),
                    "unstable {n} {keys}"
                );
                let mut h = v.clone();
                heapsort(&mut h, &by_key);
                assert!(h.windows(2).all(|w| w[0].0 <= w[1].0), "heap {n} {keys}");
                u.sort();
                h.sort();
                assert_eq!((u, h), (want.clone(), want));
            }
        }
    }

    /// A comparison that answers at random leaves a permutation, and never panics.
    #[test]
    fn a_random_comparison_leaves_a_permutation() {
        let mut next = noise(3);
        for n in [0, 1, 2, 19, 21, 100, 5000] {
            let v: Vec<u32> = (0..n).collect();
            let random = |_: &u32, _: &u32| next() % 3 == 0;
            let coin = std::cell::RefCell::new(random);
            let is_less = |a: &u32, b: &u32| (coin.borrow_mut())(a, b);
            for sort in [stable_sort::<u32, _>, unstable_sort, heapsort] {
                let mut s = v.clone();
                sort(&mut s, &is_less);
                s.sort();
                assert_eq!(s, v);
            }
        }
    }
}
