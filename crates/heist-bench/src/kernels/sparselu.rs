//! sparselu: the BOTS sparse LU factorisation of a block matrix whose all-zero blocks are
//! not allocated (BENCHMARKS.md "Fork-join, recursive"; Prell's thesis §2.8 LU, after the BOTS
//! OpenMP `sparselu`, single-producer version).
//!
//! The matrix has `NB × NB` blocks of `BS × BS` `f64`s; which blocks exist, and their
//! values, follow BOTS `genmat`. For each `kk`, in phases separated by the end of a join:
//! `lu0` factors the diagonal block; then `fwd` (blocks right of it) and `bdiv` (blocks
//! below it) run as independent tasks; then `bmod` updates each block `(ii, jj)` whose
//! row and column partners exist, allocating it (fill-in) if it was empty. The tasks of a
//! phase touch disjoint blocks, and are spawned by recursive binary splitting of the
//! phase's task list with `join`; each task gets its blocks as plain borrows.
//!
//! The block kernels use the loop orders that keep the inner loop contiguous; each block
//! element sees the same operations in the same order as in BOTS. The result is compared
//! with the sequential elision's, computed once at setup (same structure, every value
//! within 1e-9 relative).

use crate::bench::{parse_size, whole, Bench, Instance, Sizes};
use crate::fork::{Fork, SEQ};
use crate::peers::ffi;
use crate::runtime::{Runtime, RuntimeKind, Task};
use std::ffi::{c_int, c_void};

/// A block: `BS × BS` values, row-major.
pub(super) type Block = Box<[f64]>;

/// The sparselu kernel of the catalogue.
pub struct SparseLu;

impl Bench for SparseLu {
    fn name(&self) -> &'static str {
        "sparselu"
    }

    fn about(&self) -> &'static str {
        "BOTS sparse block LU, fwd/bdiv/bmod tasks per phase (size \"NB,BS\")"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "10,10",
            small: "40,32",
            quick: "40,32",
            full: "64,64",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        !kind.opt_in() || crate::peers::supports(kind, false)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let (nb, bs) = parse_nb_bs(size)?;
        Ok(Box::new(SparseLuInstance::new(nb, bs)))
    }
}

/// Parses `"NB,BS"` (blocks per side, block side), e.g. `"40,32"`.
pub(super) fn parse_nb_bs(size: &str) -> Result<(usize, usize), String> {
    let [nb, bs] = parse_size("sparselu", size, [("NB", None), ("BS", None)])?;
    let nb = whole("sparselu", "NB", nb, 1, 1024)? as usize;
    Ok((nb, whole("sparselu", "BS", bs, 1, 1024)? as usize))
}

/// A sparse block matrix: `nb × nb` optional blocks, row-major.
#[derive(Clone, PartialEq, Debug)]
pub struct Matrix {
    pub(super) nb: usize,
    pub(super) bs: usize,
    pub(super) blocks: Vec<Option<Block>>,
}

/// BOTS `genmat`'s structure: whether block `(ii, jj)` is allocated.
// `is_multiple_of` is newer (1.87) than the workspace's rust-version (1.80).
#[allow(clippy::manual_is_multiple_of)]
fn allocated(ii: usize, jj: usize) -> bool {
    let null = (ii < jj && ii % 3 != 0) || (ii > jj && jj % 3 != 0) || ii % 2 == 1 || jj % 2 == 1;
    !null || ii == jj || ii + 1 == jj || jj + 1 == ii
}

impl Matrix {
    /// BOTS `genmat`: the block structure above, values from its LCG in block order.
    pub fn generate(nb: usize, bs: usize) -> Self {
        let mut seed: u32 = 1325;
        let mut next = move || {
            seed = (3125 * seed) % 65536;
            (f64::from(seed) - 32768.0) / 16384.0
        };
        let blocks = (0..nb * nb)
            .map(|idx| {
                allocated(idx / nb, idx % nb).then(|| (0..bs * bs).map(|_| next()).collect())
            })
            .collect();
        Matrix { nb, bs, blocks }
    }

