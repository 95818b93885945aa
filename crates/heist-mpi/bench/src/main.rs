//! heist-mpi-bench: the MPI driver and the many-rank model.
//!
//! ```text
//! mpirun -np 2 heist-mpi-bench run uts --size T3L --workers 1 --runs 3
//! mpirun -np 2 heist-mpi-bench costs          # message, probe and task-size costs
//! heist-mpi-bench model --costs costs.json    # the simulator (no mpirun)
//! ```
//!
//! `run` times a kernel (after one warm-up run), checks every run's answer against the
//! kernel's one-node answer, and prints the median time, the rate, and per rank the
//! tasks run, tasks and bytes moved, steal requests sent, forwarded and answered, and
//! idle time. A wrong answer exits non-zero.

mod costs;
mod kernels;
mod model;
mod sim;

use clap::{Parser, Subcommand};
use heist_mpi::{Outcome, Reducer, Report, Split};
use kernels::Checked;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::process::exit;
use std::time::Instant;

#[derive(Parser)]
#[command(about = "heist-mpi's driver (under mpirun) and many-rank model")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Time a kernel under mpirun: uts, nqueens, knapsack or pi; or several, each with
    /// its size: `uts:T1XS,nqueens:9,knapsack:28,pi:1e-10`.
    Run {
        kernel: String,
        /// uts: T1L, T3L, T1XXL, ... (heist-bench's names); nqueens: n; knapsack:
        /// items; pi: tolerance.
        #[arg(long)]
        size: Option<String>,
        /// Workers of each rank's heist pool.
        #[arg(long, default_value_t = 1)]
        workers: usize,
        /// Timed runs after one warm-up (0: a single run, timed, no warm-up).
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// half, one or adaptive.
        #[arg(long, default_value = "half")]
        split: String,
        /// Forwards before a request returns to its thief.
        #[arg(long)]
        max_hops: Option<u32>,
        /// One JSON object per line instead of the table.
        #[arg(long)]
        json: bool,
        /// Run the same task bodies with heist's one-node `Pool::reduce_tasks` on each
        /// rank instead (the one-node baseline; uts, nqueens and pi).
        #[arg(long)]
        local: bool,
    },
    /// Measure the model's inputs under mpirun -np 2: one-way message time by size,
    /// an empty probe, a task's encoded size.
    Costs {
        #[arg(long, default_value_t = 2000)]
        reps: usize,
    },
    /// The many-rank simulator (see docs/heist-mpi-model.md); runs without mpirun.
    Model {
        /// JSON from `costs` (shared memory) to take the probe and poll costs from.
        #[arg(long)]
        costs: Option<String>,
        /// A UTS node's time in ns, instead of the measured one.
        #[arg(long)]
        node_ns: Option<f64>,
        /// The simulator's random seed (victim choices).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Ranks to simulate (comma-separated).
        #[arg(long, default_value = "64,256,1024,4096")]
        ranks: String,
        /// Tree: T1XXL or a smaller geometric tree for a quick look (T1L).
        #[arg(long, default_value = "T1XXL")]
        tree: String,
    },
}

fn main() {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Model {
            costs,
            node_ns,
            seed,
            ranks,
            tree,
        } => model::main(costs.as_deref(), node_ns, seed, &ranks, &tree),
        Cmd::Costs { reps } => {
            let universe = heist_mpi::initialize().unwrap_or_else(|e| die(&e.to_string()));
            costs::main(&universe.world(), reps);
        }
        Cmd::Run {
            kernel,
            size,
            workers,
            runs,
            split,
            max_hops,
            json,
            local,
        } => {
            let universe = heist_mpi::initialize().unwrap_or_else(|e| die(&e.to_string()));
            let world = universe.world();
            let split = match split.as_str() {
                "half" => Split::Half,
                "one" => Split::One,
                "adaptive" => Split::Adaptive,
                s => die(&format!("--split {s}: expected half, one or adaptive")),
            };
            let pool = heist::Pool::builder()
                .workers(workers)
                .build()
                .unwrap_or_else(|e| die(&e.to_string()));
            let opts = Opts {
                world: &world,
                pool: &pool,
                split,
                max_hops,
                runs,
                json,
                kernel: kernel.clone(),
                workers,
                local,
            };
            // `uts:T1XS,nqueens:9` runs several kernels, each with its size.
            for part in kernel.split(',') {
                let (k, s) = match part.split_once(':') {
                    Some((k, s)) => (k, Some(s)),
                    None => (part, size.as_deref()),
                };
                let opts = Opts {
                    kernel: k.to_string(),
                    ..opts.clone()
                };
                run(&opts, k, s);
            }
        }
    }
}

