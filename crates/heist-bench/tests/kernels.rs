//! Every kernel of the catalogue, at its test size, on every runtime it supports: two runs,
//! each after a reset, and each must pass its own verification.

use heist_bench::bench::{Bench, SizeClass};
use heist_bench::harness;
use heist_bench::kernels;
use heist_bench::runtime::{Runtime, RuntimeKind};

/// The runtimes and worker counts each kernel is checked on. To add a runtime, add a
/// line here and a `#[test]` below that calls [`check_runtime`].
const CONFIGS: &[(RuntimeKind, &[usize])] = &[
    (RuntimeKind::Seq, &[1]),
    (RuntimeKind::HeistLace, &[1, 2, 4]),
    (RuntimeKind::HeistRelay, &[1, 2, 4]),
    (RuntimeKind::Rayon, &[2]),
    (RuntimeKind::Chili, &[2]),
    (RuntimeKind::HeistJoin, &[2]),
    (RuntimeKind::RayonTls, &[2]),
    (RuntimeKind::RayonBest, &[2]),
    (RuntimeKind::HeistClaim, &[1, 2, 4]),
    (RuntimeKind::Orx, &[2]),
    (RuntimeKind::Tbb, &[1, 2, 4]),
    (RuntimeKind::Omp, &[1, 2, 4]),
    (RuntimeKind::OmpGuided, &[2]),
    (RuntimeKind::Gomp, &[1, 2]),
];

/// Builds `bench` at its test size and runs it twice on `rt`, resetting before each run.
fn run_twice(bench: &dyn Bench, rt: &Runtime) -> Result<(), String> {
    let size = bench.size(SizeClass::Test);
    let mut inst = bench.instance(size)?;
    for round in 1..=2 {
        inst.reset();
        inst.run(rt);
        inst.verify().map_err(|e| format!("run {round}: {e}"))?;
    }
    Ok(())
}

