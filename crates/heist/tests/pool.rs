//! Behaviour of the pool: builder errors and scheduler names, the `HEIST_WORKERS` and
//! `HEIST_SCHEDULER` settings of the global pool (checked in child processes, since the
//! global pool is per process), thread names and stack sizes, `scope` (borrows, nested
//! spawns, panics), many callers outside the pool waiting on their roots at once,
//! `heist::join`/`heist::scope` on and off a worker, an idle pool's CPU
//! use, rayon's names as the same pool, builder and error, and dropping a pool (joining
//! its threads where that cannot block, and only there).

mod support;

use support::{fib, fib_seq};

use heist::{BuildError, Pool, Scheduler, Worker};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn fib_tls(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = heist::join(|| fib_tls(n - 1), || fib_tls(n - 2));
    a + b
}

fn thread_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("<unnamed>")
        .to_string()
}

// ---- builder errors and scheduler names ----

#[test]
fn zero_workers_is_an_error_that_names_the_problem() {
    let e = Pool::builder().workers(0).build().unwrap_err();
    assert_eq!(e, BuildError::ZeroWorkers);
    let msg = e.to_string();
    assert!(msg.contains("worker") && msg.contains('0'), "{msg}");
}

#[test]
fn too_many_workers_is_an_error_that_names_the_limit() {
    let n = heist::max_num_threads() + 1;
    let e = Pool::builder().workers(n).build().unwrap_err();
    assert_eq!(e, BuildError::TooManyWorkers(n));
    let msg = e.to_string();
    assert!(
        msg.contains("65535") && msg.contains(&n.to_string()),
        "{msg}"
    );
}

#[test]
fn deque_capacity_out_of_range_is_an_error() {
    for cap in [0, usize::MAX, heist::MAX_DEQUE_CAPACITY + 1] {
        let e = Pool::builder()
            .workers(1)
            .deque_capacity(cap)
            .build()
            .unwrap_err();
        assert_eq!(e, BuildError::BadCapacity(cap));
        let msg = e.to_string();
        assert!(
            msg.contains("capacity") && msg.contains(&cap.to_string()),
            "{msg}"
        );
    }
    let pool = Pool::builder()
        .workers(2)
        .deque_capacity(1)
        .build()
        .unwrap();
    assert_eq!(pool.run(|w| fib(w, 15)), 610);
}

#[test]
fn scheduler_names_parse_case_insensitively() {
    assert_eq!("Relay".parse::<Scheduler>(), Ok(Scheduler::Relay));
    assert_eq!("lace".parse::<Scheduler>(), Ok(Scheduler::Lace));
    assert_eq!(" LACE ".parse::<Scheduler>(), Ok(Scheduler::Lace));
    let e = "bogus".parse::<Scheduler>().unwrap_err();
    assert_eq!(e, BuildError::UnknownScheduler("bogus".to_string()));
    let msg = e.to_string();
    assert!(
        msg.contains("bogus") && msg.contains("lace") && msg.contains("relay"),
        "{msg}"
    );
}

// ---- rayon's names: the same types ----

#[test]
fn rayons_names_are_heists_types() {
    // Each conversion is the identity: the aliases name the same types.
    fn builder(b: heist::ThreadPoolBuilder) -> heist::PoolBuilder {
        b
    }
    fn pool(p: heist::Pool) -> heist::ThreadPool {
        p
    }
    fn error(e: heist::ThreadPoolBuildError) -> BuildError {
        e
    }
    // heist's options and rayon's on one builder, rayon's methods and heist's on one pool.
    let p = pool(
        builder(heist::ThreadPoolBuilder::new().num_threads(3))
            .scheduler(Scheduler::Relay)
            .deque_capacity(64)
            .thread_name(|i| format!("i25names{i}"))
            .build()
            .unwrap(),
    );
    assert_eq!((p.workers(), p.current_num_threads()), (3, 3));
    assert_eq!(p.scheduler(), Scheduler::Relay);
    assert_eq!(p.install(heist::current_num_threads), 3);
    assert_eq!(p.run(|w| fib(w, 15)), 610);
    let n = Arc::new(AtomicUsize::new(0));
    for _ in 0..10 {
        let n = Arc::clone(&n);
        p.spawn(move || {
            n.fetch_add(1, SeqCst);
        });
    }
    p.barrier();
    assert_eq!(n.load(SeqCst), 10);
    let e = error(Pool::builder().workers(0).build().unwrap_err());
    assert_eq!(e, BuildError::ZeroWorkers);
    assert_eq!(
        BuildError::GlobalPoolAlreadyInitialized.to_string(),
        "The global thread pool has already been initialized."
    );
}

