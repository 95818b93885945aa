//! matmul: Cilk's recursive matrix multiply `C += A·B` of `f64` matrices, splitting the
//! largest of the three dimensions (BENCHMARKS.md "Fork-join, recursive"; the Lace paper §6
//! `matmul`, the Cilk benchmark-set algorithm; Prell's thesis §2.8 Matmul).
//!
//! A split of the rows of `A` (and `C`) or of the columns of `B` (and `C`) gives two
//! independent products, joined in parallel. A split of the inner dimension gives two
//! products into the same `C`, run one after the other, so nothing races. The base case
//! is a naive loop on blocks of at most 64×64×64, the one cut-off the catalogue allows.
//!
//! Checked on every run: up to 512×512 against a naive product computed once at setup;
//! above, by Freivalds' test against two fixed vectors `x`, comparing `C·x` with
//! `A·(B·x)` (precomputed) within a rounding bound.

use crate::bench::{parse_size, whole, Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::peers::ffi;
use crate::runtime::{Runtime, RuntimeKind, Task};
use std::marker::PhantomData;

/// Largest extent of each dimension in the base case.
const BASE: usize = 64;
/// Largest `n` verified against a full naive product.
const FULL_CHECK_MAX: usize = 512;
/// Seed of the input generator.
const SEED: u64 = 0x6d61_746d_756c;

/// The matmul kernel of the catalogue.
pub struct Matmul;

impl Bench for Matmul {
    fn name(&self) -> &'static str {
        "matmul"
    }

    fn about(&self) -> &'static str {
        "Cilk recursive n×n f64 matrix multiply (split the largest dimension)"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "64",
            small: "512",
            quick: "1024",
            full: "2048",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        !kind.opt_in() || crate::peers::supports(kind, false)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let [n] = parse_size("matmul", size, [("n", None)])?;
        let n = whole("matmul", "n", n, 1, 32_768)? as usize;
        Ok(Box::new(MatmulInstance::new(n)))
    }
}

/// A read-only view of a rectangle of a row-major matrix.
#[derive(Clone, Copy)]
struct View<'a> {
    data: &'a [f64],
    off: usize,
    rows: usize,
    cols: usize,
    stride: usize,
}

impl<'a> View<'a> {
    fn new(data: &'a [f64], rows: usize, cols: usize) -> Self {
        assert_eq!(data.len(), rows * cols);
        View {
            data,
            off: 0,
            rows,
            cols,
            stride: cols,
        }
    }

    /// A `rows×cols` view of `data` whose rows start `stride` apart.
    fn strided(data: &'a [f64], rows: usize, cols: usize, stride: usize) -> Self {
        View {
            data,
            off: 0,
            rows,
            cols,
            stride,
        }
    }

    fn row(&self, i: usize) -> &'a [f64] {
        let start = self.off + i * self.stride;
        &self.data[start..start + self.cols]
    }

    fn split_rows(self) -> (Self, Self) {
        let h = self.rows / 2;
        let top = View { rows: h, ..self };
        let off = self.off + h * self.stride;
        (
            top,
            View {
                off,
                rows: self.rows - h,
                ..self
            },
        )
    }

    fn split_cols(self) -> (Self, Self) {
        let h = self.cols / 2;
        let left = View { cols: h, ..self };
        let off = self.off + h;
        (
            left,
            View {
                off,
                cols: self.cols - h,
                ..self
            },
        )
    }
}

/// An exclusive view of a rectangle of a row-major matrix: a `&mut` to the elements
/// `ptr + i·stride + j` for `i < rows`, `j < cols`.
///
/// Invariant: those elements lie inside the slice the root view was made from, and no
/// other live view or reference can reach them (views are only made by [`ViewMut::new`],
/// by splitting a view into two disjoint ones, which consumes it, or by reborrowing).
struct ViewMut<'a> {
    ptr: *mut f64,
    rows: usize,
    cols: usize,
    stride: usize,
    _borrow: PhantomData<&'a mut [f64]>,
}

