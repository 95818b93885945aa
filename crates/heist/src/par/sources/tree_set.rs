//! A balanced binary search tree of heist's own, immutable once built, whose nodes
//! hold neither parent pointers nor subtree sizes: the kind of tree for which On
//! Lock-Free Work-stealing Iterators for Parallel Data Structures (§3.5, Figs. 5–7)
//! builds its tree stealer. Its parallel iterator is that stealer (`par/sources/tree_stealer.rs`).

use crate::par::iter::into::IntoParallelIterator;
use crate::par::sources::tree_stealer::ParIter;
use std::cmp::Ordering;
use std::fmt;

/// A set of distinct items kept as a perfectly balanced binary search tree, built once
/// from its items and not changed after: no parent pointers, no subtree sizes.
///
/// Its parallel iterator visits the items in order and splits by subtrees, with no
/// copy into a `Vec` first.
///
/// # Example
///
/// ```
/// use heist::prelude::*;
/// use heist::tree::TreeSet;
///
/// let t: TreeSet<u64> = (0..1000).rev().collect();
/// assert_eq!(t.len(), 1000);
/// assert!(t.contains(&999) && !t.contains(&1000));
/// let sum: u64 = t.par_iter().map(|x| x * 2).sum();
/// assert_eq!(sum, 999 * 1000);
/// let firsts: Vec<u64> = t.par_iter().copied().filter(|x| x % 100 == 0).collect();
/// assert_eq!(firsts, (0..10).map(|i| i * 100).collect::<Vec<_>>());
/// ```
pub struct TreeSet<T> {
    root: Link<T>,
    len: usize,
}

/// A child: a node or nothing.
pub(crate) type Link<T> = Option<Box<Node<T>>>;

/// An inner node: one item and two subtrees.
pub(crate) struct Node<T> {
    pub(crate) value: T,
    pub(crate) left: Link<T>,
    pub(crate) right: Link<T>,
}

impl<T> TreeSet<T> {
    /// An empty set.
    pub fn new() -> Self {
        TreeSet { root: None, len: 0 }
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of levels: ⌈log2(len + 1)⌉.
    pub fn height(&self) -> u32 {
        usize::BITS - self.len.leading_zeros()
    }

    /// The items in order.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter(InOrder::new(self.root.as_deref(), self.len))
    }

    /// The root, for the stealer.
    pub(crate) fn root(&self) -> Option<&Node<T>> {
        self.root.as_deref()
    }

    /// Builds the tree over `items`, which must be sorted and distinct: the middle one
    /// at the root, each half below it the same way.
    fn from_sorted(items: Vec<T>) -> Self {
        let len = items.len();
        let mut items = items.into_iter();
        let root = build(len, &mut items);
        TreeSet { root, len }
    }
}

/// A subtree of the next `n` items. Nodes are allocated in the order of their items,
/// so that an in-order walk reads memory mostly forwards.
fn build<T>(n: usize, items: &mut impl Iterator<Item = T>) -> Link<T> {
    if n == 0 {
        return None;
    }
    let left = build(n / 2, items);
    let value = items.next().expect("as many items as counted");
    let mut node = Box::new(Node {
        value,
        left,
        right: None,
    });
    node.right = build(n - n / 2 - 1, items);
    Some(node)
}

impl<T: Ord> TreeSet<T> {
    /// Whether `x` is in the set.
    pub fn contains(&self, x: &T) -> bool {
        let mut at = self.root.as_deref();
        while let Some(n) = at {
            at = match x.cmp(&n.value) {
                Ordering::Less => n.left.as_deref(),
                Ordering::Greater => n.right.as_deref(),
                Ordering::Equal => return true,
            };
        }
        false
    }
}

impl<T> Default for TreeSet<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Ord> FromIterator<T> for TreeSet<T> {
    /// Sorts the items and keeps the first of equal ones.
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut items: Vec<T> = iter.into_iter().collect();
        items.sort();
        items.dedup();
        TreeSet::from_sorted(items)
    }
}

