//! The C++ peers: oneTBB (`tbb`), LLVM's OpenMP runtime (`omp`, `omp-guided`) and GCC's
//! (`gomp`), the runtimes the seeds measured heist's schedulers against, called through
//! FFI so that they run interleaved with the Rust runtimes in one process.
//!
//! Their kernels are written once in C++ (cpp/kernels.hpp) and built by build.rs when
//! the packages are present (`scripts/install-cpp-peers.sh`); a build without them
//! leaves the peers out and [`left_out_note`] says how to add them. Each kernel's leaf
//! work is the Rust kernel's own code, passed as a callback, and its answer comes back
//! to the Rust instance, which verifies it as it verifies its own runtimes'.

pub mod ffi;

use crate::runtime::RuntimeKind;
use std::ffi::{c_void, CStr};

/// Why peers were left out of this build (empty when none was).
const LEFT_OUT: &str = env!("HEIST_PEERS_LEFT_OUT");

/// What to do about it.
const HOW_TO_ADD: &str = "to add them: bash scripts/install-cpp-peers.sh (Debian: libtbb-dev, \
     libomp-dev, clang, g++), then rebuild (cargo build --release -p heist-bench)";

/// Whether `kind` is a C++ peer.
pub fn is_peer(kind: RuntimeKind) -> bool {
    matches!(
        kind,
        RuntimeKind::Tbb | RuntimeKind::Omp | RuntimeKind::OmpGuided | RuntimeKind::Gomp
    )
}

/// Whether a kernel with a C++ version runs on `kind`: `tbb`, `omp` and `gomp` always,
/// `omp-guided` (which differs from `omp` only in its loops' schedule) for loops only.
pub fn supports(kind: RuntimeKind, loop_kernel: bool) -> bool {
    match kind {
        RuntimeKind::Tbb | RuntimeKind::Omp | RuntimeKind::Gomp => true,
        RuntimeKind::OmpGuided => loop_kernel,
        _ => false,
    }
}

/// A line for stderr naming the peers this build left out and how to add them; empty
/// when every peer was built.
pub fn left_out_note() -> String {
    if LEFT_OUT.is_empty() {
        return String::new();
    }
    format!("heist-bench: C++ peers left out of this build ({LEFT_OUT}); {HOW_TO_ADD}\n")
}

/// Whether this build has `kind`'s peer.
pub fn built(kind: RuntimeKind) -> bool {
    api(kind).is_ok()
}

/// The table of `kind`'s peer, if this build has it.
fn api(kind: RuntimeKind) -> Result<&'static ffi::Api, String> {
    let table: Option<unsafe extern "C" fn() -> *const ffi::Api> = match kind {
        #[cfg(heist_tbb)]
        RuntimeKind::Tbb => Some(ffi::heist_tbb_api),
        #[cfg(heist_omp)]
        RuntimeKind::Omp | RuntimeKind::OmpGuided => Some(ffi::heist_omp_api),
        #[cfg(heist_gomp)]
        RuntimeKind::Gomp => return gomp::api(),
        _ => None,
    };
    let Some(table) = table else {
        return Err(format!(
            "{kind} is not built into this heist-bench ({}); {HOW_TO_ADD}",
            if LEFT_OUT.is_empty() {
                "not a C++ peer"
            } else {
                LEFT_OUT
            }
        ));
    };
    // SAFETY: the function takes nothing and returns a pointer to a static table (see
    // `Api<P>::table` in cpp/kernels.hpp), valid for the whole process.
    let api = unsafe { &*table() };
    api.check()
}

/// The runtime and compiler of each peer built in, e.g. `("tbb", "oneTBB 2021.8.0 ...")`.
pub fn versions() -> Vec<(&'static str, String)> {
    [RuntimeKind::Tbb, RuntimeKind::Omp, RuntimeKind::Gomp]
        .into_iter()
        .filter_map(|k| {
            let api = api(k).ok()?;
            // SAFETY: `version` returns a NUL-terminated static string.
            let v = unsafe { CStr::from_ptr((api.version)()) };
            Some((k.name(), v.to_string_lossy().into_owned()))
        })
        .collect()
}

/// libgomp's peer, loaded from its own shared library (see build.rs) with
/// `RTLD_DEEPBIND`, so that its calls to `GOMP_*` reach libgomp, not libomp, which
/// defines them too and is linked into the program.
#[cfg(heist_gomp)]
mod gomp {
    use super::ffi::Api;
    use std::sync::OnceLock;

