//! The report of `run --report DIR` and `suite --report DIR`: everything measured, in the
//! forms a reader wants it.
//!
//! - `results.json`: the metadata ([`meta::Meta`]) and every kernel's report with every
//!   timed sample;
//! - `results.csv`: a row per kernel and runtime;
//! - `speedup.svg`, `overhead.svg` (T1/T_S, from a section at 1 worker) and
//!   `vs-heist.svg` (time relative to heist-lace), see [`charts`];
//! - `index.html`: the charts and tables on one page that needs no server;
//! - `results.md`: the tables in Markdown, from which docs/RESULTS.md is made.
//!
//! Traces (issue 26 item 4, to come with recording in the library) would take the path
//! heist's counters take: an [`crate::harness::Options`] flag, the pool's per-worker
//! buffers drained after a timed run into [`crate::harness::Measured`], and one Chrome
//! trace-event file per kernel and runtime written here beside the others.

pub mod charts;
pub mod meta;

use crate::harness::{heading, row_cells as cells, BenchReport, RuntimeResult, COLUMNS};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A set of kernels measured with one worker count.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    /// What it measures, e.g. `suite` or `T1 (fork-join overhead)`.
    pub name: String,
    /// Worker threads of each parallel runtime.
    pub workers: usize,
    /// One report per kernel, in run order.
    pub reports: Vec<BenchReport>,
}

/// A whole run: its metadata and its sections (`results.json`).
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// The metadata.
    pub meta: meta::Meta,
    /// The sections, in run order.
    pub sections: Vec<Section>,
}

/// Writes the report of `run` into `dir` (created if needed); returns the files written.
pub fn write(dir: &Path, run: &Run) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let json = serde_json::to_string_pretty(run).map_err(|e| e.to_string())?;
    let charts = charts_of(run)?;
    let mut files = vec![
        ("results.json".to_string(), json),
        ("results.csv".to_string(), csv(run)?),
        ("results.md".to_string(), markdown(run)),
        ("index.html".to_string(), html(run, &charts)),
    ];
    files.extend(charts.into_iter().map(|c| (c.file, c.svg)));
    files
        .into_iter()
        .map(|(name, text)| {
            let path = dir.join(name);
            std::fs::write(&path, text)
                .map(|()| path.clone())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))
        })
        .collect()
}

/// One chart of the report.
struct Chart {
    file: String,
    title: String,
    about: &'static str,
    svg: String,
}

/// `bench size`, the label of a kernel's row.
fn label(r: &BenchReport) -> String {
    format!("{} {}", r.bench, r.size)
}

/// A row per kernel of `reports`: `value(result, report)` for each runtime that has one.
fn rows_of(
    reports: &[BenchReport],
    value: impl Fn(&RuntimeResult, &BenchReport) -> Option<f64>,
) -> Vec<charts::Row> {
    reports
        .iter()
        .map(|r| charts::Row {
            label: label(r),
            values: r
                .results
                .iter()
                .filter_map(|x| Some((x.runtime.clone(), value(x, r)?)))
                .collect(),
        })
        .filter(|row| !row.values.is_empty())
        .collect()
}

fn median_of(r: &BenchReport, runtime: &str) -> Option<f64> {
    r.results.iter().find(|x| x.runtime == runtime)?.median_s
}

fn charts_of(run: &Run) -> Result<Vec<Chart>, String> {
    let mut out = Vec::new();
    let parallel = run.sections.iter().find(|s| s.workers > 1);
    let one = run.sections.iter().find(|s| s.workers == 1);
    if let Some(s) = parallel.or(run.sections.first()) {
        let title = format!("Speed-up over seq, {} workers", s.workers);
        let rows = rows_of(&s.reports, |x, _| {
            x.speedup_vs_seq
                .filter(|_| x.runtime != "seq" && x.verified)
        });
        out.push(Chart {
            file: "speedup.svg".into(),
            svg: charts::dot_plot(
                &title,
                "seq's time / time (log scale; right is faster)",
                &rows,
                1.0,
            )?,
            title,
            about: "Each dot is a runtime's median time divided into seq's; the line is seq.",
        });
        let title = format!("Time relative to heist-lace, {} workers", s.workers);
        let rows = rows_of(&s.reports, |x, r| {
            let base = median_of(r, "heist-lace")?;
            (x.runtime != "heist-lace" && x.verified).then_some(x.median_s? / base)
        });
        out.push(Chart {
            file: "vs-heist.svg".into(),
            svg: charts::dot_plot(&title, "time / heist-lace's time (log scale; left is faster)", &rows, 1.0)?,
            title,
            about: "Each dot is a runtime's median time divided by heist-lace's; the line is heist-lace.",
        });
    }
    if let Some(s) = one {
        let title = "Fork-join overhead T1/T_S (1 worker)".to_string();
        let rows = rows_of(&s.reports, |x, r| {
            let seq = median_of(r, "seq")?;
            (x.runtime != "seq" && x.verified).then_some(x.median_s? / seq)
        });
        out.push(Chart {
            file: "overhead.svg".into(),
            svg: charts::dot_plot(&title, "time on 1 worker / seq's time (log scale)", &rows, 1.0)?,
            title,
            about: "A runtime on one worker against the sequential elision: the cost of its forks and joins.",
        });
    }
    Ok(out)
}