    /// The diagonal block `(kk, kk)` (always allocated).
    fn diag_mut(&mut self, kk: usize) -> &mut [f64] {
        self.blocks[kk * self.nb + kk]
            .as_deref_mut()
            .expect("diagonal blocks exist")
    }

    /// The `fwd`/`bdiv` tasks of step `kk` and the diagonal block they read.
    fn edge_tasks(&mut self, kk: usize) -> (&[f64], Vec<Edge<'_>>) {
        let nb = self.nb;
        let mut diag = None;
        let mut tasks = Vec::new();
        for (idx, slot) in self.blocks.iter_mut().enumerate() {
            let (ii, jj) = (idx / nb, idx % nb);
            match (ii == kk, jj == kk) {
                (true, true) => diag = slot.as_deref(),
                (true, false) if jj > kk => tasks.extend(slot.as_deref_mut().map(Edge::Fwd)),
                (false, true) if ii > kk => tasks.extend(slot.as_deref_mut().map(Edge::Bdiv)),
                _ => {}
            }
        }
        (diag.expect("diagonal blocks exist"), tasks)
    }

    /// The `bmod` tasks of step `kk`: block `(ii, jj)` for every allocated `(ii, kk)` and
    /// `(kk, jj)` with `ii, jj > kk`.
    fn mod_tasks(&mut self, kk: usize) -> Vec<Mod<'_>> {
        let nb = self.nb;
        let (upper, lower) = self.blocks.split_at_mut((kk + 1) * nb);
        let pivot_row = &upper[kk * nb + kk + 1..];
        let mut tasks = Vec::new();
        for row in lower.chunks_exact_mut(nb) {
            let (left, right) = row.split_at_mut(kk + 1);
            let Some(a) = left[kk].as_deref() else {
                continue;
            };
            for (c, b) in right.iter_mut().zip(pivot_row) {
                if let Some(b) = b.as_deref() {
                    tasks.push(Mod { a, b, c });
                }
            }
        }
        tasks
    }
}

/// BOTS `lu0`: in-place LU of a diagonal block (unit lower L below, U on and above).
pub(super) fn lu0(diag: &mut [f64], bs: usize) {
    for k in 0..bs {
        let (top, rest) = diag.split_at_mut((k + 1) * bs);
        let pivot_row = &top[k * bs..];
        for row in rest.chunks_exact_mut(bs) {
            row[k] /= pivot_row[k];
            let l = row[k];
            for (x, &u) in row[k + 1..].iter_mut().zip(&pivot_row[k + 1..]) {
                *x -= l * u;
            }
        }
    }
}

/// BOTS `fwd`: `col ← L⁻¹·col`, with L the unit lower part of `diag`.
pub(super) fn fwd(diag: &[f64], col: &mut [f64], bs: usize) {
    for k in 0..bs {
        let (top, rest) = col.split_at_mut((k + 1) * bs);
        let row_k = &top[k * bs..];
        for (i, row) in (k + 1..).zip(rest.chunks_exact_mut(bs)) {
            let l = diag[i * bs + k];
            for (x, &c) in row.iter_mut().zip(row_k) {
                *x -= l * c;
            }
        }
    }
}

/// BOTS `bdiv`: `row ← row·U⁻¹`, with U the upper part of `diag`.
pub(super) fn bdiv(diag: &[f64], row: &mut [f64], bs: usize) {
    for r in row.chunks_exact_mut(bs) {
        for k in 0..bs {
            let u_row = &diag[k * bs..(k + 1) * bs];
            r[k] /= u_row[k];
            let l = r[k];
            for (x, &u) in r[k + 1..].iter_mut().zip(&u_row[k + 1..]) {
                *x -= l * u;
            }
        }
    }
}

/// BOTS `bmod`: `inner ← inner − row·col`.
pub(super) fn bmod(row: &[f64], col: &[f64], inner: &mut [f64], bs: usize) {
    for (inner_row, a_row) in inner.chunks_exact_mut(bs).zip(row.chunks_exact(bs)) {
        for (&a, col_row) in a_row.iter().zip(col.chunks_exact(bs)) {
            for (x, &c) in inner_row.iter_mut().zip(col_row) {
                *x -= a * c;
            }
        }
    }
}

