//! UTS, the Unbalanced Tree Search benchmark (UTS 2.1 semantics), as used in seeds 000
//! and 001: count the nodes of an implicit random tree whose shape is fixed by a
//! splittable SHA-1 random number generator.
//!
//! Every node carries a 20-byte SHA-1 digest as its random state. The root's state is the
//! digest of 16 zero bytes followed by the seed (`-r`) as a 4-byte big-endian integer;
//! child `i`'s state is the digest of the parent's 20 bytes followed by `i` as a 4-byte
//! big-endian integer. A node's random number is the last 4 bytes of its state read
//! big-endian and masked to 31 bits, and its probability is that number divided by 2³¹.
//! From it the number of children is drawn:
//!
//! * binomial trees (`-t 0`): the root has `⌊b⌋` children (`-b`), every other node has
//!   `m` children (`-m`) with probability `q` (`-q`) and none otherwise;
//! * geometric trees (`-t 1`): a node at depth `d` has `⌊ln(1−u) / ln(1−p)⌋` children,
//!   with `p = 1/(1+b_d)` and `b_d` given by the shape function (`-a`: 0 linear decrease,
//!   1 exponential decrease, 2 cyclic, 3 fixed) of `b` (`-b`) and the depth `-d`;
//! * hybrid trees (`-t 2`): geometric above depth `f·d` (`-f`, default 0.5), binomial
//!   below.
//!
//! Apart from a binomial root, no node has more than 100 children. The tree is therefore
//! the same on every machine and every runtime, and the published node counts of the
//! standard trees (T1, T3, T1L, T2L, T3L, ...) are the check: a UTS that does not
//! reproduce them exactly has a different tree.
//!
//! The traversal is written once, generic over [`Fork`]: the children of a node are
//! visited by recursive binary splitting of the child index range with `join`, without a
//! sequential cut-off, and the counts are summed on the way back. Run with
//! [`crate::fork::SEQ`], it is the sequential elision.
//!
//! The recursion is as deep as the tree times ⌈log₂ m⌉ joins, and binomial trees are deep:
//! T3 (1572 levels) takes about 1 MB of stack sequentially and on heist, 2.5 MB on chili
//! and 3 MB on rayon (measured, x86-64 release), more than the 2 MB a spawned thread gets
//! by default; T3L (17844 levels) about 11 times that. Whoever runs these trees must give
//! the threads that run them large stacks (e.g. `RUST_MIN_STACK`, or a stack size in the
//! pool builder).

use crate::bench::{self, Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::peers::ffi;
use crate::runtime::{Runtime, RuntimeKind, Task};
use sha1::{Digest, Sha1};

/// The UTS kernel of the catalogue.
pub struct Uts;

/// A named tree of the UTS distribution (or the small test tree) with its published shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedTree {
    /// The name used as the size string (`T1`, `T3L`, ...).
    pub name: &'static str,
    /// The UTS command-line parameters that define the tree.
    pub params: &'static str,
    /// The expected tree: node count, leaf count and maximum depth.
    pub expected: Counts,
}

