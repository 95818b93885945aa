//! reduce-nqueens: the N-Queens count as a reduction over tasks: a task holds a board
//! filled up to some row, pushes one task per legal column but the last and goes on
//! with that one; a full board yields 1. The `join` version is the catalogue's
//! [`queens`](super::nqueens::queens); both use its board and BOTS legality test, and the
//! count is checked against the known solution counts.

use super::nqueens::{self, Board, MAX_N};
use crate::bench::{Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::reduction::{self, Checked, Reduce};
use crate::runtime::RuntimeKind;
use std::hint::black_box;

/// The reduce-nqueens kernel of the catalogue.
pub struct ReduceNQueens;

impl Bench for ReduceNQueens {
    fn name(&self) -> &'static str {
        "reduce-nqueens"
    }

    fn about(&self) -> &'static str {
        "N-Queens solutions as tasks pushed per legal placement, counts summed"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "8",
            small: "11",
            quick: "12",
            full: "13",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        reduction::supports(kind, false)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = crate::bench::count("reduce-nqueens", size, "n", 1, MAX_N as u64)? as usize;
        let expected = nqueens::known_solutions(n).expect("n is in 1..=MAX_N");
        Ok(Checked::boxed(QueensRun { n }, expected))
    }
}

struct QueensRun {
    n: usize,
}

impl Reduce for QueensRun {
    /// The next row to fill and the board so far.
    type Task = (usize, Board);
    type Out = u64;

    fn root(&self) -> (usize, Board) {
        (0, [0; MAX_N])
    }

    fn identity(&self) -> u64 {
        0
    }

    fn op(&self, a: u64, b: u64) -> u64 {
        a + b
    }

    fn expand(
        &self,
        (mut row, mut a): (usize, Board),
        push: &mut impl FnMut((usize, Board)),
    ) -> u64 {
        let n = black_box(self.n);
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
                push((row + 1, b));
                cols &= cols - 1;
            }
            a[row] = cols.trailing_zeros() as u8;
            row += 1;
        }
    }

    fn join<F: Fork>(&self, f: F) -> u64 {
        nqueens::queens(f, black_box(self.n), 0, [0; MAX_N])
    }

    fn describe(&self) -> String {
        format!("reduce-nqueens({}) solutions", self.n)
    }
}
