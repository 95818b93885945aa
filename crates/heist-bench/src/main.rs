//! `heist-bench`: lists the kernels, runs one or all of them on every runtime, and measures
//! heist's idle behaviour and its task barrier. Exit status: 0 on success, 1 when a kernel
//! failed verification, 2 for a usage error (unknown kernel or runtime, bad size, a
//! runtime that cannot start).

use clap::{Args, Parser, Subcommand, ValueEnum};
use heist_bench::barrier::{self, BarrierOptions};
use heist_bench::bench::{Bench, SizeClass};
use heist_bench::console::{emit, note, Progress};
use heist_bench::harness::{self, BenchReport, Options, SizeArg};
use heist_bench::idle::{self, IdleOptions};
use heist_bench::kernels;
use heist_bench::peers;
use heist_bench::report::{self, Run, Section};
use heist_bench::runtime::{Runtime, RuntimeKind};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Benchmarks for the heist work-stealing runtime.
#[derive(Parser)]
#[command(name = "heist-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Lists the kernels with their sizes, and the runtimes.
    List,
    /// Runs one kernel on several runtimes, interleaved, and prints a table.
    Run(RunArgs),
    /// Runs every kernel on every runtime it supports.
    Suite(SuiteArgs),
    /// Measures heist's CPU use when idle and its wake-up latency.
    Idle(IdleArgs),
    /// Measures the latency of heist's task barrier against a counter barrier.
    Barrier(BarrierArgs),
    /// Measures team formation (partner asleep, team persisting) and the team barrier.
    Teams(TeamsArgs),
    /// Measures the time from making a task available to its start on another worker
    /// (that worker asleep, or spinning), against a condvar wake-up.
    Handoff(HandoffArgs),
}

