//! What the data-parallel kernels share: one loop body compiled against heist's and
//! rayon's preludes (so both run the very same code, as a rayon user moving to heist
//! would), the runtime dispatch, and an instance that checks every run against the
//! sequential answer.

use crate::bench::Instance;
use crate::runtime::{Runtime, RuntimeKind};
use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// Defines `mod $name { pub fn heist(..), pub fn rayon(..) }`: `$body` compiled once with
/// `heist::prelude::*` and once with `rayon::prelude::*` in scope. The body wraps its
/// indexed source in `capped(..)` and writes a `u64` range as `range(lo, hi)`: nothing
/// changes on heist and rayon, while `rayon-best` gets its `with_max_len` (see
/// [`MaxLen`]).
macro_rules! par_versions {
    ($name:ident, |$($arg:ident: $ty:ty),*| -> $ret:ty $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            pub fn heist($($arg: $ty),*) -> $ret {
                use heist::prelude::*;
                #[allow(dead_code)]
                fn capped<I: IndexedParallelIterator>(
                    i: I,
                ) -> $crate::kernels::par_loop::HeistEither<I, heist::iter::ThiefSplits<I>> {
                    $crate::kernels::par_loop::ThiefSplits::choose(i)
                }
                #[allow(dead_code)]
                fn range(
                    lo: u64,
                    hi: u64,
                ) -> $crate::kernels::par_loop::HeistEither<
                    heist::iter::RangeIter<u64>,
                    heist::iter::ThiefSplits<heist::iter::RangeIter<u64>>,
                > {
                    capped((lo..hi).into_par_iter())
                }
                $body
            }

            pub fn rayon($($arg: $ty),*) -> $ret {
                use rayon::prelude::*;
                #[allow(dead_code)]
                fn capped<I: IndexedParallelIterator>(
                    i: I,
                ) -> rayon::iter::Either<I, rayon::iter::MaxLen<I>> {
                    $crate::kernels::par_loop::MaxLen::cap(i)
                }
                #[allow(dead_code)]
                fn range(lo: u64, hi: u64) -> $crate::kernels::par_loop::RayonRange {
                    $crate::kernels::par_loop::MaxLen::range(lo, hi)
                }
                $body
            }

            /// Runs `seq`, `heist`, `rayon` or `orx` (on its thread count), whichever
            /// `rt` names (see `par_loop::on_all`).
            #[allow(dead_code, clippy::unused_unit)]
            pub fn on_all(
                rt: &$crate::runtime::Runtime,
                $($arg: $ty,)*
                seq: impl FnOnce() -> $ret,
                orx: impl FnOnce(usize) -> $ret,
            ) -> $ret {
                let heist = || heist($($arg),*);
                let rayon = || rayon($($arg),*);
                $crate::kernels::par_loop::on_all(rt, seq, heist, rayon, orx)
            }
        }
    };
}
pub(crate) use par_versions;

/// The `with_max_len` of `rayon-best`'s loops while one runs (`usize::MAX` otherwise,
/// when `capped` leaves rayon's loops as they are). One harness thread runs the kernels,
/// one at a time.
pub struct MaxLen;

/// A `u64` range on rayon: as rayon has it, or capped (see [`MaxLen::range`]).
pub type RayonRange = rayon::iter::Either<
    rayon::range::Iter<u64>,
    rayon::iter::Map<rayon::iter::MaxLen<rayon::range::Iter<usize>>, fn(usize) -> u64>,
>;

fn to_u64(i: usize) -> u64 {
    i as u64
}

static MAX_LEN: AtomicUsize = AtomicUsize::new(usize::MAX);

impl MaxLen {
    /// `i` with the current `with_max_len`, if any.
    pub fn cap<I: rayon::iter::IndexedParallelIterator>(
        i: I,
    ) -> rayon::iter::Either<I, rayon::iter::MaxLen<I>> {
        match MAX_LEN.load(Relaxed) {
            usize::MAX => rayon::iter::Either::Left(i),
            m => rayon::iter::Either::Right(i.with_max_len(m)),
        }
    }

    /// The parallel `lo..hi`: rayon's own for `u64` (not indexed, so it has no
    /// `with_max_len`), or with the current `with_max_len`, a `usize` range mapped.
    pub fn range(lo: u64, hi: u64) -> RayonRange {
        use rayon::prelude::*;
        match MAX_LEN.load(Relaxed) {
            usize::MAX => rayon::iter::Either::Left((lo..hi).into_par_iter()),
            m => rayon::iter::Either::Right(
                (lo as usize..hi as usize)
                    .into_par_iter()
                    .with_max_len(m)
                    .map(to_u64),
            ),
        }
    }