// SAFETY: a `ViewMut` is an exclusive borrow of a set of `f64`s (see the invariant), like
// a `&mut [f64]`, which is `Send`.
unsafe impl Send for ViewMut<'_> {}

impl<'a> ViewMut<'a> {
    fn new(data: &'a mut [f64], rows: usize, cols: usize) -> Self {
        assert_eq!(data.len(), rows * cols);
        ViewMut {
            ptr: data.as_mut_ptr(),
            rows,
            cols,
            stride: cols,
            _borrow: PhantomData,
        }
    }

    /// Row `i` of the view.
    fn row(&mut self, i: usize) -> &mut [f64] {
        assert!(i < self.rows);
        // SAFETY: by the invariant, the `cols` elements from `ptr + i·stride` are in bounds
        // of the root slice and reachable only through this view; the returned borrow
        // holds `self` mutably, so no second row of this view is alive at the same time.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.wrapping_add(i * self.stride), self.cols) }
    }

    /// A shorter-lived view of the same elements (this one is unusable meanwhile).
    fn reborrow(&mut self) -> ViewMut<'_> {
        ViewMut {
            _borrow: PhantomData,
            ..*self
        }
    }

    /// Rows `0..h` and `h..rows`: disjoint, together the same elements.
    fn split_rows(self) -> (Self, Self) {
        let h = self.rows / 2;
        let bottom = ViewMut {
            ptr: self.ptr.wrapping_add(h * self.stride),
            rows: self.rows - h,
            ..self
        };
        (ViewMut { rows: h, ..self }, bottom)
    }

    /// Columns `0..h` and `h..cols`: disjoint, together the same elements.
    fn split_cols(self) -> (Self, Self) {
        let h = self.cols / 2;
        let right = ViewMut {
            ptr: self.ptr.wrapping_add(h),
            cols: self.cols - h,
            ..self
        };
        (ViewMut { cols: h, ..self }, right)
    }
}

/// `c += a·b` by the naive loop (i, k, j order, vectorisable inner loop).
fn base(a: View, b: View, mut c: ViewMut) {
    for i in 0..a.rows {
        let c_row = c.row(i);
        for (k, &aik) in a.row(i).iter().enumerate() {
            for (cij, &bkj) in c_row.iter_mut().zip(b.row(k)) {
                *cij += aik * bkj;
            }
        }
    }
}

/// [`base`] for the C++ peers: `c += a·b` of an `m×k` and a `k×n` block with row strides
/// `sa`, `sb`, `sc`.
///
/// # Safety
/// Each block lies inside one matrix, `c`'s within the matrix the caller lent mutably, and
/// no other thread reads or writes `c`'s block during the call (the C++ kernel splits `C`
/// into disjoint blocks, as [`matmul`] does).
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn base_ffi(
    a: *const f64,
    b: *const f64,
    c: *mut f64,
    m: usize,
    k: usize,
    n: usize,
    sa: usize,
    sb: usize,
    sc: usize,
) {
    let span = |rows: usize, cols: usize, stride: usize| match rows {
        0 => 0,
        r => (r - 1) * stride + cols,
    };
    // SAFETY: by the contract, the `span` elements from each pointer lie in its matrix,
    // and those of `c`'s block that the view reaches (`cols` of every `stride`) are
    // reachable through this view alone.
    let (a, b) = unsafe {
        (
            std::slice::from_raw_parts(a, span(m, k, sa)),
            std::slice::from_raw_parts(b, span(k, n, sb)),
        )
    };
    let (a, b) = (View::strided(a, m, k, sa), View::strided(b, k, n, sb));
    let c = ViewMut {
        ptr: c,
        rows: m,
        cols: n,
        stride: sc,
        _borrow: PhantomData,
    };
    base(a, b, c);
}