/// The named trees: the small test tree and the sample trees of UTS 2.1 with the node
/// counts, leaf counts and depths published with them.
pub const TREES: &[NamedTree] = &[
    NamedTree {
        // Not a UTS sample tree: T1 cut to depth 7 for `cargo test`; its shape is as
        // computed by this file's sequential traversal (which reproduces T1, T2, T3...).
        name: "T1XS",
        params: "-t 1 -a 3 -d 7 -b 4 -r 19",
        expected: Counts {
            nodes: 63_914,
            leaves: 51_124,
            max_depth: 7,
        },
    },
    NamedTree {
        name: "T1",
        params: "-t 1 -a 3 -d 10 -b 4 -r 19",
        expected: Counts {
            nodes: 4_130_071,
            leaves: 3_305_118,
            max_depth: 10,
        },
    },
    NamedTree {
        name: "T2",
        params: "-t 1 -a 2 -d 16 -b 6 -r 502",
        expected: Counts {
            nodes: 4_117_769,
            leaves: 2_342_762,
            max_depth: 81,
        },
    },
    NamedTree {
        name: "T3",
        params: "-t 0 -b 2000 -q 0.124875 -m 8 -r 42",
        expected: Counts {
            nodes: 4_112_897,
            leaves: 3_599_034,
            max_depth: 1572,
        },
    },
    NamedTree {
        // Not a UTS sample tree: T3 with `-q 0.1245`, a third of its size for the
        // default suite; its shape is as computed by this file's sequential traversal.
        name: "T3S",
        params: "-t 0 -b 2000 -q 0.1245 -m 8 -r 42",
        expected: Counts {
            nodes: 1_270_745,
            leaves: 1_112_151,
            max_depth: 497,
        },
    },
    NamedTree {
        name: "T4",
        params: "-t 2 -a 0 -d 16 -b 6 -r 1 -q 0.234375 -m 4 -r 1",
        expected: Counts {
            nodes: 4_132_453,
            leaves: 3_108_986,
            max_depth: 134,
        },
    },
    NamedTree {
        name: "T5",
        params: "-t 1 -a 0 -d 20 -b 4 -r 34",
        expected: Counts {
            nodes: 4_147_582,
            leaves: 2_181_318,
            max_depth: 20,
        },
    },
    NamedTree {
        name: "T1L",
        params: "-t 1 -a 3 -d 13 -b 4 -r 29",
        expected: Counts {
            nodes: 102_181_082,
            leaves: 81_746_377,
            max_depth: 13,
        },
    },
    NamedTree {
        name: "T2L",
        params: "-t 1 -a 2 -d 23 -b 7 -r 220",
        expected: Counts {
            nodes: 96_793_510,
            leaves: 53_791_152,
            max_depth: 67,
        },
    },
    NamedTree {
        name: "T3L",
        params: "-t 0 -b 2000 -q 0.200014 -m 5 -r 7",
        expected: Counts {
            nodes: 111_345_631,
            leaves: 89_076_904,
            max_depth: 17844,
        },
    },
];

impl NamedTree {
    /// The named tree called `name` (case-insensitive).
    pub fn find(name: &str) -> Option<&'static NamedTree> {
        TREES.iter().find(|t| t.name.eq_ignore_ascii_case(name))
    }
}

impl Bench for Uts {
    fn name(&self) -> &'static str {
        "uts"
    }

    fn about(&self) -> &'static str {
        "Unbalanced Tree Search: count the nodes of an implicit SHA-1 tree, a join per split"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "T1XS",
            small: "T3S",
            quick: "T3",
            full: "T3L",
        }
    }

    /// `size` is a tree name of [`TREES`] (checked against its published counts) or UTS
    /// parameters such as `-t 1 -a 3 -d 8 -b 4 -r 19` (checked against a sequential
    /// traversal made here, untimed).
    fn supports(&self, kind: RuntimeKind) -> bool {
        !kind.opt_in() || crate::peers::supports(kind, false)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let (tree, expected) = tree_of_size(size)?;
        Ok(Box::new(UtsRun::new(tree, expected)))
    }
}

/// The tree a size string names (a tree name or UTS parameters) and its counts: the
/// published ones, or else those of a sequential traversal.
pub fn tree_of_size(size: &str) -> Result<(Tree, Counts), String> {
    Ok(match NamedTree::find(size.trim()) {
        Some(named) => (Tree::parse(named.params)?, named.expected),
        None => {
            let tree = Tree::parse(size).map_err(|e| {
                let names: Vec<_> = TREES.iter().map(|t| t.name).collect();
                format!(
                    "uts size `{size}`: {e} (expected a tree name, one of {}, or UTS \
                     parameters such as `-t 1 -a 3 -d 10 -b 4 -r 19`)",
                    names.join(", ")
                )
            })?;
            let expected = count(crate::fork::SEQ, &tree);
            (tree, expected)
        }
    })
}

