//! Loom models of the relay's channels (thesis 000 §3.1), run under `--cfg loom` against
//! the very code of `channel.rs`, whose atomics and cells `crate::core::sync` swaps for loom's.
//!
//! - `Spsc` (the task channel): one producer sends capacity + 1 values, retrying a send
//!   that finds the ring full, while the consumer receives them, with and without
//!   `is_empty` checks between receives. Checked: FIFO order, every value exactly once,
//!   `is_empty` agreeing with `recv`, and (by loom) no data race on the ring cells.
//! - `Mpsc` (the request channel): two or three producers send one or two values each
//!   while the single consumer receives. Checked: every value exactly once, FIFO per
//!   producer, a send on a full queue returning false and leaving the queue intact,
//!   `is_empty` agreeing with `recv`, and no data race on the cells.
//! - The FIFO the relay relies on across producers: a value sent before a release store
//!   is received before a value sent after an acquire load that observed that store.
//! - The sizing rule (a request channel holds every request that can exist): with as
//!   many requests in existence as the capacity, a send never finds the queue full. This
//!   model found a real bug (a relaxed tail let a producer see a stale cell); see its
//!   comment.
//!
//! Models whose interesting branch depends on the schedule (the channel found full, the
//! flag observed in time) also count, across all executions, that the branch was taken
//! at least once, so that a model cannot pass vacuously.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p heist --release --lib loom_channel`. The
//! preemption bound defaults to the one given per model; `LOOM_MAX_PREEMPTIONS`
//! overrides it.

use super::channel::{Mpsc, Spsc};
use loom::model::Builder;
use loom::sync::atomic::AtomicBool;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// Counts, across the executions of one model, how often a branch was taken. It lives
/// outside loom (a std atomic), so it does not add to the explored state.
type Hits = std::sync::Arc<std::sync::atomic::AtomicUsize>;

fn hits() -> Hits {
    Hits::default()
}

fn hit(h: &Hits) {
    h.fetch_add(1, Relaxed);
}

/// A model builder with preemption bound `bound` (`None`: exhaustive), unless
/// `LOOM_MAX_PREEMPTIONS` is set.
fn builder(bound: Option<usize>) -> Builder {
    let mut b = Builder::new();
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        b.preemption_bound = bound;
    }
    b
}

/// Rounds a bounded wait for a flag may take before giving up.
const WAIT_ROUNDS: usize = 3;

/// Waits (bounded) for `flag` with acquire ordering; whether it was seen.
fn wait_for(flag: &AtomicBool) -> bool {
    for _ in 0..WAIT_ROUNDS {
        if flag.load(Acquire) {
            return true;
        }
        thread::yield_now();
    }
    flag.load(Acquire)
}

// ---------------------------------------------------------------------------------------
// Spsc

/// One producer sends `1..=k` into an `Spsc` of capacity `cap`, retrying while it is
/// full; the consumer (the model's main thread) receives all `k`, checking `is_empty`
/// before each receive if `peek`. FIFO and exactly-once are checked by comparing the
/// received sequence with `1..=k`.
fn spsc_model(cap: usize, k: usize, peek: bool) {
    let full = hits();
    let full2 = full.clone();
    builder(None).check(move || {
        let ch = Arc::new(Spsc::<usize>::new(cap));
        let producer = {
            let ch = ch.clone();
            let full = full2.clone();
            thread::spawn(move || {
                for v in 1..=k {
                    while !ch.send(v) {
                        hit(&full);
                        thread::yield_now();
                    }
                }
            })
        };
        let mut got = Vec::with_capacity(k);
        // With `peek`, only the first value is taken while the producer runs, so that
        // `is_empty` is also checked after the producer is known to be done.
        let concurrent = if peek { 1 } else { k };
        while got.len() < concurrent {
            if peek {
                if ch.is_empty() {
                    thread::yield_now();
                    continue;
                }
                let v = ch
                    .recv()
                    .expect("Spsc: is_empty() was false, recv() found nothing");
                got.push(v);
            } else {
                match ch.recv() {
                    Some(v) => got.push(v),
                    None => thread::yield_now(),
                }
            }
        }
        producer.join().unwrap();
        while got.len() < k {
            assert!(
                !ch.is_empty(),
                "Spsc: is_empty() with {} values unread",
                k - got.len()
            );
            got.push(ch.recv().expect("Spsc: a sent value is missing"));
        }
        assert_eq!(
            got,
            (1..=k).collect::<Vec<_>>(),
            "Spsc: FIFO / exactly once"
        );
        assert!(
            ch.is_empty(),
            "Spsc: not empty after every value was received"
        );
        assert_eq!(
            ch.recv(),
            None,
            "Spsc: a value arrived twice or from nowhere"
        );
    });
    assert!(
        full.load(Relaxed) > 0,
        "Spsc model (cap {cap}, {k} sends) never found the ring full"
    );
}

