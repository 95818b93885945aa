//! Every kernel of the driver gives its one-node answer under `mpirun -np N`, N = 1 to 4
//! (oversubscribed on 2 cores), with 1 and 2 workers per rank, over shared memory and
//! TCP loopback; each launch under a timeout. Small sizes: this checks answers, not speed.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const KERNELS: &str = "uts:T1XS,nqueens:9,knapsack:28,pi:1e-10";

fn launch(np: usize, workers: usize, btl: &str) {
    let mut child = Command::new("mpirun")
        .args([
            "-np",
            &np.to_string(),
            "--oversubscribe",
            "--mca",
            "btl",
            btl,
        ])
        .arg(env!("CARGO_BIN_EXE_heist-mpi-bench"))
        .args([
            "run",
            KERNELS,
            "--runs",
            "1",
            "--workers",
            &workers.to_string(),
        ])
        .envs(heist_mpi::ALLOW_RUN_AS_ROOT)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun runs (scripts/install-mpi.sh installs it)");
    let start = Instant::now();
    while child.try_wait().expect("waiting for mpirun").is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("np={np} workers={workers} {btl}: no end within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("mpirun's output");
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
