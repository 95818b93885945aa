//! The scenarios that heist-mpi's tests run under `mpirun` (tests/mpi.rs). Each rank
//! checks its own outcome and prints `rank R ok: ...`; anything else exits non-zero.
//!
//! ```text
//! heist-mpi-check count WORKERS REPEATS   tasks made = tasks run, every repeat
//! heist-mpi-check panic WORKERS RANK      a task on RANK panics: every rank gets its error
//! heist-mpi-check single WORKERS          matches heist's one-node reduce_tasks (np = 1)
//! heist-mpi-check bound WORKERS           the shared bound reaches every rank
//! ```

use heist_mpi::{ErrorKind, Reducer};
use mpi::traits::Communicator;
use serde::{Deserialize, Serialize};
use std::process::exit;

/// A node of an irregular tree: a hash decides how many children it has.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Node {
    id: u64,
    depth: u32,
}

const DEPTH: u32 = 14;

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^ (x >> 33)
}

/// Children of `n`: 0 to 4, skewed so that some subtrees are far larger than others.
fn children(n: Node, seed: u64) -> impl Iterator<Item = Node> {
    let h = mix(n.id ^ seed);
    let k = match n.depth {
        d if d >= DEPTH => 0,
        0..=2 => 4,
        _ => [0, 1, 2, 3, 4, 2, 3, 1][(h % 8) as usize],
    };
    (0..k).map(move |i| Node {
        id: mix(h.wrapping_add(i)),
        depth: n.depth + 1,
    })
}

/// Nodes of the tree, counted sequentially.
fn size(root: Node, seed: u64) -> u64 {
    let mut stack = vec![root];
    let mut n = 0;
    while let Some(x) = stack.pop() {
        n += 1;
        stack.extend(children(x, seed));
    }
    n
}

/// What a counting run returns: tasks run, tasks pushed, and a checksum of the ids run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Tally {
    run: u64,
    made: u64,
    sum: u64,
}

fn add(a: Tally, b: Tally) -> Tally {
    Tally {
        run: a.run + b.run,
        made: a.made + b.made,
        sum: a.sum.wrapping_add(b.sum),
    }
}

/// A counting task: runs `n`, pushes its children, tallies both.
fn tally(n: Node, seed: u64, push: impl Fn(Node)) -> Tally {
    let mut t = Tally {
        run: 1,
        made: 0,
        sum: n.id,
    };
    for c in children(n, seed) {
        t.made += 1;
        push(c);
    }
    t
}

fn expected(root: Node, seed: u64) -> Tally {
    let mut stack = vec![root];
    let mut t = Tally {
        run: 0,
        made: 0,
        sum: 0,
    };
    while let Some(x) = stack.pop() {
        t.run += 1;
        t.sum = t.sum.wrapping_add(x.id);
        for c in children(x, seed) {
            t.made += 1;
            stack.push(c);
        }
    }
    t
}

fn fail(rank: i32, what: String) -> ! {
    eprintln!("rank {rank} FAILED: {what}");
    exit(1)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| -> usize {
        args.get(i).and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            fail(
                -1,
                format!("argument {i} missing or not a number: {args:?}"),
            )
        })
    };
    let universe = heist_mpi::initialize().unwrap_or_else(|e| fail(-1, e.to_string()));
    let world = universe.world();
    let rank = world.rank();
    let pool = heist::Pool::builder()
        .workers(arg(2))
        .build()
        .unwrap_or_else(|e| fail(rank, e.to_string()));
    let root = Node { id: 1, depth: 0 };
    match args.get(1).map(String::as_str) {
        Some("count") => {
            for rep in 0..arg(3) {
                let seed = rep as u64;
                let want = expected(root, seed);
                let out = Reducer::new(&world)
                    .pool(&pool)
                    .run(root, Tally::default, add, |ctx, n| {
                        tally(n, seed, |c| ctx.push(c))
                    })
                    .unwrap_or_else(|e| fail(rank, format!("repeat {rep}: {e}")));
                let v = out.value;
                if v != want || v.run != v.made + 1 {
                    fail(rank, format!("repeat {rep}: got {v:?}, expected {want:?}"));
                }
                let r = &out.report;
                println!(
                    "rank {rank} ok: repeat {rep} ran {} of {} tasks, sent {}, received {}",
                    r.tasks_run, v.run, r.tasks_sent, r.tasks_received
                );
            }
        }
        Some("panic") => {
            let bad = arg(3) as i32;
            let got = Reducer::new(&world).pool(&pool).run(
                root,
                || 0u64,
                |a, b| a + b,
                |ctx, n| {
                    if ctx.rank() == bad && n.depth >= 6 {
                        panic!("task {} failed on purpose", n.id);
                    }
                    // Slow elsewhere, so that the other ranks cannot finish the tree
                    // before work reaches `bad` (a first TCP message can take tens of
                    // milliseconds to connect); the failure ends the run early.
                    if ctx.rank() != bad && n.depth >= 4 {
                        std::thread::sleep(std::time::Duration::from_micros(50));
                    }
                    for c in children(n, 7) {
                        ctx.push(c);
                    }
                    1
                },
            );
            match got {
                Err(e)
                    if e.rank == bad
                        && e.kind == ErrorKind::Panic
                        && e.message.contains("failed on purpose") =>
                {
                    println!("rank {rank} ok: {e}")
                }
                other => fail(rank, format!("expected rank {bad}'s panic, got {other:?}")),
            }
            // The pool and MPI still work after the failure.
            let again = heist_mpi::reduce_tasks(
                &world,
                3u32,
                || 0u64,
                |a, b| a + b,
                |ctx, d| {
                    if d > 0 {
                        ctx.push(d - 1);
                        ctx.push(d - 1);
                    }
                    1
                },
            );
            if again != Ok(15) {
                fail(rank, format!("after the failure: {again:?}"));
            }
        }
        Some("single") => {
            let seed = 11;
            let one = pool.reduce_tasks(root, Tally::default, add, |ctx, n| {
                tally(n, seed, |c| ctx.push(c))
            });
            let many = Reducer::new(&world)
                .pool(&pool)
                .run(root, Tally::default, add, |ctx, n| {
                    tally(n, seed, |c| ctx.push(c))
                })
                .unwrap_or_else(|e| fail(rank, e.to_string()));
            if many.value != one || one.run != size(root, seed) {
                fail(rank, format!("heist-mpi {:?}, heist {one:?}", many.value));
            }
            println!("rank {rank} ok: {} tasks as on one node", one.run);
        }
        Some("bound") => {
            // Every task raises the bound to its depth-weighted id; the final bound is the
            // largest of them, and each rank saw the bound grow only.
            let seed = 5;
            let top = {
                let mut stack = vec![root];
                let mut top = i64::MIN;
                while let Some(x) = stack.pop() {
                    top = top.max((x.id >> 20) as i64);
                    stack.extend(children(x, seed));
                }
                top
            };
            let out = Reducer::new(&world)
                .pool(&pool)
                .run(
                    root,
                    || true,
                    |a, b| a && b,
                    |ctx, n| {
                        let before = ctx.bound();
                        ctx.raise_bound((n.id >> 20) as i64);
                        for c in children(n, seed) {
                            ctx.push(c);
                        }
                        ctx.bound() >= before
                    },
                )
                .unwrap_or_else(|e| fail(rank, e.to_string()));
            if !out.value || out.bound != top {
                fail(
                    rank,
                    format!("monotone {}, bound {} of {top}", out.value, out.bound),
                );
            }
            println!("rank {rank} ok: bound {top}");
        }
        _ => fail(rank, format!("unknown scenario: {args:?}")),
    }
}
