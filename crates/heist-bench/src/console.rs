//! What the harness says while it runs: tables on stdout as each kernel finishes, and
//! progress on stderr (a bar on a terminal, otherwise one line per kernel, so that a log
//! or CI shows how far a suite got).
//!
//! A closed stdout (`heist-bench list | head`) ends the program quietly, as SIGPIPE ends
//! a C tool; Rust ignores SIGPIPE, so without this every `print!` after the reader left
//! would panic. A closed stderr is ignored.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::{ErrorKind, IsTerminal, Write};
use std::time::{Duration, Instant};

/// Writes `s` to stdout. If the reader has gone, exits with status 0.
pub fn emit(s: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        note(&format!("heist-bench: cannot write to stdout: {e}\n"));
    }
}

/// Writes `s` to stderr, ignoring a closed stderr.
pub fn note(s: &str) {
    let _ = std::io::stderr().lock().write_all(s.as_bytes());
}

/// Progress over a list of kernels: a bar when stderr is a terminal, else a line per
/// kernel; nothing at all when `quiet`.
pub struct Progress {
    bar: Option<ProgressBar>,
    lines: bool,
    kernels: usize,
    started: Instant,
    kernel_started: Instant,
}

impl Progress {
    /// Progress over `kernels` kernels of `runs` runs in all (the bar's length).
    pub fn new(kernels: usize, runs: u64, quiet: bool) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let bar = (!quiet && terminal).then(|| {
            let pb = ProgressBar::new(runs);
            let tpl = "{elapsed_precise} [{bar:30}] {pos}/{len} {msg}";
            if let Ok(style) = ProgressStyle::with_template(tpl) {
                pb.set_style(style.progress_chars("=> "));
            }
            pb
        });
        Progress {
            bar,
            lines: !quiet && !terminal,
            kernels,
            started: Instant::now(),
            kernel_started: Instant::now(),
        }
    }

    /// Kernel `i` (0-based) starts.
    pub fn start(&mut self, i: usize, what: &str) {
        self.kernel_started = Instant::now();
        if let Some(pb) = &self.bar {
            pb.set_message(format!("[{}/{}] {what}", i + 1, self.kernels));
        }
    }

    /// One run of the current kernel finished, on runtime `rt`.
    pub fn tick(&self, what: &str, rt: &str) {
        if let Some(pb) = &self.bar {
            pb.set_message(format!("{what}: {rt}"));
            pb.inc(1);
        }
    }

    /// Kernel `i` finished: `outcome` says how (e.g. "7 runtimes verified").
    pub fn done(&self, i: usize, what: &str, outcome: &str) {
        if self.lines {
            note(&format!(
                "[{:>2}/{}] {what}: {outcome} in {} ({} so far)\n",
                i + 1,
                self.kernels,
                fmt_elapsed(self.kernel_started.elapsed()),
                fmt_elapsed(self.started.elapsed()),
            ));
        }
    }

    /// Prints `s` on stdout without tearing the bar.
    pub fn emit(&self, s: &str) {
        match &self.bar {
            Some(pb) => pb.suspend(|| emit(s)),
            None => emit(s),
        }
    }

    /// Removes the bar; returns the time since the start.
    pub fn finish(&self) -> Duration {
        if let Some(pb) = &self.bar {
            pb.finish_and_clear();
        }
        self.started.elapsed()
    }
}

/// `12.3 s` or `2 min 41 s`.
pub fn fmt_elapsed(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        format!("{} min {:02} s", (s / 60.0) as u64, s as u64 % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_times_read_well() {
        assert_eq!(fmt_elapsed(Duration::from_millis(12_340)), "12.3 s");
        assert_eq!(fmt_elapsed(Duration::from_secs(161)), "2 min 41 s");
    }
}