    /// Where build.rs put the library.
    const LIB: &str = concat!(env!("HEIST_GOMP_LIB"), "\0");

    /// The table, loaded on first use and never unloaded.
    pub fn api() -> Result<&'static Api, String> {
        static TABLE: OnceLock<Result<&'static Api, String>> = OnceLock::new();
        TABLE.get_or_init(load).clone()
    }

    fn load() -> Result<&'static Api, String> {
        let flags = libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND;
        // SAFETY: `LIB` is NUL-terminated; loading runs the library's initialisers,
        // which are libgomp's and the C++ runtime's, made to be loaded this way.
        let handle = unsafe { libc::dlopen(LIB.as_ptr().cast(), flags) };
        if handle.is_null() {
            return Err(format!(
                "gomp: cannot load {}: {}",
                &LIB[..LIB.len() - 1],
                dl_error()
            ));
        }
        // SAFETY: `handle` is a loaded library and the name is NUL-terminated.
        let sym = unsafe { libc::dlsym(handle, c"heist_gomp_api".as_ptr()) };
        if sym.is_null() {
            return Err(format!("gomp: no heist_gomp_api: {}", dl_error()));
        }
        // SAFETY: the symbol is `const heist_peer_api *heist_gomp_api(void)` of peers.h.
        let table: unsafe extern "C" fn() -> *const Api = unsafe { std::mem::transmute(sym) };
        // SAFETY: it returns a pointer to a static table in the library, which is never
        // unloaded.
        unsafe { &*table() }.check()
    }

    fn dl_error() -> String {
        // SAFETY: `dlerror` returns NULL or a NUL-terminated message.
        let e = unsafe { libc::dlerror() };
        if e.is_null() {
            return "unknown error".into();
        }
        // SAFETY: as above; copied before any other dl call.
        unsafe { std::ffi::CStr::from_ptr(e) }
            .to_string_lossy()
            .into_owned()
    }
}

/// A started C++ runtime: its kernels' table and its runtime object.
pub struct Peer {
    api: &'static ffi::Api,
    rt: *mut c_void,
}

// SAFETY: the runtime objects (a `tbb::task_arena`, OpenMP's thread count and schedule)
// may be used from any thread, one kernel at a time or concurrently: TBB's arenas accept
// `execute` from any thread, and OpenMP starts a parallel region from any thread.
unsafe impl Send for Peer {}
// SAFETY: as above; no method changes the runtime object.
unsafe impl Sync for Peer {}

impl Drop for Peer {
    fn drop(&mut self) {
        // SAFETY: `rt` came from this table's `start` and is stopped once, here.
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.stop)(self.rt) }
    }
}

/// Calls the closure behind `ctx`: the trampoline of [`Peer::sum`] and its kin.
///
/// # Safety
/// `ctx` points to a live `F`.
unsafe extern "C" fn call_u64<F: Fn(u64) -> u64 + Sync>(ctx: *const c_void, i: u64) -> u64 {
    // SAFETY: by the contract, `ctx` is the `&F` the caller passed, alive for the call.
    unsafe { (*ctx.cast::<F>())(i) }
}

/// [`call_u64`] for closures that return an `f64`.
///
/// # Safety
/// `ctx` points to a live `F`.
unsafe extern "C" fn call_f64<F: Fn(u64) -> f64 + Sync>(ctx: *const c_void, i: u64) -> f64 {
    // SAFETY: as in `call_u64`.
    unsafe { (*ctx.cast::<F>())(i) }
}

// SAFETY (for every call below): `api` passed `check`, so it is the C side's table of
// peers.h's layout; `rt` is the live runtime its `start` made; every pointer passed lives
// until the call returns, and every C++ kernel returns only when all the tasks it made
// have finished, so no callback or pointer is used after the call. The closures are
// `Sync`, as the C++ side calls them from several threads at once.
impl Peer {
    /// Starts `kind` with `workers` threads.
    pub fn start(kind: RuntimeKind, workers: usize) -> Result<Peer, String> {
        let api = api(kind)?;
        let workers = u32::try_from(workers).map_err(|_| "too many workers".to_string())?;
        let rt = (api.start)(workers, i32::from(kind == RuntimeKind::OmpGuided));
        if rt.is_null() {
            return Err(format!("{kind}: the C++ runtime did not start"));
        }
        Ok(Peer { api, rt })
    }

