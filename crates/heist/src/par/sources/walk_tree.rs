//! rayon's tree walks (`walk_tree_prefix`, `walk_tree_postfix`, `walk_tree`): a loop
//! over the nodes of a tree given by a root and a function from a node to its children.
//!
//! A piece of the walk is a depth-first search kept as an explicit stack, so that the
//! owner can fold it in blocks of nodes and stop between two of them. Subtrees still on
//! the stack have unknown sizes; when a thief asks, the owner gives it the later half of
//! them, those nearest the root and so the largest (as the tree stealer of On Lock-Free
//! Work-stealing Iterators for Parallel Data Structures, Fig. 7, gives its bottom entry).
//! What comes before and after a cut stays so, so the items keep the walk's order.

use crate::par::engine::driver::{bridge, Kernel, Producer};
use crate::par::iter::traits::ParallelIterator;
use std::collections::VecDeque;

/// How many nodes a subtree still on the stack counts as in a piece's length. Its size
/// is unknown; counting it as large lets a thief's request split the walk, which for a
/// small subtree costs one wasted hand-over.
const SUBTREE: usize = 1024;

/// Defines a walk's iterator type, the function that makes it, and its
/// `ParallelIterator`, which runs the piece that `$piece::new` makes.
macro_rules! walk_source {
    (
        $(#[$tdoc:meta])* $name:ident, $(#[$fdoc:meta])* $f:ident, $piece:ident,
        [$($children:tt)*]
    ) => {
        $(#[$tdoc])*
        #[derive(Debug)]
        #[must_use = "iterators are lazy"]
        pub struct $name<S, B> {
            initial_state: S,
            children_of: B,
        }

        $(#[$fdoc])*
        pub fn $f<S, B, I>(root: S, children_of: B) -> $name<S, B>
        where
            S: Send,
            B: Fn(&S) -> I + Send + Sync,
            I: $($children)*,
        {
            $name {
                initial_state: root,
                children_of,
            }
        }

        impl<S, B, I> ParallelIterator for $name<S, B>
        where
            S: Send,
            B: Fn(&S) -> I + Send + Sync,
            I: $($children)*,
        {
            type Item = S;
            fn drive<K: Kernel<S>>(self, kernel: K) -> K::Output {
                bridge($piece::new(self.initial_state, &self.children_of), &kernel)
            }
        }
    };
}

walk_source!(
    /// The nodes of a tree in prefix order (see [`walk_tree_prefix`]).
    WalkTreePrefix,
    /// The nodes of the tree under `root`, in prefix order: each node before its
    /// children, and children in the order `children_of` gives them (rayon's
    /// `walk_tree_prefix`).
    ///
    /// ```
    /// use heist::prelude::*;
    /// //      a
    /// //     / \
    /// //    b   c
    /// //   / \ / \
    /// //  d  e f  g
    /// let v: Vec<char> = heist::iter::walk_tree_prefix('a', |&n| match n {
    ///     'a' => vec!['b', 'c'],
    ///     'b' => vec!['d', 'e'],
    ///     'c' => vec!['f', 'g'],
    ///     _ => vec![],
    /// })
    /// .collect();
    /// assert_eq!(v, ['a', 'b', 'd', 'e', 'c', 'f', 'g']);
    /// ```
    walk_tree_prefix,
    Prefix,
    [IntoIterator<Item = S, IntoIter: DoubleEndedIterator>]
);

/// A piece of a prefix walk: the nodes `seen` (found by a split, not yet given out),
/// then the subtrees on `stack`, the top one first.
struct Prefix<'b, S, B> {
    seen: VecDeque<S>,
    stack: Vec<S>,
    children_of: &'b B,
}

impl<'b, S, B, I> Prefix<'b, S, B>
where
    B: Fn(&S) -> I,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    fn new(root: S, children_of: &'b B) -> Self {
        Prefix {
            seen: VecDeque::new(),
            stack: vec![root],
            children_of,
        }
    }

    /// Replaces the top subtree by its root's children and returns the root.
    fn expand(&mut self) -> Option<S> {
        let node = self.stack.pop()?;
        let children = (self.children_of)(&node).into_iter().rev();
        self.stack.extend(children);
        Some(node)
    }
}

impl<S, B, I> Iterator for Prefix<'_, S, B>
where
    B: Fn(&S) -> I,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    type Item = S;
    fn next(&mut self) -> Option<S> {
        self.seen.pop_front().or_else(|| self.expand())
    }
}

