//! Randomized stress tests on both schedulers: task trees made of nested joins and scope
//! spawns (also from inside spawned tasks), with random depth and panics at random
//! nodes, run at 1, 2, 8 and 16 workers and compared with a sequential evaluation of the
//! same tree. A panic must come out exactly where the sequential semantics say (the
//! nearest catching `join` or `scope`, else `Pool::run`), and the pool must keep working
//! afterwards. Also: many small `Pool::run` calls from several threads at once, and tiny
//! deques (the overflow path) under stealing.

mod support;

use support::{fib, fib_seq};

use heist::{Pool, Scheduler, Scope, Worker};
use std::collections::BTreeSet;
use std::hint::black_box;
use std::panic;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Once;

/// Every panic these tests raise on purpose carries a message starting with this; the
/// panic hook keeps such panics quiet.
const PREFIX: &str = "heist-stress:";

/// What a catching node returns (xor its tag) when its subtree panicked.
const CAUGHT: u64 = 0xC0FF_EE00_DEAD_BEEF;

fn quiet_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let ours = info
                .payload()
                .downcast_ref::<String>()
                .is_some_and(|s| s.starts_with(PREFIX));
            if !ours {
                default(info);
            }
        }));
    });
}

/// SplitMix64: a small seeded generator, enough to shape trees.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `1/n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

enum Node {
    /// Computes from `val`, or panics.
    Leaf { val: u64, panics: bool },
    /// `join(left, right)`; with `catch`, a panic of either side is caught right there.
    Join {
        tag: u64,
        left: Box<Node>,
        right: Box<Node>,
        catch: bool,
    },
    /// A scope spawning each child; the first spawned task spawns the second half of the
    /// children itself. With `body_panics`, the body panics after spawning.
    Scope {
        tag: u64,
        kids: Vec<Node>,
        body_panics: bool,
        catch: bool,
    },
}

/// Shape knobs of a random tree.
struct Shape {
    max_depth: u32,
    /// Node budget: once spent, every new node is a leaf.
    max_nodes: usize,
    /// A leaf panics with probability `1/leaf_panic` (0: never).
    leaf_panic: u64,
}

fn build(rng: &mut Rng, depth: u32, shape: &Shape, budget: &mut usize) -> Node {
    *budget = budget.saturating_sub(1);
    let d = depth as u64;
    let leaf = depth >= shape.max_depth || *budget == 0 || rng.below(100) < d * d;
    let may_panic = shape.leaf_panic > 0;
    if leaf {
        return Node::Leaf {
            val: rng.next(),
            panics: may_panic && rng.one_in(shape.leaf_panic),
        };
    }
    let tag = rng.next();
    let catch = may_panic && rng.one_in(4);
    if rng.below(3) < 2 {
        let left = Box::new(build(rng, depth + 1, shape, budget));
        let right = Box::new(build(rng, depth + 1, shape, budget));
        Node::Join {
            tag,
            left,
            right,
            catch,
        }
    } else {
        let n = 1 + rng.below(5) as usize;
        let kids = (0..n)
            .map(|_| build(rng, depth + 1, shape, budget))
            .collect();
        Node::Scope {
            tag,
            kids,
            body_panics: may_panic && rng.one_in(3 * shape.leaf_panic),
            catch,
        }
    }
}

fn leaves(n: &Node) -> usize {
    match n {
        Node::Leaf { .. } => 1,
        Node::Join { left, right, .. } => leaves(left) + leaves(right),
        Node::Scope { kids, .. } => kids.iter().map(leaves).sum(),
    }
}

fn leaf_msg(val: u64) -> String {
    format!("{PREFIX} leaf {val:x}")
}

fn body_msg(tag: u64) -> String {
    format!("{PREFIX} scope body {tag:x}")
}

/// A leaf's value, after a little work so that thieves find something to take.
fn leaf_value(val: u64) -> u64 {
    let mut x = val;
    for _ in 0..(val % 200) {
        x = black_box(x.rotate_left(5).wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x5851);
    }
    x
}

fn join_value(tag: u64, l: u64, r: u64) -> u64 {
    (tag ^ l.rotate_left(17)).wrapping_mul(31).wrapping_add(r)
}

fn scope_value(tag: u64, kids: &[u64]) -> u64 {
    kids.iter()
        .fold(tag, |acc, &k| acc.rotate_left(9).wrapping_mul(7) ^ k)
}

/// The sequential meaning of a tree: its value, or the set of panic messages that may
/// reach the caller (more than one when sibling scope tasks panic: whichever is recorded
/// first wins).
type Outcome = Result<u64, BTreeSet<String>>;