/// A task of the first phase: a block right of (`fwd`) or below (`bdiv`) the diagonal.
enum Edge<'a> {
    Fwd(&'a mut [f64]),
    Bdiv(&'a mut [f64]),
}

/// A task of the second phase: `c ← c − a·b`, allocating `c` if it is empty.
struct Mod<'a> {
    a: &'a [f64],
    b: &'a [f64],
    c: &'a mut Option<Block>,
}

/// Runs the `fwd`/`bdiv` tasks, splitting the list in halves with `join`.
fn run_edges<F: Fork>(f: F, diag: &[f64], tasks: &mut [Edge], bs: usize) {
    match tasks {
        [] => {}
        [Edge::Fwd(col)] => fwd(diag, col, bs),
        [Edge::Bdiv(row)] => bdiv(diag, row, bs),
        _ => {
            let (l, r) = tasks.split_at_mut(tasks.len() / 2);
            f.join(|f| run_edges(f, diag, l, bs), |f| run_edges(f, diag, r, bs));
        }
    }
}

/// Runs the `bmod` tasks, splitting the list in halves with `join`.
fn run_mods<F: Fork>(f: F, tasks: &mut [Mod], bs: usize) {
    match tasks {
        [] => {}
        [m] => {
            let c =
                m.c.get_or_insert_with(|| vec![0.0; bs * bs].into_boxed_slice());
            bmod(m.a, m.b, c, bs);
        }
        _ => {
            let (l, r) = tasks.split_at_mut(tasks.len() / 2);
            f.join(|f| run_mods(f, l, bs), |f| run_mods(f, r, bs));
        }
    }
}

/// Factors `m` in place: for each `kk`, `lu0`, then the `fwd`/`bdiv` phase, then the
/// `bmod` phase.
pub fn sparselu<F: Fork>(f: F, m: &mut Matrix) {
    let bs = m.bs;
    for kk in 0..m.nb {
        lu0(m.diag_mut(kk), bs);
        let (diag, mut edges) = m.edge_tasks(kk);
        run_edges(f, diag, &mut edges, bs);
        run_mods(f, &mut m.mod_tasks(kk), bs);
    }
}

struct SparseLuTask<'a>(&'a mut Matrix);

impl Task for SparseLuTask<'_> {
    type Output = ();
    fn call<F: Fork>(self, f: F) {
        sparselu(f, self.0);
    }
}

/// A matrix lent to the C++ peers, whose kernel (cpp/kernels.hpp `sparselu`) runs the
/// steps of [`sparselu`] with the same tasks: per step `kk`, `lu0` alone; then `fwd` and
/// `bdiv` tasks, each on its own block, reading the diagonal; then `bmod` tasks, each
/// writing its own block `(ii, jj)` and reading `(ii, kk)` and `(kk, jj)`, which no task
/// of that phase writes; `exists` only between phases. So every `&mut` made below is
/// the only reference to its block while it lives.
struct Blocks {
    slots: *mut Option<Block>,
    nb: usize,
    bs: usize,
}

impl Blocks {
    fn of(m: &mut Matrix) -> Blocks {
        Blocks {
            slots: m.blocks.as_mut_ptr(),
            nb: m.nb,
            bs: m.bs,
        }
    }

