//! The faults of the audit of issue 23, one test each (or more), on both schedulers: safe
//! plumbing that must not allow UB, loops in destructors during unwinding, waits that
//! must serve the work that releases them, pools whose drop must not block, unhandled
//! detached panics, absurd sizes, and spawns that must not nest on the stack. The
//! compile-time halves (trait bounds) are `compile_fail` doc tests on the items.

mod support;

use heist::iter::plumbing::{IndexedOrNot, Kernel, Producer, ProducerCallback, UnindexedProducer};
use heist::prelude::*;
use heist::{Pool, Scheduler};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// Every panic these tests raise on purpose carries a message starting with this, or one
/// of heist's own checks (`heist:`); the hook keeps them quiet.
const PREFIX: &str = "audit:";

fn quiet_panics() {
    support::quiet_panics(&[PREFIX, "heist:"]);
}

const SCHEDULERS: [Scheduler; 2] = [Scheduler::Lace, Scheduler::Relay];

/// Runs `f` on a thread of its own; fails (rather than hangs) if it takes over `secs`.
fn within<R: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = panic::catch_unwind(AssertUnwindSafe(f));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(r)) => r,
        Ok(Err(p)) => panic::resume_unwind(p),
        Err(_) => panic!("{what}: no answer within {secs} s (hung)"),
    }
}

fn pool(s: Scheduler, workers: usize) -> Pool {
    Pool::builder()
        .workers(workers)
        .scheduler(s)
        .build()
        .unwrap()
}

// ---- fault 1: a producer's `fold_block` that hands back a fresh accumulator ------------

/// The numbers `lo..hi`; its `fold_block` hands back a fresh accumulator instead of the
/// one it was given, at the loop's first block (safe code, and wrong).
struct Forgetful {
    lo: u32,
    hi: u32,
}

impl UnindexedProducer for Forgetful {
    type Item = u32;
    type IntoIter = std::ops::Range<u32>;
    fn len(&self) -> usize {
        (self.hi - self.lo) as usize
    }
    fn split_at(self, i: usize) -> (Self, Self) {
        let mid = self.lo + i as u32;
        (
            Forgetful {
                lo: self.lo,
                hi: mid,
            },
            Forgetful {
                lo: mid,
                hi: self.hi,
            },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        self.lo..self.hi
    }
    /// The loop's first block is folded into a fresh accumulator, which is handed back;
    /// every other block is folded right.
    fn fold_block<K: Kernel<u32>>(self, n: usize, kernel: &K, acc: K::Acc) -> (K::Acc, Self) {
        let first = self.lo == 0;
        let (head, rest) = self.split_at(n);
        if first {
            drop(acc);
            let _ = panic::catch_unwind(AssertUnwindSafe(|| {
                kernel.fold(kernel.start(), head.into_iter())
            }));
            return (kernel.start(), rest);
        }
        (kernel.fold(acc, head.into_iter()), rest)
    }
}

impl Producer for Forgetful {}

/// An indexed parallel iterator over a `Forgetful`.
struct ForgetfulIter(u32);

impl ParallelIterator for ForgetfulIter {
    type Item = u32;
    fn drive<K: Kernel<u32>>(self, kernel: K) -> K::Output {
        heist::iter::plumbing::bridge(Forgetful { lo: 0, hi: self.0 }, &kernel)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.0 as usize)
    }
    fn with_producer_or_self<CB: IndexedOrNot<u32>>(self, cb: CB) -> CB::Output {
        cb.indexed(Forgetful { lo: 0, hi: self.0 })
    }
}

impl IndexedParallelIterator for ForgetfulIter {
    fn len(&self) -> usize {
        self.0 as usize
    }
    fn with_producer<CB: ProducerCallback<u32>>(self, cb: CB) -> CB::Output {
        cb.callback(Forgetful { lo: 0, hi: self.0 })
    }
}

