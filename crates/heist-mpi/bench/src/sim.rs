//! A discrete-event simulator of heist-mpi's protocol at 64–4096 ranks, for UTS T1XXL
//! (docs/heist-mpi-model.md has the tables and the reading).
//!
//! What it simulates, one worker per rank:
//! - **the tree**: T1XXL's own SHA-1 tree (heist-bench's UTS) down to depth 10; each node
//!   at depth 11 is a *chunk*, one task whose size is that of a real T1XXL subtree of
//!   height 4 (drawn, by the node's hash, from 4096 such subtrees enumerated exactly), so
//!   the simulated tree has T1XXL's top and its statistics below;
//! - **a rank**: runs its stack LIFO in quanta of one poll interval, then pays a probe and
//!   handles what has arrived; with a request and two tasks or more, pays a drained round
//!   and answers with every other task from the oldest, at most half (as `rank.rs`);
//! - **idle ranks**: look at the times heist-mpi's snooze looks (8 short yields, then
//!   sleeps of 10, 20, 40, 80, 160, 200, 200 ... µs, reset when something arrives), or,
//!   with `spin`, as soon as a message arrives (one rank per core, polling);
//! - **messages**: the sender and the receiver each pay the measured per-message
//!   overhead and per-byte copy; the network adds its latency and bytes / bandwidth;
//! - **policies**: `fwd-all` (heist-mpi: a rank without spare work forwards the request
//!   to a random rank, home after P − 1 forwards, the thief backs off 40 µs, doubling per miss up to 1.28 ms),
//!   `forward` (the same, home after min(P − 1, 2·log2 P + 2) forwards) and `refuse`
//!   (UTS-MPI's random polling: the victim answers "none" and the thief asks the next
//!   random victim at once);
//! - **the end**: from the last task, four waves (two to detect, two to quiesce), each
//!   an all-reduce of 2·log2(P) message latencies after every rank's next look, then the
//!   result up a tree and back (2·log2(P) latencies).
//!
//! Efficiency is the one-rank time of the same tree (nodes × the measured per-node time
//! on one rank) over P times the simulated time.

use heist_bench::kernels::uts::{self, State, Tree};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Measured inputs (from `heist-mpi-bench costs`, shared memory and TCP loopback).
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    /// A UTS node on one rank of one worker, ns.
    pub node_ns: f64,
    /// An empty probe, ns.
    pub probe_ns: f64,
    /// One side's software cost of a message (half a small message's one-way time over
    /// shared memory), ns.
    pub msg_ns: f64,
    /// Copy cost per byte on each side, ns.
    pub byte_ns: f64,
    /// A drained round's fixed cost (end a reduction, start the next), ns.
    pub round_ns: f64,
    /// An encoded UTS task in a batch, bytes.
    pub task_bytes: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Forward, home after min(P − 1, 2·log2 P + 2) forwards (heist-mpi's first default).
    Forward,
    /// Forward, home after P − 1 forwards: the thesis's rule and heist-mpi's default.
    ForwardAll,
    /// Random polling with refusals (UTS-MPI).
    Refuse,
}

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub ranks: usize,
    pub latency_ns: f64,
    /// Bytes per ns.
    pub bandwidth: f64,
    pub policy: Policy,
    pub spin: bool,
    pub poll_ns: f64,
    pub max_hops: u32,
    pub seed: u64,
}

#[derive(Clone)]
enum Task {
    Node(State, u8),
    Chunk(u32),
}

enum Kind {
    Request { thief: usize, hops: u32 },
    Nack,
    Tasks(Vec<Task>),
}

struct Msg {
    at: u64,
    kind: Kind,
}

struct Rank {
    stack: Vec<(u8, Task)>,
    inbox: Vec<Msg>,
    working: bool,
    outstanding: bool,
    misses: u32,
    retry_at: u64,
    /// When the snooze schedule last started.
    snooze_from: u64,
    /// The time of this rank's pending event (u64::MAX: none).
    next: u64,
}

/// The tree: real T1XXL nodes to depth `TOP`, chunks below.
pub struct SimTree {
    tree: Tree,
    pub sizes: Vec<u32>,
}

pub const TOP: u32 = 10;

