//! What several test files share: fib, the worker counts of the tests' own pools, building one
//! such pool, a panic hook that keeps the tests' own panics quiet, catching a panic's
//! message, and re-running the test binary in a child process. Each test file uses part
//! of it.
#![allow(dead_code)]

mod fib;

#[allow(unused_imports)]
pub use fib::fib;

use heist::{Pool, Scheduler};
use std::panic::{self, AssertUnwindSafe};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// `list`, and the count that `HEIST_TEST_WORKERS` names if it is set to one not in it
/// (`.ci/stress` sets it to the global pool's size).
pub fn worker_counts(list: &[usize]) -> Vec<usize> {
    let mut v = list.to_vec();
    let extra = std::env::var("HEIST_TEST_WORKERS").ok();
    if let Some(n) = extra.and_then(|s| s.trim().parse::<usize>().ok()) {
        if n > 0 && !v.contains(&n) {
            v.push(n);
        }
    }
    v
}

/// fib(n), sequentially.
pub fn fib_seq(n: u64) -> u64 {
    (0..n).fold((0u64, 1u64), |(a, b), _| (b, a + b)).0
}

/// A pool of `workers` workers under `s` whose deques hold `capacity` tasks.
pub fn pool(s: Scheduler, workers: usize, capacity: usize) -> Pool {
    Pool::builder()
        .workers(workers)
        .scheduler(s)
        .deque_capacity(capacity)
        .build()
        .unwrap()
}

/// Runs `f`, turning a panic into `Err(message)`.
pub fn catching<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|p| match p.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => match p.downcast::<&str>() {
            Ok(s) => s.to_string(),
            Err(_) => "<non-string panic>".to_string(),
        },
    })
}

/// Installs, once per process, a panic hook that keeps quiet about panics whose message
/// starts with one of `prefixes` (the panics a test raises on purpose).
pub fn quiet_panics(prefixes: &'static [&'static str]) {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let p = info.payload();
            let msg = p
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| p.downcast_ref::<String>().map(String::as_str));
            if !msg.is_some_and(|m| prefixes.iter().any(|x| m.starts_with(x))) {
                default(info);
            }
        }));
    });
}

/// Re-runs this test binary with only the ignored test `test`, with `var` set to `case`,
/// no `HEIST_*` settings but `env`; returns what it did.
pub fn run_child(test: &str, var: &str, case: &str, env: &[(&str, &str)]) -> Output {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args([
        test,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env_remove("HEIST_WORKERS")
    .env_remove("HEIST_SCHEDULER")
    .env(var, case);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the child test process starts")
}

/// The number of this process's threads whose name starts with `prefix`.
pub fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with(prefix))
        .count()
}

/// Waits until `n` threads named `prefix...` run.
pub fn wait_threads(prefix: &str, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while threads_named(prefix) != n {
        assert!(
            std::time::Instant::now() < deadline,
            "{} threads {prefix}* run, not {n}",
            threads_named(prefix)
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