/// `c += a·b`, recursively splitting the largest dimension.
fn matmul<F: Fork>(f: F, a: View, b: View, mut c: ViewMut) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if m <= BASE && k <= BASE && n <= BASE {
        base(a, b, c);
    } else if m >= k && m >= n {
        let ((a1, a2), (c1, c2)) = (a.split_rows(), c.split_rows());
        f.join(|f| matmul(f, a1, b, c1), |f| matmul(f, a2, b, c2));
    } else if n >= k {
        let ((b1, b2), (c1, c2)) = (b.split_cols(), c.split_cols());
        f.join(|f| matmul(f, a, b1, c1), |f| matmul(f, a, b2, c2));
    } else {
        let ((a1, a2), (b1, b2)) = (a.split_cols(), b.split_rows());
        matmul(f, a1, b1, c.reborrow());
        matmul(f, a2, b2, c);
    }
}

struct MatmulTask<'a> {
    n: usize,
    a: &'a [f64],
    b: &'a [f64],
    c: &'a mut [f64],
}

impl Task for MatmulTask<'_> {
    type Output = ();
    fn call<F: Fork>(self, f: F) {
        let n = self.n;
        matmul(
            f,
            View::new(self.a, n, n),
            View::new(self.b, n, n),
            ViewMut::new(self.c, n, n),
        );
    }
}

/// splitmix64: the input generator.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `len` numbers uniform in `[lo, lo + width)`.
fn random_vec(len: usize, state: &mut u64, lo: f64, width: f64) -> Vec<f64> {
    (0..len)
        .map(|_| lo + width * (splitmix64(state) >> 11) as f64 / (1u64 << 53) as f64)
        .collect()
}

/// `m·x` for a row-major `n×n` matrix `m`, optionally of the absolute values of `m`.
fn mat_vec(m: &[f64], x: &[f64], abs: bool) -> Vec<f64> {
    m.chunks_exact(x.len())
        .map(|row| {
            let terms = row.iter().zip(x);
            if abs {
                terms.map(|(a, b)| a.abs() * b).sum()
            } else {
                terms.map(|(a, b)| a * b).sum()
            }
        })
        .collect()
}

/// The naive product `a·b` of row-major `n×n` matrices (i, k, j order).
fn naive_product(a: &[f64], b: &[f64], n: usize) -> Vec<f64> {
    let mut c = vec![0.0; n * n];
    for (c_row, a_row) in c.chunks_exact_mut(n).zip(a.chunks_exact(n)) {
        for (&aik, b_row) in a_row.iter().zip(b.chunks_exact(n)) {
            for (cij, &bkj) in c_row.iter_mut().zip(b_row) {
                *cij += aik * bkj;
            }
        }
    }
    c
}

/// Freivalds' check data: a vector `x`, the expected `A·(B·x)` and a rounding bound for
/// each of its entries.
struct Probe {
    x: Vec<f64>,
    expected: Vec<f64>,
    bound: Vec<f64>,
}

impl Probe {
    /// Builds a probe with `x` uniform in `[0.5, 1.5)` (never near zero, so that an error
    /// in any entry of `C` shows in `C·x`).
    fn new(a: &[f64], b: &[f64], n: usize, state: &mut u64) -> Self {
        let x = random_vec(n, state, 0.5, 1.0);
        let expected = mat_vec(a, &mat_vec(b, &x, false), false);
        // Each product entry and each dot product has a rounding error of at most about
        // n·ε·(|A|·|B|·|x|)_i; allow four times that plus a tiny absolute floor.
        let scale = mat_vec(a, &mat_vec(b, &x, true), true);
        let eps = 4.0 * n as f64 * f64::EPSILON;
        let bound = scale.iter().map(|s| eps * s + 1e-300).collect();
        Probe { x, expected, bound }
    }

    /// Checks `c·x` against the expected vector.
    fn check(&self, c: &[f64]) -> Result<(), String> {
        let got = mat_vec(c, &self.x, false);
        for (i, ((g, e), b)) in got.iter().zip(&self.expected).zip(&self.bound).enumerate() {
            if (g - e).abs() > *b {
                return Err(format!("matmul: (C·x)[{i}] = {g}, expected {e} (±{b:e})"));
            }
        }
        Ok(())
    }
}