#[derive(Args)]
struct HandoffArgs {
    /// Worker threads of each pool.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Timed samples per variant.
    #[arg(long, default_value_t = 200)]
    samples: usize,
    /// Untimed samples per variant before them.
    #[arg(long, default_value_t = 10)]
    warmup: usize,
    /// Print JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct TeamsArgs {
    /// Worker threads of each pool.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Timed samples per variant.
    #[arg(long, default_value_t = 200)]
    samples: usize,
    /// Pause before each fresh formation, in milliseconds.
    #[arg(long, default_value_t = 20)]
    pause_ms: u64,
    /// Print JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// Options shared by `run` and `suite`.
#[derive(Args)]
struct Common {
    /// `test`, `small`, `quick`, `full`, or (for `run`) a kernel-specific value
    /// [default: `quick` for `run`, `small` for `suite`].
    #[arg(long)]
    size: Option<String>,
    /// Worker threads of each parallel runtime [default: all cores].
    #[arg(long)]
    workers: Option<usize>,
    /// Timed runs per runtime [default: 5 for `run`, 3 for `suite`].
    #[arg(long)]
    runs: Option<usize>,
    /// Untimed warm-up runs per runtime.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Print JSON on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Pin worker i of heist and rayon to the i-th CPU (chili has no hook for it).
    #[arg(long)]
    pin: bool,
    /// Also write a report into this directory: results.json (every sample and the
    /// run's metadata), results.csv, SVG charts, index.html and results.md.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
}

#[derive(Args)]
struct SuiteArgs {
    #[command(flatten)]
    common: Common,
    /// Comma-separated kernels, in the suite's order [default: every kernel].
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
}

#[derive(Args)]
struct RunArgs {
    /// The kernel (see `heist-bench list`), or a glob pattern such as 'coarse-*': each
    /// kernel it matches runs in turn, on those of the asked runtimes it has.
    bench: String,
    #[command(flatten)]
    common: Common,
    /// Comma-separated runtimes [default: every runtime the kernel supports].
    #[arg(long, value_delimiter = ',', value_parser = parse_runtime)]
    runtimes: Vec<RuntimeKind>,
    /// Collect heist's per-worker counters (needs a build with `--features stats`).
    #[arg(long)]
    stats: bool,
    /// Measure how far each runtime's runs raise the peak resident memory above what the
    /// process holds before the run (the input's size is shown for scale), and print the
    /// process's peak at the end.
    #[arg(long)]
    rss: bool,
    /// After the timed runs, run the kernel once more on each heist runtime and write
    /// what its workers did as Chrome trace-event JSON (Perfetto, chrome://tracing).
    /// Needs a build with `--features trace`. It holds an event per task: use a small size
    /// (fib 20 makes 10 946 tasks).
    #[arg(long, value_name = "FILE.json")]
    trace: Option<PathBuf>,
}

#[derive(Args)]
struct IdleArgs {
    /// Worker threads [default: all cores].
    #[arg(long)]
    workers: Option<usize>,
    /// heist's scheduler.
    #[arg(long, value_enum, default_value_t = Sched::Lace)]
    scheduler: Sched,
    /// Print JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Wake-up latency samples.
    #[arg(long, default_value_t = 200, hide = true)]
    samples: usize,
    /// Idle window in milliseconds.
    #[arg(long, default_value_t = 1000, hide = true)]
    window_ms: u64,
    /// Burst length in milliseconds.
    #[arg(long, default_value_t = 200, hide = true)]
    burst_ms: u64,
}

#[derive(Args)]
struct BarrierArgs {
    /// Worker threads of each pool [default: all cores].
    #[arg(long)]
    workers: Option<usize>,
    /// Timed samples per barrier variant.
    #[arg(long, default_value_t = 200)]
    samples: usize,
    /// Print JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Detached tasks per sample [default: 4 × workers].
    #[arg(long, hide = true)]
    tasks: Option<usize>,
    /// µs of work per task.
    #[arg(long, default_value_t = 50.0, hide = true)]
    task_us: f64,
    /// Untimed samples per variant before the timed ones.
    #[arg(long, default_value_t = 20, hide = true)]
    warmup: usize,
}

#[derive(Clone, Copy, ValueEnum)]
enum Sched {
    Lace,
    Relay,
}

fn parse_runtime(s: &str) -> Result<RuntimeKind, String> {
    s.parse()
}

/// A failure that ends the program with status 2.
type Fail = String;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Deep kernels (uts T3L recurses ~18 000 levels) need big stacks on every runtime:
    // the seq elision and chili's calling thread run on the thread below, and chili's
    // workers, which have no stack setting, take RUST_MIN_STACK. Nothing else runs yet,
    // so setting the variable here races with no other thread.
    if std::env::var_os("RUST_MIN_STACK").is_none() {
        std::env::set_var(
            "RUST_MIN_STACK",
            heist_bench::runtime::STACK_SIZE.to_string(),
        );
    }
    let body = std::thread::Builder::new()
        .name("heist-bench".into())
        .stack_size(heist_bench::runtime::STACK_SIZE)
        .spawn(move || dispatch(cli))
        .expect("cannot start the harness thread");
    body.join().unwrap_or_else(|_| ExitCode::from(101))
}

fn dispatch(cli: Cli) -> ExitCode {
    let res = match cli.cmd {
        Cmd::List => list(),
        Cmd::Run(a) => run(a),
        Cmd::Suite(a) => suite(a),
        Cmd::Idle(a) => idle_cmd(a),
        Cmd::Barrier(a) => barrier_cmd(a),
        Cmd::Teams(a) => teams_cmd(a),
        Cmd::Handoff(a) => handoff_cmd(a),
    };
    res.unwrap_or_else(|e| {
        note(&format!("heist-bench: error: {e}\n"));
        ExitCode::from(2)
    })
}

fn list() -> Result<ExitCode, Fail> {
    let all = kernels::all();
    let rows: Vec<Vec<String>> = all.iter().map(|b| list_row(*b)).collect();
    let mut headers = vec!["kernel"];
    headers.extend(SizeClass::ALL.map(SizeClass::name));
    headers.push("about");
    let mut out = if all.is_empty() {
        "kernels: (none)\n".to_string()
    } else {
        harness::render_table(&headers, &rows, headers.len())
    };
    let names: Vec<&str> = RuntimeKind::ALL.iter().map(|k| k.name()).collect();
    out += &format!("\nruntimes: {}\n", names.join(", "));
    out += &peers::left_out_note();
    emit(&out);
    Ok(ExitCode::SUCCESS)
}

