//! The tree stealer of On Lock-Free Work-stealing Iterators for Parallel Data Structures
//! (§3.5, Figs. 5–7) for [`TreeSet`]: a loop over a balanced tree whose nodes know
//! neither their parent nor their subtree's size.
//!
//! A piece's state is its path of pending work, kept as a stack of entries that carry
//! the paper's symbols: `L` (a node's item and right subtree are to come), `B` (a whole
//! subtree is to come) and `T` (a single item is to come). Entries sit at strictly
//! deeper levels towards the top, and the top comes first. Claiming a batch of about
//! `step` items (Fig. 5) pops the top: an `L` gives its item and leaves its right
//! subtree as a `B`; a `B` is taken whole if the size bound of its level is below
//! `step` (folded by the recursive walk of the tree kernel, Fig. 10), and otherwise
//! descends to the left, pushing `L`s. A split (Fig. 7) gives the thief the bottom
//! entry, the shallowest and largest, which holds about half of what is left.
//!
//! The paper packs the path into one word of 2-bit entries, with `R` entries for
//! finished levels, so that a thief can freeze it with a CAS. heist splits on the
//! owner's side when a thief asks (see `par/engine/driver.rs`), so the path is a plain stack and
//! finished levels are simply popped.
//!
//! Sizes come from depth alone: the tree is built by halving, so a subtree at depth
//! `d` of a tree of `n` items has at most `n >> d` items (the paper's `bound(d)`).

use crate::par::engine::driver::{bridge, Kernel, Producer};
use crate::par::iter::traits::ParallelIterator;
use crate::par::sources::tree_set::{fold_subtree, InOrder, Node, TreeSet, MAX_HEIGHT};
use std::borrow::BorrowMut;
use std::marker::PhantomData;

/// A parallel iterator over the items of a [`TreeSet`], in order (see the module docs).
pub struct ParIter<'a, T> {
    tree: &'a TreeSet<T>,
}

impl<'a, T> ParIter<'a, T> {
    pub(crate) fn new(tree: &'a TreeSet<T>) -> Self {
        ParIter { tree }
    }
}

impl<T> Clone for ParIter<'_, T> {
    fn clone(&self) -> Self {
        ParIter { tree: self.tree }
    }
}

impl<'a, T: Sync> ParallelIterator for ParIter<'a, T> {
    type Item = &'a T;
    fn drive<K: Kernel<&'a T>>(self, kernel: K) -> K::Output {
        bridge(Stealer::new(self.tree), &kernel)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.tree.len())
    }
}

/// What an entry of the path has still to come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sym {
    /// The node's item, then its right subtree.
    L,
    /// The whole subtree.
    B,
    /// The node's item alone.
    T,
}

/// One entry of the path: a node, what of it is to come, and its depth in the tree.
struct Entry<'a, T> {
    node: &'a Node<T>,
    sym: Sym,
    depth: u8,
}

impl<T> Clone for Entry<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Entry<'_, T> {}

/// A piece of a tree loop: the path of pending work (bottom first, top last).
pub(crate) struct Stealer<'a, T> {
    /// Boxed: a piece is moved and copied in every frame of a split (the driver's `cut`,
    /// `join`), and a kilobyte in each of them overflowed a debug build's stack.
    path: Box<[Option<Entry<'a, T>>; MAX_HEIGHT + 1]>,
    len: usize,
    /// The tree's size, for the bounds.
    n: usize,
    /// About how many items the running block may still claim.
    budget: usize,
}