/// What a traversal counts: nodes, leaves and the greatest depth (the root is at depth 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Number of nodes, the root included.
    pub nodes: u64,
    /// Number of nodes without children.
    pub leaves: u64,
    /// Depth of the deepest node.
    pub max_depth: u32,
}

/// The distribution of the number of children (`-t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeType {
    /// Binomial (`-t 0`).
    Binomial,
    /// Geometric (`-t 1`).
    Geometric,
    /// Geometric near the root, binomial below (`-t 2`).
    Hybrid,
}

/// How a geometric tree's expected branching factor changes with depth (`-a`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `b·(1 − depth/d)` (`-a 0`).
    Linear,
    /// `b·depth^(−ln b / ln d)` (`-a 1`).
    ExpDec,
    /// `b^sin(2π·depth/d)`, nothing below depth `5d` (`-a 2`).
    Cyclic,
    /// `b` above depth `d`, nothing from there on (`-a 3`).
    Fixed,
}

/// No node other than a binomial root has more children than this.
const MAX_CHILDREN: i32 = 100;

/// Depths below this have their geometric `ln(1 − p)` precomputed.
const DENOM_TABLE: usize = 256;

/// The parameters of a UTS tree, as given on the UTS command line.
#[derive(Debug, Clone)]
pub struct Tree {
    kind: TreeType,
    shape: Shape,
    /// `-b`: root branching factor.
    b0: f64,
    /// `-d`: the depth parameter of the shape functions.
    gen_mx: i32,
    /// `-q`: probability that a binomial node has children.
    q: f64,
    /// `-m`: number of children of a binomial non-leaf.
    m: i32,
    /// `-r`: the root seed.
    root_id: i32,
    /// `-f`: where a hybrid tree turns binomial, as a fraction of `gen_mx`.
    shift_depth: f64,
    /// `ln(1 − p)` of geometric nodes by depth, computed exactly as on the fly.
    denom: Vec<f64>,
}

/// A node's random state: a SHA-1 digest.
pub type State = [u8; 20];

impl Tree {
    /// Parses UTS parameters (`-t -b -r -m -q -d -a -f`, each followed by its value; later
    /// repetitions win, unset ones take the UTS defaults).
    pub fn parse(params: &str) -> Result<Tree, String> {
        let mut kind = 1;
        let mut shape = 0;
        let mut b0 = 4.0;
        let mut gen_mx = 6;
        let mut q = 15.0 / 64.0;
        let mut m = 4;
        let mut root_id = 0;
        let mut shift_depth = 0.5;
        let mut words = params.split_whitespace();
        while let Some(flag) = words.next() {
            let value = words
                .next()
                .ok_or_else(|| format!("`{flag}` needs a value"))?;
            let int = || {
                value
                    .parse::<i32>()
                    .map_err(|e| format!("`{flag} {value}`: {e}"))
            };
            let float = || {
                value
                    .parse::<f64>()
                    .map_err(|e| format!("`{flag} {value}`: {e}"))
            };
            match flag {
                "-t" => kind = int()?,
                "-a" => shape = int()?,
                "-b" => b0 = float()?,
                "-d" => gen_mx = int()?,
                "-q" => q = float()?,
                "-m" => m = int()?,
                "-r" => root_id = int()?,
                "-f" => shift_depth = float()?,
                _ => return Err(format!("unknown UTS parameter `{flag}`")),
            }
        }
        let kind = match kind {
            0 => TreeType::Binomial,
            1 => TreeType::Geometric,
            2 => TreeType::Hybrid,
            _ => return Err(format!("tree type `-t {kind}` is not 0, 1 or 2")),
        };
        let shape = match shape {
            0 => Shape::Linear,
            1 => Shape::ExpDec,
            2 => Shape::Cyclic,
            3 => Shape::Fixed,
            _ => return Err(format!("shape `-a {shape}` is not 0, 1, 2 or 3")),
        };
        if !(b0.is_finite() && b0 >= 0.0) {
            return Err(format!("`-b {b0}` must be a finite number ≥ 0"));
        }
        if gen_mx < 1 {
            return Err(format!("`-d {gen_mx}` must be ≥ 1"));
        }
        if !(0.0..=1.0).contains(&q) {
            return Err(format!("`-q {q}` must be in [0, 1]"));
        }
        if !(0..=MAX_CHILDREN).contains(&m) {
            return Err(format!("`-m {m}` must be in [0, {MAX_CHILDREN}]"));
        }
        if !shift_depth.is_finite() {
            return Err(format!("`-f {shift_depth}` must be finite"));
        }
        let mut tree = Tree {
            kind,
            shape,
            b0,
            gen_mx,
            q,
            m,
            root_id,
            shift_depth,
            denom: Vec::new(),
        };
        tree.denom = (0..DENOM_TABLE as u32).map(|d| tree.geo_denom(d)).collect();
        Ok(tree)
    }