    /// Runs `f` with the loops' `with_max_len` set to `m`.
    pub fn with<R>(m: usize, f: impl FnOnce() -> R) -> R {
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                MAX_LEN.store(usize::MAX, Relaxed);
            }
        }
        let _reset = Reset;
        MAX_LEN.store(m, Relaxed);
        f()
    }
}

/// Whether `heist-lace-claim` runs now: heist's `capped` sources then split by their
/// thieves (`ThiefSplitting`).
pub struct ThiefSplits;

static THIEF_SPLITS: AtomicBool = AtomicBool::new(false);

impl ThiefSplits {
    /// `i`, split by its thieves if `heist-lace-claim` runs.
    pub fn choose<I: heist::prelude::IndexedParallelIterator>(
        i: I,
    ) -> HeistEither<I, heist::iter::ThiefSplits<I>> {
        use heist::iter::ThiefSplitting;
        match THIEF_SPLITS.load(Relaxed) {
            false => HeistEither::Left(i),
            true => HeistEither::Right(i.thief_splitting()),
        }
    }

    /// Runs `f` with thief-side splitting on.
    pub fn with<R>(f: impl FnOnce() -> R) -> R {
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                THIEF_SPLITS.store(false, Relaxed);
            }
        }
        let _reset = Reset;
        THIEF_SPLITS.store(true, Relaxed);
        f()
    }
}

/// One of two heist parallel iterators over the same items, chosen at run time.
pub enum HeistEither<L, R> {
    /// The first.
    Left(L),
    /// The second.
    Right(R),
}

impl<L, R> heist::prelude::ParallelIterator for HeistEither<L, R>
where
    L: heist::prelude::ParallelIterator,
    R: heist::prelude::ParallelIterator<Item = L::Item>,
{
    type Item = L::Item;
    fn drive<K: heist::iter::plumbing::Kernel<L::Item>>(self, kernel: K) -> K::Output {
        match self {
            HeistEither::Left(l) => l.drive(kernel),
            HeistEither::Right(r) => r.drive(kernel),
        }
    }
    fn opt_len(&self) -> Option<usize> {
        match self {
            HeistEither::Left(l) => l.opt_len(),
            HeistEither::Right(r) => r.opt_len(),
        }
    }
}

impl<L, R> heist::prelude::IndexedParallelIterator for HeistEither<L, R>
where
    L: heist::prelude::IndexedParallelIterator,
    R: heist::prelude::IndexedParallelIterator<Item = L::Item>,
{
    fn len(&self) -> usize {
        match self {
            HeistEither::Left(l) => l.len(),
            HeistEither::Right(r) => r.len(),
        }
    }
    fn with_producer<CB: heist::iter::plumbing::ProducerCallback<L::Item>>(
        self,
        cb: CB,
    ) -> CB::Output {
        match self {
            HeistEither::Left(l) => l.with_producer(cb),
            HeistEither::Right(r) => r.with_producer(cb),
        }
    }
}

/// Whether a parallel-iterator kernel runs on `kind` (chili has no parallel iterators);
/// `orx` only if the kernel has an orx version.
pub fn supports(kind: RuntimeKind, orx: bool) -> bool {
    match kind {
        RuntimeKind::Chili => false,
        RuntimeKind::Orx => orx && cfg!(feature = "orx"),
        RuntimeKind::RayonBest | RuntimeKind::HeistClaim => true,
        k => !k.opt_in(),
    }
}

/// Runs the version of a kernel that matches `rt`: `seq` on seq, `heist` on a heist
/// worker, `rayon` inside rayon's pool (with `rayon-best`'s `with_max_len`).
pub fn on<R: Send>(
    rt: &Runtime,
    seq: impl FnOnce() -> R,
    heist: impl FnOnce() -> R + Send,
    rayon: impl FnOnce() -> R + Send,
) -> R {
    on_all(rt, seq, heist, rayon, |_| -> R {
        unreachable!("this kernel has no orx version (Bench::supports)")
    })
}

