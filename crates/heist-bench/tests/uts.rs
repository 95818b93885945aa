//! Tests of the UTS kernel (the Unbalanced Tree Search benchmark of seeds 000 and 001):
//! the test tree is counted exactly on every runtime, and a wrong count is reported.
//!
//! The published sample trees are checked by ignored tests (seconds each in release mode):
//! `cargo test --release -p heist-bench --test uts -- --ignored --nocapture`.

use heist_bench::bench::{Bench, Instance, SizeClass};
use heist_bench::fork::SEQ;
use heist_bench::kernels::uts::{self, Counts, NamedTree, Tree, Uts, UtsRun};
use heist_bench::runtime::{Runtime, RuntimeKind};
use std::time::Instant;

/// Builds the instance of `size`, runs it once on `kind` with `workers`, and verifies it.
fn run_and_verify(size: &str, kind: RuntimeKind, workers: usize) -> Result<(), String> {
    let rt = Runtime::new(kind, workers)?;
    let mut inst = Uts.instance(size)?;
    inst.reset();
    inst.run(&rt);
    inst.verify()
}

#[test]
fn test_tree_verifies_on_seq() {
    run_and_verify(Uts.size(SizeClass::Test), RuntimeKind::Seq, 1).unwrap();
}

#[test]
fn test_tree_verifies_on_heist_lace() {
    for workers in [1, 2, 8] {
        run_and_verify(Uts.size(SizeClass::Test), RuntimeKind::HeistLace, workers)
            .unwrap_or_else(|e| panic!("heist-lace, {workers} workers: {e}"));
    }
}

#[test]
fn test_tree_verifies_on_rayon() {
    run_and_verify(Uts.size(SizeClass::Test), RuntimeKind::Rayon, 2).unwrap();
}

#[test]
fn test_tree_verifies_on_chili() {
    run_and_verify(Uts.size(SizeClass::Test), RuntimeKind::Chili, 2).unwrap();
}

#[test]
fn test_tree_verifies_on_every_runtime_repeatedly() {
    for kind in RuntimeKind::ALL {
        let rt = Runtime::new(kind, 2).unwrap();
        let mut inst = Uts.instance(Uts.size(SizeClass::Test)).unwrap();
        for round in 0..3 {
            inst.reset();
            inst.run(&rt);
            inst.verify()
                .unwrap_or_else(|e| panic!("{kind}, round {round}: {e}"));
        }
    }
}

#[test]
fn test_tree_is_what_the_table_says() {
    let named = NamedTree::find(Uts.size(SizeClass::Test)).unwrap();
    let got = uts::count(SEQ, &Tree::parse(named.params).unwrap());
    assert_eq!(got, named.expected);
    assert!(
        (10_000..=100_000).contains(&got.nodes),
        "{} nodes is not a test size",
        got.nodes
    );
}

#[test]
fn wrong_expected_count_is_reported() {
    let named = NamedTree::find(Uts.size(SizeClass::Test)).unwrap();
    let rt = Runtime::new(RuntimeKind::Seq, 1).unwrap();
    let wrong = [
        Counts {
            nodes: named.expected.nodes + 1,
            ..named.expected
        },
        Counts {
            leaves: named.expected.leaves - 1,
            ..named.expected
        },
        Counts {
            max_depth: named.expected.max_depth + 1,
            ..named.expected
        },
    ];
    for expected in wrong {
        let mut run = UtsRun::new(Tree::parse(named.params).unwrap(), expected);
        assert!(run.verify().is_err(), "verify passed before any run");
        run.run(&rt);
        assert_eq!(run.last(), Some(named.expected));
        let err = run
            .verify()
            .expect_err("a wrong expected count passed verify");
        assert!(err.contains("expected"), "unhelpful error: {err}");
    }
}

#[test]
fn parameters_as_size_are_checked_against_seq() {
    // A small binomial and a small hybrid tree, given as UTS parameters (9369 and 3443
    // nodes, 23 and 42 levels: shallow enough for the default 2 MB thread stacks).
    for params in [
        "-t 0 -b 2000 -q 0.1 -m 8 -r 42",
        "-t 2 -a 0 -d 8 -b 4 -r 1 -q 0.234375 -m 4",
    ] {
        for kind in [RuntimeKind::Seq, RuntimeKind::HeistLace, RuntimeKind::Rayon] {
            run_and_verify(params, kind, 2).unwrap_or_else(|e| panic!("{params} on {kind}: {e}"));
        }
    }
}

#[test]
fn size_classes_name_known_trees() {
    for class in [SizeClass::Test, SizeClass::Quick, SizeClass::Full] {
        assert!(NamedTree::find(Uts.size(class)).is_some(), "{class:?}");
    }
    assert!(Uts.instance("no such tree").is_err());
}

/// Counts the named tree sequentially (on a thread with a stack deep enough for T3L),
/// prints counts and time, and checks them.
fn check_named(name: &str) {
    let named = NamedTree::find(name).unwrap();
    let tree = Tree::parse(named.params).unwrap();
    let (got, secs) = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let start = Instant::now();
            let got = uts::count(SEQ, &tree);
            (got, start.elapsed().as_secs_f64())
        })
        .unwrap()
        .join()
        .unwrap();
    println!(
        "{name} ({}): {} nodes, {} leaves, depth {}, seq {secs:.3} s",
        named.params, got.nodes, got.leaves, got.max_depth
    );
    assert_eq!(got, named.expected, "{name}");
}

/// The ~4M-node sample trees of UTS 2.1 (one per tree type and shape).
#[test]
#[ignore = "seconds in release mode; run with --release -- --ignored"]
fn published_small_trees() {
    for name in ["T1", "T2", "T3", "T4", "T5"] {
        check_named(name);
    }
}

/// T1L, ~100M nodes.
#[test]
#[ignore = "about 10 s in release mode"]
fn published_t1l() {
    check_named("T1L");
}

/// T2L, ~100M nodes.
#[test]
#[ignore = "about 10 s in release mode"]
fn published_t2l() {
    check_named("T2L");
}

/// T3L, ~100M nodes, 17844 levels deep.
#[test]
#[ignore = "about 10 s in release mode"]
fn published_t3l() {
    check_named("T3L");
}
