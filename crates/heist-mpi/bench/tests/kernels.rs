//! Every kernel of the driver gives its one-node answer under `mpirun -np N`, N = 1 to 4
//! (oversubscribed on 2 cores), with 1 and 2 workers per rank, over shared memory and
//! TCP loopback; each launch under a timeout. Small sizes: this checks answers, not speed.

use std::time::Duration;

const KERNELS: &str = "uts:T1XS,nqueens:9,knapsack:28,pi:1e-10";

fn launch(np: usize, workers: usize, btl: &str) {
    let exe = env!("CARGO_BIN_EXE_heist-mpi-bench");
    let w = workers.to_string();
    let args = ["run", KERNELS, "--runs", "1", "--workers", &w];
    let out = heist_mpi::testing::mpirun(np, btl, exe, &args, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "np={np} workers={workers} {btl}: {}\n{text}",
        out.status
    );
    // Rank 0 prints one verified summary per kernel (a wrong answer exits non-zero).
    for k in ["uts", "nqueens", "knapsack", "pi"] {
        assert!(
            text.contains(&format!("heist-mpi {k} ")),
            "np={np} workers={workers} {btl}: no {k} result\n{text}"
        );
    }
}

#[test]
fn every_kernel_exact_on_one_to_four_ranks_over_shared_memory() {
    for np in 1..=4 {
        for workers in [1, 2] {
            launch(np, workers, "self,vader");
        }
    }
}

#[test]
fn every_kernel_exact_on_one_to_four_ranks_over_tcp() {
    for np in 1..=4 {
        for workers in [1, 2] {
            launch(np, workers, "self,tcp");
        }
    }
}