#[test]
fn spsc_cap1_two_values() {
    spsc_model(1, 2, false);
}

#[test]
fn spsc_cap2_three_values() {
    spsc_model(2, 3, false);
}

#[test]
fn spsc_cap1_is_empty() {
    spsc_model(1, 2, true);
}

#[test]
fn spsc_cap2_is_empty() {
    spsc_model(2, 3, true);
}

// ---------------------------------------------------------------------------------------
// Mpsc

/// The value producer `p` sends `i`-th (from 1): distinct, and tells its producer.
fn val(p: usize, i: usize) -> usize {
    10 * (p + 1) + i
}

fn producer_of(v: usize) -> usize {
    v / 10 - 1
}

/// Checks that `got` holds exactly the values in `sent` (per producer, in sending order),
/// each once, and in each producer's order.
fn check_mpsc(got: &[usize], sent: &[Vec<usize>]) {
    let mut all: Vec<usize> = sent.iter().flatten().copied().collect();
    let mut seen = got.to_vec();
    all.sort_unstable();
    seen.sort_unstable();
    assert_eq!(
        seen, all,
        "Mpsc: every sent value exactly once (received {got:?})"
    );
    for (p, s) in sent.iter().enumerate() {
        let mine: Vec<usize> = got
            .iter()
            .copied()
            .filter(|&v| producer_of(v) == p)
            .collect();
        assert_eq!(&mine, s, "Mpsc: FIFO of producer {p} (received {got:?})");
    }
}

/// How often a producer tries to send one value, and how many empty receives the consumer
/// takes while the producers run, before giving up (see `mpsc_model`).
#[derive(Clone, Copy)]
struct Tries {
    send: usize,
    recv: usize,
}

/// Producer `p` sends `counts[p]` values into an `Mpsc` of capacity `cap`, retrying while
/// it is full; the consumer receives concurrently. Every value sent must arrive exactly
/// once, in its producer's order, and then the queue must be empty.
///
/// Both sides spin with bounded retries: with three or more threads, loom would otherwise
/// explore the unfair schedule in which two spinning threads take turns forever while a
/// third, the one that would let them progress (a producer between its tail CAS and its
/// publication of the cell), never runs. A producer that gives up stops sending, and the
/// consumer that gives up joins the producers and drains the queue; executions in which
/// every value went through concurrently are counted so that the model cannot pass on
/// give-ups alone.
fn mpsc_model(cap: usize, counts: &'static [usize], tries: Tries, bound: usize) {
    let full = hits();
    let complete = hits();
    let (full2, complete2) = (full.clone(), complete.clone());
    let send_tries = tries.send;
    builder(Some(bound)).check(move || {
        let q = Arc::new(Mpsc::<usize>::new(cap));
        let producers: Vec<_> = counts
            .iter()
            .enumerate()
            .map(|(p, &n)| {
                let q = q.clone();
                let full = full2.clone();
                thread::spawn(move || {
                    let mut sent = Vec::new();
                    'values: for i in 1..=n {
                        let mut tries = 0;
                        while !q.send(val(p, i)) {
                            hit(&full);
                            tries += 1;
                            if tries == send_tries {
                                break 'values;
                            }
                            thread::yield_now();
                        }
                        sent.push(val(p, i));
                    }
                    sent
                })
            })
            .collect();
        let total: usize = counts.iter().sum();
        let mut got = Vec::with_capacity(total);
        let mut misses = 0;
        while got.len() < total && misses < tries.recv {
            match q.recv() {
                Some(v) => got.push(v),
                None => {
                    misses += 1;
                    thread::yield_now();
                }
            }
        }
        let concurrent = got.len();
        let sent: Vec<Vec<usize>> = producers.into_iter().map(|p| p.join().unwrap()).collect();
        while let Some(v) = q.recv() {
            got.push(v);
        }
        check_mpsc(&got, &sent);
        assert!(
            q.is_empty(),
            "Mpsc: not empty after every value was received"
        );
        assert_eq!(
            q.recv(),
            None,
            "Mpsc: a value arrived twice or from nowhere"
        );
        if concurrent == total {
            hit(&complete2);
        }
    });
    assert!(
        full.load(Relaxed) > 0,
        "Mpsc model (cap {cap}, sends {counts:?}) never found the queue full"
    );
    assert!(
        complete.load(Relaxed) > 0,
        "Mpsc model (cap {cap}, sends {counts:?}) never received every value concurrently"
    );
}