    /// The random state of the root.
    pub fn root_state(&self) -> State {
        let mut seed = [0u8; 20];
        seed[16..].copy_from_slice(&self.root_id.to_be_bytes());
        Sha1::digest(seed).into()
    }

    /// The expected branching factor of a geometric node at `depth`.
    fn geo_target(&self, depth: u32) -> f64 {
        let b0 = self.b0;
        let gen_mx = f64::from(self.gen_mx);
        if depth == 0 {
            return b0;
        }
        let d = f64::from(depth);
        match self.shape {
            Shape::ExpDec => b0 * d.powf(-b0.ln() / gen_mx.ln()),
            Shape::Cyclic => {
                if i64::from(depth) > 5 * i64::from(self.gen_mx) {
                    0.0
                } else {
                    b0.powf((2.0 * std::f64::consts::PI * d / gen_mx).sin())
                }
            }
            Shape::Fixed => {
                if i64::from(depth) < i64::from(self.gen_mx) {
                    b0
                } else {
                    0.0
                }
            }
            Shape::Linear => b0 * (1.0 - d / gen_mx),
        }
    }

    /// `ln(1 − p)` for a geometric node at `depth`, where `p = 1/(1 + b_depth)`.
    fn geo_denom(&self, depth: u32) -> f64 {
        let p = 1.0 / (1.0 + self.geo_target(depth));
        (1.0 - p).ln()
    }

    /// The number of children of the node with random state `state` at `depth`.
    #[inline]
    pub fn num_children(&self, state: &State, depth: u32) -> u32 {
        if self.kind == TreeType::Binomial && depth == 0 {
            // Only a binomial root may have more than MAX_CHILDREN children (⌊b⌋ ≤ ⌈b⌉).
            return self.b0.floor() as u32;
        }
        let geometric = match self.kind {
            TreeType::Binomial => false,
            TreeType::Geometric => true,
            TreeType::Hybrid => f64::from(depth) < self.shift_depth * f64::from(self.gen_mx),
        };
        let n = if geometric {
            let denom = match self.denom.get(depth as usize) {
                Some(&v) => v,
                None => self.geo_denom(depth),
            };
            let u = probability(state);
            ((1.0 - u).ln() / denom).floor() as i32
        } else if probability(state) < self.q {
            self.m
        } else {
            0
        };
        n.clamp(0, MAX_CHILDREN) as u32
    }
}

/// The node's random number on [0, 1): its last four state bytes, big-endian, to 31 bits,
/// over 2³¹.
#[inline]
fn probability(state: &State) -> f64 {
    let r = u32::from_be_bytes([state[16], state[17], state[18], state[19]]) & 0x7fff_ffff;
    f64::from(r) / 2_147_483_648.0
}