fn die(msg: &str) -> ! {
    eprintln!("heist-mpi-bench: {msg}");
    exit(2)
}

#[derive(Clone)]
struct Opts<'a> {
    world: &'a SimpleCommunicator,
    pool: &'a heist::Pool,
    split: Split,
    max_hops: Option<u32>,
    runs: usize,
    json: bool,
    kernel: String,
    workers: usize,
    local: bool,
}

impl Opts<'_> {
    fn reducer(&self) -> Reducer<'_, SimpleCommunicator> {
        let r = Reducer::new(self.world).pool(self.pool).split(self.split);
        match self.max_hops {
            Some(h) => r.max_hops(h),
            None => r,
        }
    }
}

/// A one-node run's value as an outcome (no bound, no counters).
fn local<R>(value: R) -> Result<Outcome<R>, heist_mpi::Error> {
    Ok(Outcome {
        value,
        bound: i64::MIN,
        report: Report::default(),
    })
}

fn run(o: &Opts, kernel: &str, size: Option<&str>) {
    if o.local && kernel == "knapsack" {
        die("--local: knapsack's one-node bound is heist-bench's own kernel");
    }
    match kernel {
        "uts" => {
            let size = size.unwrap_or("T3L");
            let (tree, nodes, leaves, depth) = kernels::uts_tree(size).unwrap_or_else(|e| die(&e));
            let tree = &tree;
            measure(
                o,
                size,
                || (tree.root_state(), 0u32),
                |r| {
                    let (id, op) = (kernels::UtsCounts::default, kernels::uts_op);
                    if o.local {
                        return local(o.pool.reduce_tasks(r, id, op, |ctx, t| {
                            kernels::uts_task(tree, t, |c| ctx.push(c))
                        }));
                    }
                    o.reducer().run(r, id, op, |ctx, t| {
                        kernels::uts_task(tree, t, |c| ctx.push(c))
                    })
                },
                |out| kernels::uts_check(out.value, nodes, leaves, depth),
            );
        }
        "nqueens" => {
            let size = size.unwrap_or("14");
            let n = kernels::queens_n(size).unwrap_or_else(|e| die(&e));
            measure(
                o,
                size,
                || (0u32, [0u8; heist_bench::kernels::nqueens::MAX_N]),
                |r| {
                    let (id, op) = (|| 0u64, |a, b| a + b);
                    if o.local {
                        return local(o.pool.reduce_tasks(r, id, op, |ctx, t| {
                            kernels::queens_task(n, t, |c| ctx.push(c))
                        }));
                    }
                    o.reducer().run(r, id, op, |ctx, t| {
                        kernels::queens_task(n, t, |c| ctx.push(c))
                    })
                },
                |out| kernels::queens_check(n, out.value),
            );
        }
        "knapsack" => {
            let size = size.unwrap_or("44");
            let n: usize = size
                .parse()
                .ok()
                .filter(|n| (1..=1000).contains(n))
                .unwrap_or_else(|| die(&format!("knapsack size `{size}`: 1..=1000 items")));
            let k = kernels::Knapsack::seeded(n);
            let want = k.best_by_dp();
            let k = &k;
            measure(
                o,
                size,
                || (0u32, k.capacity, 0u64),
                |r| {
                    o.reducer().bound(0).run(
                        r,
                        || (0u64, 0u64),
                        |a, b| (a.0.max(b.0), a.1 + b.1),
                        |ctx, t| {
                            let v = k.task(
                                t,
                                || ctx.bound(),
                                |v| {
                                    ctx.raise_bound(v as i64);
                                },
                                |c| ctx.push(c),
                            );
                            (v, 1)
                        },
                    )
                },
                |out| {
                    kernels::knapsack_check(n, out.value.0.max(out.bound as u64), want, out.value.1)
                },
            );
        }
        "pi" => {
            let size = size.unwrap_or("1e-15");
            let tol = kernels::pi_tol(size).unwrap_or_else(|e| die(&e));
            let want = kernels::pi_sequential(tol);
            measure(
                o,
                size,
                kernels::pi_root,
                |r| {
                    let id = || (0.0, 0u64);
                    let op = |a: (f64, u64), b: (f64, u64)| (a.0 + b.0, a.1 + b.1);
                    if o.local {
                        return local(o.pool.reduce_tasks(r, id, op, |ctx, s| {
                            kernels::pi_task(tol, s, |c| ctx.push(c))
                        }));
                    }
                    o.reducer().run(r, id, op, |ctx, s| {
                        kernels::pi_task(tol, s, |c| ctx.push(c))
                    })
                },
                |out| kernels::pi_check(out.value, want),
            );
        }
        k => die(&format!(
            "unknown kernel `{k}`: uts, nqueens, knapsack or pi"
        )),
    }
}

