//! Resident memory, for `--rss`: how much a run itself adds to the process's peak RSS.
//!
//! Linux keeps a high-water mark of the resident set (`VmHWM` in `/proc/self/status`),
//! and writing `5` to `/proc/self/clear_refs` lowers it to the current RSS. So the peak
//! growth of a run is the mark after it minus the RSS right after resetting the mark.
//! Memory freed before the run ends counts too: the kernel raises the mark before it
//! unmaps pages. Elsewhere (or where `clear_refs` may not be written) nothing is measured.

use std::fs;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The highest peak seen before a reset lowered it, in KiB.
static EARLIER_PEAK: AtomicU64 = AtomicU64::new(0);

/// One field of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The process's resident set now, in KiB.
pub fn current_kib() -> Option<u64> {
    status_kib("VmRSS")
}

/// The process's peak resident set since it started or since the last reset, in KiB.
pub fn peak_kib() -> Option<u64> {
    status_kib("VmHWM")
}

/// The process's peak resident set over its whole life, resets included, in KiB.
pub fn process_peak_kib() -> Option<u64> {
    peak_kib().map(|p| p.max(EARLIER_PEAK.load(Relaxed)))
}

/// Lowers the peak to the current resident set (remembering the old one for
/// [`process_peak_kib`]); false if the system does not allow it.
fn reset_peak() -> bool {
    if let Some(p) = peak_kib() {
        EARLIER_PEAK.fetch_max(p, Relaxed);
    }
    fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Runs `f` and returns its result with how far the peak RSS rose above the RSS at its
/// start, in KiB (`None` where that cannot be measured).
pub fn peak_growth<R>(f: impl FnOnce() -> R) -> (R, Option<u64>) {
    let base = if reset_peak() { current_kib() } else { None };
    let r = f();
    let growth = base
        .zip(peak_kib())
        .map(|(base, peak)| peak.saturating_sub(base));
    (r, growth)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer touched and freed inside the measured closure shows up in full; one
    /// allocated before does not.
    #[test]
    fn a_freed_buffer_counts_and_an_older_one_does_not() {
        const MIB: usize = 64;
        let touch = |v: &mut Vec<u8>| {
            for i in (0..v.len()).step_by(4096) {
                v[i] = 1;
            }
        };
        let mut old = vec![0u8; MIB << 20];
        touch(&mut old);
        let (sum, growth) = peak_growth(|| {
            let mut v = vec![0u8; MIB << 20];
            touch(&mut v);
            std::hint::black_box(&v)
                .iter()
                .step_by(4096)
                .map(|&b| b as usize)
                .sum::<usize>()
        });
        assert_eq!(sum, (MIB << 20) / 4096);
        if cfg!(not(target_os = "linux")) {
            assert_eq!(growth, None);
            return;
        }
        let growth = growth.expect("Linux lets a process reset its peak RSS");
        let kib = (MIB as u64) << 10;
        assert!(
            growth >= kib * 9 / 10 && growth < kib * 3 / 2,
            "growth {growth} KiB for a {kib} KiB buffer"
        );
        let (_, none) = peak_growth(|| touch(&mut old));
        assert!(
            none.unwrap() < kib / 4,
            "re-touching an old buffer grew {none:?} KiB"
        );
        drop(old);
        assert!(
            process_peak_kib().unwrap() >= 2 * kib,
            "both buffers were resident at once"
        );
    }
}
