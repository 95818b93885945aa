//! Benchmark kernels for heist (BENCHMARKS.md), the runtimes they run on, and the harness.

pub mod affinity;
pub mod barrier;
pub mod bench;
pub mod fork;
pub mod handoff;
pub mod harness;
pub mod idle;
pub mod kernels;
pub mod reduction;
pub mod rss;
pub mod runtime;
pub mod spawn;
pub mod teams;