fn seq_eval(n: &Node) -> Outcome {
    match n {
        Node::Leaf { val, panics } => {
            if *panics {
                Err(BTreeSet::from([leaf_msg(*val)]))
            } else {
                Ok(leaf_value(*val))
            }
        }
        Node::Join {
            tag,
            left,
            right,
            catch,
        } => {
            // `join` re-raises the left side's panic if both panic.
            let out = match (seq_eval(left), seq_eval(right)) {
                (Err(e), _) | (Ok(_), Err(e)) => Err(e),
                (Ok(l), Ok(r)) => Ok(join_value(*tag, l, r)),
            };
            if *catch && out.is_err() {
                return Ok(tag ^ CAUGHT);
            }
            out
        }
        Node::Scope {
            tag,
            kids,
            body_panics,
            catch,
        } => {
            let outs: Vec<Outcome> = kids.iter().map(seq_eval).collect();
            let out = if *body_panics {
                Err(BTreeSet::from([body_msg(*tag)]))
            } else if outs.iter().any(Result::is_err) {
                Err(outs.into_iter().filter_map(Result::err).flatten().collect())
            } else {
                Ok(scope_value(
                    *tag,
                    &outs.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
                ))
            };
            if *catch && out.is_err() {
                return Ok(tag ^ CAUGHT);
            }
            out
        }
    }
}

/// The parallel evaluation: on `w` if given (`Worker::join`, `Worker::scope`), else
/// through `heist::join` and `heist::scope`, as code inside scope tasks has to do.
fn par_eval(n: &Node, runs: &AtomicUsize, w: Option<&Worker>) -> u64 {
    match n {
        Node::Leaf { .. } => par_eval_leaf(n, runs),
        Node::Join {
            tag,
            left,
            right,
            catch,
        } => join_node(*tag, *catch, || match w {
            Some(w) => w.join(
                |w| par_eval(left, runs, Some(w)),
                |w| par_eval(right, runs, Some(w)),
            ),
            None => heist::join(
                || par_eval(left, runs, None),
                || par_eval(right, runs, None),
            ),
        }),
        Node::Scope { .. } => scope_node(n, runs, w),
    }
}

/// A join node's value from its children's, which `run` evaluates in parallel; a panic
/// in them gives the caught mark if the node catches, else goes on up.
fn join_node(tag: u64, catch: bool, run: impl FnOnce() -> (u64, u64)) -> u64 {
    let (l, r) = if catch {
        match support::catching(run) {
            Ok(lr) => lr,
            Err(_) => return tag ^ CAUGHT,
        }
    } else {
        run()
    };
    join_value(tag, l, r)
}

fn par_eval_leaf(n: &Node, runs: &AtomicUsize) -> u64 {
    let Node::Leaf { val, panics } = n else {
        unreachable!()
    };
    runs.fetch_add(1, Relaxed);
    if *panics {
        panic::panic_any(leaf_msg(*val));
    }
    leaf_value(*val)
}

/// A scope node, on `w` or (without one) through `heist::scope`.
fn scope_node(n: &Node, runs: &AtomicUsize, w: Option<&Worker>) -> u64 {
    let Node::Scope {
        tag,
        kids,
        body_panics,
        catch,
    } = n
    else {
        unreachable!()
    };
    let mut out = vec![0u64; kids.len()];
    let body_panic = body_panics.then_some(*tag);
    let mut run = || {
        let body = scope_body(kids, &mut out, runs, body_panic);
        match w {
            Some(w) => w.scope(body),
            None => heist::scope(body),
        }
    };
    if *catch {
        if support::catching(run).is_err() {
            return tag ^ CAUGHT;
        }
    } else {
        run();
    }
    scope_value(*tag, &out)
}

