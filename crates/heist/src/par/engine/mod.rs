//! The loop engine.

pub(crate) mod claim;
pub(crate) mod demand;
pub(crate) mod driver;
pub(crate) mod from_outside;
#[cfg(all(test, loom))]
mod loom_claim;
pub(crate) mod pace;
pub(crate) mod standing;