impl SimTree {
    pub fn new(params: &str) -> SimTree {
        let tree = Tree::parse(params).expect("the tree parses");
        // The first 4096 nodes at depth TOP + 1 met depth-first, and their subtrees' sizes.
        let mut sizes = Vec::new();
        let mut stack = vec![(tree.root_state(), 0u32)];
        while let Some((s, d)) = stack.pop() {
            if d == TOP + 1 {
                sizes.push(subtree(&tree, s, d));
                if sizes.len() == 4096 {
                    break;
                }
                continue;
            }
            for i in 0..tree.num_children(&s, d) {
                stack.push((uts::spawn(&s, i), d + 1));
            }
        }
        SimTree { tree, sizes }
    }

    fn chunk(&self, s: &State) -> u32 {
        let h = u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as usize;
        self.sizes[h % self.sizes.len()]
    }

    /// Children of a node at depth `d` (explicit nodes or chunks).
    fn expand(&self, s: &State, d: u8, out: &mut Vec<(u8, Task)>) {
        for i in 0..self.tree.num_children(s, d as u32) {
            let c = uts::spawn(s, i);
            let t = if d as u32 + 1 > TOP {
                Task::Chunk(self.chunk(&c))
            } else {
                Task::Node(c, d + 1)
            };
            out.push((d + 1, t));
        }
    }

    /// Nodes of the simulated tree (without simulating).
    pub fn size(&self) -> u64 {
        let mut n = 0u64;
        let mut stack = vec![(0u8, Task::Node(self.tree.root_state(), 0))];
        let mut kids = Vec::new();
        while let Some((_, t)) = stack.pop() {
            match t {
                Task::Chunk(k) => n += k as u64,
                Task::Node(s, d) => {
                    n += 1;
                    self.expand(&s, d, &mut kids);
                    stack.append(&mut kids);
                }
            }
        }
        n
    }
}

fn subtree(tree: &Tree, s: State, d: u32) -> u32 {
    let mut n = 0;
    let mut stack = vec![(s, d)];
    while let Some((s, d)) = stack.pop() {
        n += 1;
        for i in 0..tree.num_children(&s, d) {
            stack.push((uts::spawn(&s, i), d + 1));
        }
    }
    n
}

/// The idle look offsets of heist-mpi's snooze, ns after it (re)started.
fn snooze_offsets() -> Vec<u64> {
    let mut v = Vec::new();
    let mut t = 0u64;
    for _ in 0..8 {
        t += 1_000;
        v.push(t);
    }
    for step in 0..6u64 {
        t += (10_000u64 << step).min(200_000);
        v.push(t);
    }
    v
}

pub struct Outcome {
    pub time_s: f64,
    pub efficiency: f64,
    pub requests: u64,
    pub hops: u64,
    pub steals: u64,
    pub tasks_moved: u64,
    pub idle_share: f64,
}

struct Sim<'a> {
    tree: &'a SimTree,
    c: Costs,
    p: Params,
    ranks: Vec<Rank>,
    events: BinaryHeap<Reverse<(u64, usize)>>,
    rng: u64,
    snooze: Vec<u64>,
    live: u64,
    last_done: u64,
    requests: u64,
    hops: u64,
    steals: u64,
    moved: u64,
    busy: f64,
}

