//! The model's inputs, measured under `mpirun -np 2` on the transport mpirun was given:
//! the one-way time of a message by size (half a ping-pong's round trip), the cost of an
//! empty matched probe, the cost of starting and ending a one-task heist reduction (what
//! a drained round costs beyond its tasks), and the encoded size of each kernel's task.

use heist_bench::kernels::uts::Tree;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::time::Instant;

pub fn main(world: &SimpleCommunicator, reps: usize) {
    let rank = world.rank();
    if world.size() != 2 {
        super::die("costs needs exactly 2 ranks (mpirun -np 2)");
    }
    let other = 1 - rank;
    let mut one_way = Vec::new();
    for size in [16usize, 64, 512, 4096, 65536] {
        let buf = vec![7u8; size];
        let mut best = f64::MAX;
        // Three passes of `reps` round trips; the best pass (the machine is shared).
        for _ in 0..3 {
            world.barrier();
            let t0 = Instant::now();
            for _ in 0..reps {
                if rank == 0 {
                    world.process_at_rank(other).send(&buf[..]);
                    let _ = world.process_at_rank(other).receive_vec::<u8>();
                } else {
                    let (b, _) = world.process_at_rank(other).receive_vec::<u8>();
                    world.process_at_rank(other).send(&b[..]);
                }
            }
            best = best.min(t0.elapsed().as_secs_f64() / reps as f64 / 2.0);
        }
        one_way.push(serde_json::json!({ "bytes": size, "one_way_us": best * 1e6 }));
    }
    world.barrier();
    // An empty probe: what a poll costs when nothing has arrived.
    let n = reps * 50;
    let t0 = Instant::now();
    for _ in 0..n {
        std::hint::black_box(world.any_process().immediate_matched_probe());
    }
    let probe_us = t0.elapsed().as_secs_f64() / n as f64 * 1e6;
    world.barrier();
    // A drained round's fixed cost: a one-task reduction on a one-worker pool.
    let pool = heist::Pool::builder().workers(1).build().expect("a pool");
    let rounds = reps * 5;
    let t0 = pool.run(|w| {
        let t0 = Instant::now();
        for i in 0..rounds {
            std::hint::black_box(w.reduce_tasks(i, || 0usize, |a, b| a + b, |_, x| x));
        }
        t0.elapsed()
    });
    let round_us = t0.as_secs_f64() / rounds as f64 * 1e6;
    // A UTS node's time, sequentially and through heist-mpi on one rank of one worker
    // (T1): the model's unit of work. Tree T1 (4.1 million nodes), best of three.
    let (t1, c) = heist_bench::kernels::uts::tree_of_size("T1").expect("T1 is named");
    let mut seq_ns = f64::MAX;
    let mut one_ns = f64::MAX;
    let me = mpi::topology::SimpleCommunicator::self_comm();
    for _ in 0..3 {
        let t0 = Instant::now();
        let n = heist_bench::kernels::uts::count(heist_bench::fork::SEQ, &t1).nodes;
        assert_eq!(n, c.nodes);
        seq_ns = seq_ns.min(t0.elapsed().as_secs_f64() * 1e9 / n as f64);
        let t0 = Instant::now();
        let got = heist_mpi::Reducer::new(&me)
            .pool(&pool)
            .run(
                (t1.root_state(), 0u32),
                crate::kernels::UtsCounts::default,
                crate::kernels::uts_op,
                |ctx, t| crate::kernels::uts_task(&t1, t, |x| ctx.push(x)),
            )
            .expect("a one-rank reduction");
        assert_eq!(got.value.nodes, c.nodes);
        one_ns = one_ns.min(t0.elapsed().as_secs_f64() * 1e9 / c.nodes as f64);
    }
    let tree = Tree::parse("-t 1 -a 3 -d 15 -b 4 -r 19").expect("T1XXL parses");
    let uts_task = (tree.root_state(), 3u32);
    let sizes = serde_json::json!({
        "uts": postcard::to_allocvec(&uts_task).expect("encodes").len(),
        "uts_batch_of_100_per_task":
            postcard::to_allocvec(&(0i64, vec![uts_task; 100])).expect("encodes").len() as f64 / 100.0,
        "nqueens": postcard::to_allocvec(&(5u32, [3u8; 18])).expect("encodes").len(),
        "knapsack": postcard::to_allocvec(&(20u32, 12_000u64, 9_000u64)).expect("encodes").len(),
        "pi": postcard::to_allocvec(&(0.25f64, 1.0f64 / 1024.0, 0.001f64)).expect("encodes").len(),
    });
    if rank == 0 {
        let btl = std::env::var("OMPI_MCA_btl").unwrap_or_else(|_| "default".into());
        let v = serde_json::json!({
            "btl": btl, "one_way": one_way, "probe_us": probe_us,
            "round_us": round_us, "task_bytes": sizes,
            "uts_node_ns_sequential": seq_ns, "uts_node_ns_one_rank": one_ns,
        });
        println!("{v}");
    }
}