#[test]
fn num_threads_zero_is_the_default_and_workers_zero_an_error() {
    let default = Pool::builder().build().unwrap().workers();
    assert_eq!(
        Pool::builder().num_threads(0).build().unwrap().workers(),
        default
    );
    let zero = heist::ThreadPoolBuilder::new().workers(0).build();
    assert_eq!(zero.unwrap_err(), BuildError::ZeroWorkers);
    // The last call wins.
    let p = Pool::builder().workers(0).num_threads(2).build().unwrap();
    assert_eq!(p.workers(), 2);
    let p = Pool::builder().num_threads(0).workers(3).build().unwrap();
    assert_eq!(p.workers(), 3);
    let e = Pool::builder()
        .num_threads(2)
        .workers(0)
        .build()
        .unwrap_err();
    assert_eq!(e, BuildError::ZeroWorkers);
}

#[test]
fn build_global_twice_is_rayons_error() {
    run_child("global_twice", &[]);
}

// ---- the global pool's environment, in child processes ----

/// Tells the child test which scenario to check.
const CHILD_VAR: &str = "HEIST_POOL_TEST_CHILD";
const CHILD_TEST: &str = "child_global_pool_from_env";

/// Re-runs this test binary with only `CHILD_TEST`, in scenario `mode`, with `env` as the
/// only `HEIST_*` settings, and checks that the child ran and passed.
fn run_child(mode: &str, env: &[(&str, &str)]) {
    let out = support::run_child(CHILD_TEST, CHILD_VAR, mode, env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "child {mode} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains(&format!("CHILD-OK {mode}")),
        "child {mode} did not run its checks:\n{stdout}\n{stderr}"
    );
}

/// The child side of the environment tests; it does nothing unless started by
/// `run_child`.
#[test]
#[ignore = "run in a child process by the HEIST_WORKERS / HEIST_SCHEDULER tests"]
fn child_global_pool_from_env() {
    let Ok(mode) = std::env::var(CHILD_VAR) else {
        return;
    };
    match mode.as_str() {
        "bad_workers" => expect_broken_global(
            BuildError::BadWorkersVar("abc".to_string()),
            &["HEIST_WORKERS", "abc"],
        ),
        "zero_workers" => expect_broken_global(
            BuildError::BadWorkersVar("0".to_string()),
            &["HEIST_WORKERS", "\"0\""],
        ),
        "bad_scheduler" => expect_broken_global(
            BuildError::UnknownScheduler("bogus".to_string()),
            &["HEIST_SCHEDULER", "bogus"],
        ),
        "global_twice" => {
            let first = heist::ThreadPoolBuilder::new()
                .num_threads(2)
                .build_global();
            assert_eq!(first, Ok(()));
            assert_eq!(heist::current_num_threads(), 2);
            for again in [
                heist::ThreadPoolBuilder::new().build_global(),
                Pool::builder().workers(1).build_global(),
            ] {
                let e = again.unwrap_err();
                assert_eq!(e, BuildError::GlobalPoolAlreadyInitialized);
                assert_eq!(
                    e.to_string(),
                    "The global thread pool has already been initialized."
                );
            }
            assert_eq!(heist::join(|| fib_tls(12), || 1), (144, 1));
        }
        "configured" => {
            let g = heist::global().expect("the global pool starts");
            assert_eq!(g.workers(), 3);
            assert_eq!(g.scheduler(), Scheduler::Relay);
            let (a, b) = heist::join(thread_name, thread_name);
            assert!(
                a.starts_with("heist-") && b.starts_with("heist-"),
                "{a} {b}"
            );
            assert_eq!(heist::join(|| fib_tls(15), || 1), (610, 1));
            let pool = Pool::builder().build().unwrap();
            assert_eq!((pool.workers(), pool.scheduler()), (3, Scheduler::Relay));
        }
        other => panic!("unknown child mode {other}"),
    }
    println!("CHILD-OK {mode}");
}

