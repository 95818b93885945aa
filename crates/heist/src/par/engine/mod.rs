//! The loop engine: one task over a splittable range that its owner folds in growing
//! blocks and splits only when a thief asks (Embracing Explicit Communication in
//! Work-Stealing Runtime Systems, ch. 5: splittable tasks; On Lock-Free Work-stealing
//! Iterators for Parallel Data Structures: batch growth, the index stealer, the invoker).
//! `driver.rs` runs a loop; `pace.rs` sizes its blocks; `demand.rs` asks the scheduler
//! whether to split; `standing.rs` stands an offer around a block it cannot bound in time;
//! `claim.rs` shares a loop through one progress word; `from_outside.rs` runs a loop called
//! outside every pool. It reaches the runtime only through `seam.rs`.

pub(crate) mod back;
pub(crate) mod claim;
pub(crate) mod demand;
pub(crate) mod driver;
pub(crate) mod from_outside;
#[cfg(all(test, loom))]
mod loom_claim;
pub(crate) mod pace;
pub(crate) mod seam;
pub(crate) mod standing;
