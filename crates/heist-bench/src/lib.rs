//! Benchmark kernels for heist (BENCHMARKS.md), the runtimes they run on, and the harness.

pub mod affinity;
pub mod barrier;
pub mod bench;
pub mod console;
pub mod fork;
pub mod handoff;
pub mod harness;
pub mod idle;
pub mod kernels;
pub mod peers;
pub mod reduction;
pub mod report;
pub mod rss;
pub mod runtime;
pub mod spawn;
pub mod summary;
pub mod teams;
