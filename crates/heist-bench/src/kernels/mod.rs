//! The kernel catalogue: one file per kernel.

use crate::bench::Bench;

/// Every kernel, in the order `list` and `suite` show them.
pub fn all() -> Vec<&'static dyn Bench> {
    vec![]
}

/// The kernel called `name`.
pub fn find(name: &str) -> Option<&'static dyn Bench> {
    all().into_iter().find(|b| b.name() == name)
}