impl<T: fmt::Debug> fmt::Debug for TreeSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<'a, T> IntoIterator for &'a TreeSet<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a TreeSet<T> {
    type Iter = ParIter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> ParIter<'a, T> {
        ParIter::new(self)
    }
}

/// The items of a [`TreeSet`] in order.
pub struct Iter<'a, T>(InOrder<'a, T>);

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;
    fn next(&mut self) -> Option<&'a T> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.0.left, Some(self.0.left))
    }
    fn fold<B, F: FnMut(B, &'a T) -> B>(self, init: B, mut f: F) -> B {
        self.0.fold(init, &mut f)
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

/// The most levels a tree can have: a balanced tree of `usize::MAX` items has 64.
pub(crate) const MAX_HEIGHT: usize = usize::BITS as usize;

/// An in-order walk of a subtree with an explicit stack: the nodes whose item and right
/// subtree are still to come, deepest on top.
pub(crate) struct InOrder<'a, T> {
    stack: [Option<&'a Node<T>>; MAX_HEIGHT],
    depth: usize,
    /// Items still to come, for `size_hint` (`usize::MAX` if not counted).
    left: usize,
}

impl<'a, T> InOrder<'a, T> {
    pub(crate) fn new(root: Option<&'a Node<T>>, len: usize) -> Self {
        let mut walk = InOrder {
            stack: [None; MAX_HEIGHT],
            depth: 0,
            left: len,
        };
        walk.descend(root);
        walk
    }

    fn descend(&mut self, mut at: Option<&'a Node<T>>) {
        while let Some(n) = at {
            self.stack[self.depth] = Some(n);
            self.depth += 1;
            at = n.left.as_deref();
        }
    }

    /// Folds the rest with the recursive walk of the paper's tree kernel (Fig. 10).
    pub(crate) fn fold<B>(mut self, mut acc: B, f: &mut impl FnMut(B, &'a T) -> B) -> B {
        while self.depth > 0 {
            self.depth -= 1;
            let n = self.stack[self.depth].expect("pushed");
            acc = f(acc, &n.value);
            if let Some(r) = n.right.as_deref() {
                acc = fold_subtree(r, acc, f);
            }
        }
        acc
    }
}

impl<'a, T> Iterator for InOrder<'a, T> {
    type Item = &'a T;
    fn next(&mut self) -> Option<&'a T> {
        if self.depth == 0 {
            return None;
        }
        self.depth -= 1;
        let n = self.stack[self.depth].expect("pushed");
        self.descend(n.right.as_deref());
        self.left = self.left.saturating_sub(1);
        Some(&n.value)
    }
}

/// Folds a whole subtree in order: recursion on the left, a loop on the right, so the
/// depth is the tree's height.
pub(crate) fn fold_subtree<'a, T, B>(
    mut n: &'a Node<T>,
    mut acc: B,
    f: &mut impl FnMut(B, &'a T) -> B,
) -> B {
    loop {
        if let Some(l) = n.left.as_deref() {
            acc = fold_subtree(l, acc, f);
        }
        acc = f(acc, &n.value);
        match n.right.as_deref() {
            Some(r) => n = r,
            None => return acc,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn builds_balanced_sorted_and_distinct() {
        for n in [0usize, 1, 2, 3, 7, 8, 100] {
            let t: TreeSet<usize> = (0..n).rev().chain(0..n / 2).collect();
            assert_eq!(t.len(), n);
            assert!(t.iter().copied().eq(0..n));
            assert_eq!(t.iter().len(), n);
            let mix = |a: usize, x: &usize| a.wrapping_mul(31) ^ x;
            assert_eq!(
                t.iter().fold(1, mix),
                (0..n).collect::<Vec<_>>().iter().fold(1, mix)
            );
            for x in 0..n + 2 {
                assert_eq!(t.contains(&x), x < n);
            }
            fn height<T>(l: &Link<T>) -> u32 {
                l.as_ref()
                    .map_or(0, |n| 1 + height(&n.left).max(height(&n.right)))
            }
            assert_eq!(height(&t.root), t.height(), "n = {n}");
        }
    }
}