/// What one claim gives.
enum Batch<'a, T> {
    /// One item.
    Item(&'a T),
    /// A whole subtree, and the bound on its size.
    Subtree(&'a Node<T>, usize),
}

impl<'a, T> Stealer<'a, T> {
    pub(crate) fn new(tree: &'a TreeSet<T>) -> Self {
        let mut s = Self::empty(tree.len());
        if let Some(root) = tree.root() {
            s.push(root, Sym::B, 0);
        }
        s
    }

    fn empty(n: usize) -> Self {
        Stealer {
            path: Box::new([None; MAX_HEIGHT + 1]),
            len: 0,
            n,
            budget: 0,
        }
    }

    /// At most how many items a subtree at `depth` holds.
    fn bound(&self, depth: u8) -> usize {
        self.n.checked_shr(u32::from(depth)).unwrap_or(0).max(1)
    }

    fn push(&mut self, node: &'a Node<T>, sym: Sym, depth: u8) {
        self.path[self.len] = Some(Entry { node, sym, depth });
        self.len += 1;
    }

    fn pop(&mut self) -> Option<Entry<'a, T>> {
        self.len = self.len.checked_sub(1)?;
        self.path[self.len].take()
    }

    /// Claims the next batch of at most about `step` items (Fig. 5).
    fn next_batch(&mut self, step: usize) -> Option<Batch<'a, T>> {
        let e = self.pop()?;
        let (mut n, mut d) = (e.node, e.depth);
        match e.sym {
            Sym::T => return Some(Batch::Item(&n.value)),
            Sym::L => {
                if let Some(r) = n.right.as_deref() {
                    self.push(r, Sym::B, d + 1);
                }
                return Some(Batch::Item(&n.value));
            }
            Sym::B => {}
        }
        loop {
            let bound = self.bound(d);
            if bound < step {
                return Some(Batch::Subtree(n, bound));
            }
            match n.left.as_deref() {
                Some(l) => {
                    self.push(n, Sym::L, d);
                    (n, d) = (l, d + 1);
                }
                None => {
                    if let Some(r) = n.right.as_deref() {
                        self.push(r, Sym::B, d + 1);
                    }
                    return Some(Batch::Item(&n.value));
                }
            }
        }
    }

    /// Claims the next batch of the running block, if its budget is not spent.
    fn claim(&mut self) -> Option<Batch<'a, T>> {
        if self.budget == 0 {
            return None;
        }
        let batch = self.next_batch(self.budget)?;
        let size = match batch {
            Batch::Item(_) => 1,
            Batch::Subtree(_, bound) => bound,
        };
        self.budget = self.budget.saturating_sub(size);
        Some(batch)
    }

    /// An estimate of the items to come: exact for `L`s' and `T`s' items, the level's
    /// bound for subtrees; 0 only when none are left.
    fn estimate(&self) -> usize {
        let entry = |e: &Entry<'a, T>| match e.sym {
            Sym::T => 1,
            Sym::L => 1 + e.node.right.as_ref().map_or(0, |_| self.bound(e.depth + 1)),
            Sym::B => self.bound(e.depth),
        };
        self.path[..self.len].iter().flatten().map(entry).sum()
    }
}

impl<'a, T: Sync> Producer for Stealer<'a, T> {
    type Item = &'a T;
    type IntoIter = Block<'a, T, Self>;
    fn len(&self) -> usize {
        self.estimate()
    }
    /// Splits by subtrees (Fig. 7); `index` only tells an empty side from a real cut.
    fn split_at(mut self, index: usize) -> (Self, Self) {
        let mut hi = Self::empty(self.n);
        if index == 0 {
            return (hi, self);
        }
        if index >= self.estimate() || self.len == 0 {
            return (self, hi);
        }
        if self.len >= 2 {
            // The bottom entry is last in order: the thief takes it.
            let bottom = self.path[0].take().expect("len >= 2");
            self.path.copy_within(1..self.len, 0);
            self.len -= 1;
            self.path[self.len] = None;
            hi.push(bottom.node, bottom.sym, bottom.depth);
            return (self, hi);
        }
        let e = self.pop().expect("len == 1");
        let (n, d) = (e.node, e.depth);
        match (e.sym, n.left.as_deref(), n.right.as_deref()) {
            (Sym::B, Some(l), _) => {
                self.push(l, Sym::B, d + 1);
                hi.push(n, Sym::L, d);
            }
            (Sym::B | Sym::L, _, Some(r)) => {
                self.push(n, Sym::T, d);
                hi.push(r, Sym::B, d + 1);
            }
            _ => self.push(n, e.sym, d),
        }
        (self, hi)
    }
    fn into_iter(mut self) -> Self::IntoIter {
        self.budget = usize::MAX;
        Block {
            stealer: self,
            walk: None,
            _items: PhantomData,
        }
    }
    fn fold_block<K: Kernel<&'a T>>(mut self, n: usize, kernel: &K, acc: K::Acc) -> (K::Acc, Self) {
        self.budget = n;
        let block = Block {
            stealer: &mut self,
            walk: None,
            _items: PhantomData,
        };
        let acc = kernel.fold(acc, block);
        // A kernel that stopped early leaves the rest of its block: pass over it, so
        // that the next block starts after it (a claim is cheap; nothing is walked).
        while self.claim().is_some() {}
        (acc, self)
    }
}

/// The items of one block: batches claimed from the stealer `S` (owned, or borrowed by
/// `fold_block`) until its budget is spent.
pub(crate) struct Block<'a, T, S> {
    stealer: S,
    /// The subtree being walked item by item, when `next` is used.
    walk: Option<InOrder<'a, T>>,
    _items: PhantomData<&'a T>,
}

impl<'a, T, S: BorrowMut<Stealer<'a, T>>> Block<'a, T, S> {
    fn claim(&mut self) -> Option<Batch<'a, T>> {
        self.stealer.borrow_mut().claim()
    }
}