impl Sim<'_> {
    fn random(&mut self, n: usize) -> usize {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }

    /// A random rank other than `a` and `b`.
    fn victim(&mut self, a: usize, b: usize) -> usize {
        let n = self.p.ranks;
        loop {
            let v = self.random(n);
            if v != a && v != b {
                return v;
            }
        }
    }

    fn schedule(&mut self, r: usize, at: u64) {
        if at < self.ranks[r].next {
            self.ranks[r].next = at;
            self.events.push(Reverse((at, r)));
        }
    }

    /// Sends from `from` at `now`; returns the sender's time after paying for it.
    fn send(&mut self, from: usize, to: usize, now: u64, kind: Kind) -> u64 {
        let bytes = match &kind {
            Kind::Tasks(t) => 16.0 + t.len() as f64 * self.c.task_bytes,
            _ => 16.0,
        };
        let _ = from;
        let cpu = self.c.msg_ns + bytes * self.c.byte_ns;
        let done = now + cpu as u64;
        let at =
            done + (self.p.latency_ns + bytes / self.p.bandwidth + bytes * self.c.byte_ns) as u64;
        self.ranks[to].inbox.push(Msg { at, kind });
        let rk = &self.ranks[to];
        if !rk.working {
            let look = if self.p.spin {
                at
            } else {
                self.next_look(to, at)
            };
            self.schedule(to, look);
        }
        done
    }

    /// The first snooze look of idle rank `r` at or after `at`.
    fn next_look(&self, r: usize, at: u64) -> u64 {
        let from = self.ranks[r].snooze_from;
        for &o in &self.snooze {
            if from + o >= at {
                return from + o;
            }
        }
        let last = *self.snooze.last().expect("offsets");
        let period = 200_000;
        let k = (at.saturating_sub(from + last)).div_ceil(period);
        from + last + k * period
    }

    fn ask(&mut self, r: usize, now: u64) -> u64 {
        if self.p.ranks < 2 {
            return now;
        }
        let v = self.victim(r, r);
        self.ranks[r].outstanding = true;
        self.requests += 1;
        self.send(r, v, now, Kind::Request { thief: r, hops: 0 })
    }

    /// Handles the messages of rank `r` that arrived by `now`; returns the time after.
    fn handle(&mut self, r: usize, mut now: u64) -> u64 {
        let mut arrived = Vec::new();
        let inbox = std::mem::take(&mut self.ranks[r].inbox);
        let mut later = Vec::new();
        for m in inbox {
            if m.at <= now {
                arrived.push(m);
            } else {
                later.push(m);
            }
        }
        self.ranks[r].inbox = later;
        arrived.sort_by_key(|m| m.at);
        for m in arrived {
            now += self.c.msg_ns as u64;
            match m.kind {
                Kind::Tasks(t) => {
                    self.moved += t.len() as u64;
                    let rk = &mut self.ranks[r];
                    rk.outstanding = false;
                    rk.misses = 0;
                    rk.stack.extend(t.into_iter().map(|t| (0, t)));
                }
                Kind::Nack => {
                    self.ranks[r].outstanding = false;
                }
                Kind::Request { thief, .. } if thief == r => {
                    let rk = &mut self.ranks[r];
                    rk.outstanding = false;
                    rk.misses += 1;
                    rk.retry_at = now + (20_000u64 << rk.misses.min(6));
                }
                Kind::Request { thief, hops } => {
                    self.hops += 1;
                    if self.ranks[r].stack.len() >= 2 {
                        now += self.c.round_ns as u64 + 10 * self.ranks[r].stack.len() as u64;
                        let give = heist_mpi::split_off(&mut self.ranks[r].stack, false);
                        self.steals += 1;
                        now = self.send(r, thief, now, Kind::Tasks(give));
                    } else {
                        match self.p.policy {
                            Policy::Refuse => now = self.send(r, thief, now, Kind::Nack),
                            Policy::Forward | Policy::ForwardAll => {
                                let home = hops + 1 >= self.p.max_hops || self.p.ranks <= 2;
                                let (to, hops) = if home {
                                    (thief, hops)
                                } else {
                                    (self.victim(r, thief), hops + 1)
                                };
                                now = self.send(r, to, now, Kind::Request { thief, hops });
                            }
                        }
                    }
                }
            }
        }
        now
    }

    fn step(&mut self, r: usize, t: u64) {
        self.ranks[r].next = u64::MAX;
        let mut now = t;
        if self.ranks[r].working {
            let end = t + self.p.poll_ns as u64;
            let mut kids = Vec::new();
            let start = now;
            while now < end {
                let Some((_, task)) = self.ranks[r].stack.pop() else {
                    break;
                };
                self.live -= 1;
                match task {
                    Task::Chunk(k) => now += (k as f64 * self.c.node_ns) as u64,
                    Task::Node(s, d) => {
                        now += self.c.node_ns as u64;
                        self.tree.expand(&s, d, &mut kids);
                        self.live += kids.len() as u64;
                        self.ranks[r].stack.append(&mut kids);
                    }
                }
            }
            self.busy += (now - start) as f64;
            if self.live == 0 {
                self.last_done = self.last_done.max(now);
            }
            now += self.c.probe_ns as u64;
            now = self.handle(r, now);
            if self.ranks[r].stack.is_empty() {
                self.ranks[r].working = false;
                self.ranks[r].snooze_from = now;
                if !self.ranks[r].outstanding && self.live > 0 {
                    now = self.ask(r, now);
                }
                let look = if self.p.spin {
                    u64::MAX
                } else {
                    self.next_look(r, now + 1)
                };
                if look != u64::MAX {
                    self.schedule(r, look);
                }
                self.wake_for_inbox(r, now);
            } else {
                self.schedule(r, now);
            }
            return;
        }
        // An idle rank's look.
        now += self.c.probe_ns as u64;
        let had = self.ranks[r].inbox.iter().filter(|m| m.at <= now).count();
        now = self.handle(r, now);
        if had > 0 {
            self.ranks[r].snooze_from = now;
        }
        if !self.ranks[r].stack.is_empty() {
            self.ranks[r].working = true;
            self.schedule(r, now);
            return;
        }
        if self.live == 0 {
            return;
        }
        let rk = &self.ranks[r];
        if !rk.outstanding {
            if now >= rk.retry_at || self.p.policy == Policy::Refuse {
                now = self.ask(r, now);
            } else {
                let at = rk.retry_at;
                self.schedule(
                    r,
                    if self.p.spin {
                        at
                    } else {
                        self.next_look(r, at)
                    },
                );
            }
        }
        if !self.p.spin {
            let look = self.next_look(r, now + 1);
            self.schedule(r, look);
        }
        self.wake_for_inbox(r, now);
    }

    /// With `spin`, an idle rank's next event is its next message's arrival.
    fn wake_for_inbox(&mut self, r: usize, now: u64) {
        if let Some(at) = self.ranks[r].inbox.iter().map(|m| m.at).min() {
            let at = at.max(now + 1);
            let look = if self.p.spin {
                at
            } else {
                self.next_look(r, at)
            };
            self.schedule(r, look);
        }
    }
}

