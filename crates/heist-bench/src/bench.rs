//! What a benchmark kernel provides to the harness.

use crate::runtime::{Runtime, RuntimeKind};

/// The named sizes of BENCHMARKS.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeClass {
    /// Milliseconds; used by `cargo test`.
    Test,
    /// About 0.1–0.5 s sequential; the default suite.
    Quick,
    /// The papers' settings, seconds.
    Full,
}

/// One kernel of the catalogue.
pub trait Bench: Sync {
    /// The name used on the command line (`fib`, `uts`, ...).
    fn name(&self) -> &'static str;
    /// One line: what it computes.
    fn about(&self) -> &'static str;
    /// The size string of a named size class (e.g. `"36"` for fib quick, `"T3"` for uts).
    fn size(&self, class: SizeClass) -> &'static str;
    /// Whether it can run on `kind` (a kernel that cannot be expressed there says so).
    fn supports(&self, kind: RuntimeKind) -> bool {
        !kind.reductions_only()
    }
    /// Builds the inputs for `size` (a size string as returned by `size`, or a user value).
    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String>;
}

/// A kernel with its inputs built, ready to run repeatedly.
pub trait Instance: Send {
    /// Untimed: restore the inputs before a run (for kernels that work in place).
    fn reset(&mut self) {}
    /// Timed: one run on `rt`.
    fn run(&mut self, rt: &Runtime);
    /// Untimed: checks the answer of the last run; the error says what is wrong.
    fn verify(&self) -> Result<(), String>;
}