/// In a child whose environment is bad: `global()` reports `err`, `heist::join` and
/// `heist::scope` off the pool panic with a message containing all of `words`, and the
/// builder reports the same error unless told explicitly what to do.
fn expect_broken_global(err: BuildError, words: &[&str]) {
    assert_eq!(heist::global().unwrap_err(), err);
    let msg = support::catching(|| heist::join(|| 1, || 2)).unwrap_err();
    assert!(words.iter().all(|w| msg.contains(w)), "join: {msg}");
    let msg = support::catching(|| heist::scope(|_| ())).unwrap_err();
    assert!(words.iter().all(|w| msg.contains(w)), "scope: {msg}");
    assert_eq!(heist::global().unwrap_err(), err, "a second look");
    assert_eq!(Pool::builder().build().unwrap_err(), err);
    let pool = Pool::builder()
        .workers(2)
        .scheduler(Scheduler::Lace)
        .build()
        .expect("explicit settings override the environment");
    assert_eq!(pool.run(|w| fib(w, 12)), 144);
}

#[test]
fn unparsable_heist_workers_is_an_error_naming_it() {
    run_child("bad_workers", &[("HEIST_WORKERS", "abc")]);
}

#[test]
fn zero_heist_workers_is_an_error() {
    run_child("zero_workers", &[("HEIST_WORKERS", "0")]);
}

#[test]
fn unknown_heist_scheduler_is_an_error_naming_it() {
    run_child("bad_scheduler", &[("HEIST_SCHEDULER", "bogus")]);
}

#[test]
fn heist_workers_and_scheduler_configure_the_global_pool() {
    run_child(
        "configured",
        &[("HEIST_WORKERS", " 3 "), ("HEIST_SCHEDULER", "Relay")],
    );
}

// ---- thread names and stack sizes ----

/// The size of the mapping in /proc/self/maps that contains `addr`.
fn mapping_size(addr: usize) -> Option<usize> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|l| {
        let range = l.split_whitespace().next()?;
        let (lo, hi) = range.split_once('-')?;
        let lo = usize::from_str_radix(lo, 16).ok()?;
        let hi = usize::from_str_radix(hi, 16).ok()?;
        (lo <= addr && addr < hi).then_some(hi - lo)
    })
}

/// Recurses until the frames below `top` span `bytes`; returns the depth reached.
fn use_stack(top: usize, bytes: usize) -> usize {
    let frame = std::hint::black_box([1u8; 512]);
    let here = std::hint::black_box(&frame) as *const [u8; 512] as usize;
    if top - here >= bytes {
        return 0;
    }
    1 + use_stack(top, bytes) + usize::from(frame[here % 512] - 1)
}

