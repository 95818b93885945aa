//! What a benchmark kernel provides to the harness.

use crate::runtime::{Runtime, RuntimeKind};

/// The named sizes of BENCHMARKS.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeClass {
    /// Milliseconds; used by `cargo test`.
    Test,
    /// About 5–80 ms sequential: the default suite, every kernel within 3 minutes.
    Small,
    /// About 0.1–0.5 s sequential; the default of `run`.
    Quick,
    /// The papers' settings, seconds.
    Full,
}

impl SizeClass {
    /// Every class, smallest first.
    pub const ALL: [SizeClass; 4] = [
        SizeClass::Test,
        SizeClass::Small,
        SizeClass::Quick,
        SizeClass::Full,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SizeClass::Test => "test",
            SizeClass::Small => "small",
            SizeClass::Quick => "quick",
            SizeClass::Full => "full",
        }
    }
}

/// A kernel's size string for each [`SizeClass`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// [`SizeClass::Test`].
    pub test: &'static str,
    /// [`SizeClass::Small`].
    pub small: &'static str,
    /// [`SizeClass::Quick`].
    pub quick: &'static str,
    /// [`SizeClass::Full`].
    pub full: &'static str,
}

impl Sizes {
    /// The size string of `class`.
    pub fn of(&self, class: SizeClass) -> &'static str {
        match class {
            SizeClass::Test => self.test,
            SizeClass::Small => self.small,
            SizeClass::Quick => self.quick,
            SizeClass::Full => self.full,
        }
    }
}