pub fn simulate(tree: &SimTree, nodes: u64, c: Costs, p: Params) -> Outcome {
    let mut ranks: Vec<Rank> = (0..p.ranks)
        .map(|_| Rank {
            stack: Vec::new(),
            inbox: Vec::new(),
            working: false,
            outstanding: false,
            misses: 0,
            retry_at: 0,
            snooze_from: 0,
            next: u64::MAX,
        })
        .collect();
    ranks[0]
        .stack
        .push((0, Task::Node(tree.tree.root_state(), 0)));
    ranks[0].working = true;
    let mut sim = Sim {
        tree,
        c,
        p,
        ranks,
        events: BinaryHeap::new(),
        rng: 0x9E37_79B9_7F4A_7C15 ^ p.seed.wrapping_mul(0xD1B5_4A32_D192_ED03),
        snooze: snooze_offsets(),
        live: 1,
        last_done: 0,
        requests: 0,
        hops: 0,
        steals: 0,
        moved: 0,
        busy: 0.0,
    };
    sim.schedule(0, 0);
    for r in 1..p.ranks {
        let t = sim.ask(r, 0);
        let look = if p.spin {
            u64::MAX
        } else {
            sim.next_look(r, t + 1)
        };
        if look != u64::MAX {
            sim.schedule(r, look);
        }
    }
    while let Some(Reverse((t, r))) = sim.events.pop() {
        if sim.live == 0 {
            break;
        }
        if t != sim.ranks[r].next {
            continue;
        }
        sim.step(r, t);
    }
    // The end: four waves, each after every rank's next look, then the combining tree.
    let log = (p.ranks as f64).log2().ceil().max(1.0);
    let hop = p.latency_ns + 2.0 * c.msg_ns;
    let look = if p.spin { c.probe_ns } else { 200_000.0 };
    let end = 4.0 * (look + 2.0 * log * hop) + 2.0 * log * hop;
    let time = sim.last_done as f64 + end;
    let work = nodes as f64 * c.node_ns;
    Outcome {
        time_s: time * 1e-9,
        efficiency: work / (p.ranks as f64 * time),
        requests: sim.requests,
        hops: sim.hops,
        steals: sim.steals,
        tasks_moved: sim.moved,
        idle_share: 1.0 - sim.busy / (p.ranks as f64 * sim.last_done as f64),
    }
}