fn list_row(b: &dyn Bench) -> Vec<String> {
    let unsupported: Vec<&str> = RuntimeKind::ALL
        .iter()
        .filter(|k| !b.supports(**k))
        .map(|k| k.name())
        .collect();
    let mut about = b.about().to_string();
    if !unsupported.is_empty() {
        about += &format!(" (not on {})", unsupported.join(", "));
    }
    let mut row = vec![b.name().to_string()];
    row.extend(SizeClass::ALL.map(|c| b.size(c).to_string()));
    row.push(about);
    row
}

fn run(a: RunArgs) -> Result<ExitCode, Fail> {
    let benches = select(&a.bench)?;
    let one = benches.len() == 1;
    if a.trace.is_some() && !one {
        return Err(format!(
            "--trace takes one kernel; `{}` names {}",
            a.bench,
            benches.len()
        ));
    }
    let meta = heist_bench::report::meta::Meta::now();
    let (workers, mut opts) = settings(&a.common, 5, a.stats)?;
    opts.rss = a.rss;
    let kinds: Vec<Vec<RuntimeKind>> = benches
        .iter()
        .map(|&b| run_kinds(b, &a.runtimes, one))
        .collect::<Result<_, _>>()?;
    // A kernel of a pattern that has none of the asked runtimes is left out.
    let (benches, kinds): (Vec<_>, Vec<_>) = benches
        .into_iter()
        .zip(kinds)
        .filter(|(_, k)| !k.is_empty())
        .unzip();
    if benches.is_empty() {
        return Err(format!(
            "no kernel that `{}` names runs on the asked runtimes",
            a.bench
        ));
    }
    if a.trace.is_some() {
        heist_bench::trace::check_enabled()?;
    }
    if a.runtimes.is_empty() {
        note(&peers::left_out_note());
    }
    let size = SizeArg::parse(a.common.size.as_deref().unwrap_or("quick"))?;
    confine(workers);
    let runs: usize = kinds
        .iter()
        .map(|k| (opts.warmup + opts.runs) * k.len())
        .sum();
    let mut pb = Progress::new(benches.len(), runs as u64, a.common.json);
    let mut reports = Vec::new();
    let mut ok = true;
    for (i, (&bench, kinds)) in benches.iter().zip(&kinds).enumerate() {
        let size = size.resolve(bench);
        let rts = start(kinds, workers, a.common.pin)?;
        let rts: Vec<&Runtime> = rts.iter().collect();
        let report = bench_once(bench, &size, &rts, workers, &opts, &mut pb, i)?;
        ok &= report.verified();
        if let Some(path) = &a.trace {
            ok &= write_trace(bench, &size, &rts, path)?;
        }
        reports.push(report);
    }
    pb.finish();
    // JSON: the report, or an array of them for a pattern.
    match (a.common.json, &reports[..]) {
        (true, [report]) => emit(&(to_json(report) + "\n")),
        (true, all) => emit(&(to_json(&all) + "\n")),
        (false, all) => all.iter().for_each(|r| emit(&harness::render_run(r))),
    }
    stats_note(a.stats, &kinds.concat());
    if a.rss {
        let peak = heist_bench::rss::process_peak_kib().unwrap_or(0);
        note(&format!("peak RSS: {:.1} MiB\n", peak as f64 / 1024.0));
    }
    for report in &reports {
        note(&harness::render_failures(report));
    }
    let sections = vec![section("run", workers, reports)];
    write_report(a.common.report.as_deref(), meta, pb.finish(), sections)?;
    Ok(status(ok))
}

/// The kernels `name` names: one by its name, or every one a glob pattern matches, such
/// as `coarse-*`.
fn select(name: &str) -> Result<Vec<&'static dyn Bench>, Fail> {
    if let Some(b) = kernels::find(name) {
        return Ok(vec![b]);
    }
    let pattern = glob::Pattern::new(name).map_err(|e| format!("bad pattern `{name}`: {e}"))?;
    let matched: Vec<_> = kernels::all()
        .into_iter()
        .filter(|b| pattern.matches(b.name()))
        .collect();
    if matched.is_empty() {
        return Err(unknown_bench(name));
    }
    Ok(matched)
}

