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

/// `run 'coarse-*'` runs every kernel the pattern matches, each on the asked runtimes it
/// has (rayon has no promises); `--json` gives an array of their reports.
#[test]
fn run_a_pattern_runs_every_kernel_it_matches() {
    let args = [
        "run",
        "coarse-*",
        "--size",
        "2,1",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--json",
        "--workers",
        "2",
        "--runtimes",
        "heist-lace,rayon",
    ];
    let out = bench(&args);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", text(&out.stderr));
    let reports: Vec<Value> = serde_json::from_str(&stdout).expect("a JSON array of reports");
    let names: Vec<&str> = reports.iter().filter_map(|r| r["bench"].as_str()).collect();
    assert_eq!(
        names,
        [
            "coarse-spawn",
            "coarse-join",
            "coarse-loop",
            "coarse-promise",
            "coarse-detached",
            "coarse-nested"
        ]
    );
    for r in &reports {
        let runtimes: Vec<&str> = r["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|x| x["runtime"].as_str())
            .collect();
        let promise = ["coarse-promise", "coarse-detached"].contains(&r["bench"].as_str().unwrap());
        let want: &[&str] = if promise {
            &["heist-lace"]
        } else {
            &["heist-lace", "rayon"]
        };
        assert_eq!(runtimes, want, "{}", r["bench"]);
        assert!(r["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["verified"] == true));
    }
    let none = bench(&["run", "coarse-nope*", "--runs", "1"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(text(&none.stderr).contains("coarse-nope*"));
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

/// The joins fib(n) makes (one per call with n >= 2), by the recurrence.
#[cfg(feature = "trace")]
fn fib_joins(n: u32) -> u64 {
    (2..=n)
        .fold((0u64, 0u64), |(j0, j1), _| (j1, 1 + j1 + j0))
        .1
}

/// `run --trace` (issue 26): a file of trace-event JSON with one task span per task run.
/// fib(20)'s tasks are the second branches of its joins, plus the root of `Pool::run`.
#[cfg(feature = "trace")]
#[test]
fn run_fib_trace_has_one_task_span_per_task() {
    let path = std::env::temp_dir().join(format!("heist-trace-{}.json", std::process::id()));
    let p = path.to_str().unwrap();
    let out = bench(&[
        "run",
        "fib",
        "--size",
        "20",
        "--workers",
        "2",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--runtimes",
        "seq,heist-lace,heist-relay",
        "--trace",
        p,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).expect("the trace is JSON");
    std::fs::remove_file(&path).unwrap();
    let evs = v["traceEvents"].as_array().expect("traceEvents");
    let procs: Vec<&str> = evs
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(procs, ["heist-lace (fib 20)", "heist-relay (fib 20)"]);
    assert_eq!(fib_joins(20), 10945);
    for pid in [1, 2] {
        let mine = |e: &&Value| e["pid"] == pid;
        let tasks = |name: &str| {
            evs.iter()
                .filter(mine)
                .filter(|e| e["ph"] == "X" && e["cat"] == "task")
                .filter(|e| e["name"] == name)
                .count() as u64
        };
        assert_eq!(tasks("join"), fib_joins(20), "{}", procs[pid - 1]);
        assert_eq!(tasks("root"), 1, "{}", procs[pid - 1]);
        let all = evs
            .iter()
            .filter(mine)
            .filter(|e| e["cat"] == "task")
            .count() as u64;
        assert_eq!(all, fib_joins(20) + 1, "{}", procs[pid - 1]);
        for e in evs.iter().filter(mine).filter(|e| e["ph"] == "X") {
            assert!(e["ts"].as_f64().is_some() && e["dur"].as_f64().is_some_and(|d| d >= 0.0));
            assert!(e["tid"].as_u64().is_some_and(|t| t < 2), "{e}");
        }
        let threads = evs
            .iter()
            .filter(mine)
            .filter(|e| e["name"] == "thread_name")
            .count();
        assert_eq!(threads, 2);
    }
}

#[cfg(not(feature = "trace"))]
#[test]
fn run_trace_without_the_feature_exits_2_saying_how() {
    let out = bench(&["run", "fib", "--size", "test", "--trace", "t.json"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("--features trace"), "{stderr}");
    assert!(!std::path::Path::new("t.json").exists());
}