/// How a run's `C` is checked.
enum Check {
    /// Against the full naive product.
    Full(Vec<f64>),
    /// By Freivalds' test.
    Freivalds(Vec<Probe>),
}

impl Check {
    fn new(a: &[f64], b: &[f64], n: usize, state: &mut u64) -> Self {
        if n <= FULL_CHECK_MAX {
            Check::Full(naive_product(a, b, n))
        } else {
            Check::Freivalds((0..2).map(|_| Probe::new(a, b, n, state)).collect())
        }
    }

    fn check(&self, c: &[f64]) -> Result<(), String> {
        match self {
            Check::Full(r) => check_full(c, r),
            Check::Freivalds(probes) => probes.iter().try_for_each(|p| p.check(c)),
        }
    }
}

/// Compares `c` with the reference `r` entrywise within 1e-9 (relative, absolute below 1).
fn check_full(c: &[f64], r: &[f64]) -> Result<(), String> {
    match c
        .iter()
        .zip(r)
        .position(|(x, y)| (x - y).abs() > 1e-9 * y.abs().max(1.0))
    {
        None => Ok(()),
        Some(i) => Err(format!("matmul: C[{i}] = {}, expected {}", c[i], r[i])),
    }
}

/// One matmul run: the inputs, the output and its check.
struct MatmulInstance {
    n: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    check: Check,
}

impl MatmulInstance {
    fn new(n: usize) -> Self {
        let mut state = SEED;
        let a = random_vec(n * n, &mut state, -1.0, 2.0);
        let b = random_vec(n * n, &mut state, -1.0, 2.0);
        let check = Check::new(&a, &b, n, &mut state);
        let c = vec![0.0; n * n];
        MatmulInstance { n, a, b, c, check }
    }
}

impl Instance for MatmulInstance {
    fn reset(&mut self) {
        self.c.fill(0.0);
    }

    fn run(&mut self, rt: &Runtime) {
        let task = MatmulTask {
            n: self.n,
            a: &self.a,
            b: &self.b,
            c: &mut self.c,
        };
        match rt.peer() {
            Some(p) => {
                let k = ffi::Matmul {
                    n: task.n,
                    a: task.a.as_ptr(),
                    b: task.b.as_ptr(),
                    c: task.c.as_mut_ptr(),
                    base_max: BASE,
                    base: base_ffi,
                };
                // SAFETY: the matrices are n×n, `c` is borrowed mutably by `task` alone,
                // and `base_ffi` stays within the blocks it is given (see there).
                unsafe { p.matmul(&k) }
            }
            None => rt.exec(task),
        }
    }

    fn verify(&self) -> Result<(), String> {
        self.check.check(&self.c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_seq(inst: &mut MatmulInstance) {
        let rt = Runtime::new(RuntimeKind::Seq, 1).unwrap();
        inst.reset();
        inst.run(&rt);
    }

    #[test]
    fn odd_sizes_match_naive() {
        for n in [1, 3, 65, 130] {
            let mut inst = MatmulInstance::new(n);
            run_seq(&mut inst);
            assert_eq!(inst.verify(), Ok(()), "n = {n}");
        }
    }

    #[test]
    fn corrupted_result_fails_full_check() {
        let mut inst = MatmulInstance::new(64);
        assert!(inst.verify().is_err(), "not run yet");
        run_seq(&mut inst);
        assert_eq!(inst.verify(), Ok(()));
        inst.c[64 * 10 + 7] += 1e-6;
        assert!(inst.verify().is_err());
    }

    #[test]
    fn freivalds_accepts_correct_and_rejects_corrupted() {
        let n = 150;
        let mut inst = MatmulInstance::new(n);
        let mut state = 7;
        inst.check = Check::Freivalds(
            (0..2)
                .map(|_| Probe::new(&inst.a, &inst.b, n, &mut state))
                .collect(),
        );
        run_seq(&mut inst);
        assert_eq!(inst.verify(), Ok(()));
        inst.c[n * 100 + 99] += 1e-6;
        assert!(inst.verify().is_err());
    }
}
