//! What the data-parallel kernels share: one loop body compiled against heist's and
//! rayon's preludes (so both run the very same code, as a rayon user moving to heist
//! would), the runtime dispatch, and an instance that checks every run against the
//! sequential answer.

use crate::bench::Instance;
use crate::runtime::{Runtime, RuntimeKind};
use std::fmt::Debug;

/// Defines `mod $name { pub fn heist(..), pub fn rayon(..) }`: `$body` compiled once with
/// `heist::prelude::*` and once with `rayon::prelude::*` in scope.
macro_rules! par_versions {
    ($name:ident, |$($arg:ident: $ty:ty),*| -> $ret:ty $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            pub fn heist($($arg: $ty),*) -> $ret {
                use heist::prelude::*;
                $body
            }

            pub fn rayon($($arg: $ty),*) -> $ret {
                use rayon::prelude::*;
                $body
            }
        }
    };
}
pub(crate) use par_versions;

/// Whether a parallel-iterator kernel runs on `kind` (chili has no parallel iterators).
pub fn supports(kind: RuntimeKind) -> bool {
    kind != RuntimeKind::Chili && !kind.reductions_only()
}

/// Runs the version of a kernel that matches `rt`: `seq` on seq, `heist` on a heist
/// worker, `rayon` inside rayon's pool.
pub fn on<R: Send>(
    rt: &Runtime,
    seq: impl FnOnce() -> R,
    heist: impl FnOnce() -> R + Send,
    rayon: impl FnOnce() -> R + Send,
) -> R {
    match rt.kind() {
        RuntimeKind::HeistLace | RuntimeKind::HeistRelay => rt.install(heist),
        RuntimeKind::Rayon => rt.install(rayon),
        RuntimeKind::Seq | RuntimeKind::Chili => seq(),
        RuntimeKind::HeistJoin | RuntimeKind::RayonTls => {
            unreachable!(
                "{} runs only the reduction kernels (Bench::supports)",
                rt.kind()
            )
        }
    }
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