/// Before the fix the fresh cursor passed `Slots`' check and the next block wrote
/// through a null pointer (SEGV); now the collect panics with a message and writes
/// nothing out of place.
#[test]
fn a_fold_block_that_returns_a_fresh_accumulator_panics_instead_of_writing_through_null() {
    quiet_panics();
    for s in SCHEDULERS {
        for workers in [1, 2] {
            let p = pool(s, workers);
            for len in [1u32, 2, 100, 10_000] {
                let r = panic::catch_unwind(AssertUnwindSafe(|| {
                    p.run(|_| ForgetfulIter(len).collect::<Vec<u32>>())
                }));
                assert!(r.is_err(), "{s:?} × {workers}, {len} items: collected");
                let mut v = vec![7u32];
                let r = panic::catch_unwind(AssertUnwindSafe(|| {
                    v.par_extend(ForgetfulIter(len));
                }));
                assert!(r.is_err(), "{s:?} × {workers}, {len} items: extended");
                assert_eq!(v, [7], "the target keeps only what it had");
                // From outside the pool (the caller folds the first blocks itself).
                let r = panic::catch_unwind(AssertUnwindSafe(|| {
                    p.enter(|| ForgetfulIter(len).collect::<Vec<u32>>())
                }));
                assert!(r.is_err(), "{s:?} × {workers}, {len} items: outside");
            }
            assert_eq!(p.run(|_| (0..100u32).into_par_iter().sum::<u32>()), 4950);
        }
    }
}

/// Zero-sized items take the same checked path: every slot lies at one address.
#[test]
fn collect_of_zero_sized_items_counts_its_slots() {
    for s in SCHEDULERS {
        let p = pool(s, 2);
        let v: Vec<()> = p.run(|_| (0..10_000).into_par_iter().map(|_| ()).collect());
        assert_eq!(v.len(), 10_000);
    }
}

// ---- fault 3: a loop from outside the pool, run in a destructor while unwinding -------

/// An item slow enough that the caller wakes a helper for the rest of the loop.
fn slow(x: u64) -> u64 {
    let t = std::time::Instant::now();
    while t.elapsed() < Duration::from_micros(2) {
        std::hint::spin_loop();
    }
    x
}

/// Runs `body` in a destructor while this thread unwinds from another panic, and
/// returns what it gave.
fn while_unwinding<R>(body: impl FnOnce() -> R) -> R {
    struct OnDrop<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for OnDrop<F> {
        fn drop(&mut self) {
            assert!(std::thread::panicking());
            (self.0.take().unwrap())();
        }
    }
    let mut out = None;
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        let _g = OnDrop(Some(|| out = Some(body())));
        panic!("{PREFIX} the outer panic");
    }));
    assert!(r.is_err());
    out.expect("the destructor ran")
}

/// Before the fix the loop read `thread::panicking()` as its own unwinding: it stopped
/// the helper mid-piece and dropped what the helper had summed, and its panics.
#[test]
fn a_loop_in_a_destructor_while_unwinding_keeps_the_helpers_part_and_panic() {
    quiet_panics();
    for s in SCHEDULERS {
        let p = pool(s, 2);
        let n = 20_000u64;
        for round in 0..10 {
            let sum = while_unwinding(|| p.enter(|| (0..n).into_par_iter().map(slow).sum::<u64>()));
            assert_eq!(sum, n * (n - 1) / 2, "{s:?}, round {round}");
            let v: Vec<u64> = (0..n).collect();
            let sum = while_unwinding(|| p.enter(|| v.par_iter().map(|&x| slow(x)).sum::<u64>()));
            assert_eq!(sum, n * (n - 1) / 2, "{s:?}, round {round}: a slice");
            // Every item of the upper half panics; whoever meets one, the loop panics.
            let caught = while_unwinding(|| {
                panic::catch_unwind(AssertUnwindSafe(|| {
                    p.enter(|| {
                        (0..n).into_par_iter().for_each(|x| {
                            if slow(x) >= n / 2 {
                                panic!("{PREFIX} item {x}");
                            }
                        })
                    })
                }))
                .is_err()
            });
            assert!(caught, "{s:?}, round {round}: the helper's panic was lost");
        }
    }
}

// ---- fault 4: a broadcast inside a task of a reduction -------------------------------