/// What every table's `±` column means.
const SPREAD_NOTE: &str = "`±` is the half-width of the median's 95 % confidence interval \
    (order statistics) relative to the median; below 6 runs, where no such interval exists, \
    of the min–max range.";

fn meta_lines(run: &Run) -> Vec<(String, String)> {
    let m = &run.meta;
    let load = |l: Option<[f64; 3]>| {
        l.map_or("-".into(), |l| {
            format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2])
        })
    };
    let mut v = vec![
        ("command".into(), m.command.clone()),
        ("commit".into(), m.commit.clone()),
        ("date".into(), m.date.clone()),
        ("CPU".into(), format!("{} ({} CPUs)", m.cpu, m.cores)),
        ("rustc".into(), m.rustc.clone()),
        (
            "load before / after".into(),
            format!("{} / {}", load(m.load_before), load(m.load_after)),
        ),
        ("took".into(), format!("{:.1} s", m.seconds)),
    ];
    v.extend(m.peers.iter().map(|p| ("C++ peer".to_string(), p.clone())));
    if !m.peers_left_out.is_empty() {
        v.push(("peers left out".into(), m.peers_left_out.clone()));
    }
    v
}

/// `results.md`: the metadata and a table per kernel.
pub fn markdown(run: &Run) -> String {
    let mut out = String::from("# heist-bench results\n\n");
    for (k, v) in meta_lines(run) {
        let _ = writeln!(out, "- {k}: `{v}`");
    }
    let _ = writeln!(out, "\n{SPREAD_NOTE}");
    for s in &run.sections {
        let _ = writeln!(out, "\n## {} ({} workers)", s.name, s.workers);
        for r in &s.reports {
            let _ = writeln!(out, "\n### {}\n", heading(r).trim_end());
            let _ = writeln!(out, "| {} |", COLUMNS.join(" | "));
            let _ = writeln!(out, "|---|{}", "---:|".repeat(COLUMNS.len() - 1));
            for x in &r.results {
                let _ = writeln!(out, "| {} |", cells(x).join(" | "));
            }
        }
    }
    out
}