/// `run --trace`: one traced run per heist runtime, written to `path`; false if a traced
/// run failed verification (said on stderr).
fn write_trace(bench: &dyn Bench, size: &str, rts: &[&Runtime], path: &Path) -> Result<bool, Fail> {
    let mut inst = bench
        .instance(size)
        .map_err(|e| format!("bad size `{size}` for {}: {e}", bench.name()))?;
    let what = format!("{} {size}", bench.name());
    let runs = match heist_bench::trace::traced_runs(inst.as_mut(), &what, rts) {
        Ok(r) => r,
        Err(e) => {
            note(&format!("{e}\n"));
            return Ok(false);
        }
    };
    if runs.is_empty() {
        note("note: --trace records heist runtimes only, and none ran\n");
    }
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(cannot)?;
    heist_bench::trace::write_chrome_json(&runs, file).map_err(cannot)?;
    let events: usize = runs
        .iter()
        .flat_map(|r| &r.trace.workers)
        .map(Vec::len)
        .sum();
    note(&format!(
        "trace: {events} events of {} runtimes (one extra run each) in {}\n",
        runs.len(),
        path.display()
    ));
    Ok(true)
}

fn section(name: &str, workers: usize, reports: Vec<BenchReport>) -> Section {
    Section {
        name: name.into(),
        workers,
        reports,
    }
}

/// Writes the report into `dir`, if one was asked for, and names the files on stderr.
fn write_report(
    dir: Option<&std::path::Path>,
    mut meta: heist_bench::report::meta::Meta,
    took: Duration,
    sections: Vec<Section>,
) -> Result<(), Fail> {
    let Some(dir) = dir else {
        return Ok(());
    };
    meta.finish(took.as_secs_f64());
    let files = report::write(dir, &Run { meta, sections })?;
    note(&format!(
        "report: {} files in {} (open {})\n",
        files.len(),
        dir.display(),
        dir.join("index.html").display()
    ));
    Ok(())
}

fn suite(args: SuiteArgs) -> Result<ExitCode, Fail> {
    let a = args.common;
    let meta = heist_bench::report::meta::Meta::now();
    let (workers, opts) = settings(&a, 3, false)?;
    let class = match SizeArg::parse(a.size.as_deref().unwrap_or("small"))? {
        SizeArg::Class(c) => c,
        SizeArg::Value(v) => {
            return Err(format!("suite takes test, small, quick or full, not `{v}`"))
        }
    };
    if let Some(k) = args.kernels.iter().find(|k| kernels::find(k).is_none()) {
        return Err(unknown_bench(k));
    }
    let benches: Vec<&dyn Bench> = kernels::all()
        .into_iter()
        .filter(|b| args.kernels.is_empty() || args.kernels.iter().any(|k| k == b.name()))
        .collect();
    confine(workers);
    note(&peers::left_out_note());
    let rts = start_available(&RuntimeKind::ALL, workers, a.pin)?;
    let total: usize = benches.iter().map(|b| supported(*b, &rts).len()).sum();
    let runs = ((opts.warmup + opts.runs) * total) as u64;
    // The one-worker section: the overhead kernels among those run, and their runs.
    let t1: Vec<&dyn Bench> = benches
        .iter()
        .copied()
        .filter(|b| workers > 1 && OVERHEAD_KERNELS.contains(&b.name()))
        .collect();
    let t1_runs: usize = t1.iter().map(|b| supported(*b, &rts).len()).sum();
    let runs = runs + ((opts.warmup + opts.runs) * t1_runs) as u64;
    let mut pb = Progress::new(benches.len() + t1.len(), runs, false);
    let mut reports = Vec::new();
    for (i, b) in benches.iter().enumerate() {
        let rts = supported(*b, &rts);
        let r = bench_once(*b, b.size(class), &rts, workers, &opts, &mut pb, i)?;
        if !a.json {
            pb.emit(&(harness::render_run(&r) + "\n"));
        }
        note(&harness::render_failures(&r));
        reports.push(r);
    }
    let mut sections = vec![section("suite", workers, reports)];
    if !t1.is_empty() {
        let first = benches.len();
        sections.push(overhead(&t1, class, &opts, &a, &mut pb, first)?);
    }
    let elapsed = pb.finish();
    let reports: Vec<&BenchReport> = sections.iter().flat_map(|s| &s.reports).collect();
    if a.json {
        emit(&(to_json(&reports) + "\n"));
    }
    let ok = reports.iter().all(|r| r.verified());
    note(&format!(
        "suite: {} kernels, {} size, {workers} workers, in {}; {}\n",
        reports.len(),
        class.name(),
        heist_bench::console::fmt_elapsed(elapsed),
        if ok {
            "every run verified"
        } else {
            "FAILURES above"
        }
    ));
    write_report(a.report.as_deref(), meta, elapsed, sections)?;
    Ok(status(ok))
}

