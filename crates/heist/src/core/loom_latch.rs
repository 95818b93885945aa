//! loom models of the latch (`core/latch.rs`), run against the real `Latch`, whose state
//! word, waiter cell and thread parking are loom's under `cfg(loom)`. They check its
//! public behaviour, so that they hold whatever form `set` takes:
//!
//! - `loom_latch_wait_sees_the_result`: a thread blocked in `wait` returns only after
//!   `set`, never misses its wake-up (a lost one is a deadlock under loom: a `set` that
//!   does not unpark a parked waiter fails it), and then
//!   sees what the setter wrote before `set` (a loom cell, so that a race is reported).
//! - `loom_latch_probe_sees_the_result`: a worker polling `probe` sees the same.
//!
//! Each model also checks, across its executions, that the waiter found the latch both
//! unset (and so waited or polled) and already set.
//!
//! Run with `.ci/loom`.

use crate::core::latch::Latch;
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering::Relaxed;

/// Counts, across the executions of one model, whether the latch was first seen unset
/// ([0]) or already set ([1]). A std atomic outside loom.
type Hits = std::sync::Arc<[std::sync::atomic::AtomicUsize; 2]>;

/// What a root leaves behind: its result, then the latch.
struct Root {
    out: UnsafeCell<u64>,
    latch: Latch,
}

// SAFETY: `out` is written by the setter before `set` and read by the waiter after it saw
// the latch set, which is the protocol under test; loom reports any overlap.
unsafe impl Sync for Root {}

/// The setter's side, in one place so that a change of `Latch::set`'s form changes one
/// line here.
fn finish(root: &Root) {
    // SAFETY: nobody reads `out` before the latch is set.
    root.out.with_mut(|p| unsafe { *p = 42 });
    // SAFETY: the root is alive (an `Arc` the waiter shares), and the waiter frees nothing
    // before it has seen the latch set.
    unsafe { Latch::set(&root.latch) };
}

/// One execution: a setter thread finishes the root while the main thread waits with
/// `wait_for`.
fn run(hits: &Hits, wait_for: fn(&Latch)) {
    let root = Arc::new(Root {
        out: UnsafeCell::new(0),
        latch: Latch::new(),
    });
    let setter = {
        let root = root.clone();
        thread::spawn(move || finish(&root))
    };
    hits[usize::from(root.latch.probe())].fetch_add(1, Relaxed);
    wait_for(&root.latch);
    // SAFETY: the latch is set, so the setter's write of `out` happened before this read.
    let out = root.out.with(|p| unsafe { *p });
    assert_eq!(out, 42, "the waiter returned before the result was written");
    setter.join().unwrap();
}

fn model(wait_for: fn(&Latch)) {
    let hits = Hits::default();
    let h = hits.clone();
    loom::model(move || run(&h, wait_for));
    assert!(hits[0].load(Relaxed) > 0, "the latch was never found unset");
    assert!(hits[1].load(Relaxed) > 0, "the latch was never found set");
}

#[test]
fn loom_latch_wait_sees_the_result() {
    model(Latch::wait);
}

#[test]
fn loom_latch_probe_sees_the_result() {
    model(|latch| {
        while !latch.probe() {
            thread::yield_now();
        }
    });
}
