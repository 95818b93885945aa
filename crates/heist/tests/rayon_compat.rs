//! rayon compatibility: one program (`rayon_compat/suite.rs`) compiled twice, with `rt`
//! standing for rayon and for heist, run in a child process per heist scheduler (each
//! child sets the global pool with `build_global`), and compared case by case.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod on_rayon {
    use rayon as rt;
    include!("rayon_compat/suite.rs");
}

mod on_heist {
    use heist as rt;
    include!("rayon_compat/suite.rs");
}

const CHILD: &str = "HEIST_RAYON_COMPAT_CHILD";

/// Run by `same_results_as_rayon_on_both_schedulers` in a child process.
#[test]
#[ignore = "run in a child process by same_results_as_rayon_on_both_schedulers"]
fn child_compare() {
    assert_eq!(
        std::env::var(CHILD).as_deref(),
        Ok("1"),
        "run by the parent test"
    );
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let p = info.payload();
        let msg = p.downcast_ref::<&str>().copied();
        let msg = msg.or_else(|| p.downcast_ref::<String>().map(String::as_str));
        if !msg.unwrap_or("").starts_with("compat:") {
            quiet(info);
        }
    }));
    let rayon = on_rayon::run_all();
    let heist = on_heist::run_all();
    let want = std::env::var("HEIST_SCHEDULER").unwrap();
    let got = heist::global().unwrap().scheduler();
    assert_eq!(format!("{got:?}").to_lowercase(), want);
    for ((name, r), (_, h)) in rayon.iter().zip(&heist) {
        println!("{name}: {h}");
        assert_eq!(r, h, "case {name}: rayon (left) and heist (right) differ");
    }
    assert_eq!(rayon.len(), heist.len());
}

#[test]
fn same_results_as_rayon_on_both_schedulers() {
    let exe = std::env::current_exe().unwrap();
    for scheduler in ["lace", "relay"] {
        let mut child = Command::new(&exe)
            .args(["child_compare", "--exact", "--ignored", "--nocapture"])
            .env(CHILD, "1")
            .env("HEIST_SCHEDULER", scheduler)
            .env_remove("HEIST_WORKERS")
            .env_remove("RAYON_NUM_THREADS")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > Duration::from_secs(300) {
                child.kill().unwrap();
                panic!("{scheduler}: the comparison hung");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            status.success() && text.contains("1 passed"),
            "{scheduler}:\n{text}\n{err}"
        );
        assert!(
            text.contains("spawns: "),
            "{scheduler}: the cases ran:\n{text}"
        );
    }
}
