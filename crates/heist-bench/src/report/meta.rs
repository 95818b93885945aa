//! What a report records about the run: the commit, the machine, the compilers, the
//! date and the load, so that a result can be traced and a noisy one recognised.

use serde::Serialize;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// The run's metadata (`results.json`'s `meta`).
#[derive(Debug, Clone, Serialize)]
pub struct Meta {
    /// The command line.
    pub command: String,
    /// `git rev-parse HEAD` of the source tree, `+dirty` if it had uncommitted changes.
    pub commit: String,
    /// `model name` of /proc/cpuinfo.
    pub cpu: String,
    /// CPUs this process may run on at the start (before `--workers` confines it).
    pub cores: usize,
    /// The compiler of the Rust code.
    pub rustc: String,
    /// Each C++ peer's runtime and compiler, e.g. `tbb: oneTBB 2021.8.0 ..., clang 14`.
    pub peers: Vec<String>,
    /// Why peers were left out of this build, if any were.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub peers_left_out: String,
    /// UTC, RFC 3339, when the run started.
    pub date: String,
    /// The 1, 5 and 15 minute load averages before the run and after it.
    pub load_before: Option<[f64; 3]>,
    /// See `load_before`; set by [`Meta::finish`].
    pub load_after: Option<[f64; 3]>,
    /// Seconds the run took; set by [`Meta::finish`].
    pub seconds: f64,
}

impl Meta {
    /// The metadata known when a run starts.
    pub fn now() -> Meta {
        Meta {
            command: std::env::args().collect::<Vec<_>>().join(" "),
            commit: commit(),
            cpu: cpu_model().unwrap_or_else(|| "unknown".into()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            rustc: env!("HEIST_BENCH_RUSTC").to_string(),
            peers: crate::peers::versions()
                .into_iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect(),
            peers_left_out: env!("HEIST_PEERS_LEFT_OUT").to_string(),
            date: rfc3339(SystemTime::now()),
            load_before: load(),
            load_after: None,
            seconds: 0.0,
        }
    }

    /// Records the end of the run, `seconds` after its start.
    pub fn finish(&mut self, seconds: f64) {
        self.load_after = load();
        self.seconds = seconds;
    }
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The source tree's commit, `+dirty` with uncommitted changes to tracked files.
fn commit() -> String {
    let Some(head) = git(&["rev-parse", "HEAD"]) else {
        return "unknown".into();
    };
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    if dirty {
        head + "+dirty"
    } else {
        head
    }
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("model name"))?;
    Some(line.split_once(':')?.1.trim().to_string())
}

fn load() -> Option<[f64; 3]> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut v = s.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([v.next()??, v.next()??, v.next()??])
}

/// `t` as `YYYY-MM-DDThh:mm:ssZ`.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of day `z` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_are_rfc3339_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_723); // 2000-02-29
        assert_eq!(rfc3339(t), "2000-02-29T01:02:03Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_767_225_599); // last second of 2025
        assert_eq!(rfc3339(t), "2025-12-31T23:59:59Z");
    }

    #[test]
    fn metadata_is_filled_in() {
        let mut m = Meta::now();
        m.finish(1.5);
        assert!(m.rustc.starts_with("rustc "), "{}", m.rustc);
        assert!(m.cores >= 1);
        assert_eq!(m.seconds, 1.5);
        if cfg!(target_os = "linux") {
            assert!(m.load_before.is_some() && m.load_after.is_some());
        }
    }
}
