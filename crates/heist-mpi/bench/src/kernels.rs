//! The kernels of the MPI driver, each a task body for `heist_mpi::reduce_tasks` checked
//! against its one-node answer. The task bodies, instances and references are
//! heist-bench's own (its reduction kernels'); this file adds what a run across ranks
//! reports:
//!
//! - uts: reduce-uts's task over heist-bench's UTS trees (`kernels::uts`, the published
//!   counts); T1XXL is added here with its published node count and depth.
//! - nqueens: reduce-nqueens's task; checked against the known solution counts.
//! - knapsack: heist-bench's seeded instance and task, with the best value as
//!   heist-mpi's shared bound; checked against dynamic programming.
//! - pi: heist-bench's adaptive quadrature, checked against its sequential run: the same
//!   segment count and |Δπ| ≤ 1e-9.

use heist_bench::kernels::nqueens;
use heist_bench::kernels::uts::{self, Counts, Tree};

/// A kernel's verdict and the amount of work it did (UTS nodes, N-Queens solutions,
/// knapsack and pi tasks), for the rate column.
pub struct Checked {
    pub verdict: Result<String, String>,
    pub work: u64,
}

impl Checked {
    fn new(ok: bool, text: String, work: u64) -> Checked {
        Checked {
            verdict: if ok { Ok(text) } else { Err(text) },
            work,
        }
    }
}

// ---- uts -------------------------------------------------------------------------------

/// T1XXL, the extra-extra-large geometric tree of the UTS distribution (its leaf count
/// is not published).
const T1XXL: (&str, u64, u32) = ("-t 1 -a 3 -d 15 -b 4 -r 19", 4_230_646_601, 15);

/// The tree a size names and its expected counts (`None` leaves: not published).
pub fn uts_tree(size: &str) -> Result<(Tree, u64, Option<u64>, u32), String> {
    if size.eq_ignore_ascii_case("T1XXL") {
        let (params, nodes, depth) = T1XXL;
        return Ok((Tree::parse(params)?, nodes, None, depth));
    }
    let (tree, c) = uts::tree_of_size(size)?;
    Ok((tree, c.nodes, Some(c.leaves), c.max_depth))
}

pub fn uts_check(got: Counts, nodes: u64, leaves: Option<u64>, depth: u32) -> Checked {
    let ok = got.nodes == nodes && leaves.is_none_or(|l| l == got.leaves) && got.max_depth == depth;
    let text = format!(
        "{} nodes, {} leaves, depth {} (expected {nodes} nodes, {} leaves, depth {depth})",
        got.nodes,
        got.leaves,
        got.max_depth,
        leaves.map_or("unpublished".into(), |l| l.to_string())
    );
    Checked::new(ok, text, got.nodes)
}

// ---- nqueens ---------------------------------------------------------------------------

pub fn queens_check(n: usize, got: u64) -> Checked {
    let want = nqueens::known_solutions(n).expect("n is in range");
    let text = format!("{got} solutions of {n} queens (known: {want})");
    Checked::new(got == want, text, got)
}

// ---- knapsack and pi ------------------------------------------------------------------

pub fn knapsack_check(n: usize, got: u64, want: u64, tasks: u64) -> Checked {
    let text = format!("best value {got} of {n} items (dynamic programming: {want})");
    Checked::new(got == want, text, tasks)
}

pub fn pi_check(got: (f64, u64), want: (f64, u64)) -> Checked {
    let text = format!(
        "pi = {:.12} from {} segments (sequential: {:.12} from {})",
        4.0 * got.0,
        got.1,
        4.0 * want.0,
        want.1
    );
    match heist_bench::kernels::pi::check(got, want) {
        Ok(()) => Checked::new(true, text, got.1),
        Err(e) => Checked::new(false, format!("{text}: {e}"), got.1),
    }
}