/// Checks every kernel on `kind` at each of its configured worker counts; reports all
/// failures at once.
fn check_runtime(kind: RuntimeKind) {
    let (_, workers) = CONFIGS
        .iter()
        .find(|(k, _)| *k == kind)
        .unwrap_or_else(|| panic!("{kind} has no entry in CONFIGS"));
    let mut failures = Vec::new();
    for &w in *workers {
        let rt = Runtime::new(kind, w).unwrap_or_else(|e| panic!("starting {kind}: {e}"));
        // A small cap, so that rayon-best's capped loops split down to it.
        rt.set_max_len(4);
        for bench in kernels::all().into_iter().filter(|b| b.supports(kind)) {
            if let Err(e) = run_twice(bench, &rt) {
                failures.push(format!("{} on {kind} x{w}: {e}", bench.name()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn seq() {
    check_runtime(RuntimeKind::Seq);
}

#[test]
fn heist_lace() {
    check_runtime(RuntimeKind::HeistLace);
}

#[test]
fn heist_relay() {
    check_runtime(RuntimeKind::HeistRelay);
}

#[test]
fn rayon() {
    check_runtime(RuntimeKind::Rayon);
}

#[test]
fn chili() {
    check_runtime(RuntimeKind::Chili);
}

#[test]
fn heist_join() {
    check_runtime(RuntimeKind::HeistJoin);
}

#[test]
fn rayon_tls() {
    check_runtime(RuntimeKind::RayonTls);
}

#[test]
fn rayon_best() {
    check_runtime(RuntimeKind::RayonBest);
}

#[test]
fn heist_lace_claim() {
    check_runtime(RuntimeKind::HeistClaim);
}

#[test]
fn orx() {
    check_runtime(RuntimeKind::Orx);
}

// The C++ peers, in a build that has them (build.rs; CI installs them first).

#[cfg(heist_tbb)]
#[test]
fn tbb() {
    check_runtime(RuntimeKind::Tbb);
}

#[cfg(heist_omp)]
#[test]
fn omp() {
    check_runtime(RuntimeKind::Omp);
}

#[cfg(heist_omp)]
#[test]
fn omp_guided() {
    check_runtime(RuntimeKind::OmpGuided);
}

#[cfg(heist_gomp)]
#[test]
fn gomp() {
    check_runtime(RuntimeKind::Gomp);
}

/// The kernels the issue asks C++ versions of have them, on both peers.
#[test]
fn peers_cover_the_kernels_they_should() {
    let with_peers = [
        "fib",
        "nqueens",
        "uts",
        "matmul",
        "quicksort",
        "sparselu",
        "spc",
        "mandelbrot",
        "step",
        "exponential",
        "loop-fg",
        "loop-cg",
        "loop-rg",
        "loop-ig",
        "loop-dg",
        "matvec-tri",
        "reduce-fib",
        "pi",
        "dot",
    ];
    for name in with_peers {
        let b = kernels::find(name).unwrap();
        for k in [RuntimeKind::Tbb, RuntimeKind::Omp, RuntimeKind::Gomp] {
            assert!(b.supports(k), "{name} has no {k} version");
        }
    }
    assert!(kernels::find("par-sort")
        .unwrap()
        .supports(RuntimeKind::Tbb));
}

/// The sweep times every `with_max_len`, verifies each, and leaves the fastest set.
#[test]
fn rayon_best_sweeps_every_max_len() {
    let rt = Runtime::new(RuntimeKind::RayonBest, 2).unwrap();
    let b = kernels::find("loop-ig").unwrap();
    let mut inst = b.instance(b.size(SizeClass::Test)).unwrap();
    let mut m = harness::Measured::new(RuntimeKind::RayonBest);
    harness::sweep_max_len(inst.as_mut(), &rt, 1, &mut m);
    assert!(m.error.is_none(), "{:?}", m.error);
    let sweep = m.sweep.expect("a sweep");
    let lens: Vec<usize> = sweep.iter().map(|s| s.0).collect();
    assert_eq!(lens, harness::MAX_LENS);
    let best = sweep.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
    assert_eq!(rt.max_len(), best);
}

#[test]
fn catalogue_names_are_unique_and_findable() {
    let all = kernels::all();
    for (i, b) in all.iter().enumerate() {
        assert!(
            all[..i].iter().all(|o| o.name() != b.name()),
            "duplicate {}",
            b.name()
        );
        assert_eq!(kernels::find(b.name()).map(|f| f.name()), Some(b.name()));
    }
}

#[test]
fn nonsense_sizes_are_rejected() {
    for b in kernels::all() {
        assert!(
            b.instance("no-such-size").is_err(),
            "{} accepted a nonsense size",
            b.name()
        );
    }
}

/// The spawn-style and heist-only kernels, with the runtimes each must support (every
/// configured runtime not listed must be refused).
const NEW_KERNELS: &[(&str, &[RuntimeKind])] = &[
    ("spc", &[SEQ, LACE, RELAY, RAYON, TBB, OMP, GOMP]),
    ("bpc", &[SEQ, LACE, RELAY, RAYON]),
    ("treerec-futures", &[SEQ, LACE, RELAY]),
    ("sparselu-detached", &[SEQ, LACE, RELAY]),
];

const SEQ: RuntimeKind = RuntimeKind::Seq;
const LACE: RuntimeKind = RuntimeKind::HeistLace;
const RELAY: RuntimeKind = RuntimeKind::HeistRelay;
const RAYON: RuntimeKind = RuntimeKind::Rayon;
const TBB: RuntimeKind = RuntimeKind::Tbb;
const OMP: RuntimeKind = RuntimeKind::Omp;
const GOMP: RuntimeKind = RuntimeKind::Gomp;

#[test]
fn new_kernels_support_exactly_their_runtimes() {
    for (name, kinds) in NEW_KERNELS {
        let b = kernels::find(name).unwrap_or_else(|| panic!("{name} is not registered"));
        for k in RuntimeKind::ALL {
            assert_eq!(b.supports(k), kinds.contains(&k), "{name} on {k}");
        }
    }
}

/// Each new kernel at test size on every runtime it supports, at 1 and 2 workers (the
/// runtimes' own tests above cover 4), so a failure names the kernel directly.
#[test]
fn new_kernels_verify_on_their_runtimes() {
    let mut failures = Vec::new();
    for w in [1, 2] {
        let rts: Vec<Runtime> = [SEQ, LACE, RELAY, RAYON]
            .into_iter()
            .map(|k| Runtime::new(k, w).unwrap())
            .collect();
        for (name, kinds) in NEW_KERNELS {
            let b = kernels::find(name).unwrap();
            for rt in rts.iter().filter(|rt| kinds.contains(&rt.kind())) {
                if let Err(e) = run_twice(b, rt) {
                    failures.push(format!("{name} on {} x{w}: {e}", rt.kind()));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