#[test]
fn thread_name_and_stack_size_are_applied() {
    const STACK: usize = 24 << 20;
    for s in [Scheduler::Lace, Scheduler::Relay] {
        let pool = Pool::builder()
            .workers(3)
            .scheduler(s)
            .thread_name(|i| format!("named-{i}"))
            .stack_size(STACK)
            .build()
            .unwrap();
        let (name, index, stack) = pool.run(|w| {
            let local = 0u8;
            let stack = mapping_size(std::hint::black_box(&local) as *const u8 as usize);
            (thread_name(), w.index(), stack)
        });
        assert_eq!(name, format!("named-{index}"), "{s:?}");
        let stack = stack.expect("the worker's stack is in /proc/self/maps");
        assert!(
            stack >= STACK,
            "{s:?}: a {stack}-byte stack for a {STACK}-byte request"
        );
        // 12 MiB of frames: far past the 2 MiB default of spawned threads.
        let depth = pool.run(|_| {
            let top = 0u8;
            use_stack(std::hint::black_box(&top) as *const u8 as usize, 12 << 20)
        });
        assert!(depth > 1000, "{s:?}: {depth} frames");
        // Every worker that runs a task has its name.
        let names = Mutex::new(BTreeSet::new());
        pool.run(|w| {
            w.scope(|sc| {
                for _ in 0..64 {
                    sc.spawn(|_| {
                        fib_tls(12);
                        names.lock().unwrap().insert(thread_name());
                    });
                }
            })
        });
        for n in names.into_inner().unwrap() {
            assert!(
                ["named-0", "named-1", "named-2"].contains(&n.as_str()),
                "{s:?}: {n}"
            );
        }
    }
}

// ---- callers outside the pool ----

/// Many threads outside the pool wait on their roots at once: roots that end before the
/// caller parks, roots that end after, and roots that fork. Each caller also parks its
/// own thread between calls, as user code may: a wake-up meant for a park of the latch
/// may end such a park early, which `park`'s contract allows, and must not end a later
/// wait on a latch before its root is done. A lost wake-up leaves a caller parked: the
/// test fails after 120 s.
#[test]
fn many_callers_outside_wait_on_their_roots() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        callers_outside_wait_on_their_roots();
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(Duration::from_secs(120))
        .expect("a caller outside the pool was never woken");
}

fn callers_outside_wait_on_their_roots() {
    for scheduler in [Scheduler::Lace, Scheduler::Relay] {
        for workers in [2, 16] {
            let pool = Pool::builder()
                .workers(workers)
                .scheduler(scheduler)
                .build()
                .unwrap();
            std::thread::scope(|s| {
                for caller in 0..8u64 {
                    let pool = &pool;
                    s.spawn(move || {
                        for i in 0..300u64 {
                            let n = caller * 1000 + i;
                            let got = match i % 3 {
                                0 => pool.run(|_| n),
                                1 => pool.run(|_| {
                                    std::thread::sleep(Duration::from_micros(200));
                                    n
                                }),
                                _ => pool.run(|w| fib(w, 12) + n),
                            };
                            let want = if i % 3 == 2 { fib_seq(12) + n } else { n };
                            assert_eq!(got, want, "caller {caller}, call {i}");
                            std::thread::park_timeout(Duration::from_micros(1));
                        }
                    });
                }
            });
        }
    }
}

// ---- scope ----

fn pools() -> Vec<Pool> {
    [Scheduler::Lace, Scheduler::Relay]
        .into_iter()
        .flat_map(|s| [1, 4].map(|n| Pool::builder().workers(n).scheduler(s).build().unwrap()))
        .collect()
}

#[test]
fn scope_tasks_borrow_from_the_stack() {
    for pool in pools() {
        let input: Vec<u64> = (0..200).collect();
        let mut out = vec![0u64; 200];
        let total = AtomicUsize::new(0);
        pool.run(|w| {
            w.scope(|s| {
                for (x, o) in input.iter().zip(out.iter_mut()) {
                    let total = &total;
                    s.spawn(move |_| {
                        *o = x * x;
                        total.fetch_add(*x as usize, SeqCst);
                    });
                }
            })
        });
        assert!(
            out.iter().enumerate().all(|(i, &o)| o == (i * i) as u64),
            "{pool:?}"
        );
        assert_eq!(total.load(SeqCst), 199 * 200 / 2, "{pool:?}");
    }
}