/// Before the fix the reduction's idle loop and its end served teams but never posted
/// jobs, so a broadcast from one of its tasks waited forever for the others' shares.
#[test]
fn a_broadcast_inside_a_reduction_task_is_served_by_the_reductions_workers() {
    for s in SCHEDULERS {
        for workers in [2, 3, 8] {
            let total = within(60, &format!("{s:?} × {workers}"), move || {
                let p = pool(s, workers);
                let mut total = 0;
                for round in 0..5u32 {
                    total += p.reduce_tasks(
                        (0u32, 64u32),
                        || 0u64,
                        |a, b| a + b,
                        |cx, (lo, hi)| {
                            if hi - lo > 1 {
                                let mid = lo + (hi - lo) / 2;
                                cx.push((lo, mid));
                                cx.push((mid, hi));
                                return 0;
                            }
                            if lo % 16 == round % 16 {
                                let ids = heist::broadcast(|b| b.index());
                                assert_eq!(
                                    ids,
                                    (0..heist::current_num_threads()).collect::<Vec<_>>()
                                );
                            }
                            1
                        },
                    );
                }
                total
            });
            assert_eq!(total, 5 * 64);
        }
    }
}

// ---- fault 5: dropping a pool does not block on its spawned work ----------------------

/// rayon-core's `termination_while_things_are_executing`: a pool dropped while one of its
/// tasks waits for the dropping thread. Before the fix the drop waited for the task,
/// which waited for the drop.
#[test]
fn a_dropped_pool_finishes_its_spawned_work_without_blocking_the_drop() {
    for s in SCHEDULERS {
        for workers in [1, 2, 8] {
            let got = within(60, &format!("{s:?} × {workers}"), move || {
                let (tx0, rx0) = mpsc::channel::<u32>();
                let (tx1, rx1) = mpsc::channel::<u32>();
                let prefix = format!("au5{}{workers}-", &format!("{s:?}")[..1]);
                let name = prefix.clone();
                {
                    let p = heist::ThreadPoolBuilder::new()
                        .num_threads(workers)
                        .scheduler(s)
                        .thread_name(move |i| format!("{name}{i}"))
                        .build()
                        .unwrap();
                    p.spawn(move || {
                        let data = rx0.recv().unwrap();
                        // The pool's handle is gone; its workers still run this.
                        heist::spawn(move || tx1.send(data).unwrap());
                    });
                }
                tx0.send(22).unwrap();
                let got = rx1.recv().unwrap();
                // Then the workers stop by themselves.
                support::wait_threads(&prefix, 0);
                got
            });
            assert_eq!(got, 22);
        }
    }
}

/// The case of the audit: pool B dropped on pool A's only worker while one of B's tasks
/// calls `A.install`. Before the fix B's drop waited on a condition variable without
/// serving A. Also B's barrier, called there: it waits, and keeps serving A meanwhile.
#[test]
fn dropping_or_waiting_for_a_pool_on_another_pools_worker_serves_that_pool() {
    for sa in SCHEDULERS {
        for sb in SCHEDULERS {
            let what = format!("A {sa:?}, B {sb:?}");
            let ran = within(60, &what, move || {
                let a = Arc::new(pool(sa, 1));
                // What each round's task adds: 42, once it has run.
                let ran = [0, 1].map(|_| Arc::new(AtomicUsize::new(0)));
                for (round, barrier) in [false, true].into_iter().enumerate() {
                    let (a2, r2) = (Arc::clone(&a), Arc::clone(&ran[round]));
                    a.run(move |_| {
                        let b = pool(sb, 2);
                        let (a3, r3) = (Arc::clone(&a2), Arc::clone(&r2));
                        b.spawn_detached(move |_| {
                            // Runs on A's only worker, which is in B's drop or barrier.
                            let x = a3.run(|_| 40) + 2;
                            r3.fetch_add(x as usize, SeqCst);
                        });
                        if barrier {
                            b.barrier();
                            assert_eq!(r2.load(SeqCst), 42, "the barrier waited");
                        }
                        drop(b);
                    });
                }
                // The first round's task may still be finishing on its pool's workers.
                let t = std::time::Instant::now();
                while ran[0].load(SeqCst) < 42 && t.elapsed() < Duration::from_secs(30) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                ran[0].load(SeqCst) + ran[1].load(SeqCst)
            });
            assert_eq!(ran, 84, "{what}");
        }
    }
}