/// Times `go` (one warm-up, then `o.runs`), checks each outcome, prints on rank 0.
fn measure<T, R>(
    o: &Opts,
    size: &str,
    root: impl Fn() -> T,
    go: impl Fn(T) -> Result<Outcome<R>, heist_mpi::Error>,
    check: impl Fn(&Outcome<R>) -> Checked,
) {
    let world = o.world;
    let (rank, np) = (world.rank(), world.size());
    let mut rows = Vec::new();
    for i in 0..=o.runs {
        world.barrier();
        let t0 = Instant::now();
        let out = go(root()).unwrap_or_else(|e| die(&format!("{} {size}: {e}", o.kernel)));
        let mine = t0.elapsed().as_secs_f64();
        let mut time = 0.0f64;
        world.all_reduce_into(&mine, &mut time, SystemOperation::max());
        let checked = check(&out);
        if let Err(e) = &checked.verdict {
            die(&format!("{} {size} WRONG on rank {rank}: {e}", o.kernel));
        }
        let reports = gather(world, &out.report);
        // The first run warms up, unless it is the only one (`--runs 0`).
        if i > 0 || o.runs == 0 {
            rows.push((time, checked, reports));
        }
    }
    if rank != 0 {
        return;
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let times: Vec<f64> = rows.iter().map(|r| r.0).collect();
    let (time, checked, reports) = &rows[rows.len() / 2];
    let btl = std::env::var("OMPI_MCA_btl").unwrap_or_else(|_| "default".into());
    let sum = |f: fn(&Report) -> u64| reports.iter().map(f).sum::<u64>();
    let moved = sum(|r| r.tasks_sent);
    let task_bytes = sum(|r| r.task_bytes_sent);
    let per_task = if moved > 0 {
        task_bytes as f64 / moved as f64
    } else {
        0.0
    };
    if o.json {
        let v = serde_json::json!({
            "kernel": o.kernel, "size": size, "np": np, "workers": o.workers,
            "split": format!("{:?}", o.split), "btl": btl, "times_s": times,
            "median_s": time, "work": checked.work,
            "rate_per_s": checked.work as f64 / time,
            "verified": checked.verdict.as_ref().ok(),
            "tasks_moved": moved, "task_bytes": task_bytes, "bytes_per_stolen_task": per_task,
            "ranks": reports,
        });
        println!("{v}");
        return;
    }
    println!(
        "heist-mpi {} {size}: np={np}, {} worker(s) per rank, split {:?}, btl {btl}",
        o.kernel, o.workers, o.split
    );
    let list: Vec<String> = times.iter().map(|t| format!("{t:.4}")).collect();
    println!(
        "median {time:.4} s of [{}]; {:.2} M work/s; {}",
        list.join(", "),
        checked.work as f64 / time / 1e6,
        checked.verdict.as_ref().expect("checked above")
    );
    println!(
        "moved {moved} tasks in {} batches, {task_bytes} bytes ({per_task:.1} bytes per stolen \
         task); {} messages, {} bytes in all",
        sum(|r| r.batches_sent),
        sum(|r| r.messages_sent),
        sum(|r| r.bytes_sent)
    );
    println!(
        "{:>4} {:>12} {:>8} {:>9} {:>9} {:>8} {:>9} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8}",
        "rank",
        "tasks run",
        "idle s",
        "sent",
        "received",
        "req sent",
        "forwarded",
        "answered",
        "sent home",
        "returned",
        "rounds",
        "drains",
        "polls"
    );
    for r in reports {
        println!(
            "{:>4} {:>12} {:>8.4} {:>9} {:>9} {:>8} {:>9} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8}",
            r.rank,
            r.tasks_run,
            r.idle_s,
            r.tasks_sent,
            r.tasks_received,
            r.requests_sent,
            r.requests_forwarded,
            r.requests_answered,
            r.requests_sent_home,
            r.requests_returned,
            r.rounds,
            r.drains,
            r.polls
        );
    }
}

/// Every rank's report, on rank 0 (elsewhere empty).
fn gather(world: &SimpleCommunicator, mine: &Report) -> Vec<Report> {
    let bytes = serde_json::to_vec(mine).expect("a report encodes");
    if world.rank() != 0 {
        world.process_at_rank(0).send(&bytes[..]);
        return Vec::new();
    }
    let mut all = vec![mine.clone()];
    for r in 1..world.size() {
        let (b, _) = world.process_at_rank(r).receive_vec::<u8>();
        all.push(serde_json::from_slice(&b).expect("a report decodes"));
    }
    all
}