fn spawn_tree<'s>(s: &heist::Scope<'s>, depth: u32, count: &'s AtomicUsize) {
    count.fetch_add(1, SeqCst);
    if depth > 0 {
        for _ in 0..2 {
            s.spawn(move |s| spawn_tree(s, depth - 1, count));
        }
    }
}

#[test]
fn scope_tasks_spawn_more_tasks() {
    for pool in pools() {
        let count = AtomicUsize::new(0);
        let r = pool.run(|w| {
            w.scope(|s| {
                spawn_tree(s, 8, &count);
                "body result"
            })
        });
        assert_eq!(r, "body result");
        assert_eq!(count.load(SeqCst), (1 << 9) - 1, "{pool:?}");
    }
}

#[test]
fn a_panic_in_a_spawned_task_is_raised_at_scope_end_after_its_siblings() {
    for pool in pools() {
        let done = AtomicUsize::new(0);
        let r = support::catching(|| {
            pool.run(|w| {
                w.scope(|s| {
                    for i in 0..20 {
                        let done = &done;
                        s.spawn(move |_| {
                            if i == 7 {
                                panic!("spawned task 7 failed");
                            }
                            fib_tls(14 + i % 3);
                            done.fetch_add(1, SeqCst);
                        });
                    }
                })
            })
        });
        assert_eq!(r, Err("spawned task 7 failed".to_string()), "{pool:?}");
        assert_eq!(
            done.load(SeqCst),
            19,
            "{pool:?}: siblings finished before the re-raise"
        );
        assert_eq!(pool.run(|w| fib(w, 15)), 610, "{pool:?} after the panic");
    }
}

#[test]
fn a_panic_in_the_scope_body_is_raised_after_the_spawned_tasks() {
    for pool in pools() {
        let done = AtomicUsize::new(0);
        let r = support::catching(|| {
            pool.run(|w| {
                w.scope(|s| {
                    for i in 0..10 {
                        let done = &done;
                        s.spawn(move |_| {
                            fib_tls(14 + i % 3);
                            done.fetch_add(1, SeqCst);
                        });
                    }
                    panic!("scope body failed");
                })
            })
        });
        assert_eq!(r, Err("scope body failed".to_string()), "{pool:?}");
        assert_eq!(done.load(SeqCst), 10, "{pool:?}");
        // The body's panic wins over a spawned task's.
        let r = support::catching(|| {
            pool.run(|w| {
                w.scope(|s| {
                    s.spawn(|_| panic!("spawned"));
                    panic!("body");
                })
            })
        });
        assert_eq!(r, Err("body".to_string()), "{pool:?}");
        assert_eq!(pool.run(|w| fib(w, 15)), 610, "{pool:?} after the panic");
    }
}

#[test]
fn heist_join_and_scope_off_a_worker_use_the_global_pool() {
    let (a, b) = heist::join(thread_name, thread_name);
    assert!(
        a.starts_with("heist-") && b.starts_with("heist-"),
        "{a} {b}"
    );
    assert_eq!(heist::join(|| fib_tls(16), || fib_tls(14)), (987, 377));
    let mut v = vec![0usize; 16];
    let names = Mutex::new(BTreeSet::new());
    heist::scope(|s| {
        for (i, x) in v.iter_mut().enumerate() {
            let names = &names;
            s.spawn(move |_| {
                *x = i + 1;
                names.lock().unwrap().insert(thread_name());
            });
        }
    });
    assert_eq!(v, (1..=16).collect::<Vec<_>>());
    let names = names.into_inner().unwrap();
    assert!(names.iter().all(|n| n.starts_with("heist-")), "{names:?}");
}

