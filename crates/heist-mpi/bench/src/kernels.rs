//! The kernels of the MPI driver, each written as a task body for
//! `heist_mpi::reduce_tasks` and checked against its one-node answer:
//!
//! - uts: heist-bench's UTS trees (`kernels::uts`: the SHA-1 tree, the published
//!   counts) with reduce-uts's task (`kernels::reduce_uts`: push the children but the
//!   first, go on down); T1XXL is added here with its published node count and depth.
//! - nqueens: heist-bench's board and BOTS legality test (`kernels::nqueens`) with
//!   reduce-nqueens's task; checked against the known solution counts.
//! - knapsack: the seeded instance and the dynamic-programming answer copied from
//!   heist-bench's `kernels/knapsack.rs` (its instance is private there), with the best
//!   value as heist-mpi's shared bound.
//! - pi: the adaptive quadrature copied from heist-bench's `kernels/pi.rs` (private
//!   there), checked against its sequential run: the same segment count and |Δπ| ≤ 1e-9.

use heist_bench::kernels::nqueens::{self, Board, MAX_N};
use heist_bench::kernels::uts::{self, State, Tree};
use serde::{Deserialize, Serialize};

/// A kernel's verdict and the amount of work it did (UTS nodes, N-Queens solutions,
/// knapsack and pi tasks), for the rate column.
pub struct Checked {
    pub verdict: Result<String, String>,
    pub work: u64,
}

// ---- uts -------------------------------------------------------------------------------

/// T1XXL, the extra-extra-large geometric tree of the UTS distribution (its leaf count
/// is not published).
const T1XXL: (&str, u64, u32) = ("-t 1 -a 3 -d 15 -b 4 -r 19", 4_230_646_601, 15);

/// What a UTS traversal counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UtsCounts {
    pub nodes: u64,
    pub leaves: u64,
    pub max_depth: u32,
}

/// The tree a size names and its expected counts (`None` leaves: not published).
pub fn uts_tree(size: &str) -> Result<(Tree, u64, Option<u64>, u32), String> {
    if size.eq_ignore_ascii_case("T1XXL") {
        let (params, nodes, depth) = T1XXL;
        return Ok((Tree::parse(params)?, nodes, None, depth));
    }
    let (tree, c) = uts::tree_of_size(size)?;
    Ok((tree, c.nodes, Some(c.leaves), c.max_depth))
}

pub fn uts_op(a: UtsCounts, b: UtsCounts) -> UtsCounts {
    UtsCounts {
        nodes: a.nodes + b.nodes,
        leaves: a.leaves + b.leaves,
        max_depth: a.max_depth.max(b.max_depth),
    }
}

/// reduce-uts's task: count this node, push its children but the first, go on with it.
#[inline]
pub fn uts_task(
    tree: &Tree,
    (mut s, mut d): (State, u32),
    push: impl Fn((State, u32)),
) -> UtsCounts {
    let mut c = UtsCounts::default();
    loop {
        c.nodes += 1;
        let n = tree.num_children(&s, d);
        if n == 0 {
            c.leaves += 1;
            c.max_depth = c.max_depth.max(d);
            return c;
        }
        for i in 1..n {
            push((uts::spawn(&s, i), d + 1));
        }
        s = uts::spawn(&s, 0);
        d += 1;
    }
}

pub fn uts_check(got: UtsCounts, nodes: u64, leaves: Option<u64>, depth: u32) -> Checked {
    let ok = got.nodes == nodes && leaves.is_none_or(|l| l == got.leaves) && got.max_depth == depth;
    let text = format!(
        "{} nodes, {} leaves, depth {} (expected {nodes} nodes, {} leaves, depth {depth})",
        got.nodes,
        got.leaves,
        got.max_depth,
        leaves.map_or("unpublished".into(), |l| l.to_string())
    );
    Checked {
        verdict: if ok { Ok(text) } else { Err(text) },
        work: got.nodes,
    }
}

// ---- nqueens ---------------------------------------------------------------------------

/// The next row and the board so far (rows as u32 for a compact encoding).
pub type QueensTask = (u32, Board);

/// reduce-nqueens's task: push a board per legal column but the last, go on with it.
#[inline]
pub fn queens_task(n: usize, (row, mut a): QueensTask, push: impl Fn(QueensTask)) -> u64 {
    let mut row = row as usize;
    loop {
        if row == n {
            return 1;
        }
        let mut cols = nqueens::legal_columns(n, row, &a);
        if cols == 0 {
            return 0;
        }
        while cols & (cols - 1) != 0 {
            let mut b = a;
            b[row] = cols.trailing_zeros() as u8;
            push((row as u32 + 1, b));
            cols &= cols - 1;
        }
        a[row] = cols.trailing_zeros() as u8;
        row += 1;
    }
}

pub fn queens_n(size: &str) -> Result<usize, String> {
    match size.parse::<usize>() {
        Ok(n) if (1..=MAX_N).contains(&n) => Ok(n),
        _ => Err(format!("nqueens size `{size}`: expected n in 1..={MAX_N}")),
    }
}

pub fn queens_check(n: usize, got: u64) -> Checked {
    let want = nqueens::known_solutions(n).expect("n is in range");
    let text = format!("{got} solutions of {n} queens (known: {want})");
    Checked {
        verdict: if got == want { Ok(text) } else { Err(text) },
        work: got,
    }
}

// ---- knapsack (instance and answer from heist-bench's kernels/knapsack.rs) -------------

#[derive(Clone, Copy, Debug)]
struct Item {
    weight: u64,
    value: u64,
}

