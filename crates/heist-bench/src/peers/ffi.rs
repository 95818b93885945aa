//! The C structs of cpp/peers.h, field for field. [`Api::check`] compares the ABI
//! version and the table's size with the C side's before a table is used.

use std::ffi::{c_char, c_int, c_void};

/// `HEIST_PEER_ABI` of peers.h.
pub const ABI: u32 = 1;

/// `heist_nqueens`: the legal columns of a row.
#[repr(C)]
pub struct NQueens {
    pub legal: extern "C" fn(n: u32, row: u32, board: *const u8) -> u32,
}

/// `heist_uts`: a tree, its root's state, a node's child count and a child's state.
#[repr(C)]
pub struct Uts {
    pub tree: *const c_void,
    pub root: [u8; 20],
    pub children: unsafe extern "C" fn(tree: *const c_void, state: *const u8, depth: u32) -> u32,
    pub child: unsafe extern "C" fn(parent: *const u8, i: u32, out: *mut u8),
}

/// `heist_uts_counts`: what a traversal counted.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtsCounts {
    pub nodes: u64,
    pub leaves: u64,
    pub max_depth: u32,
}

/// A block product `c += a·b` of `m×k` by `k×n`, with row strides `sa`, `sb`, `sc`.
pub type BaseFn = unsafe extern "C" fn(
    a: *const f64,
    b: *const f64,
    c: *mut f64,
    m: usize,
    k: usize,
    n: usize,
    sa: usize,
    sb: usize,
    sc: usize,
);

/// `heist_matmul`: `c += a·b` of `n×n` matrices and the block product.
#[repr(C)]
pub struct Matmul {
    pub n: usize,
    pub a: *const f64,
    pub b: *const f64,
    pub c: *mut f64,
    pub base_max: usize,
    pub base: BaseFn,
}

/// `heist_sort`: quicksort's partition and insertion sort, and the cut-off between them.
#[repr(C)]
pub struct Sort {
    pub cutoff: usize,
    pub partition: unsafe extern "C" fn(v: *mut u64, n: usize) -> usize,
    pub insertion: unsafe extern "C" fn(v: *mut u64, n: usize),
}

/// `heist_sparselu`: a block matrix and its four block kernels.
#[repr(C)]
pub struct SparseLu {
    pub m: *const c_void,
    pub nb: usize,
    pub exists: unsafe extern "C" fn(m: *const c_void, ii: usize, jj: usize) -> c_int,
    pub lu0: unsafe extern "C" fn(m: *const c_void, kk: usize),
    pub fwd: unsafe extern "C" fn(m: *const c_void, kk: usize, jj: usize),
    pub bdiv: unsafe extern "C" fn(m: *const c_void, kk: usize, ii: usize),
    pub bmod: unsafe extern "C" fn(m: *const c_void, kk: usize, ii: usize, jj: usize),
}

/// `heist_u64_fn`: a closure `u64 -> u64` of the Rust side.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct U64Fn {
    pub ctx: *const c_void,
    pub call: unsafe extern "C" fn(ctx: *const c_void, i: u64) -> u64,
}

/// `heist_f64_fn`: a closure `u64 -> f64` of the Rust side.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct F64Fn {
    pub ctx: *const c_void,
    pub call: unsafe extern "C" fn(ctx: *const c_void, i: u64) -> f64,
}

/// `heist_peer_api`: the kernels of one peer.
#[repr(C)]
pub struct Api {
    pub abi: u32,
    pub size: u32,
    pub version: extern "C" fn() -> *const c_char,
    pub start: extern "C" fn(workers: u32, guided: c_int) -> *mut c_void,
    pub stop: unsafe extern "C" fn(rt: *mut c_void),
    pub fib: unsafe extern "C" fn(rt: *mut c_void, n: u32) -> u64,
    pub nqueens: unsafe extern "C" fn(rt: *mut c_void, n: u32, k: *const NQueens) -> u64,
    pub uts: unsafe extern "C" fn(rt: *mut c_void, k: *const Uts) -> UtsCounts,
    pub matmul: unsafe extern "C" fn(rt: *mut c_void, k: *const Matmul),
    pub quicksort: unsafe extern "C" fn(rt: *mut c_void, v: *mut u64, n: usize, k: *const Sort),
    pub sparselu: unsafe extern "C" fn(rt: *mut c_void, k: *const SparseLu),
    pub spawn_all: unsafe extern "C" fn(rt: *mut c_void, n: u64, f: U64Fn),
    pub sum: unsafe extern "C" fn(rt: *mut c_void, n: u64, f: U64Fn) -> u64,
    pub step: unsafe extern "C" fn(
        rt: *mut c_void,
        n: u64,
        cheap: u64,
        dear: u64,
        spin: extern "C" fn(u64) -> u64,
    ) -> u64,
    pub fill: unsafe extern "C" fn(rt: *mut c_void, n: u64, out: *mut f64, f: F64Fn),
    pub reduce_fib: unsafe extern "C" fn(rt: *mut c_void, n: u32) -> u64,
    pub pi: unsafe extern "C" fn(rt: *mut c_void, tol: f64, area: *mut f64, segments: *mut u64),
    pub dot: unsafe extern "C" fn(
        rt: *mut c_void,
        x: *const f64,
        y: *const f64,
        n: usize,
        grain: usize,
    ) -> f64,
    pub par_sort: Option<unsafe extern "C" fn(rt: *mut c_void, v: *mut u64, n: usize)>,
}

impl Api {
    /// The table, if the C side was built against this file's layout.
    pub fn check(&'static self) -> Result<&'static Api, String> {
        let size = std::mem::size_of::<Api>();
        if self.abi != ABI || self.size as usize != size {
            return Err(format!(
                "the C++ peer's table (ABI {}, {} bytes) does not match heist-bench's (ABI {ABI}, \
                 {size} bytes): rebuild",
                self.abi, self.size
            ));
        }
        Ok(self)
    }
}

// The tables of the peers linked into the program (gomp's is loaded, see `super`).
unsafe extern "C" {
    #[cfg(heist_tbb)]
    pub fn heist_tbb_api() -> *const Api;
    #[cfg(heist_omp)]
    pub fn heist_omp_api() -> *const Api;
}