/// The barrier is the explicit wait: after it, every detached task has run, and the
/// drop that follows has nothing left to wait for.
#[test]
fn a_barrier_before_the_drop_waits_for_every_detached_task() {
    for s in SCHEDULERS {
        for workers in [1, 2, 8] {
            let p = pool(s, workers);
            let n = Arc::new(AtomicUsize::new(0));
            for _ in 0..200 {
                let n = Arc::clone(&n);
                p.spawn_detached(move |w| {
                    let n2 = Arc::clone(&n);
                    w.spawn_detached(move |_| {
                        n2.fetch_add(1, SeqCst);
                    });
                    n.fetch_add(1, SeqCst);
                });
            }
            p.barrier();
            assert_eq!(n.load(SeqCst), 400, "{s:?} × {workers}");
            drop(p);
        }
    }
}

// ---- fault 6: a spawn handler that starts a worker late, or never ----------------------

/// Before the fix the relay pool's drop waited in termination detection, which needs
/// every worker: a worker whose `ThreadBuilder` runs late (or never) held it up. Now the
/// drop returns at once; the workers stop once the late one has run (under relay, whose
/// workers stop by termination detection, only then; under Lace even if it never runs).
#[test]
fn a_pool_whose_spawn_handler_starts_a_worker_late_or_never_drops_at_once() {
    for s in SCHEDULERS {
        for late in [false, true] {
            let what = format!("{s:?}, late {late}");
            within(60, &what, move || {
                let prefix = format!("au6{}{}-", &format!("{s:?}")[..1], u8::from(late));
                let name = prefix.clone();
                let held = Arc::new(std::sync::Mutex::new(Vec::new()));
                let h2 = Arc::clone(&held);
                let p = heist::ThreadPoolBuilder::new()
                    .num_threads(3)
                    .scheduler(s)
                    .thread_name(move |i| format!("{name}{i}"))
                    .spawn_handler(move |t| {
                        let named = t.name().map(str::to_owned);
                        if t.index() == 2 {
                            // Kept (late: run after the drop; else: never run).
                            h2.lock().unwrap().push((t, named));
                        } else {
                            let b = std::thread::Builder::new().name(named.unwrap());
                            b.spawn(move || t.run())?;
                        }
                        Ok(())
                    })
                    .build()
                    .unwrap();
                assert_eq!(p.install(|| heist::join(|| 1, || 2)), (1, 2));
                drop(p);
                let kept: Vec<_> = std::mem::take(&mut *held.lock().unwrap());
                if late {
                    for (t, named) in kept {
                        let b = std::thread::Builder::new().name(named.unwrap());
                        b.spawn(move || t.run()).unwrap();
                    }
                } else {
                    drop(kept);
                }
                if late || s == Scheduler::Lace {
                    support::wait_threads(&prefix, 0);
                }
            });
        }
    }
}

// ---- child processes: aborts and memory limits ----------------------------------------

/// Tells the child which case to run.
const CHILD_VAR: &str = "HEIST_AUDIT_CHILD";
const CHILD_TEST: &str = "audit_child";

/// Runs this test binary's `audit_child` with `case` and `env` set; returns its status
/// and output.
fn run_child(case: &str, env: &[(&str, &str)]) -> (std::process::ExitStatus, String) {
    let out = support::run_child(CHILD_TEST, CHILD_VAR, case, env);
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status, text)
}

/// The child side; it does nothing unless started by `run_child`.
#[test]
#[ignore = "run in a child process by the tests of faults 7 and 8"]
fn audit_child() {
    let Ok(case) = std::env::var(CHILD_VAR) else {
        return;
    };
    match case.as_str() {
        "unhandled_spawn_panic" => unhandled_spawn_panic(),
        "absurd_sizes" => absurd_sizes(),
        other => panic!("unknown child case {other}"),
    }
    println!("CHILD-DONE {case}");
}

// ---- fault 7: an unhandled panic of a task spawned on the global pool -----------------

/// The child: a `heist::spawn` on the global pool panics with no handler; the child then
/// waits (up to 20 s) for the process to end.
fn unhandled_spawn_panic() {
    heist::spawn(|| panic!("{PREFIX} unhandled"));
    std::thread::sleep(Duration::from_secs(20));
}

