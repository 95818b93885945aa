//! nqueens: count the solutions of the N-Queens problem by backtracking, one task per
//! legal placement (BENCHMARKS.md "Fork-join, recursive"; Prell's thesis §2.8 NQueens, the
//! BOTS / MIT Cilk code; the Lace paper §6 `queens`).
//!
//! As in BOTS, a board is a small array of column numbers copied into every task, and a
//! placement is legal when the BOTS `ok` test (every pair of queens on the board so far)
//! accepts it. The legal columns of a row are found first, then visited by recursive
//! binary splitting of that set with `join`, so each legal placement becomes one leaf of
//! the join tree. The count is checked against the known solution counts (OEIS A000170).

use crate::bench::{count, verify_eq, Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::peers::ffi;
use crate::runtime::{Runtime, RuntimeKind, Task};
use std::hint::black_box;

/// Largest board size accepted (the last entry of [`SOLUTIONS`]).
pub const MAX_N: usize = 18;

/// Number of solutions for n = 1..=18 (OEIS A000170).
const SOLUTIONS: [u64; MAX_N] = [
    1,
    0,
    0,
    2,
    10,
    4,
    40,
    92,
    352,
    724,
    2_680,
    14_200,
    73_712,
    365_596,
    2_279_184,
    14_772_512,
    95_815_104,
    666_090_624,
];

/// A board: the column of the queen in each row placed so far.
pub type Board = [u8; MAX_N];

/// The nqueens kernel of the catalogue.
pub struct NQueens;

impl Bench for NQueens {
    fn name(&self) -> &'static str {
        "nqueens"
    }

    fn about(&self) -> &'static str {
        "count N-Queens solutions (BOTS), a task per legal placement"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "8",
            small: "11",
            quick: "12",
            full: "14",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        !kind.opt_in() || crate::peers::supports(kind, false)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        Ok(Box::new(QueensInstance::new(parse_n(size)?)))
    }
}

/// Parses the board size `n` (1..=18, the known solution counts).
fn parse_n(size: &str) -> Result<usize, String> {
    Ok(count("nqueens", size, "n", 1, MAX_N as u64)? as usize)
}

/// The known number of solutions for an `n × n` board.
pub fn known_solutions(n: usize) -> Option<u64> {
    n.checked_sub(1).and_then(|i| SOLUTIONS.get(i)).copied()
}

/// BOTS `ok`: no two of the first `rows` queens of `a` attack each other.
fn ok(rows: usize, a: &Board) -> bool {
    let a = &a[..rows];
    a.iter().enumerate().all(|(i, &p)| {
        a[i + 1..].iter().enumerate().all(|(d, &q)| {
            let d = d as i32 + 1;
            let (p, q) = (i32::from(p), i32::from(q));
            q != p && q != p - d && q != p + d
        })
    })
}

/// The columns (as a bit set) where a queen can go in row `row` of board `a`.
///
/// Out of line so that every runtime runs the same machine code for the kernel's work:
/// inlined, each runtime's task body got its own copy, laid out differently (heist's
/// reduction ran 2–3 % behind rayon's join on identical work; out of line, 2–4 % ahead).
#[inline(never)]
pub fn legal_columns(n: usize, row: usize, a: &Board) -> u32 {
    let mut legal = 0;
    for col in 0..n {
        let mut b = *a;
        b[row] = col as u8;
        if ok(row + 1, &b) {
            legal |= 1 << col;
        }
    }
    legal
}

/// [`legal_columns`] for the C++ peers, whose boards are `[u8; MAX_N]` too.
extern "C" fn legal_ffi(n: u32, row: u32, board: *const u8) -> u32 {
    // SAFETY: the C++ kernel passes a pointer to its `Board`, MAX_N bytes like ours.
    let a = unsafe { &*board.cast::<Board>() };
    legal_columns(n as usize, row as usize, a)
}

/// Splits a bit set into its lower and upper halves by number of members.
fn split_set(set: u32) -> (u32, u32) {
    let mut upper = set;
    for _ in 0..set.count_ones() / 2 {
        upper &= upper - 1;
    }
    (set ^ upper, upper)
}

/// Solutions that extend board `a`, whose rows `0..row` are filled.
pub fn queens<F: Fork>(f: F, n: usize, row: usize, a: Board) -> u64 {
    if row == n {
        return 1;
    }
    place(f, n, row, a, legal_columns(n, row, &a))
}

/// Solutions with the queen of `row` in one of the columns of `cols`, one task per column.
fn place<F: Fork>(f: F, n: usize, row: usize, a: Board, cols: u32) -> u64 {
    match cols.count_ones() {
        0 => 0,
        1 => {
            let mut b = a;
            b[row] = cols.trailing_zeros() as u8;
            queens(f, n, row + 1, b)
        }
        _ => {
            let (lo, hi) = split_set(cols);
            let (x, y) = f.join(
                move |f| place(f, n, row, a, lo),
                move |f| place(f, n, row, a, hi),
            );
            x + y
        }
    }
}

struct QueensTask(usize);

impl Task for QueensTask {
    type Output = u64;
    fn call<F: Fork>(self, f: F) -> u64 {
        queens(f, self.0, 0, [0; MAX_N])
    }
}

/// One nqueens run: the board size, the known count and the last result.
struct QueensInstance {
    n: usize,
    expected: u64,
    result: Option<u64>,
}

impl QueensInstance {
    fn new(n: usize) -> Self {
        let expected = known_solutions(n).expect("n checked by parse_n");
        QueensInstance {
            n,
            expected,
            result: None,
        }
    }
}

impl Instance for QueensInstance {
    fn run(&mut self, rt: &Runtime) {
        let n = black_box(self.n);
        self.result = Some(match rt.peer() {
            Some(p) => p.nqueens(n as u32, &ffi::NQueens { legal: legal_ffi }),
            None => rt.exec(QueensTask(n)),
        });
    }

    fn verify(&self) -> Result<(), String> {
        let what = format!("nqueens({}) solutions", self.n);
        verify_eq("nqueens", what, self.result, self.expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check_catches;

    #[test]
    fn small_boards_match_the_table() {
        let rt = Runtime::new(RuntimeKind::Seq, 1).unwrap();
        for n in 1..=9 {
            let mut inst = QueensInstance::new(n);
            inst.run(&rt);
            assert_eq!(inst.verify(), Ok(()), "n = {n}");
        }
    }

    #[test]
    fn corrupted_result_fails_verify() {
        let mut inst = QueensInstance::new(8);
        check_catches(RuntimeKind::Seq, &mut inst, &[&|i| i.result = Some(91)]);
    }

    #[test]
    fn split_set_halves() {
        assert_eq!(split_set(0b1011_0110), (0b0000_0110, 0b1011_0000));
        assert_eq!(split_set(0b100), (0, 0b100));
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_n("12"), Ok(12));
        assert!(parse_n("0").is_err());
        assert!(parse_n("19").is_err());
    }
}