/// The SHA-1 initial hash value (FIPS 180-4, 5.3.1).
const SHA1_IV: [u32; 5] = [
    0x6745_2301,
    0xEFCD_AB89,
    0x98BA_DCFE,
    0x1032_5476,
    0xC3D2_E1F0,
];

/// The state of child `i` of the node with state `parent`: SHA-1(parent ‖ i as 4 bytes,
/// big-endian). The 24-byte message fits one block, padded here by hand so that a child
/// costs one call of the crate's compression function and no buffering. Not inlined, so
/// that the 64-byte block is not part of every frame of the (deep) recursion.
#[inline(never)]
pub fn spawn(parent: &State, i: u32) -> State {
    let mut block = [0u8; 64];
    block[..20].copy_from_slice(parent);
    block[20..24].copy_from_slice(&i.to_be_bytes());
    block[24] = 0x80;
    block[56..].copy_from_slice(&(24u64 * 8).to_be_bytes());
    let mut h = SHA1_IV;
    sha1::block_api::compress(&mut h, &[block]);
    let mut out = [0u8; 20];
    for (chunk, word) in out.chunks_exact_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// Counts the nodes of `tree` with the fork-join context `f`.
pub fn count<F: Fork>(f: F, tree: &Tree) -> Counts {
    visit(f, tree, &tree.root_state(), 0).counts()
}

/// Bits of `Partial::leaves_depth` that hold the leaf count; the depth sits above them.
const LEAF_BITS: u32 = 44;
const LEAF_MASK: u64 = (1 << LEAF_BITS) - 1;

/// `Counts` during a traversal, in two words so that a subtree's result comes back in
/// registers rather than through memory.
#[derive(Clone, Copy)]
struct Partial {
    nodes: u64,
    /// Leaves in the low `LEAF_BITS` bits, the greatest depth above them.
    leaves_depth: u64,
}

impl Partial {
    fn leaf(depth: u32) -> Partial {
        assert!(
            depth < 1 << (64 - LEAF_BITS),
            "uts: depth {depth} is deeper than this kernel counts"
        );
        Partial {
            nodes: 1,
            leaves_depth: 1 | (u64::from(depth) << LEAF_BITS),
        }
    }

    #[inline]
    fn merge(self, o: Partial) -> Partial {
        let leaves = (self.leaves_depth & LEAF_MASK) + (o.leaves_depth & LEAF_MASK);
        let depth = (self.leaves_depth >> LEAF_BITS).max(o.leaves_depth >> LEAF_BITS);
        Partial {
            nodes: self.nodes + o.nodes,
            leaves_depth: leaves | (depth << LEAF_BITS),
        }
    }

    fn counts(self) -> Counts {
        Counts {
            nodes: self.nodes,
            leaves: self.leaves_depth & LEAF_MASK,
            max_depth: (self.leaves_depth >> LEAF_BITS) as u32,
        }
    }
}

/// Counts the subtree of the node with state `state` at `depth`.
fn visit<F: Fork>(f: F, tree: &Tree, state: &State, depth: u32) -> Partial {
    let n = tree.num_children(state, depth);
    if n == 0 {
        return Partial::leaf(depth);
    }
    let mut c = visit_children(f, tree, state, depth + 1, 0, n);
    c.nodes += 1;
    c
}

/// Counts the subtrees of children `lo..hi` (at `depth`) of the node with state `parent`,
/// splitting the range in two with a join until it holds one child.
fn visit_children<F: Fork>(
    f: F,
    tree: &Tree,
    parent: &State,
    depth: u32,
    lo: u32,
    hi: u32,
) -> Partial {
    if hi - lo == 1 {
        let child = spawn(parent, lo);
        return visit(f, tree, &child, depth);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = f.join(
        move |f| visit_children(f, tree, parent, depth, lo, mid),
        move |f| visit_children(f, tree, parent, depth, mid, hi),
    );
    a.merge(b)
}

/// [`Tree::num_children`] for the C++ peers.
///
/// # Safety
/// `tree` points to a live `Tree` and `state` to a `State`.
unsafe extern "C" fn children_ffi(
    tree: *const std::ffi::c_void,
    state: *const u8,
    depth: u32,
) -> u32 {
    // SAFETY: by the contract; `State` is a byte array, so any address is aligned.
    let (tree, state) = unsafe { (&*tree.cast::<Tree>(), &*state.cast::<State>()) };
    tree.num_children(state, depth)
}

/// [`spawn`] for the C++ peers: the state of child `i` of `parent`, written to `out`.
///
/// # Safety
/// `parent` points to a `State`, `out` to 20 writable bytes.
unsafe extern "C" fn child_ffi(parent: *const u8, i: u32, out: *mut u8) {
    // SAFETY: by the contract; `State` is a byte array, so any address is aligned.
    unsafe { *out.cast::<State>() = spawn(&*parent.cast::<State>(), i) }
}

/// One traversal of a tree, as a runtime task.
struct Traverse<'a>(&'a Tree);

impl Task for Traverse<'_> {
    type Output = Counts;
    fn call<F: Fork>(self, f: F) -> Counts {
        count(f, self.0)
    }
}