impl<S, B, I> Producer for Prefix<'_, S, B>
where
    S: Send,
    B: Fn(&S) -> I + Sync,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    type Item = S;
    type IntoIter = Self;
    fn len(&self) -> usize {
        self.seen.len() + self.stack.len() * SUBTREE
    }
    /// Gives the later half of the stack's subtrees, or else of the nodes seen; with a
    /// single subtree, first walks down it until it branches. `index` only tells an
    /// empty side from a real cut.
    fn split_at(mut self, index: usize) -> (Self, Self) {
        let mut hi = Prefix {
            seen: VecDeque::new(),
            stack: Vec::new(),
            children_of: self.children_of,
        };
        if index == 0 {
            std::mem::swap(&mut self, &mut hi);
            return (self, hi);
        }
        while self.stack.len() == 1 {
            let node = self.expand().expect("one subtree");
            self.seen.push_back(node);
        }
        if self.stack.len() >= 2 {
            // The bottom of the stack comes last.
            let top = self.stack.split_off(self.stack.len() / 2);
            hi.stack = std::mem::replace(&mut self.stack, top);
        } else if self.seen.len() >= 2 {
            hi.seen = self.seen.split_off(self.seen.len() / 2);
        }
        (self, hi)
    }
    own_iterator!(S);
}

walk_source!(
    /// The nodes of a tree in postfix order (see [`walk_tree_postfix`]).
    WalkTreePostfix,
    /// The nodes of the tree under `root`, in postfix order: each node after its
    /// children, and children in the order `children_of` gives them (rayon's
    /// `walk_tree_postfix`).
    ///
    /// ```
    /// use heist::prelude::*;
    /// // The tree of `walk_tree_prefix`'s example.
    /// let v: Vec<char> = heist::iter::walk_tree_postfix('a', |&n| match n {
    ///     'a' => vec!['b', 'c'],
    ///     'b' => vec!['d', 'e'],
    ///     'c' => vec!['f', 'g'],
    ///     _ => vec![],
    /// })
    /// .collect();
    /// assert_eq!(v, ['d', 'e', 'b', 'f', 'g', 'c', 'a']);
    /// ```
    walk_tree_postfix,
    Postfix,
    [IntoIterator<Item = S>]
);

/// A node on the path of a postfix walk, given out once its children are.
struct Frame<S> {
    /// `None` for a piece's base, which holds subtrees but no node of its own.
    node: Option<S>,
    /// Where its children still to come start in the piece's `kids`.
    kids: usize,
    /// Whether its children have been asked for.
    expanded: bool,
}

/// A piece of a postfix walk: the path from the piece's base to the node being walked,
/// the children still to come of each frame (in one vector, each frame's after its
/// parent's, each in reverse so that the next is last), and the nodes to give out
/// `after` all that (in reverse).
struct Postfix<'b, S, B> {
    path: Vec<Frame<S>>,
    kids: Vec<S>,
    /// How many frames hold a node.
    nodes: usize,
    after: Vec<S>,
    children_of: &'b B,
}

impl<'b, S, B, I> Postfix<'b, S, B>
where
    B: Fn(&S) -> I,
    I: IntoIterator<Item = S>,
{
    fn new(root: S, children_of: &'b B) -> Self {
        Postfix {
            path: vec![Frame {
                node: None,
                kids: 0,
                expanded: true,
            }],
            kids: vec![root],
            nodes: 0,
            after: Vec::new(),
            children_of,
        }
    }

    /// Asks for the children of the top frame's node.
    fn expand_top(&mut self) {
        let top = self.path.last_mut().expect("a frame");
        top.expanded = true;
        if let Some(node) = &top.node {
            let from = self.kids.len();
            self.kids.extend((self.children_of)(node));
            self.kids[from..].reverse();
        }
    }

    /// Walks into the top frame's next child.
    fn descend(&mut self) {
        let node = self.kids.pop().expect("a child");
        self.path.push(Frame {
            node: Some(node),
            kids: self.kids.len(),
            expanded: false,
        });
        self.nodes += 1;
    }

    /// The lowest frame with children still to come.
    fn lowest_fork(&self) -> Option<usize> {
        let ends = self.path.iter().skip(1).map(|f| f.kids);
        let ends = ends.chain(std::iter::once(self.kids.len()));
        self.path.iter().zip(ends).position(|(f, end)| f.kids < end)
    }

    /// Moves the nodes of the lowest `n` frames (which have no children to come) to the
    /// front of `hi`'s `after`; their frames leave the path.
    fn hand_over_base(&mut self, n: usize, hi: &mut Self) {
        let base = self.path.drain(..n).filter_map(|f| f.node);
        let before = hi.after.len();
        hi.after.extend(base);
        self.nodes -= hi.after.len() - before;
    }
}