#[test]
fn heist_join_and_scope_on_a_worker_stay_on_its_pool() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        let pool = Pool::builder()
            .workers(3)
            .scheduler(s)
            .thread_name(|i| format!("onw-{i}"))
            .build()
            .unwrap();
        let names = Mutex::new(BTreeSet::new());
        let (ab, sum) = pool.run(|_| {
            let ab = heist::join(thread_name, thread_name);
            let mut parts = [0u64; 8];
            heist::scope(|sc| {
                for (i, p) in parts.iter_mut().enumerate() {
                    let names = &names;
                    sc.spawn(move |_| {
                        *p = fib_tls(10 + i as u64);
                        names.lock().unwrap().insert(thread_name());
                    });
                }
            });
            (ab, parts.iter().sum::<u64>())
        });
        assert!(
            ab.0.starts_with("onw-") && ab.1.starts_with("onw-"),
            "{s:?} {ab:?}"
        );
        assert_eq!(sum, (10..18).map(fib_seq).sum::<u64>());
        let names = names.into_inner().unwrap();
        assert!(
            names.iter().all(|n| n.starts_with("onw-")),
            "{s:?} {names:?}"
        );
    }
}

// ---- idle CPU ----

/// The /proc/self/task folders of this process's threads whose name starts with `prefix`.
fn threads_named(prefix: &str) -> Vec<std::path::PathBuf> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .flatten()
        .map(|t| t.path())
        .filter(|t| {
            let comm = std::fs::read_to_string(t.join("comm")).unwrap_or_default();
            comm.trim_end().starts_with(prefix)
        })
        .collect()
}

/// The number of this process's threads whose name starts with `prefix`, and their total
/// CPU time (from /proc/self/task/*/schedstat, in nanoseconds).
fn cpu_of_threads(prefix: &str) -> (usize, u64) {
    let cpu = threads_named(prefix).into_iter().filter_map(|t| {
        let stat = std::fs::read_to_string(t.join("schedstat")).unwrap_or_default();
        stat.split_whitespace().next()?.parse::<u64>().ok()
    });
    cpu.fold((0, 0), |(n, ns), v| (n + 1, ns + v))
}

#[test]
fn an_idle_pool_uses_almost_no_cpu() {
    for (s, prefix) in [(Scheduler::Lace, "idleL-"), (Scheduler::Relay, "idleR-")] {
        let pool = Pool::builder()
            .workers(8)
            .scheduler(s)
            .thread_name(move |i| format!("{prefix}{i}"))
            .build()
            .unwrap();
        for _ in 0..3 {
            assert_eq!(pool.run(|w| fib(w, 20)), 6765);
            pool.run(|w| {
                w.scope(|sc| {
                    for _ in 0..32 {
                        sc.spawn(|_| assert_eq!(fib_tls(12), 144));
                    }
                })
            });
        }
        std::thread::sleep(Duration::from_millis(300));
        let (n0, before) = cpu_of_threads(prefix);
        std::thread::sleep(Duration::from_millis(500));
        let (n1, after) = cpu_of_threads(prefix);
        assert_eq!(
            (n0, n1),
            (8, 8),
            "{s:?}: the pool's threads in /proc/self/task"
        );
        let used_ms = (after - before) as f64 / 1e6;
        assert!(
            used_ms < 30.0,
            "{s:?}: the idle pool used {used_ms:.1} ms of CPU in 500 ms"
        );
        drop(pool);
    }
}