/// [`on`] for a kernel with an orx version too: `orx(threads)` on orx.
pub fn on_all<R: Send>(
    rt: &Runtime,
    seq: impl FnOnce() -> R,
    heist: impl FnOnce() -> R + Send,
    rayon: impl FnOnce() -> R + Send,
    orx: impl FnOnce(usize) -> R,
) -> R {
    match rt.kind() {
        RuntimeKind::HeistLace | RuntimeKind::HeistRelay => rt.install(heist),
        RuntimeKind::HeistClaim => ThiefSplits::with(|| rt.install(heist)),
        RuntimeKind::Rayon => rt.install(rayon),
        RuntimeKind::RayonBest => MaxLen::with(rt.max_len(), || rt.install(rayon)),
        RuntimeKind::Orx => orx(rt.workers()),
        RuntimeKind::Seq | RuntimeKind::Chili => seq(),
        RuntimeKind::HeistJoin | RuntimeKind::RayonTls => {
            unreachable!(
                "{} runs only the reduction kernels (Bench::supports)",
                rt.kind()
            )
        }
        RuntimeKind::Tbb | RuntimeKind::Omp | RuntimeKind::OmpGuided | RuntimeKind::Gomp => {
            unreachable!("{}: the kernel's C++ version runs before this", rt.kind())
        }
    }
}

/// The orx version of a kernel, `|threads| expr`, for [`on_all`]: built only with the
/// `orx` feature (without it the kernel does not list the `orx` runtime).
macro_rules! orx {
    (|$t:ident| $e:expr) => {{
        #[cfg(feature = "orx")]
        let f = move |$t: usize| $e;
        #[cfg(not(feature = "orx"))]
        let f = |_: usize| unreachable!("heist-bench was built without the `orx` feature");
        f
    }};
}
pub(crate) use orx;

/// orx's wrapping sum of `f(i)` over `0..n` on `threads` threads (orx's ranges are of
/// `usize`).
#[cfg(feature = "orx")]
pub fn orx_range_sum(
    n: u64,
    threads: usize,
    f: impl Fn(u64) -> std::num::Wrapping<u64> + Send + Sync + Copy,
) -> std::num::Wrapping<u64> {
    use orx_parallel::*;
    (0..n as usize)
        .into_par()
        .num_threads(threads)
        .map(move |i| f(i as u64))
        .reduce(|a, b| a + b)
        .unwrap_or_default()
}

/// orx's wrapping sum of `f(x)` over a sequential iterator, through its generic path for
/// any iterator (`iter_into_par`).
#[cfg(feature = "orx")]
pub fn orx_iter_sum<T: Send + Sync>(
    it: impl Iterator<Item = T> + Send,
    threads: usize,
    f: impl Fn(T) -> std::num::Wrapping<u64> + Send + Sync + Copy,
) -> std::num::Wrapping<u64> {
    use orx_parallel::*;
    it.iter_into_par()
        .num_threads(threads)
        .map(f)
        .reduce(|a, b| a + b)
        .unwrap_or_default()
}

/// A loop kernel's inputs, its sequential answer and its last result.
pub struct LoopInstance<I, T> {
    /// Kernel name, for messages.
    pub name: &'static str,
    /// The inputs.
    pub input: I,
    /// The sequential answer.
    pub expected: T,
    /// The last run's answer.
    pub result: Option<T>,
    /// One run.
    pub run: fn(&Runtime, &I) -> T,
    /// Whether a result matches the expected one (floats: within rounding).
    pub same: fn(&T, &T) -> bool,
}

impl<I: Send, T: Send + Debug> LoopInstance<I, T> {
    /// An instance whose expected answer is `seq(&input)`.
    pub fn new(
        name: &'static str,
        input: I,
        seq: fn(&I) -> T,
        run: fn(&Runtime, &I) -> T,
        same: fn(&T, &T) -> bool,
    ) -> Self {
        let expected = seq(&input);
        LoopInstance {
            name,
            input,
            expected,
            result: None,
            run,
            same,
        }
    }
}

impl<I: Send, T: Send + Debug> Instance for LoopInstance<I, T> {
    fn run(&mut self, rt: &Runtime) {
        self.result = Some((self.run)(rt, &self.input));
    }

    fn verify(&self) -> Result<(), String> {
        match &self.result {
            None => Err(format!("{}: not run", self.name)),
            Some(r) if (self.same)(r, &self.expected) => Ok(()),
            Some(r) => Err(format!(
                "{}: got {r:?}, expected {:?}",
                self.name, self.expected
            )),
        }
    }
}

/// Exact equality.
pub fn equal<T: PartialEq>(a: &T, b: &T) -> bool {
    a == b
}

/// Equality up to a relative error of 1e-9 (sums of floats in another order).
pub fn close(a: &f64, b: &f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Parses a count that may be written `10^9`, `5e6`, `2100` or `1_000`.
pub fn parse_size(name: &str, size: &str) -> Result<u64, String> {
    crate::bench::count(name, size, "n", 0, 1 << 53)
}

/// A 64-bit mix of `i` (a multiply and a shift-xor): cheap, vectorisable, no closed
/// form for its sum.
#[inline(always)]
pub fn mix(i: u64) -> u64 {
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 29)
}
