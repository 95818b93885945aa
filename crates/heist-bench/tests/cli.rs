//! Runs the built `heist-bench` binary: `list`, `run` (errors and JSON), and `idle --json`.

use serde_json::Value;
use std::process::{Command, Output};

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_heist-bench"))
        .args(args)
        .output()
        .expect("heist-bench starts")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn list_names_runtimes() {
    let out = bench(&["list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for rt in ["seq", "heist-lace", "heist-relay", "rayon", "chili"] {
        assert!(stdout.contains(rt), "missing {rt} in:\n{stdout}");
    }
}

#[test]
fn unknown_runtime_exits_2_naming_it() {
    let out = bench(&["run", "fib", "--runtimes", "seq,nosuchrt"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("nosuchrt"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn unknown_bench_exits_2_naming_it() {
    let out = bench(&["run", "nosuchbench", "--runs", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("nosuchbench"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_workers_exits_2() {
    let out = bench(&["idle", "--workers", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--workers"));
}

#[test]
fn run_fib_json() {
    let args = [
        "run", "fib", "--size", "test", "--runs", "1", "--warmup", "0",
    ];
    let out = bench(&[&args[..], &["--json", "--workers", "2"]].concat());
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", text(&out.stderr));
    let v: Value = serde_json::from_str(&stdout).expect("stdout is one JSON object");
    assert_eq!(v["bench"], "fib");
    assert_eq!(v["workers"], 2);
    assert!(v["size"].as_str().is_some_and(|s| !s.is_empty()));
    let results = v["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .filter_map(|r| r["runtime"].as_str())
        .collect();
    assert!(
        names.contains(&"seq") && names.contains(&"heist-lace"),
        "{names:?}"
    );
    for r in results {
        assert_eq!(r["runs"], 1);
        assert_eq!(r["verified"], true);
        let (min, med, max) = (
            r["min_s"].as_f64(),
            r["median_s"].as_f64(),
            r["max_s"].as_f64(),
        );
        assert!(min.unwrap() <= med.unwrap() && med.unwrap() <= max.unwrap());
    }
}

#[test]
fn idle_json() {
    let args = ["idle", "--json", "--workers", "2", "--samples", "10"];
    let out = bench(&[&args[..], &["--window-ms", "100", "--burst-ms", "50"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    assert_eq!(v["workers"], 2);
    assert_eq!(v["samples"], 10);
    for key in ["idle_cpu_percent", "wake_p50_us", "wake_p99_us"] {
        let x = v[key].as_f64().unwrap_or(-1.0);
        assert!(x >= 0.0, "{key} = {}", v[key]);
    }
    assert!(v["wake_p50_us"].as_f64() <= v["wake_p99_us"].as_f64());
}

#[test]
fn barrier_json() {
    let args = ["barrier", "--json", "--workers", "2", "--samples", "5"];
    let out = bench(&[&args[..], &["--warmup", "1", "--task-us", "5"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    assert_eq!(v["workers"], 2);
    assert_eq!(v["tasks"], 8, "4 × workers by default");
    let results = v["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .filter_map(|r| r["barrier"].as_str())
        .collect();
    for want in ["heist-lace", "heist-relay", "counter/heist-lace"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for r in results {
        assert_eq!(r["samples"], 5);
        let (p50, p99) = (r["p50_us"].as_f64().unwrap(), r["p99_us"].as_f64().unwrap());
        assert!(0.0 <= p50 && p50 <= p99, "{r}");
    }
}

#[test]
fn barrier_table_and_bad_samples() {
    let out = bench(&[
        "barrier",
        "--workers",
        "1",
        "--samples",
        "2",
        "--warmup",
        "0",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("counter/heist-relay"));
    let out = bench(&["barrier", "--workers", "1", "--samples", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("sample"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn list_says_which_runtimes_cannot_run_spc() {
    let out = bench(&["list"]);
    let stdout = text(&out.stdout);
    let spc = stdout.lines().find(|l| l.starts_with("spc ")).unwrap_or("");
    assert!(spc.contains("not on chili"), "{stdout}");
    let out = bench(&["run", "spc", "--runtimes", "chili", "--size", "test"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("chili"), "{}", text(&out.stderr));
}

/// `list | head`: the reader leaves early, and the program ends quietly.
#[test]
fn closed_stdout_is_not_a_panic() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_heist-bench"))
        .arg("list")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // then dropped: closed
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn run_writes_a_report() {
    let dir = std::env::temp_dir().join(format!("heist-cli-report-{}", std::process::id()));
    let args = [
        "run", "fib", "--size", "test", "--runs", "2", "--warmup", "0",
    ];
    let out = bench(
        &[
            &args[..],
            &["--workers", "2", "--report", dir.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("fib (size 20, 2 workers"));
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let results = json["sections"][0]["reports"][0]["results"]
        .as_array()
        .unwrap();
    assert!(results
        .iter()
        .all(|r| r["samples_s"].as_array().unwrap().len() == 2));
    assert!(json["meta"]["commit"]
        .as_str()
        .is_some_and(|c| !c.is_empty()));
    for f in [
        "results.csv",
        "results.md",
        "index.html",
        "speedup.svg",
        "vs-heist.svg",
    ] {
        assert!(dir.join(f).exists(), "no {f}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