/// The kernels whose fork-join overhead T1/T_S the suite measures on one worker.
const OVERHEAD_KERNELS: [&str; 3] = ["fib", "nqueens", "uts"];

/// The suite's last section: `benches` (of [`OVERHEAD_KERNELS`]) on every runtime at
/// one worker;
/// `first` is the first one's place in `pb`'s count.
fn overhead(
    benches: &[&dyn Bench],
    class: SizeClass,
    opts: &Options,
    c: &Common,
    pb: &mut Progress,
    first: usize,
) -> Result<Section, Fail> {
    let rts = start_available(&RuntimeKind::ALL, 1, c.pin)?;
    let mut reports = Vec::new();
    for (i, &b) in benches.iter().enumerate() {
        let rts = supported(b, &rts);
        let r = bench_once(b, b.size(class), &rts, 1, opts, pb, first + i)?;
        if !c.json {
            pb.emit(&(harness::render_run(&r) + "\n"));
        }
        note(&harness::render_failures(&r));
        reports.push(r);
    }
    Ok(section("T1 (fork-join overhead, 1 worker)", 1, reports))
}

/// Runs this thread and the runtimes it starts on `workers` CPUs only (see `affinity`).
fn confine(workers: usize) {
    if let Some(cpus) = heist_bench::affinity::confine(workers) {
        note(&format!(
            "heist-bench: {workers} workers, so running on CPUs {cpus:?} only\n"
        ));
    }
}

fn idle_cmd(a: IdleArgs) -> Result<ExitCode, Fail> {
    let scheduler = match a.scheduler {
        Sched::Lace => heist::Scheduler::Lace,
        Sched::Relay => heist::Scheduler::Relay,
    };
    let mut o = IdleOptions::new(workers_or_default(a.workers)?, scheduler);
    o.samples = a.samples;
    o.window = Duration::from_millis(a.window_ms);
    o.burst = Duration::from_millis(a.burst_ms);
    let r = idle::measure(&o)?;
    emit(&if a.json {
        to_json(&r) + "\n"
    } else {
        idle::render(&r)
    });
    Ok(ExitCode::SUCCESS)
}

fn barrier_cmd(a: BarrierArgs) -> Result<ExitCode, Fail> {
    let mut o = BarrierOptions::new(workers_or_default(a.workers)?);
    o.samples = a.samples;
    o.warmup = a.warmup;
    o.task_us = a.task_us;
    if let Some(k) = a.tasks {
        o.tasks = k;
    }
    let r = barrier::measure(&o)?;
    emit(&if a.json {
        to_json(&r) + "\n"
    } else {
        barrier::render(&r)
    });
    Ok(ExitCode::SUCCESS)
}

fn teams_cmd(a: TeamsArgs) -> Result<ExitCode, Fail> {
    let rows =
        heist_bench::teams::measure(a.workers, a.samples, Duration::from_millis(a.pause_ms))?;
    emit(&if a.json {
        to_json(&rows) + "\n"
    } else {
        heist_bench::teams::render(&rows)
    });
    Ok(ExitCode::SUCCESS)
}

fn handoff_cmd(a: HandoffArgs) -> Result<ExitCode, Fail> {
    let r = heist_bench::handoff::measure(a.workers, a.samples, a.warmup)?;
    if a.json {
        println!("{}", to_json(&r));
    } else {
        print!("{}", heist_bench::handoff::render(&r));
    }
    Ok(ExitCode::SUCCESS)
}