impl<S, B, I> Iterator for Postfix<'_, S, B>
where
    B: Fn(&S) -> I,
    I: IntoIterator<Item = S>,
{
    type Item = S;
    fn next(&mut self) -> Option<S> {
        loop {
            let Some(top) = self.path.last() else {
                return self.after.pop();
            };
            if !top.expanded {
                self.expand_top();
            } else if self.kids.len() > top.kids {
                self.descend();
            } else if let Some(node) = self.path.pop().expect("a frame").node {
                self.nodes -= 1;
                return Some(node);
            }
        }
    }
}

impl<S, B, I> Producer for Postfix<'_, S, B>
where
    S: Send,
    B: Fn(&S) -> I + Sync,
    I: IntoIterator<Item = S>,
{
    type Item = S;
    type IntoIter = Self;
    fn len(&self) -> usize {
        let unexpanded = self.path.last().is_some_and(|f| !f.expanded);
        self.after.len() + self.nodes + (self.kids.len() + usize::from(unexpanded)) * SUBTREE
    }
    /// Gives the later half of the children to come of the lowest frame that has some,
    /// with that frame's node and those below it, which come after them; with none,
    /// the lower half of the path's nodes, or else of the nodes after it. `index` only
    /// tells an empty side from a real cut.
    fn split_at(mut self, index: usize) -> (Self, Self) {
        let mut hi = Postfix {
            path: Vec::new(),
            kids: Vec::new(),
            nodes: 0,
            after: Vec::new(),
            children_of: self.children_of,
        };
        if index == 0 {
            std::mem::swap(&mut self, &mut hi);
            return (self, hi);
        }
        // Walk down while all that is left below the path is one subtree.
        loop {
            let single = |f: &Frame<S>| self.kids.len() == f.kids + 1;
            match self.lowest_fork() {
                Some(i) if i + 1 == self.path.len() && single(&self.path[i]) => self.descend(),
                None if self.path.last().is_some_and(|f| !f.expanded) => self.expand_top(),
                _ => break,
            }
        }
        hi.after = std::mem::take(&mut self.after);
        match self.lowest_fork() {
            Some(i) => {
                // Frames below `i` have no children to come, so their ranges are empty
                // and `i`'s starts at 0; the later children are the first in `kids`.
                let end = self.path.get(i + 1).map_or(self.kids.len(), |f| f.kids);
                let given = (end / 2).max(usize::from(i + 1 < self.path.len()));
                hi.kids = self.kids.drain(..given).collect();
                hi.path.push(Frame {
                    node: None,
                    kids: 0,
                    expanded: true,
                });
                self.hand_over_base(i, &mut hi);
                let fork = &mut self.path[0];
                if let Some(node) = fork.node.take() {
                    hi.after.push(node);
                    self.nodes -= 1;
                }
                for f in &mut self.path[1..] {
                    f.kids -= given;
                }
            }
            None if self.nodes >= 2 => {
                let lowest = self.path.len() - self.nodes;
                self.hand_over_base(lowest + self.nodes / 2, &mut hi);
            }
            None if self.path.is_empty() && hi.after.len() >= 2 => {
                self.after = hi.after.split_off(hi.after.len() / 2);
            }
            None if self.path.is_empty() => std::mem::swap(&mut self.after, &mut hi.after),
            None => {}
        }
        (self, hi)
    }
    own_iterator!(S);
}