/// `results.csv`: a row per section, kernel and runtime, times in seconds.
pub fn csv(run: &Run) -> Result<String, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "section",
        "bench",
        "size",
        "workers",
        "runtime",
        "runs",
        "median_s",
        "min_s",
        "max_s",
        "ci95_lo_s",
        "ci95_hi_s",
        "speedup_vs_seq",
        "ratio_vs_rayon",
        "verified",
        "error",
    ];
    w.write_record(header).map_err(|e| e.to_string())?;
    let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for s in &run.sections {
        for r in &s.reports {
            for x in &r.results {
                let ci = x.ci95_s;
                w.write_record([
                    s.name.clone(),
                    r.bench.clone(),
                    r.size.clone(),
                    r.workers.to_string(),
                    x.runtime.clone(),
                    x.runs.to_string(),
                    num(x.median_s),
                    num(x.min_s),
                    num(x.max_s),
                    num(ci.map(|c| c.0)),
                    num(ci.map(|c| c.1)),
                    num(x.speedup_vs_seq),
                    num(x.ratio_vs_rayon),
                    x.verified.to_string(),
                    x.error.clone().unwrap_or_default(),
                ])
                .map_err(|e| e.to_string())?;
            }
        }
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `index.html`: metadata, charts (inline SVG) and tables, with no script and nothing
/// fetched, so that it opens from the file system.
fn html(run: &Run, charts: &[Chart]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <title>heist-bench results</title>\n<style>\n\
         body{font-family:sans-serif;margin:2em auto;max-width:960px;color:#222}\n\
         table{border-collapse:collapse;margin:.4em 0 1.2em}\n\
         td,th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:right}\n\
         td:first-child,th:first-child{text-align:left}\n\
         .meta td{text-align:left}.failed{color:#b00;font-weight:bold}\n\
         h3{margin-bottom:.2em;font-size:1em}figure{margin:1em 0}\n\
         </style></head><body>\n<h1>heist-bench results</h1>\n<table class=\"meta\">\n",
    );
    for (k, v) in meta_lines(run) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td></tr>",
            esc(&k),
            esc(&v)
        );
    }
    out += "</table>\n<h2>Charts</h2>\n";
    for c in charts {
        let _ = writeln!(
            out,
            "<figure id=\"{}\">\n{}\n<figcaption><b>{}.</b> {}</figcaption></figure>",
            esc(&c.file),
            c.svg.trim_start_matches(|ch| ch != '<'),
            esc(&c.title),
            esc(c.about)
        );
    }
    let _ = writeln!(
        out,
        "<h2>Tables</h2>\n<p>{}</p>",
        esc(&SPREAD_NOTE.replace('`', ""))
    );
    for s in &run.sections {
        let _ = writeln!(out, "<h2>{} ({} workers)</h2>", esc(&s.name), s.workers);
        for r in &s.reports {
            let _ = writeln!(
                out,
                "<h3>{}</h3>\n<table>\n<tr>",
                esc(heading(r).trim_end())
            );
            for h in COLUMNS {
                let _ = write!(out, "<th>{}</th>", esc(h));
            }
            out += "</tr>\n";
            for x in &r.results {
                let row: Vec<String> = cells(x)
                    .iter()
                    .map(|c| match c.as_str() {
                        "FAILED" => format!(
                            "<td class=\"failed\" title=\"{}\">FAILED</td>",
                            esc(x.error.as_deref().unwrap_or(""))
                        ),
                        c => format!("<td>{}</td>", esc(c)),
                    })
                    .collect();
                let _ = writeln!(out, "<tr>{}</tr>", row.concat());
            }
            out += "</table>\n";
        }
    }
    out + "</body></html>\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Measured;
    use crate::runtime::RuntimeKind;

    fn report(bench: &str, workers: usize) -> BenchReport {
        let m = |k, t: &[f64], e: Option<&str>| Measured {
            times: t.to_vec(),
            error: e.map(String::from),
            ..Measured::new(k)
        };
        let measured = [
            m(RuntimeKind::Seq, &[1.0, 1.1, 0.9], None),
            m(RuntimeKind::HeistLace, &[0.5, 0.6, 0.4], None),
            m(RuntimeKind::Rayon, &[0.8, 0.7, 0.9], None),
            m(RuntimeKind::Chili, &[0.3], Some("verification failed: x<y")),
        ];
        BenchReport::new(bench, "32", workers, 1, &measured)
    }

    fn run() -> Run {
        let mut meta = meta::Meta::now();
        meta.finish(2.0);
        Run {
            meta,
            sections: vec![
                Section {
                    name: "suite".into(),
                    workers: 2,
                    reports: vec![report("fib", 2), report("nqueens", 2)],
                },
                Section {
                    name: "T1".into(),
                    workers: 1,
                    reports: vec![report("fib", 1)],
                },
            ],
        }
    }

    #[test]
    fn every_file_is_written_and_holds_the_samples() {
        let dir = std::env::temp_dir().join(format!("heist-report-{}", std::process::id()));
        let files = write(&dir, &run()).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for n in [
            "results.json",
            "results.csv",
            "results.md",
            "index.html",
            "speedup.svg",
            "vs-heist.svg",
            "overhead.svg",
        ] {
            assert!(names.iter().any(|x| x == n), "no {n} in {names:?}");
        }
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        let seq = &json["sections"][0]["reports"][0]["results"][0];
        assert_eq!(seq["samples_s"], serde_json::json!([1.0, 1.1, 0.9]));
        assert!(json["meta"]["rustc"].as_str().unwrap().starts_with("rustc"));
        let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + 3 * 4);
        assert!(
            csv.contains("\"verification failed: x<y\"")
                || csv.contains("verification failed: x<y")
        );
        let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
        assert_eq!(html.matches("<svg").count(), 3);
        assert!(html.contains("x&lt;y"), "errors are escaped");
        assert!(
            !html.contains("<script") && !html.contains(" src="),
            "needs nothing fetched"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn markdown_has_a_table_per_kernel_with_the_spread() {
        let md = markdown(&run());
        assert_eq!(md.matches("| runtime | median |").count(), 3);
        assert!(
            md.contains("| heist-lace | 500.0 ms | 400.0 ms | 600.0 ms | ±20.0 % | 2.00x |"),
            "{md}"
        );
        assert!(md.contains("| chili |") && md.contains("FAILED"));
    }
}