/// One kernel of the catalogue.
pub trait Bench: Sync {
    /// The name used on the command line (`fib`, `uts`, ...).
    fn name(&self) -> &'static str;
    /// One line: what it computes.
    fn about(&self) -> &'static str;
    /// The size strings of the named size classes (e.g. `"36"` for fib quick, `"T3"` for
    /// uts).
    fn sizes(&self) -> Sizes;
    /// The size string of `class`.
    fn size(&self, class: SizeClass) -> &'static str {
        self.sizes().of(class)
    }
    /// Whether it can run on `kind` (a kernel that cannot be expressed there says so).
    fn supports(&self, kind: RuntimeKind) -> bool {
        !kind.opt_in()
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

/// One field of a size string: its name and, for a trailing field that may be left out,
/// its default.
pub type Field = (&'static str, Option<f64>);

/// Parses a kernel's size string: one number per field of `fields`, comma-separated and
/// in order, each optionally written `name=value`; trailing fields with a default may be
/// left out. A number may be written `1000000`, `1_000_000`, `10^6`, `1e6` or `0.5`, and
/// must be finite and not negative. The error names `kernel` and the expected form.
pub fn parse_size<const N: usize>(
    kernel: &str,
    size: &str,
    fields: [Field; N],
) -> Result<[f64; N], String> {
    let names: Vec<&str> = fields.iter().map(|f| f.0).collect();
    let bad = || format!("{kernel}: size `{size}` is not \"{}\"", names.join(","));
    let parts: Vec<&str> = size.split(',').map(str::trim).collect();
    if parts.len() > N {
        return Err(bad());
    }
    let mut out = [0.0; N];
    for (i, (name, default)) in fields.iter().enumerate() {
        out[i] = match parts.get(i) {
            Some(p) => {
                let v = p
                    .strip_prefix(name)
                    .and_then(|r| r.trim_start().strip_prefix('='));
                number(v.unwrap_or(p)).ok_or_else(bad)?
            }
            None => default.ok_or_else(bad)?,
        };
    }
    Ok(out)
}

/// A number of a size string (see [`parse_size`]).
fn number(s: &str) -> Option<f64> {
    let s: String = s.trim().chars().filter(|&c| c != '_').collect();
    let v = match s.split_once('^') {
        Some((base, exp)) => base.parse::<f64>().ok()?.powf(exp.parse().ok()?),
        None => s.parse().ok()?,
    };
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// A size of one whole-number field `name` in `lo..=hi` (see [`parse_size`]).
pub fn count(
    kernel: &str,
    size: &str,
    name: &'static str,
    lo: u64,
    hi: u64,
) -> Result<u64, String> {
    let [v] = parse_size(kernel, size, [(name, None)])?;
    whole(kernel, name, v, lo, hi)
}

/// A size field that must be a whole number in `lo..=hi`.
pub fn whole(kernel: &str, name: &str, v: f64, lo: u64, hi: u64) -> Result<u64, String> {
    if v.fract() == 0.0 && v >= lo as f64 && v <= hi as f64 {
        Ok(v as u64)
    } else {
        Err(format!(
            "{kernel}: {name} = {v} is not a whole number in {lo}..={hi}"
        ))
    }
}

/// The body of most [`Instance::verify`]s: an error naming `kernel` if it has not run
/// (`last` is `None`), else `check` of the last run's answer.
pub fn verify<T>(
    kernel: &str,
    last: Option<T>,
    check: impl FnOnce(T) -> Result<(), String>,
) -> Result<(), String> {
    check(last.ok_or_else(|| format!("{kernel}: not run"))?)
}

/// [`verify`] for an answer known in advance: `what` describes it (`fib(36)`), and a
/// wrong one reads "`what` = got, expected `expected`".
pub fn verify_eq<T: PartialEq + std::fmt::Display>(
    kernel: &str,
    what: impl std::fmt::Display,
    last: Option<T>,
    expected: T,
) -> Result<(), String> {
    verify(kernel, last, |got| {
        if got == expected {
            Ok(())
        } else {
            Err(format!("{what} = {got}, expected {expected}"))
        }
    })
}

/// Test scaffolding for a kernel's verification: `inst` must fail to verify before its
/// first run; then, for each of `corruptions`, a reset and a run on a `kind` runtime of
/// 2 workers (1 for `seq`) must verify, and the same result corrupted must not.
#[cfg(test)]
pub(crate) fn check_catches<I: Instance>(
    kind: crate::runtime::RuntimeKind,
    inst: &mut I,
    corruptions: &[&dyn Fn(&mut I)],
) {
    let workers = if kind == crate::runtime::RuntimeKind::Seq {
        1
    } else {
        2
    };
    let rt = Runtime::new(kind, workers).expect("the runtime starts");
    assert!(inst.verify().is_err(), "verifies before its first run");
    for (i, corrupt) in corruptions.iter().enumerate() {
        inst.reset();
        inst.run(&rt);
        assert_eq!(inst.verify(), Ok(()), "before corruption {i}");
        corrupt(inst);
        assert!(inst.verify().is_err(), "corruption {i} verifies");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_every_form() {
        let f = [("n", None), ("t", Some(1.0))];
        assert_eq!(parse_size("k", "24,2", f), Ok([24.0, 2.0]));
        assert_eq!(parse_size("k", "n=24, t = 0.5", f), Ok([24.0, 0.5]));
        assert_eq!(parse_size("k", "10^7", f), Ok([1e7, 1.0]));
        assert_eq!(parse_size("k", "1e6,1_000", f), Ok([1e6, 1000.0]));
        assert!(parse_size("k", "t=1,n=2", f).is_err(), "names out of order");
        assert!(parse_size("k", "1,2,3", f).is_err());
        assert!(parse_size("k", "-1", f).is_err());
        assert!(parse_size("k", "x", f).is_err());
        assert!(parse_size("k", "", [("n", None)]).is_err());
        let e = parse_size("spc", "1", [("n", None), ("t", None)]).unwrap_err();
        assert!(e.contains("spc") && e.contains("n,t"), "{e}");
        assert_eq!(whole("k", "n", 3.0, 1, 3), Ok(3));
        assert!(whole("k", "n", 3.5, 1, 9).is_err());
        assert!(whole("k", "n", 0.0, 1, 9).is_err());
    }

    #[test]
    fn verify_reports_no_run_and_wrong_answers() {
        assert_eq!(verify_eq("fib", "fib(3)", Some(2u64), 2), Ok(()));
        assert_eq!(
            verify_eq("fib", "fib(3)", Some(5u64), 2),
            Err("fib(3) = 5, expected 2".into())
        );
        assert_eq!(
            verify_eq("fib", "fib(3)", None, 2u64),
            Err("fib: not run".into())
        );
        assert_eq!(
            verify("x", Some(1), |_| Err("bad".into())),
            Err("bad".into())
        );
    }
}