#[test]
fn mpsc_two_producers_two_each() {
    // Capacity 2 for four values: the queue fills and every cell is reused.
    mpsc_model(2, &[2, 2], Tries { send: 3, recv: 6 }, 2);
}

#[test]
fn mpsc_three_producers_one_each() {
    // Capacity 2 for three values: one producer finds the queue full and retries.
    mpsc_model(2, &[1, 1, 1], Tries { send: 3, recv: 3 }, 2);
}

/// Capacity 2, producer 0 sends two values and producer 1 one, each send tried once.
/// With `consumer`, the main thread tries one receive (after an `is_empty` check)
/// while they run. Every value whose send returned true must arrive exactly once in its
/// producer's order, and no other; without a concurrent consumer exactly one send
/// fails. Afterwards the queue must work normally for another lap.
fn mpsc_full_model(consumer: bool, bound: usize) {
    let failed = hits();
    let failed2 = failed.clone();
    builder(Some(bound)).check(move || {
        let q = Arc::new(Mpsc::<usize>::new(2));
        let producers: Vec<_> = [2, 1]
            .into_iter()
            .enumerate()
            .map(|(p, n)| {
                let q = q.clone();
                thread::spawn(move || {
                    // The values whose send succeeded, and how many failed.
                    let mut ok = Vec::new();
                    let mut fails = 0;
                    for i in 1..=n {
                        if q.send(val(p, i)) {
                            ok.push(val(p, i));
                        } else {
                            fails += 1;
                        }
                    }
                    (ok, fails)
                })
            })
            .collect();
        let mut got = Vec::new();
        if consumer && !q.is_empty() {
            got.push(
                q.recv()
                    .expect("Mpsc: is_empty() was false, recv() found nothing"),
            );
        }
        let mut sent = Vec::new();
        let mut fails = 0;
        for p in producers {
            let (ok, f) = p.join().unwrap();
            sent.push(ok);
            fails += f;
        }
        if fails > 0 {
            hit(&failed2);
        }
        if consumer {
            assert!(
                fails <= 1,
                "Mpsc: {fails} of 3 sends failed with a consumer"
            );
        } else {
            assert_eq!(
                fails, 1,
                "Mpsc: 3 sends into a queue of 2 must fail exactly once"
            );
        }
        while let Some(v) = q.recv() {
            got.push(v);
        }
        check_mpsc(&got, &sent);
        assert!(q.is_empty(), "Mpsc: not empty after draining");
        // Another lap, single-threaded: the failed send left the cells consistent.
        assert!(q.send(1) && q.send(2), "Mpsc: drained queue refuses a send");
        assert!(!q.is_empty());
        assert!(!q.send(3), "Mpsc: a third send into a queue of 2 succeeded");
        assert_eq!((q.recv(), q.recv(), q.recv()), (Some(1), Some(2), None));
        assert!(q.is_empty());
    });
    assert!(
        failed.load(Relaxed) > 0,
        "Mpsc full model never saw a failed send"
    );
}

#[test]
fn mpsc_full_send_returns_false() {
    mpsc_full_model(false, 4);
}

#[test]
fn mpsc_full_with_consumer() {
    mpsc_full_model(true, 4);
}

/// Two producers send one value each into a queue of 2; the consumer takes the first
/// only once `is_empty` says one waits, then, with both producers joined, `is_empty`
/// must report the second.
#[test]
fn mpsc_is_empty() {
    builder(Some(4)).check(|| {
        let q = Arc::new(Mpsc::<usize>::new(2));
        let producers: Vec<_> = (0..2)
            .map(|p| {
                let q = q.clone();
                thread::spawn(move || assert!(q.send(val(p, 1)), "Mpsc: send with room failed"))
            })
            .collect();
        let mut got = Vec::new();
        while q.is_empty() {
            thread::yield_now();
        }
        got.push(
            q.recv()
                .expect("Mpsc: is_empty() was false, recv() found nothing"),
        );
        for p in producers {
            p.join().unwrap();
        }
        assert!(!q.is_empty(), "Mpsc: is_empty() with a value unread");
        got.push(q.recv().expect("Mpsc: a sent value is missing"));
        assert!(
            q.is_empty(),
            "Mpsc: not empty after every value was received"
        );
        assert_eq!(q.recv(), None);
        check_mpsc(&got, &[vec![val(0, 1)], vec![val(1, 1)]]);
    });
}