/// A UTS tree ready to be traversed, with the counts a traversal must find.
pub struct UtsRun {
    tree: Tree,
    expected: Counts,
    last: Option<Counts>,
}

impl UtsRun {
    /// Traverses `tree` on each run and checks the result against `expected`.
    pub fn new(tree: Tree, expected: Counts) -> UtsRun {
        UtsRun {
            tree,
            expected,
            last: None,
        }
    }

    /// What the last run counted, if any.
    pub fn last(&self) -> Option<Counts> {
        self.last
    }
}

impl Instance for UtsRun {
    fn reset(&mut self) {
        self.last = None;
    }

    fn run(&mut self, rt: &Runtime) {
        self.last = Some(match rt.peer() {
            Some(p) => {
                let c = p.uts(&ffi::Uts {
                    tree: (&self.tree as *const Tree).cast(),
                    root: self.tree.root_state(),
                    children: children_ffi,
                    child: child_ffi,
                });
                Counts {
                    nodes: c.nodes,
                    leaves: c.leaves,
                    max_depth: c.max_depth,
                }
            }
            None => rt.exec(Traverse(&self.tree)),
        });
    }

    fn verify(&self) -> Result<(), String> {
        bench::verify("uts", self.last, |got| {
            let e = self.expected;
            (got == e).then_some(()).ok_or_else(|| {
                format!(
                    "uts: counted {} nodes, {} leaves, depth {}; expected {} nodes, {} \
                     leaves, depth {}",
                    got.nodes, got.leaves, got.max_depth, e.nodes, e.leaves, e.max_depth
                )
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_is_sha1_of_parent_and_index() {
        let parent: State = Sha1::digest(b"uts").into();
        for i in [0u32, 1, 7, 99, 0x0102_0304] {
            let mut h = Sha1::new();
            h.update(parent);
            h.update(i.to_be_bytes());
            let want: State = h.finalize().into();
            assert_eq!(spawn(&parent, i), want, "child {i}");
        }
    }

    #[test]
    fn denominators_are_computed_as_on_the_fly() {
        for name in ["T1", "T2", "T4", "T5"] {
            let tree = Tree::parse(NamedTree::find(name).unwrap().params).unwrap();
            for d in 0..DENOM_TABLE as u32 {
                assert_eq!(
                    tree.denom[d as usize].to_bits(),
                    tree.geo_denom(d).to_bits()
                );
            }
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(Tree::parse("-t 7").is_err());
        assert!(Tree::parse("-a 9").is_err());
        assert!(Tree::parse("-x 1").is_err());
        assert!(Tree::parse("-b").is_err());
        assert!(Tree::parse("-q 1.5").is_err());
        assert!(Uts.instance("T9").is_err());
    }
}