/// The nodes of a tree in an order of heist's choosing (see [`walk_tree`]).
#[derive(Debug)]
#[must_use = "iterators are lazy"]
pub struct WalkTree<S, B>(WalkTreePrefix<S, B>);

/// The nodes of the tree under `root`, in no promised order (rayon's `walk_tree`;
/// heist walks in prefix order, which needs no path of pending parents).
///
/// ```
/// use heist::prelude::*;
/// let n = heist::iter::walk_tree(1u32, |&e| if e < 64 { vec![2 * e, 2 * e + 1] } else { vec![] }).count();
/// assert_eq!(n, 127);
/// ```
pub fn walk_tree<S, B, I>(root: S, children_of: B) -> WalkTree<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    WalkTree(walk_tree_prefix(root, children_of))
}

impl<S, B, I> ParallelIterator for WalkTree<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    type Item = S;
    fn drive<K: Kernel<S>>(self, kernel: K) -> K::Output {
        self.0.drive(kernel)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::par::iter::consumers::VecList;

    /// An irregular tree: node `n` has up to `(n + 1) % 4 + 1` children `4n + 1..`,
    /// those below 1500.
    fn children(&n: &u32) -> Vec<u32> {
        let k = (n + 1) % 4 + 1;
        (4 * n + 1..4 * n + 1 + k).filter(|&c| c < 1500).collect()
    }

    fn prefix(n: u32, out: &mut Vec<u32>) {
        out.push(n);
        children(&n).into_iter().for_each(|c| prefix(c, out));
    }

    fn postfix(n: u32, out: &mut Vec<u32>) {
        children(&n).into_iter().for_each(|c| postfix(c, out));
        out.push(n);
    }

    /// Folds `first` items in blocks of `block`, splits, and goes on in both parts (left
    /// first) `depth` more times; the rest is folded whole.
    fn walk<P: Producer<Item = u32>>(p: P, first: usize, block: usize, depth: u32) -> Vec<u32> {
        let (mut got, mut p, mut done) = (Vec::new(), p, 0);
        while done < first && p.len() > 0 {
            let acc;
            (acc, p) = p.fold_block(block, &VecList, Vec::new());
            got.extend(acc);
            done += block;
        }
        if depth > 0 && p.len() > 0 {
            let (l, r) = p.split_at(1);
            got.extend(walk(l, first, block, depth - 1));
            got.extend(walk(r, first / 2, block, depth - 1));
        } else {
            got.extend(Producer::into_iter(p));
        }
        got
    }

    /// Splits each walk after every number of items, several levels deep: the pieces
    /// give the nodes in the walk's order.
    #[test]
    fn walks_keep_their_order_across_splits() {
        let (mut pre, mut post) = (Vec::new(), Vec::new());
        prefix(0, &mut pre);
        postfix(0, &mut post);
        assert!(pre.len() > 150);
        let f = children;
        for first in 0..pre.len() + 2 {
            for (block, depth) in [(1, 1), (3, 2), (7, 6)] {
                let p = Prefix::new(0, &f);
                assert_eq!(
                    walk(p, first, block, depth),
                    pre,
                    "prefix: {first}, {block}, {depth}"
                );
                let p = Postfix::new(0, &f);
                assert_eq!(
                    walk(p, first, block, depth),
                    post,
                    "postfix: {first}, {block}, {depth}"
                );
            }
        }
    }

    /// A chain (each node one child) still splits: by its nodes.
    #[test]
    fn a_chain_splits_by_its_nodes() {
        let f = |&n: &u32| (n < 50).then_some(n + 1);
        let p = Postfix::new(0, &f);
        let (l, r) = p.split_at(1);
        assert!(l.len() > 0 && r.len() > 0);
        let got: Vec<u32> = l.chain(r).collect();
        assert_eq!(got, (0..=50).rev().collect::<Vec<_>>());
        let p = Prefix::new(0, &f);
        let (l, r) = p.split_at(1);
        assert!(l.len() > 0 && r.len() > 0);
        let got: Vec<u32> = l.chain(r).collect();
        assert_eq!(got, (0..=50).collect::<Vec<_>>());
    }
}
