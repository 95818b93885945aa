//! Running a program under `mpirun` with a timeout, for heist-mpi's tests and
//! heist-mpi-bench's (public but hidden: not part of the API).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

static LAUNCHES: AtomicUsize = AtomicUsize::new(0);

/// Runs `exe ARGS` on `np` ranks (oversubscribed) over Open MPI's `btl` transports, with
/// the allow-run-as-root settings; returns its output, or a description of the timeout
/// with what it printed. Each launch gets a session directory of its own: two mpiruns
/// started at once (tests run in parallel) race to create the shared one, and one fails
/// ("mkdir ... File exists", Open MPI 4.1).
pub fn mpirun(
    np: usize,
    btl: &str,
    exe: &str,
    args: &[&str],
    limit: Duration,
) -> Result<Output, String> {
    let n = LAUNCHES.fetch_add(1, Relaxed);
    let dir = std::env::temp_dir().join(format!("heist-mpi-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let out = launch(np, btl, exe, args, limit, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

fn launch(
    np: usize,
    btl: &str,
    exe: &str,
    args: &[&str],
    limit: Duration,
    dir: &Path,
) -> Result<Output, String> {
    let mut child = Command::new("mpirun")
        .args([
            "-np",
            &np.to_string(),
            "--oversubscribe",
            "--mca",
            "btl",
            btl,
        ])
        .arg(exe)
        .args(args)
        .envs(crate::ALLOW_RUN_AS_ROOT)
        .env("OMPI_MCA_orte_tmpdir_base", dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("mpirun does not start ({e}); scripts/install-mpi.sh installs it"))?;
    let start = Instant::now();
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().map_err(|e| e.to_string())?;
            return Err(format!(
                "np={np} {btl} {args:?}: no end within {limit:?}\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().map_err(|e| e.to_string())
}
