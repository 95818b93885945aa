//! Traces (`heist::trace`): with the `trace` feature, one task span per task run, counted
//! independently of the runtime, on both schedulers; without it, no events.

use heist::{Pool, Scheduler, Worker};

fn pool(workers: usize, s: Scheduler) -> Pool {
    Pool::builder()
        .workers(workers)
        .scheduler(s)
        .build()
        .unwrap()
}

fn fib(w: &Worker, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = w.join(|w| fib(w, n - 1), |w| fib(w, n - 2));
    a + b
}

/// The joins `fib(n)` makes, by the recurrence rather than by running it: one per call
/// with `n >= 2`.
fn fib_joins(n: u64) -> usize {
    let (mut j0, mut j1) = (0usize, 0usize); // J(0), J(1)
    for _ in 1..n {
        (j0, j1) = (j1, 1 + j1 + j0);
    }
    if n == 0 {
        j0
    } else {
        j1
    }
}

#[test]
fn fib_joins_by_the_recurrence() {
    assert_eq!(
        [0, 1, 2, 3, 4, 5].map(fib_joins),
        [0, 0, 1, 2, 4, 7],
        "J(n) = 1 + J(n-1) + J(n-2)"
    );
    assert_eq!(fib_joins(20), 10945);
}

#[cfg(feature = "trace")]
mod traced {
    use super::{fib, fib_joins, pool};
    use heist::trace::{Event, EventKind, Shape};
    use heist::Scheduler;
    use std::collections::HashMap;

    const SCHEDULERS: [Scheduler; 2] = [Scheduler::Lace, Scheduler::Relay];

    /// Task spans by kind, over all workers.
    fn tasks(workers: &[Vec<Event>]) -> HashMap<EventKind, usize> {
        let mut n = HashMap::new();
        for e in workers.iter().flatten().filter(|e| e.kind.is_task()) {
            assert_eq!(e.kind.shape(), Shape::Span);
            *n.entry(e.kind).or_default() += 1;
        }
        n
    }

    /// Each worker's spans nest: two spans of one worker are disjoint or one holds the other.
    fn assert_nested(events: &[Event]) {
        let mut spans: Vec<(u64, u64)> = events
            .iter()
            .filter(|e| e.kind.shape() == Shape::Span)
            .map(|e| (e.at_ns, e.at_ns + e.dur_ns))
            .collect();
        spans.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
        let mut open: Vec<u64> = Vec::new();
        for (s, e) in spans {
            while open.last().is_some_and(|&end| end <= s) {
                open.pop();
            }
            if let Some(&end) = open.last() {
                assert!(e <= end, "span {s}..{e} overlaps one ending at {end}");
            }
            open.push(e);
        }
    }

    #[test]
    fn fib_20_has_one_task_span_per_task() {
        const { assert!(heist::trace::ENABLED) };
        for workers in [2, 8] {
            for s in SCHEDULERS {
                let pool = pool(workers, s);
                // Twice: the first take empties the buffers, so the second run's trace is
                // its own.
                for _ in 0..2 {
                    assert_eq!(pool.run(|w| fib(w, 20)), 6765);
                    let t = pool.take_trace();
                    assert_eq!(t.workers.len(), workers);
                    let by_kind = tasks(&t.workers);
                    let want =
                        HashMap::from([(EventKind::Join, fib_joins(20)), (EventKind::Root, 1)]);
                    assert_eq!(by_kind, want, "{s:?} on {workers} workers");
                    t.workers.iter().for_each(|w| assert_nested(w));
                    for e in t.workers.iter().flatten() {
                        if e.kind == EventKind::Steal || e.kind == EventKind::Lifeline {
                            assert!(e.peer.is_some_and(|p| (p as usize) < workers));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn scope_promise_detached_and_loop_tasks_are_spans() {
        use heist::prelude::*;
        for s in SCHEDULERS {
            let pool = pool(2, s);
            let _ = pool.take_trace();
            pool.run(|w| {
                w.scope(|sc| (0..100).for_each(|_| sc.spawn(|_| ())));
                w.promises(|p| {
                    let hs: Vec<_> = (0..50u64).map(|i| p.spawn(move |_| i)).collect();
                    assert_eq!(hs.into_iter().map(|h| h.join()).sum::<u64>(), 1225);
                });
            });
            for _ in 0..20 {
                pool.spawn_detached(|_| ());
            }
            pool.barrier();
            let sum: u64 = pool.run(|_| (0..100_000u64).into_par_iter().sum());
            assert_eq!(sum, 4_999_950_000);
            let t = pool.take_trace();
            let by_kind = tasks(&t.workers);
            assert_eq!(by_kind.get(&EventKind::Spawn), Some(&100), "{s:?}");
            assert_eq!(by_kind.get(&EventKind::Promise), Some(&50), "{s:?}");
            assert_eq!(by_kind.get(&EventKind::Detached), Some(&20), "{s:?}");
            assert_eq!(by_kind.get(&EventKind::Root), Some(&2), "{s:?}");
            let pieces: Vec<&Event> = t
                .workers
                .iter()
                .flatten()
                .filter(|e| e.kind == EventKind::Piece)
                .collect();
            assert!(
                pieces.iter().any(|e| e.value == 100_000),
                "{s:?}: {pieces:?}"
            );
            t.workers.iter().for_each(|w| assert_nested(w));
        }
    }
}

#[cfg(not(feature = "trace"))]
#[test]
fn without_the_feature_there_are_no_events() {
    const { assert!(!heist::trace::ENABLED) };
    let pool = pool(2, Scheduler::Lace);
    assert_eq!(pool.run(|w| fib(w, 15)), 610);
    let t = pool.take_trace();
    assert_eq!(t.workers.len(), 2);
    assert!(t.workers.iter().all(Vec::is_empty));
}