/// Measures one kernel on `rts` and summarises it; only building the instance can fail.
/// `i` is its place in the list `pb` counts.
fn bench_once(
    bench: &dyn Bench,
    size: &str,
    rts: &[&Runtime],
    workers: usize,
    opts: &Options,
    pb: &mut Progress,
    i: usize,
) -> Result<BenchReport, Fail> {
    let what = format!("{} {size}", bench.name());
    pb.start(i, &what);
    let rss_before = opts.rss.then(heist_bench::rss::current_kib).flatten();
    let mut inst = bench
        .instance(size)
        .map_err(|e| format!("bad size `{size}` for {}: {e}", bench.name()))?;
    let input_rss_kib = rss_before
        .zip(heist_bench::rss::current_kib())
        .map(|(before, after)| after.saturating_sub(before));
    let measured = harness::measure(inst.as_mut(), rts, opts, &mut |k| pb.tick(&what, k.name()));
    let mut report = BenchReport::new(bench.name(), size, workers, opts.warmup, &measured);
    report.input_rss_kib = input_rss_kib;
    let failed = report.failures().len();
    let outcome = match failed {
        0 => format!("{} runtimes verified", report.results.len()),
        n => format!("{n} of {} runtimes FAILED", report.results.len()),
    };
    pb.done(i, &what, &outcome);
    Ok(report)
}

fn unknown_bench(name: &str) -> Fail {
    let names: Vec<&str> = kernels::all().iter().map(|b| b.name()).collect();
    let known = if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    };
    format!("unknown benchmark `{name}` (known: {known})")
}

/// The worker count and harness options, checked; `runs` is the command's default.
fn settings(c: &Common, runs: usize, stats: bool) -> Result<(usize, Options), Fail> {
    let runs = c.runs.unwrap_or(runs);
    if runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let stats = stats && heist::STATS_ENABLED;
    let opts = Options {
        runs,
        warmup: c.warmup,
        stats,
        rss: false,
    };
    Ok((workers_or_default(c.workers)?, opts))
}

fn workers_or_default(w: Option<usize>) -> Result<usize, Fail> {
    match w {
        Some(0) => Err("--workers must be at least 1".into()),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// The requested runtimes (deduplicated, in the given order), or all the kernel supports.
/// A runtime the kernel lacks is an error if `strict` (the kernel was named), and left
/// out otherwise (a pattern named it).
fn run_kinds(
    bench: &dyn Bench,
    asked: &[RuntimeKind],
    strict: bool,
) -> Result<Vec<RuntimeKind>, Fail> {
    if asked.is_empty() {
        return Ok(RuntimeKind::ALL
            .into_iter()
            .filter(|&k| bench.supports(k) && (!peers::is_peer(k) || peers::built(k)))
            .collect());
    }
    let mut kinds = Vec::new();
    for &k in asked {
        if !bench.supports(k) {
            if !strict {
                continue;
            }
            return Err(format!("{} does not support runtime `{k}`", bench.name()));
        }
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    Ok(kinds)
}

/// Starts the runtimes of `kinds` that this build has: a C++ peer left out of the build
/// is skipped ([`peers::left_out_note`] says so).
fn start_available(kinds: &[RuntimeKind], workers: usize, pin: bool) -> Result<Vec<Runtime>, Fail> {
    let built: Vec<RuntimeKind> = kinds
        .iter()
        .copied()
        .filter(|&k| !peers::is_peer(k) || peers::built(k))
        .collect();
    start(&built, workers, pin)
}

fn start(kinds: &[RuntimeKind], workers: usize, pin: bool) -> Result<Vec<Runtime>, Fail> {
    let start_one = |k: RuntimeKind| {
        Runtime::start(k, workers, pin).map_err(|e| format!("cannot start runtime `{k}`: {e}"))
    };
    kinds.iter().map(|&k| start_one(k)).collect()
}

fn supported<'a>(b: &dyn Bench, rts: &'a [Runtime]) -> Vec<&'a Runtime> {
    rts.iter().filter(|r| b.supports(r.kind())).collect()
}

fn stats_note(asked: bool, kinds: &[RuntimeKind]) {
    let heist = [RuntimeKind::HeistLace, RuntimeKind::HeistRelay];
    if asked && !heist::STATS_ENABLED {
        note(
            "note: --stats needs heist's counters; rebuild with `--features stats` \
             (cargo run -p heist-bench --release --features stats -- ...)\n",
        );
    } else if asked && !kinds.iter().any(|k| heist.contains(k)) {
        note("note: --stats only applies to heist-lace and heist-relay\n");
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).expect("reports serialise")
}

fn status(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