/// Before the fix the panic was kept for a barrier of the global pool that never came,
/// and the process went on as if nothing had happened. Now it aborts, as rayon's does,
/// saying why.
#[test]
fn an_unhandled_panic_of_a_task_spawned_on_the_global_pool_aborts_the_process() {
    for s in ["lace", "relay"] {
        for workers in ["1", "2"] {
            let env = [("HEIST_SCHEDULER", s), ("HEIST_WORKERS", workers)];
            let t = std::time::Instant::now();
            let (status, out) = run_child("unhandled_spawn_panic", &env);
            assert!(
                !status.success(),
                "{s} × {workers}: the child went on:\n{out}"
            );
            assert!(!out.contains("CHILD-DONE"), "{s} × {workers}:\n{out}");
            assert!(
                out.contains("heist: a detached task panicked in the global pool"),
                "{s} × {workers}: no message:\n{out}"
            );
            assert!(
                t.elapsed() < Duration::from_secs(15),
                "{s} × {workers}: late"
            );
        }
    }
}

// ---- fault 8: absurd sizes ------------------------------------------------------------

/// The child: under a 1 GiB address-space limit (more, above what an AddressSanitizer
/// build has mapped already), pools too large for it are errors that name the problem.
fn absurd_sizes() {
    limit_address_space();
    let too_many = heist::ThreadPoolBuilder::new()
        .num_threads(1_000_000)
        .build();
    let e = too_many.expect_err("a million threads").to_string();
    assert!(e.contains("1000000") && e.contains("65535"), "{e}");
    let e = Pool::builder().workers(65_536).build().unwrap_err();
    assert_eq!(e, heist::BuildError::TooManyWorkers(65_536));
    for s in SCHEDULERS {
        // 60 000 deques of 1 MiB do not fit.
        let e = Pool::builder()
            .workers(60_000)
            .scheduler(s)
            .build()
            .unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, heist::BuildError::OutOfMemory { .. }) && msg.contains("deques"),
            "{s:?}: {msg}"
        );
        let e = heist::ThreadPoolBuilder::new()
            .num_threads(60_000)
            .scheduler(s)
            .build();
        assert!(e.is_err(), "{s:?}: 60000 threads");
        // Small deques fit; then relay's request channels (n² in all) or the threads'
        // stacks do not.
        // (Large stacks: threads fail to start well before small allocations would.)
        let e = Pool::builder()
            .workers(60_000)
            .scheduler(s)
            .deque_capacity(1)
            .stack_size(16 << 20)
            .build()
            .unwrap_err();
        let msg = e.to_string();
        match s {
            Scheduler::Relay => assert!(msg.contains("relay channels"), "{msg}"),
            Scheduler::Lace => assert!(matches!(e, heist::BuildError::Spawn(_)), "{msg}"),
        }
        // The process still works: a pool that fits builds and runs.
        let p = pool(s, 2);
        assert_eq!(p.run(|w| w.join(|_| 1, |_| 2)), (1, 2));
    }
}

/// Limits this process's address space to 1 GiB (`ulimit -v`), or to 1 GiB above what it
/// has mapped already under AddressSanitizer, whose shadow memory alone is terabytes.
fn limit_address_space() {
    #[repr(C)]
    struct Rlimit {
        cur: u64,
        max: u64,
    }
    extern "C" {
        fn setrlimit(resource: i32, rlim: *const Rlimit) -> i32;
    }
    const RLIMIT_AS: i32 = 9;
    const GIB: u64 = 1 << 30;
    let mapped = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .expect("/proc/self/statm")
        * 4096;
    let limit = if std::env::var_os("ASAN_OPTIONS").is_some() {
        mapped + GIB
    } else {
        GIB.max(mapped + GIB / 4)
    };
    let r = Rlimit {
        cur: limit,
        max: limit,
    };
    // SAFETY: `setrlimit` reads the struct, laid out as `struct rlimit` on 64-bit Linux.
    assert_eq!(unsafe { setrlimit(RLIMIT_AS, &r) }, 0, "setrlimit");
}

/// Before the fix `num_threads(1_000_000)` was clamped to 65535 in silence, and 60 000
/// workers allocated a 1 MiB deque each up front: under the limit the process aborted.
#[test]
#[cfg(target_os = "linux")]
fn absurd_sizes_are_errors_that_name_the_problem_not_aborts() {
    // AddressSanitizer's allocator returns null, like the system's, rather than abort.
    let asan = std::env::var("ASAN_OPTIONS")
        .map(|o| format!("{o}:allocator_may_return_null=1"))
        .ok();
    let env: Vec<(&str, &str)> = asan.iter().map(|o| ("ASAN_OPTIONS", o.as_str())).collect();
    let (status, out) = run_child("absurd_sizes", &env);
    assert!(status.success(), "the child failed ({status}):\n{out}");
    assert!(out.contains("CHILD-DONE absurd_sizes"), "{out}");
}