/// The voluntary context switches (blocking waits) of the thread of this process named
/// `name`, from /proc/self/task/*/status, once it has its name.
fn blocked_waits_of(name: &str) -> u64 {
    for _ in 0..1000 {
        if let [t] = &threads_named(name)[..] {
            let status = std::fs::read_to_string(t.join("status")).unwrap_or_default();
            return status
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse().ok())
                .expect("voluntary_ctxt_switches in /proc/self/task/*/status");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("not one thread named {name} after a second");
}

/// A relay thief whose steal request waits at a victim that neither pushes nor pops (as
/// in a loop too short to split) spins briefly, then sleeps until the answer wakes it,
/// rather than yielding the core away from the victim.
///
/// A thief that spun or yielded through the victim's 2 ms would use about as much CPU as
/// the victim and block at most a few times. On a loaded machine the scheduler's own
/// costs land on the thief's wake-ups (up to half the victim's CPU was seen), so a round
/// of 100 calls counts if the thief blocked in most of them and used under half the
/// victim's CPU, and the test takes the best of three rounds.
#[test]
fn a_relay_thief_awaiting_an_answer_sleeps() {
    let pool = Pool::builder()
        .workers(2)
        .scheduler(Scheduler::Relay)
        .thread_name(|i| format!("awaitR-{i}"))
        .build()
        .unwrap();
    let busy = |_: &Worker| {
        let t = std::time::Instant::now();
        while t.elapsed() < Duration::from_millis(2) {
            std::hint::spin_loop();
        }
    };
    let names = ["awaitR-0", "awaitR-1"];
    let sample = || {
        names.map(|n| {
            let blocked = blocked_waits_of(n);
            (cpu_of_threads(n).1, blocked)
        })
    };
    let mut rounds = Vec::new();
    for _ in 0..3 {
        let before = sample();
        for _ in 0..100 {
            pool.run(busy);
        }
        let after = sample();
        let used = [0, 1].map(|i| (after[i].0 - before[i].0, after[i].1 - before[i].1));
        let (victim, thief) = if used[0].0 >= used[1].0 {
            (used[0], used[1])
        } else {
            (used[1], used[0])
        };
        if thief.0 * 2 < victim.0 && thief.1 >= 50 {
            return;
        }
        rounds.push(format!(
            "the thief used {} ns of CPU and blocked {} times while the victim ran {} ns",
            thief.0, thief.1, victim.0
        ));
    }
    panic!("in each of three rounds of 100 calls: {rounds:#?}");
}

// ---- drop ----

thread_local! {
    /// Set on a worker the first time it runs a task of `drop_joins_the_worker_threads`;
    /// its destructor runs when the thread exits.
    static EXIT: RefCell<Option<ExitGuard>> = const { RefCell::new(None) };
}

struct ExitGuard(Arc<AtomicUsize>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

fn mark_thread(seen: &AtomicUsize, exited: &Arc<AtomicUsize>) {
    EXIT.with(|e| {
        let mut e = e.borrow_mut();
        if e.is_none() {
            *e = Some(ExitGuard(Arc::clone(exited)));
            seen.fetch_add(1, SeqCst);
        }
    });
}

/// With no task left and no start or exit handler, the drop joins the threads, under
/// heist's names and rayon's (a panic handler runs nothing on an idle thread).
#[test]
fn dropping_a_pool_joins_its_threads() {
    for cycle in 0..50 {
        let s = if cycle % 2 == 0 {
            Scheduler::Lace
        } else {
            Scheduler::Relay
        };
        let seen = AtomicUsize::new(0);
        let exited = Arc::new(AtomicUsize::new(0));
        let pool = match cycle % 4 < 2 {
            true => Pool::builder().workers(4).scheduler(s).build().unwrap(),
            false => heist::ThreadPoolBuilder::new()
                .num_threads(4)
                .scheduler(s)
                .panic_handler(|_| ())
                .build()
                .unwrap(),
        };
        pool.run(|w| {
            mark_thread(&seen, &exited);
            w.scope(|sc| {
                for _ in 0..16 {
                    sc.spawn(|_| {
                        mark_thread(&seen, &exited);
                        fib_tls(10);
                    });
                }
            })
        });
        let seen = seen.load(SeqCst);
        assert!(
            (1..=4).contains(&seen),
            "cycle {cycle}: {seen} threads ran tasks"
        );
        drop(pool);
        // Thread-local destructors run before a thread can be joined.
        assert_eq!(
            exited.load(SeqCst),
            seen,
            "cycle {cycle} ({s:?}): threads still alive"
        );
    }
}

/// A pool with a start or an exit handler, built under heist's name, drops without
/// waiting for them, as rayon's does: here they wait for the dropping thread, which
/// goes on to release them only once the drop has returned (a drop that waited would
/// never return). The handlers then run to the end on every worker.
#[test]
fn dropping_a_pool_does_not_wait_for_its_start_or_exit_handlers() {
    let n = 3;
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for exit in [false, true] {
            let gate = Arc::new(std::sync::Barrier::new(n + 1));
            let ended = Arc::new(AtomicUsize::new(0));
            let (g, e) = (Arc::clone(&gate), Arc::clone(&ended));
            let handler = move |_| {
                g.wait();
                e.fetch_add(1, SeqCst);
            };
            let b = Pool::builder().workers(n).scheduler(s);
            let pool = match exit {
                false => b.start_handler(handler).build().unwrap(),
                true => b.exit_handler(handler).build().unwrap(),
            };
            if exit {
                assert_eq!(pool.run(|w| fib(w, 10)), 55);
            }
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                drop(pool);
                tx.send(()).unwrap();
            });
            let dropped = rx.recv_timeout(Duration::from_secs(60));
            assert!(
                dropped.is_ok(),
                "{s:?}: the drop waited for the {} handlers",
                if exit { "exit" } else { "start" }
            );
            gate.wait();
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while ended.load(SeqCst) < n {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{s:?}: a handler never ended"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

/// The `Cpus_allowed_list` of each of this process's threads whose name starts with
/// `prefix`, and of the calling thread.
fn cpus_of_threads(prefix: &str) -> (Vec<String>, String) {
    let allowed = |status: String| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .map(|v| v.trim().to_string())
            .expect("Cpus_allowed_list in status")
    };
    let mut lists = Vec::new();
    for t in std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .flatten()
    {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim_end().starts_with(prefix) {
            lists.push(allowed(
                std::fs::read_to_string(t.path().join("status")).unwrap_or_default(),
            ));
        }
    }
    let me = allowed(std::fs::read_to_string("/proc/thread-self/status").expect("status"));
    (lists, me)
}

/// `cpus_of_threads(prefix)` once `n` threads carry the prefix and each list passes `ok`,
/// or as it is after 20 s.
fn threads_settled(prefix: &str, n: usize, ok: impl Fn(&String) -> bool) -> (Vec<String>, String) {
    let started = std::time::Instant::now();
    loop {
        let (lists, me) = cpus_of_threads(prefix);
        let done = lists.len() == n && lists.iter().all(&ok);
        if done || started.elapsed() > std::time::Duration::from_secs(20) {
            return (lists, me);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn pinned_workers_each_keep_to_one_cpu_and_others_are_free() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        let pinned = Pool::builder()
            .workers(3)
            .scheduler(s)
            .thread_name(|i| format!("heist-pin-{i}"))
            .pin_workers(true)
            .build()
            .unwrap();
        let free = Pool::builder()
            .workers(2)
            .scheduler(s)
            .thread_name(|i| format!("heist-free-{i}"))
            .build()
            .unwrap();
        assert_eq!(pinned.run(|w| fib(w, 20)), 6765);
        assert_eq!(free.run(|w| fib(w, 20)), 6765);
        // A worker names itself when its thread starts and pins itself right after, which
        // may be later than the runs above.
        let (lists, me) = threads_settled("heist-pin-", 3, |l| l.parse::<usize>().is_ok());
        assert_eq!(lists.len(), 3, "{s:?}");
        for l in &lists {
            assert!(
                l.parse::<usize>().is_ok(),
                "{s:?}: a pinned worker may run on {l}"
            );
        }
        let (lists, _) = threads_settled("heist-free-", 2, |l| *l == me);
        assert_eq!(lists, vec![me.clone(); 2], "{s:?}");
        drop(pinned);
    }
}