    /// Block `(ii, jj)`'s slot.
    ///
    /// # Safety
    /// `m` is a live `Blocks`, `ii, jj < nb`, and no one writes the slot meanwhile.
    unsafe fn slot<'a>(m: *const c_void, ii: usize, jj: usize) -> (&'a Blocks, *mut Option<Block>) {
        // SAFETY: by the contract `m` is live and the index is inside the matrix.
        unsafe {
            let m = &*m.cast::<Blocks>();
            (m, m.slots.add(ii * m.nb + jj))
        }
    }

    /// # Safety
    /// As for [`Blocks::slot`], between phases.
    unsafe extern "C" fn exists(m: *const c_void, ii: usize, jj: usize) -> c_int {
        // SAFETY: by the contract.
        unsafe { c_int::from((*Self::slot(m, ii, jj).1).is_some()) }
    }

    /// # Safety
    /// Called alone, for step `kk` (see the type's docs).
    unsafe extern "C" fn lu0(m: *const c_void, kk: usize) {
        // SAFETY: the diagonal block is reached by this call alone.
        let (b, d) = unsafe { Self::slot(m, kk, kk) };
        lu0(
            unsafe { (*d).as_deref_mut() }.expect("diagonal blocks exist"),
            b.bs,
        );
    }

    /// # Safety
    /// A task of step `kk`'s first phase (see the type's docs).
    unsafe extern "C" fn fwd(m: *const c_void, kk: usize, jj: usize) {
        // SAFETY: block (kk, jj) is this task's alone; the diagonal is only read.
        let (b, d, col) = unsafe {
            (
                Self::slot(m, kk, kk).0,
                &*Self::slot(m, kk, kk).1,
                &mut *Self::slot(m, kk, jj).1,
            )
        };
        fwd(
            d.as_deref().expect("diagonal"),
            col.as_deref_mut().expect("fwd block"),
            b.bs,
        );
    }

    /// # Safety
    /// A task of step `kk`'s first phase (see the type's docs).
    unsafe extern "C" fn bdiv(m: *const c_void, kk: usize, ii: usize) {
        // SAFETY: block (ii, kk) is this task's alone; the diagonal is only read.
        let (b, d, row) = unsafe {
            (
                Self::slot(m, kk, kk).0,
                &*Self::slot(m, kk, kk).1,
                &mut *Self::slot(m, ii, kk).1,
            )
        };
        bdiv(
            d.as_deref().expect("diagonal"),
            row.as_deref_mut().expect("bdiv block"),
            b.bs,
        );
    }

    /// # Safety
    /// A task of step `kk`'s second phase (see the type's docs).
    unsafe extern "C" fn bmod(m: *const c_void, kk: usize, ii: usize, jj: usize) {
        // SAFETY: block (ii, jj) is this task's alone; (ii, kk) and (kk, jj) are only read
        // in this phase.
        let (b, row, col, inner) = unsafe {
            let (b, row) = Self::slot(m, ii, kk);
            (
                b,
                &*row,
                &*Self::slot(m, kk, jj).1,
                &mut *Self::slot(m, ii, jj).1,
            )
        };
        let bs = b.bs;
        let inner = inner.get_or_insert_with(|| vec![0.0; bs * bs].into_boxed_slice());
        bmod(
            row.as_deref().expect("row block"),
            col.as_deref().expect("column block"),
            inner,
            bs,
        );
    }
}

/// Compares the factored `got` with the reference: same allocated blocks, every value
/// within 1e-9 relative (absolute below magnitude 1).
pub(super) fn compare(got: &Matrix, reference: &Matrix) -> Result<(), String> {
    let pairs = got.blocks.iter().zip(&reference.blocks).enumerate();
    for (idx, (g, r)) in pairs {
        let (ii, jj) = (idx / got.nb, idx % got.nb);
        match (g, r) {
            (None, None) => {}
            (Some(g), Some(r)) => {
                let bad = g
                    .iter()
                    .zip(r.iter())
                    .position(|(x, y)| (x - y).abs() > 1e-9 * y.abs().max(1.0));
                if let Some(e) = bad {
                    return Err(format!(
                        "sparselu: block ({ii},{jj}) element {e} = {}, expected {}",
                        g[e], r[e]
                    ));
                }
            }
            _ => return Err(format!("sparselu: block ({ii},{jj}) allocated differently")),
        }
    }
    Ok(())
}

/// One sparselu run: the matrix being factored and the elision's factors.
struct SparseLuInstance {
    matrix: Matrix,
    reference: Matrix,
}

impl SparseLuInstance {
    fn new(nb: usize, bs: usize) -> Self {
        let mut reference = Matrix::generate(nb, bs);
        sparselu(SEQ, &mut reference);
        SparseLuInstance {
            matrix: Matrix::generate(nb, bs),
            reference,
        }
    }
}

impl Instance for SparseLuInstance {
    fn reset(&mut self) {
        self.matrix = Matrix::generate(self.reference.nb, self.reference.bs);
    }