/// The FIFO the relay relies on across producers: A sends a1 and then raises a flag
/// (release); B, once it sees the flag (acquire), sends b1. The consumer, receiving
/// concurrently, must get a1 before b1.
#[test]
fn mpsc_happens_before_fifo() {
    let b_sent = hits();
    let b_sent2 = b_sent.clone();
    builder(Some(4)).check(move || {
        let q = Arc::new(Mpsc::<usize>::new(2));
        let flag = Arc::new(AtomicBool::new(false));
        let (a1, b1) = (val(0, 1), val(1, 1));
        let a = {
            let (q, flag) = (q.clone(), flag.clone());
            thread::spawn(move || {
                assert!(q.send(a1), "Mpsc: send with room failed");
                flag.store(true, Release);
            })
        };
        let b = {
            let (q, flag) = (q.clone(), flag.clone());
            thread::spawn(move || {
                if !wait_for(&flag) {
                    return false;
                }
                assert!(q.send(b1), "Mpsc: send with room failed");
                true
            })
        };
        // a1 is always sent, so something arrives; it must be a1.
        let first = loop {
            match q.recv() {
                Some(v) => break v,
                None => thread::yield_now(),
            }
        };
        assert_eq!(
            first, a1,
            "Mpsc: b1, sent after a1 by happens-before, came first"
        );
        a.join().unwrap();
        if b.join().unwrap() {
            hit(&b_sent2);
            assert_eq!(q.recv(), Some(b1), "Mpsc: b1 lost");
        }
        assert_eq!(q.recv(), None);
    });
    assert!(
        b_sent.load(Relaxed) > 0,
        "happens-before model: B never sent"
    );
}

/// The sizing rule behind `relay::send`'s assertion ("request channels hold every request
/// that can exist"), at capacity 2 with two requests: A sends a1 and sends a2 only after
/// the consumer has received a1 and said so (release/acquire, as a forwarded request
/// would tell it); B sends b1. At most two values are ever queued, so no send may fail.
///
/// This model failed before `send` read and moved `tail` with acquire/acq-rel ordering.
/// Loom's counterexample then (cell 0, cell 1; A, B, consumer C):
/// A claims position 0 (CAS tail 0→1) and publishes a1 (cell 0 `seq` = 1, release);
/// B loads tail = 0 and cell 0's `seq` = 0, so it tries CAS 0→1, which fails, and goes on
/// with tail = 1; C receives a1 and releases cell 0 (`seq` = 2, release), then raises
/// the flag; A sees it, claims position 1 (CAS 1→2) and publishes a2. B's CAS 1→2 fails
/// with tail = 2, B loads cell 0's `seq` (acquire) and reads 0 again: nothing orders B
/// after C's release (or even A's publication), because the tail CAS, its failure load
/// and the tail load are all relaxed, so learning tail = 2 from A carries none of A's
/// or C's history to B. `seq < tail`, and B's send returns false with only a2 queued.
/// On hardware the address dependency from the tail value to the `seq` load hides this;
/// in the Rust memory model nothing did. Now B's acquire on the tail A moved orders it
/// after C's release of cell 0.
#[test]
fn mpsc_sizing_rule() {
    let a_second = hits();
    let a_second2 = a_second.clone();
    builder(Some(3)).check(move || {
        let q = Arc::new(Mpsc::<usize>::new(2));
        let taken = Arc::new(AtomicBool::new(false));
        let (a1, a2, b1) = (val(0, 1), val(0, 2), val(1, 1));
        let a = {
            let (q, taken) = (q.clone(), taken.clone());
            thread::spawn(move || {
                assert!(q.send(a1), "Mpsc: send of a1 failed with one value queued");
                if !wait_for(&taken) {
                    return false;
                }
                assert!(q.send(a2), "Mpsc: send of a2 failed with one value queued");
                true
            })
        };
        let b = {
            let q = q.clone();
            thread::spawn(move || {
                assert!(
                    q.send(b1),
                    "Mpsc: send of b1 failed with at most one value queued"
                )
            })
        };
        let mut got = Vec::new();
        while !got.contains(&a1) {
            match q.recv() {
                Some(v) => got.push(v),
                None => thread::yield_now(),
            }
        }
        taken.store(true, Release);
        let a_sent_second = a.join().unwrap();
        b.join().unwrap();
        while let Some(v) = q.recv() {
            got.push(v);
        }
        let mut sent = vec![vec![a1], vec![b1]];
        if a_sent_second {
            hit(&a_second2);
            sent[0].push(a2);
        }
        check_mpsc(&got, &sent);
    });
    assert!(a_second.load(Relaxed) > 0, "sizing model: A never sent a2");
}
