//! heist-mpi under `mpirun`: each test runs the scenario program (src/bin/heist-mpi-check.rs)
//! on a few ranks, under a timeout, on shared memory or TCP loopback, and requires every
//! rank to report success. Run through scripts/test-mpi.sh (which installs nothing and
//! skips where MPI is missing).

use std::time::Duration;

/// The transports: Open MPI's shared-memory BTL, and TCP (on loopback here).
const SHM: &str = "self,vader";
const TCP: &str = "self,tcp";

/// Runs `heist-mpi-check ARGS` on `np` ranks over `btl`; fails unless it exits 0 within
/// `limit` with one `ok` line per rank and `lines` such lines in all.
fn mpirun(np: usize, btl: &str, args: &[&str], lines: usize, limit: Duration) -> String {
    let exe = env!("CARGO_BIN_EXE_heist-mpi-check");
    let out =
        heist_mpi::testing::mpirun(np, btl, exe, args, limit).unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "np={np} {btl} {args:?}: {}\n{stdout}{stderr}",
        out.status
    );
    let oks = stdout.lines().filter(|l| l.contains(" ok: ")).count();
    assert_eq!(oks, lines, "np={np} {btl} {args:?}:\n{stdout}{stderr}");
    for r in 0..np {
        assert!(
            stdout.contains(&format!("rank {r} ok: ")),
            "rank {r} did not report:\n{stdout}{stderr}"
        );
    }
    stdout
}

#[test]
fn fifty_repeats_at_three_ranks_lose_no_task() {
    let out = mpirun(3, SHM, &["count", "1", "50"], 150, Duration::from_secs(120));
    // Work moved between ranks (the check would be empty otherwise).
    assert!(
        out.lines()
            .any(|l| l.contains("received") && !l.ends_with("received 0")),
        "no task moved between ranks:\n{out}"
    );
}

#[test]
fn repeats_over_tcp_with_two_workers_lose_no_task() {
    mpirun(3, TCP, &["count", "2", "10"], 30, Duration::from_secs(120));
}

#[test]
fn four_ranks_of_one_worker_on_two_cores_lose_no_task() {
    mpirun(4, SHM, &["count", "1", "10"], 40, Duration::from_secs(120));
}

#[test]
fn a_panic_on_rank_2_of_3_ends_every_rank_with_its_error() {
    for btl in [SHM, TCP] {
        mpirun(3, btl, &["panic", "1", "2"], 3, Duration::from_secs(60));
    }
}

#[test]
fn one_rank_matches_heists_reduce_tasks() {
    mpirun(1, SHM, &["single", "2"], 1, Duration::from_secs(60));
}

#[test]
fn the_bound_reaches_every_rank() {
    for np in [2, 3, 4] {
        mpirun(np, SHM, &["bound", "1"], np, Duration::from_secs(60));
    }
}
