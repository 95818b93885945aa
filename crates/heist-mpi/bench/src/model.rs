//! The model's command: reads the measured costs, builds the simulated T1XXL (or T1L)
//! and prints the table of docs/heist-mpi-model.md (the simulator is [`crate::sim`]).

use crate::sim::{simulate, Costs, Params, Policy, SimTree, TOP};

/// Reads the measured costs from `costs` JSON lines (the shared-memory run's), or uses
/// the values measured when docs/heist-mpi-model.md was written.
fn costs_from(path: Option<&str>) -> Costs {
    let mut c = Costs {
        node_ns: 60.0,
        probe_ns: 40.0,
        msg_ns: 250.0,
        byte_ns: 0.05,
        round_ns: 2_000.0,
        task_bytes: 22.0,
    };
    let Some(path) = path else {
        return c;
    };
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| super::die(&format!("{path}: {e}")));
    for line in text.lines().filter(|l| l.trim_start().starts_with('{')) {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| super::die(&e.to_string()));
        if !v["btl"].as_str().unwrap_or("").contains("vader") {
            continue;
        }
        let f = |k: &str| {
            v[k].as_f64()
                .unwrap_or_else(|| super::die(&format!("costs: no {k}")))
        };
        c.node_ns = f("uts_node_ns_one_rank");
        c.probe_ns = f("probe_us") * 1e3;
        c.round_ns = f("round_us") * 1e3;
        let ow = v["one_way"].as_array().expect("one_way");
        let small = ow[0]["one_way_us"].as_f64().expect("time") * 1e3;
        let big = ow.last().expect("sizes");
        let (bb, bt) = (
            big["bytes"].as_f64().expect("bytes"),
            big["one_way_us"].as_f64().expect("time") * 1e3,
        );
        c.msg_ns = small / 2.0;
        c.byte_ns = ((bt - small) / (bb - 16.0) / 2.0).max(0.0);
        c.task_bytes = v["task_bytes"]["uts_batch_of_100_per_task"]
            .as_f64()
            .expect("task size");
    }
    c
}

pub fn main(costs: Option<&str>, node_ns: Option<f64>, seed: u64, ranks: &str, tree: &str) {
    let mut c = costs_from(costs);
    if let Some(n) = node_ns {
        c.node_ns = n;
    }
    let params = match tree {
        "T1XXL" => "-t 1 -a 3 -d 15 -b 4 -r 19",
        "T1L" => "-t 1 -a 3 -d 13 -b 4 -r 29",
        t => super::die(&format!("model tree {t}: T1XXL or T1L")),
    };
    let st = SimTree::new(params);
    let nodes = st.size();
    println!("costs {c:?}");
    println!(
        "tree {tree}: {nodes} nodes simulated (real nodes to depth {TOP}, height-4 chunks of \
         {} sampled sizes, mean {:.0}); one rank: {:.1} s",
        st.sizes.len(),
        st.sizes.iter().map(|&s| s as f64).sum::<f64>() / st.sizes.len() as f64,
        nodes as f64 * c.node_ns * 1e-9
    );
    println!(
        "{:>6} {:>8} {:>8} {:>6} {:>9} {:>8} {:>11} {:>11} {:>9} {:>11} {:>7}",
        "ranks",
        "network",
        "policy",
        "idle",
        "time s",
        "effic.",
        "requests",
        "req. hops",
        "steals",
        "tasks moved",
        "idle %"
    );
    for p in ranks
        .split(',')
        .map(|s| s.trim().parse::<usize>().expect("a rank count"))
    {
        let log = 32 - (p.max(1) as u32).leading_zeros();
        for (latency, bandwidth) in [(10_000.0, 1.25), (2_000.0, 12.5)] {
            for policy in [Policy::Forward, Policy::ForwardAll, Policy::Refuse] {
                for spin in [false, true] {
                    let params = Params {
                        ranks: p,
                        latency_ns: latency,
                        bandwidth,
                        policy,
                        spin,
                        poll_ns: 25_000.0,
                        max_hops: match policy {
                            Policy::ForwardAll => (p as u32 - 1).max(1),
                            _ => ((p as u32).saturating_sub(1)).clamp(1, 2 * log + 2),
                        },
                        seed,
                    };
                    let o = simulate(&st, nodes, c, params);
                    println!(
                        "{:>6} {:>6}us {:>8} {:>6} {:>9.4} {:>8.3} {:>11} {:>11} {:>9} {:>11} {:>7.1}",
                        p,
                        latency / 1e3,
                        match policy {
                            Policy::Forward => "forward",
                            Policy::ForwardAll => "fwd-all",
                            Policy::Refuse => "refuse",
                        },
                        if spin { "spin" } else { "snooze" },
                        o.time_s,
                        o.efficiency,
                        o.requests,
                        o.hops,
                        o.steals,
                        o.tasks_moved,
                        100.0 * o.idle_share
                    );
                }
            }
        }
    }
}