/// A knapsack instance: items by value per weight, best first, and the capacity.
pub struct Knapsack {
    items: Vec<Item>,
    pub capacity: u64,
}

/// The next item, the capacity left and the value so far.
pub type KnapsackTask = (u32, u64, u64);

impl Knapsack {
    /// heist-bench's seeded instance of `n` items (Pisinger's strongly correlated:
    /// weights in 1..=1000, values weight + 100, capacity half the total weight).
    pub fn seeded(n: usize) -> Knapsack {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ n as u64;
        let mut next = move |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let mut items: Vec<Item> = (0..n)
            .map(|_| {
                let weight = 1 + next(1000);
                Item {
                    weight,
                    value: weight + 100,
                }
            })
            .collect();
        items.sort_by(|a, b| (b.value * a.weight).cmp(&(a.value * b.weight)));
        let capacity = items.iter().map(|i| i.weight).sum::<u64>() / 2;
        Knapsack { items, capacity }
    }

    /// The best value by dynamic programming over capacities.
    pub fn best_by_dp(&self) -> u64 {
        let mut best = vec![0u64; self.capacity as usize + 1];
        for it in &self.items {
            let w = it.weight as usize;
            for c in (w..best.len()).rev() {
                best[c] = best[c].max(best[c - w] + it.value);
            }
        }
        best[self.capacity as usize]
    }

    /// Whether the subtree at item `i` may beat `best`; at a leaf, `raise`s the bound.
    #[inline]
    fn worth(&self, i: usize, cap: u64, value: u64, best: i64, raise: &impl Fn(u64)) -> bool {
        let Some(it) = self.items.get(i) else {
            if value as i64 > best {
                raise(value);
            }
            return false;
        };
        let bound = value + (cap * it.value).div_ceil(it.weight);
        bound as i64 > best
    }

    /// heist-bench's knapsack task: push the skip branch, go on with the take branch;
    /// the best value so far is the shared bound (`best` reads it, `raise` raises it).
    #[inline]
    pub fn task(
        &self,
        (i, mut cap, mut value): KnapsackTask,
        best: impl Fn() -> i64,
        raise: impl Fn(u64),
        push: impl Fn(KnapsackTask),
    ) -> u64 {
        let mut i = i as usize;
        while self.worth(i, cap, value, best(), &raise) {
            let it = self.items[i];
            if it.weight <= cap {
                push((i as u32 + 1, cap, value));
                cap -= it.weight;
                value += it.value;
            }
            i += 1;
        }
        value
    }
}

pub fn knapsack_check(n: usize, got: u64, want: u64, tasks: u64) -> Checked {
    let text = format!("best value {got} of {n} items (dynamic programming: {want})");
    Checked {
        verdict: if got == want { Ok(text) } else { Err(text) },
        work: tasks,
    }
}

// ---- pi (from heist-bench's kernels/pi.rs) ---------------------------------------------

/// A segment `[low, low + step]` and its trapezoid estimate.
#[derive(Clone, Copy, Serialize, Deserialize)]
pub struct Segment {
    low: f64,
    step: f64,
    area: f64,
}

fn circle(x: f64) -> f64 {
    (1.0 - x * x).max(0.0).sqrt()
}

fn trapezoid(low: f64, step: f64) -> f64 {
    step / 2.0 * (circle(low) + circle(low + step))
}

pub fn pi_root() -> Segment {
    Segment {
        low: 0.0,
        step: std::hint::black_box(1.0),
        area: trapezoid(0.0, 1.0),
    }
}

#[inline]
fn pi_split(tol: f64, s: Segment) -> Option<(Segment, Segment)> {
    let half = s.step / 2.0;
    let a1 = trapezoid(s.low, half);
    let a2 = trapezoid(s.low + half, half);
    let dif = (s.area - (a1 + a2)).abs();
    (dif >= 3.0 * s.step * tol).then_some((
        Segment {
            low: s.low,
            step: half,
            area: a1,
        },
        Segment {
            low: s.low + half,
            step: half,
            area: a2,
        },
    ))
}

/// pi's task: push the left half, go on with the right; a finished segment yields its
/// area and a count of one.
#[inline]
pub fn pi_task(tol: f64, mut s: Segment, push: impl Fn(Segment)) -> (f64, u64) {
    while let Some((l, r)) = pi_split(tol, s) {
        push(l);
        s = r;
    }
    (s.area, 1)
}

/// The sequential run: area and segment count.
pub fn pi_sequential(tol: f64) -> (f64, u64) {
    let mut stack = vec![pi_root()];
    let (mut area, mut n) = (0.0, 0);
    while let Some(s) = stack.pop() {
        match pi_split(tol, s) {
            Some((l, r)) => {
                stack.push(r);
                stack.push(l);
            }
            None => {
                area += s.area;
                n += 1;
            }
        }
    }
    (area, n)
}

pub fn pi_tol(size: &str) -> Result<f64, String> {
    match size.parse::<f64>() {
        Ok(t) if t > 0.0 && t < 1.0 => Ok(t),
        _ => Err(format!("pi size `{size}`: expected a tolerance in (0, 1)")),
    }
}

pub fn pi_check(got: (f64, u64), want: (f64, u64)) -> Checked {
    let (pi, seq) = (4.0 * got.0, 4.0 * want.0);
    let ok =
        got.1 == want.1 && (pi - seq).abs() <= 1e-9 && (pi - std::f64::consts::PI).abs() <= 1e-9;
    let text = format!(
        "pi = {pi:.12} from {} segments (sequential: {seq:.12} from {})",
        got.1, want.1
    );
    Checked {
        verdict: if ok { Ok(text) } else { Err(text) },
        work: got.1,
    }
}