    /// fib(n) by binary recursion.
    pub fn fib(&self, n: u32) -> u64 {
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.fib)(self.rt, n) }
    }

    /// The solutions of n-queens, `k` giving the legal columns of a row.
    ///
    /// # Panics
    /// If `n` exceeds the C++ board's 18 rows.
    pub fn nqueens(&self, n: u32, k: &ffi::NQueens) -> u64 {
        assert!(n <= 18, "nqueens: the C++ board has 18 rows, not {n}");
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.nqueens)(self.rt, n, k) }
    }

    /// The counts of a UTS tree.
    pub fn uts(&self, k: &ffi::Uts) -> ffi::UtsCounts {
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.uts)(self.rt, k) }
    }

    /// `c += a·b`.
    ///
    /// # Safety
    /// `k`'s matrices are `n×n`, `c` is not aliased, and `k.base` computes a block
    /// product within the bounds it is given.
    pub unsafe fn matmul(&self, k: &ffi::Matmul) {
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.matmul)(self.rt, k) }
    }

    /// Sorts `v` by parallel quicksort with `k`'s partition and insertion sort.
    ///
    /// # Safety
    /// `k.partition` returns an index below the length it is given, and both functions
    /// stay within the elements they are given.
    pub unsafe fn quicksort(&self, v: &mut [u64], k: &ffi::Sort) {
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.quicksort)(self.rt, v.as_mut_ptr(), v.len(), k) }
    }

    /// Factors the matrix of `k`.
    ///
    /// # Safety
    /// `k`'s callbacks are sound when called as the phases of BOTS sparselu call them
    /// (cpp/kernels.hpp `sparselu`).
    pub unsafe fn sparselu(&self, k: &ffi::SparseLu) {
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.sparselu)(self.rt, k) }
    }

    /// One task spawns tasks `f(0)` .. `f(n-1)` and waits for them.
    pub fn spawn_all<F: Fn(u64) -> u64 + Sync>(&self, n: u64, f: &F) {
        let f = ffi::U64Fn {
            ctx: (f as *const F).cast(),
            call: call_u64::<F>,
        };
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.spawn_all)(self.rt, n, f) }
    }

    /// The wrapping sum of `f(i)` over `0..n`, by a parallel loop.
    pub fn sum<F: Fn(u64) -> u64 + Sync>(&self, n: u64, f: &F) -> u64 {
        let f = ffi::U64Fn {
            ctx: (f as *const F).cast(),
            call: call_u64::<F>,
        };
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.sum)(self.rt, n, f) }
    }

    /// step's loop: element `i` spins `dear` iterations in the last 3 %, `cheap` before.
    pub fn step(&self, n: u64, cheap: u64, dear: u64, spin: extern "C" fn(u64) -> u64) -> u64 {
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.step)(self.rt, n, cheap, dear, spin) }
    }

    /// `out[i] = f(i)` for every `i`, by a parallel loop.
    pub fn fill<F: Fn(u64) -> f64 + Sync>(&self, out: &mut [f64], f: &F) {
        let f = ffi::F64Fn {
            ctx: (f as *const F).cast(),
            call: call_f64::<F>,
        };
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.fill)(self.rt, out.len() as u64, out.as_mut_ptr(), f) }
    }

    /// fib(n) as a reduction over tasks.
    pub fn reduce_fib(&self, n: u32) -> u64 {
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.reduce_fib)(self.rt, n) }
    }

    /// π/4 by adaptive quadrature to `tol`, and the segment count.
    pub fn pi(&self, tol: f64) -> (f64, u64) {
        let (mut area, mut segments) = (0.0, 0);
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.pi)(self.rt, tol, &mut area, &mut segments) };
        (area, segments)
    }

    /// `x·y` as a reduction over ranges of at most `grain` pairs.
    pub fn dot(&self, x: &[f64], y: &[f64], grain: usize) -> f64 {
        let n = x.len().min(y.len());
        // SAFETY: as argued above this `impl`.
        unsafe { (self.api.dot)(self.rt, x.as_ptr(), y.as_ptr(), n, grain) }
    }

    /// Sorts `v` with the runtime's own parallel sort; `false` if it has none.
    pub fn par_sort(&self, v: &mut [u64]) -> bool {
        let Some(sort) = self.api.par_sort else {
            return false;
        };
        // SAFETY: as argued above this `impl`.
        unsafe { sort(self.rt, v.as_mut_ptr(), v.len()) };
        true
    }
}