/// The body of a scope node: spawns the first half of the children one task each, and
/// the first of those tasks spawns the second half from inside the scope. Then it panics
/// if `body_panic` is set.
fn scope_body<'s>(
    kids: &'s [Node],
    out: &'s mut [u64],
    runs: &'s AtomicUsize,
    body_panic: Option<u64>,
) -> impl FnOnce(&Scope<'s>) + Send + 's {
    move |s| {
        let half = kids.len().div_ceil(2);
        let (first, rest) = kids.split_at(half);
        let (out_first, out_rest) = out.split_at_mut(half);
        let mut later = Some((rest, out_rest));
        for (kid, o) in first.iter().zip(out_first.iter_mut()) {
            let more = later.take();
            s.spawn(move |s| {
                if let Some((rest, out_rest)) = more {
                    for (kid, o) in rest.iter().zip(out_rest.iter_mut()) {
                        s.spawn(move |_| *o = par_eval(kid, runs, None));
                    }
                }
                *o = par_eval(kid, runs, None);
            });
        }
        if let Some(tag) = body_panic {
            panic::panic_any(body_msg(tag));
        }
    }
}

/// Runs random trees `seeds` on `pool`, alternating between the explicit-worker and the
/// thread-local evaluation, and checks each against `seq_eval`.
fn check_trees(pool: &Pool, seeds: std::ops::Range<u64>, shape: &Shape) {
    for seed in seeds {
        let mut rng = Rng(seed ^ 0xA076_1D64_78BD_642F);
        let tree = build(&mut rng, 0, shape, &mut shape.max_nodes.clone());
        let expected = seq_eval(&tree);
        let runs = AtomicUsize::new(0);
        let got = support::catching(|| {
            if seed % 2 == 0 {
                pool.run(|w| par_eval(&tree, &runs, Some(w)))
            } else {
                pool.run(|_| par_eval(&tree, &runs, None))
            }
        });
        let ctx = format!("{pool:?} seed {seed}");
        match (&expected, got) {
            (Ok(e), Ok(g)) => {
                assert_eq!(*e, g, "{ctx}: wrong value");
                if shape.leaf_panic == 0 {
                    assert_eq!(runs.load(Relaxed), leaves(&tree), "{ctx}: leaf runs");
                }
            }
            (Err(set), Err(msg)) => {
                assert!(
                    set.contains(&msg),
                    "{ctx}: panic {msg:?} is not one of {set:?}"
                );
                assert_eq!(pool.run(|w| fib(w, 12)), 144, "{ctx}: pool after a panic");
            }
            (Ok(e), Err(msg)) => panic!("{ctx}: expected {e:#x}, got a panic {msg:?}"),
            (Err(set), Ok(g)) => panic!("{ctx}: expected a panic of {set:?}, got {g:#x}"),
        }
    }
}

fn stress(s: Scheduler) {
    quiet_panics();
    let calm = Shape {
        max_depth: 14,
        max_nodes: 2000,
        leaf_panic: 0,
    };
    let stormy = Shape {
        leaf_panic: 100,
        ..calm
    };
    for (i, n) in support::worker_counts(&[1, 2, 8, 16])
        .into_iter()
        .enumerate()
    {
        let pool = Pool::builder().workers(n).scheduler(s).build().unwrap();
        let base = 1000 * i as u64;
        check_trees(&pool, base..base + 40, &calm);
        check_trees(&pool, base + 100..base + 220, &stormy);
    }
}

#[test]
fn random_trees_match_sequential_lace() {
    stress(Scheduler::Lace);
}

#[test]
fn random_trees_match_sequential_relay() {
    stress(Scheduler::Relay);
}

/// The sequential evaluation itself is not trivial: the seeds above do produce trees with
/// joins, scopes, panics, and caught panics, and calm trees have no panics.
#[test]
fn random_trees_cover_every_shape() {
    fn count(n: &Node, c: &mut [usize; 5]) {
        match n {
            Node::Leaf { panics, .. } => c[0] += *panics as usize,
            Node::Join {
                left, right, catch, ..
            } => {
                c[1] += 1;
                c[3] += *catch as usize;
                count(left, c);
                count(right, c);
            }
            Node::Scope {
                kids, body_panics, ..
            } => {
                c[2] += 1;
                c[4] += *body_panics as usize;
                kids.iter().for_each(|k| count(k, c));
            }
        }
    }
    let shape = Shape {
        max_depth: 14,
        max_nodes: 2000,
        leaf_panic: 100,
    };
    let mut c = [0; 5];
    let (mut ok, mut err) = (0, 0);
    for seed in 100..124 {
        let mut rng = Rng(seed ^ 0xA076_1D64_78BD_642F);
        let tree = build(&mut rng, 0, &shape, &mut shape.max_nodes.clone());
        count(&tree, &mut c);
        match seq_eval(&tree) {
            Ok(_) => ok += 1,
            Err(_) => err += 1,
        }
    }
    assert!(c.iter().all(|&k| k > 0), "shape counts {c:?}");
    assert!(ok > 0 && err > 0, "{ok} trees returned, {err} panicked");
}

/// Several OS threads submit many small roots to one pool at once; each gets its own
/// result, and a panicking root reaches only its own submitter.
#[test]
fn many_threads_submit_small_runs_concurrently() {
    quiet_panics();
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in [2, 8] {
            let pool = Pool::builder().workers(n).scheduler(s).build().unwrap();
            std::thread::scope(|sc| {
                for t in 0..4u64 {
                    let pool = &pool;
                    sc.spawn(move || {
                        for i in 0..150u64 {
                            let k = 5 + (t + i) % 8;
                            if i % 25 == 7 {
                                let r = support::catching(|| {
                                    pool.run(|w| {
                                        w.join(
                                            |w| fib(w, k),
                                            |_| -> u64 {
                                                panic::panic_any(format!("{PREFIX} t{t} i{i}"))
                                            },
                                        )
                                    })
                                });
                                assert_eq!(r, Err(format!("{PREFIX} t{t} i{i}")), "{s:?} {n}");
                            } else {
                                let got = pool.run(|w| fib(w, k) + t * 1000);
                                assert_eq!(got, fib_seq(k) + t * 1000, "{s:?} {n} t{t} i{i}");
                            }
                        }
                    });
                }
            });
        }
    }
}

/// Deques of 2 to 4 slots overflow at every other level: full pushes run inline while
/// thieves steal what fits.
#[test]
fn tiny_deques_overflow_under_stealing() {
    quiet_panics();
    let shape = Shape {
        max_depth: 14,
        max_nodes: 1000,
        leaf_panic: 100,
    };
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for (cap, n) in [(2, 2), (3, 8), (4, 4)] {
            let pool = support::pool(s, n, cap);
            for d in [10, 16, 20] {
                assert_eq!(pool.run(|w| fib(w, d)), fib_seq(d), "{s:?} cap {cap}");
            }
            let base = 5000 + 100 * cap as u64;
            check_trees(&pool, base..base + 30, &shape);
        }
    }
}