    fn run(&mut self, rt: &Runtime) {
        match rt.peer() {
            Some(p) => {
                let m = Blocks::of(&mut self.matrix);
                let k = ffi::SparseLu {
                    m: (&m as *const Blocks).cast(),
                    nb: m.nb,
                    exists: Blocks::exists,
                    lu0: Blocks::lu0,
                    fwd: Blocks::fwd,
                    bdiv: Blocks::bdiv,
                    bmod: Blocks::bmod,
                };
                // SAFETY: `Blocks`' callbacks are sound when called as the C++ kernel
                // calls them (see `Blocks`), and `m` outlives the call.
                unsafe { p.sparselu(&k) }
            }
            None => rt.exec(SparseLuTask(&mut self.matrix)),
        }
    }

    fn verify(&self) -> Result<(), String> {
        compare(&self.matrix, &self.reference)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check_catches;

    /// The dense `n × n` matrix of `m` (empty blocks are zero).
    fn dense(m: &Matrix) -> Vec<f64> {
        let (nb, bs) = (m.nb, m.bs);
        let n = nb * bs;
        let mut d = vec![0.0; n * n];
        for (idx, block) in m.blocks.iter().enumerate() {
            let Some(block) = block else { continue };
            let (ii, jj) = (idx / nb, idx % nb);
            for (i, row) in block.chunks_exact(bs).enumerate() {
                let start = (ii * bs + i) * n + jj * bs;
                d[start..start + bs].copy_from_slice(row);
            }
        }
        d
    }

    /// max |L·U − A| / max (|L|·|U|), the backward error of the factorisation.
    fn backward_error(a: &Matrix, lu: &Matrix) -> f64 {
        let n = a.nb * a.bs;
        let (a, lu) = (dense(a), dense(lu));
        let l = |i: usize, k: usize| match i.cmp(&k) {
            std::cmp::Ordering::Greater => lu[i * n + k],
            std::cmp::Ordering::Equal => 1.0,
            std::cmp::Ordering::Less => 0.0,
        };
        let u = |k: usize, j: usize| if k <= j { lu[k * n + j] } else { 0.0 };
        let (mut err, mut scale) = (0.0f64, 0.0f64);
        for i in 0..n {
            for j in 0..n {
                let (mut s, mut s_abs) = (0.0, 0.0);
                for k in 0..n {
                    s += l(i, k) * u(k, j);
                    s_abs += (l(i, k) * u(k, j)).abs();
                }
                err = err.max((s - a[i * n + j]).abs());
                scale = scale.max(s_abs);
            }
        }
        err / scale
    }

    #[test]
    fn structure_follows_genmat() {
        let m = Matrix::generate(6, 2);
        let pattern: String = m
            .blocks
            .iter()
            .map(|b| if b.is_some() { 'x' } else { '.' })
            .collect();
        // Rows of the 6×6 block structure, from BOTS `genmat`'s rules.
        let rows = ["xxx.x.", "xxx...", "xxxx..", "..xxx.", "x..xxx", "....xx"];
        assert_eq!(pattern, rows.concat());
    }

    #[test]
    fn factors_reproduce_the_matrix() {
        for (nb, bs) in [(10, 10), (7, 3), (1, 5)] {
            let a = Matrix::generate(nb, bs);
            let mut lu = a.clone();
            sparselu(SEQ, &mut lu);
            let e = backward_error(&a, &lu);
            assert!(e < 1e-10, "NB={nb}, BS={bs}: backward error {e}");
        }
    }

    #[test]
    fn corrupted_result_fails_verify() {
        let mut inst = SparseLuInstance::new(10, 10);
        let changed = |i: &mut SparseLuInstance| {
            i.matrix.blocks[3 * 10 + 2].as_mut().unwrap()[5] += 1e-6;
        };
        // Block (1, 0), present in the reference.
        let dropped = |i: &mut SparseLuInstance| i.matrix.blocks[10] = None;
        check_catches(RuntimeKind::Seq, &mut inst, &[&changed, &dropped]);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_nb_bs("40,32"), Ok((40, 32)));
        assert_eq!(parse_nb_bs(" 10 , 10 "), Ok((10, 10)));
        assert!(parse_nb_bs("40").is_err());
        assert!(parse_nb_bs("0,4").is_err());
    }
}