// ---- fault 9: spawns must not nest on the stack ----------------------------------------

/// rayon-core's `linear_stack_growth`: a chain of scope tasks, each spawning the next and
/// returning, uses as much stack for 500 links as for 5. Before the fix each popped task
/// drained what it left nested inside its own run, so the stack grew with the chain.
#[test]
fn a_chain_of_spawns_uses_the_same_stack_for_5_links_as_for_500() {
    fn countdown<'s>(s: &heist::Scope<'s>, bottom: &'s u8, max: &'s AtomicUsize, n: usize) {
        let top = 0u8;
        let diff = (bottom as *const u8 as usize)
            .abs_diff(std::hint::black_box(&top) as *const u8 as usize);
        max.fetch_max(diff, SeqCst);
        if n > 0 {
            s.spawn(move |s| countdown(s, bottom, max, n - 1));
        }
    }
    for s in SCHEDULERS {
        let p = heist::ThreadPoolBuilder::new()
            .num_threads(1)
            .scheduler(s)
            .build()
            .unwrap();
        let (five, five_hundred) = p.install(|| {
            let bottom = 0u8;
            let max = AtomicUsize::new(0);
            heist::scope(|sc| countdown(sc, &bottom, &max, 5));
            let five = max.swap(0, SeqCst);
            heist::scope(|sc| countdown(sc, &bottom, &max, 500));
            (five as f64, max.load(SeqCst) as f64)
        });
        let ratio = five / five_hundred;
        assert!(
            ratio > 0.9 && ratio < 1.1,
            "{s:?}: stack usage ratio {ratio} (5 links: {five} bytes, 500: {five_hundred})"
        );
    }
}

/// A branch-and-bound shape: each node of a long spine spawns the next spine node and
/// `leaves` leaf tasks, and returns. With a deque of 8 slots it is full at once: before
/// the fix a spawn on a full deque ran the task inline, so the spine became depth on the
/// stack and the worker overflowed its stack (on one worker, and often on two). With the
/// default deque, the same happened through the nested drains above.
#[test]
fn a_search_whose_tasks_spawn_their_children_and_return_does_not_grow_the_stack() {
    fn node<'s>(s: &heist::Scope<'s>, depth: usize, leaves: usize, seen: &'s AtomicUsize) {
        seen.fetch_add(1, Relaxed);
        if depth == 0 {
            return;
        }
        s.spawn(move |s| node(s, depth - 1, leaves, seen));
        for _ in 0..leaves {
            s.spawn(move |_| {
                seen.fetch_add(1, Relaxed);
            });
        }
    }
    const SPINE: usize = 5_000;
    const LEAVES: usize = 20;
    for s in SCHEDULERS {
        for workers in [1, 2, 3] {
            for capacity in [8, 1 << 14] {
                let p = Pool::builder()
                    .workers(workers)
                    .scheduler(s)
                    .deque_capacity(capacity)
                    .stack_size(512 << 10)
                    .build()
                    .unwrap();
                let seen = AtomicUsize::new(0);
                p.run(|w| w.scope(|sc| node(sc, SPINE, LEAVES, &seen)));
                assert_eq!(
                    seen.load(Relaxed),
                    1 + SPINE * (1 + LEAVES),
                    "{s:?} × {workers}, {capacity} slots"
                );
                // Detached tasks too, each spawning the next: a chain run in a loop.
                let chain = Arc::new(AtomicUsize::new(0));
                fn link(w: &heist::Worker, left: usize, chain: Arc<AtomicUsize>) {
                    chain.fetch_add(1, Relaxed);
                    if left > 0 {
                        w.spawn_detached(move |w| link(w, left - 1, chain));
                    }
                }
                let c = Arc::clone(&chain);
                p.spawn_detached(move |w| link(w, SPINE * 4, c));
                p.barrier();
                assert_eq!(chain.load(Relaxed), SPINE * 4 + 1, "{s:?} × {workers}");
            }
        }
    }
}