impl<'a, T, S: BorrowMut<Stealer<'a, T>>> Iterator for Block<'a, T, S> {
    type Item = &'a T;
    fn next(&mut self) -> Option<&'a T> {
        loop {
            if let Some(x) = self.walk.as_mut().and_then(Iterator::next) {
                return Some(x);
            }
            self.walk = None;
            match self.claim()? {
                Batch::Item(x) => return Some(x),
                Batch::Subtree(t, _) => self.walk = Some(InOrder::new(Some(t), usize::MAX)),
            }
        }
    }
    fn fold<B, F: FnMut(B, &'a T) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = match self.walk.take() {
            Some(w) => w.fold(init, &mut f),
            None => init,
        };
        while let Some(batch) = self.claim() {
            acc = match batch {
                Batch::Item(x) => f(acc, x),
                Batch::Subtree(t, _) => fold_subtree(t, acc, &mut f),
            };
        }
        acc
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::par::iter::consumers::{concat, VecList};

    /// Folds `s` in blocks of `block` items; `cuts` more splits on the way, each after
    /// `every` blocks, recursing into both sides.
    fn drain(mut s: Stealer<'_, u32>, block: usize, every: usize, cuts: u32, out: &mut Vec<u32>) {
        let mut blocks = 0;
        while s.len() > 0 {
            if cuts > 0 && blocks == every {
                let est = s.len();
                let (lo, hi) = s.split_at(est - est / 2);
                drain(lo, block, every, cuts - 1, out);
                drain(hi, block, every, cuts - 1, out);
                return;
            }
            let n = block.min(s.len());
            let acc: Vec<&u32>;
            (acc, s) = s.fold_block(n, &VecList, Vec::new());
            out.extend(concat(vec![acc]).into_iter().copied());
            blocks += 1;
        }
    }

    /// Splits trees of many sizes in every state the owner's blocks leave: the pieces
    /// hold every item once, in order.
    #[test]
    fn stealers_split_everywhere() {
        for n in [0u32, 1, 2, 3, 5, 8, 15, 16, 31, 100, 1000] {
            let t: TreeSet<u32> = (0..n).collect();
            for block in [1, 2, 3, 7, 64, usize::MAX] {
                for every in 0..6 {
                    for cuts in 0..4 {
                        let mut got = Vec::new();
                        drain(Stealer::new(&t), block, every, cuts, &mut got);
                        assert!(
                            got.iter().copied().eq(0..n),
                            "n {n}, blocks of {block}, a cut after {every} blocks, {cuts} deep: {got:?}"
                        );
                    }
                }
            }
        }
    }

    /// A split of a fresh tree gives each side about half, and the estimate never says
    /// 0 while items are left.
    #[test]
    fn splits_are_balanced_and_estimates_honest() {
        let t: TreeSet<u32> = (0..(1 << 12) - 1).collect();
        let (lo, hi) = Stealer::new(&t).split_at(1);
        let count = |s: Stealer<'_, u32>| s.into_iter().count();
        let (a, b) = (count(lo), count(hi));
        assert_eq!((a, b), (2047, 2048));
        let mut s = Stealer::new(&t);
        let mut seen = 0;
        while s.len() > 0 {
            let acc;
            (acc, s) = s.fold_block(5, &VecList, Vec::new());
            seen += acc.len();
            assert!(s.len() > 0 || seen == 4095, "estimate 0 with {seen} seen");
        }
        assert_eq!(seen, 4095);
    }

    /// A kernel that stops early still moves the loop on by its whole block.
    #[test]
    fn a_block_a_kernel_leaves_is_passed_over() {
        let t: TreeSet<u32> = (0..1000).collect();
        let first = crate::par::iter::consumers::FindEnd::<_, false>(|x: &&u32| **x % 10 == 3);
        let (mut s, mut finds, mut blocks) = (Stealer::new(&t), Vec::new(), 0);
        while s.len() > 0 {
            let found;
            (found, s) = s.fold_block(50, &first, None);
            finds.extend(found.copied());
            blocks += 1;
            assert!(blocks <= 1000, "no progress");
        }
        assert_eq!(finds.first(), Some(&3));
        assert!(finds.windows(2).all(|w| w[0] < w[1]), "{finds:?}");
    }

    /// `next` (what `find` and `try_fold` use) and `fold` give the same items.
    #[test]
    fn item_by_item_walks_match_folds() {
        let t: TreeSet<u32> = (0..300).collect();
        let (lo, hi) = Stealer::new(&t).split_at(1);
        let mut by_next: Vec<u32> = lo.into_iter().copied().collect();
        let mut it = hi.into_iter();
        by_next.extend(it.by_ref().take(7).copied());
        by_next.extend(it.fold(Vec::new(), |mut v, x| {
            v.push(*x);
            v
        }));
        assert!(by_next.into_iter().eq(0..300));
    }
}
