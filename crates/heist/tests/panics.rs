//! Panics on the task paths, on both schedulers: payloads whose drop panics, detached
//! panics that nobody joins, a pool dropped inside its own task, a builder that panics
//! half-way, forgotten promises. A wrong runtime crashes, hangs or frees a frame that a
//! task still uses here, so every case runs in a child process (this binary again, with
//! `CASE` naming the case) that is killed after `TIMEOUT`: a crash or a hang fails the
//! case instead of the whole suite. Linux only: the cases count worker threads by name
//! in `/proc/self/task`.

// Promise handles are dropped and forgotten on purpose: the scope must finish their tasks
// whether or not the handle type has drop glue.
#![allow(clippy::drop_non_drop, clippy::forget_non_drop)]
#![cfg(target_os = "linux")]

mod support;

use heist::{Pool, Scheduler};
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::thread::sleep;
use std::time::{Duration, Instant};
use support::{fib, threads_named, wait_threads};

const CASE: &str = "HEIST_PANICS_CASE";
const TIMEOUT: Duration = Duration::from_secs(60);

/// A panic payload that panics again when dropped: safe code may throw it.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("heist-test: a Bomb payload was dropped");
    }
}

/// Disposes of a payload this test received: a `Bomb` is leaked, not dropped.
fn defuse(p: Box<dyn Any + Send>) {
    if p.is::<Bomb>() {
        std::mem::forget(p);
    }
}

fn is_plain(p: &(dyn Any + Send), msg: &str) -> bool {
    p.downcast_ref::<&str>() == Some(&msg)
}

fn scheduler(tag: &str) -> Scheduler {
    match tag {
        "lace" => Scheduler::Lace,
        "relay" => Scheduler::Relay,
        _ => panic!("unknown scheduler tag {tag}"),
    }
}

/// Runs `case` in a child process and fails if it fails, crashes or hangs.
fn check(case: &str) {
    let out = run_child(case);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("heist-case-done {case}\n")),
        "case {case} failed ({}); stdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `case` in a child process and fails unless heist aborted it with a message.
fn check_aborts(case: &str) {
    use std::os::unix::process::ExitStatusExt;
    let out = run_child(case);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.signal() == Some(6) && stderr.contains("heist: a detached task panicked"),
        "case {case} did not abort ({}); stderr:\n{stderr}",
        out.status
    );
}

/// Runs `case` in a child process, killed if it runs longer than `TIMEOUT`.
fn run_child(case: &str) -> std::process::Output {
    let exe = std::env::current_exe().expect("the test binary");
    // Through a shell that turns core dumps off: some cases abort, on purpose or not.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -c 0; exec \"$0\" child --exact --nocapture --test-threads=1")
        .arg(exe)
        .env(CASE, case)
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the child");
    let deadline = Instant::now() + TIMEOUT;
    while child.try_wait().expect("wait for the child").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("the child's output");
            panic!(
                "case {case} hung; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("the child's output")
}

/// The child's entry: runs the case named by `CASE`, if any.
#[test]
fn child() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    let (name, tag) = case.rsplit_once('-').expect("case-scheduler");
    let s = scheduler(tag);
    match name {
        "scope_bomb" => scope_bomb(s),
        "join_bomb" => join_bomb(s),
        "run_from_other_pool_bomb" => run_from_other_pool_bomb(s),
        "detached_bombs_barrier" => detached_bombs_barrier(s),
        "drop_resumes_bomb" => drop_resumes_bomb(s, tag),
        "drop_resumes_plain" => drop_resumes_plain(s),
        "self_drop" => self_drop(s, tag),
        "thread_name_panics" => thread_name_panics(s, tag),
        "forgotten_promise" => forgotten_promise(s),
        "promises_order" => promises_order(s),
        "panic_handler" => panic_handler(s),
        "self_drop_panic_aborts" => self_drop_panic_aborts(s),
        _ => panic!("unknown case {name}"),
    }
    println!("heist-case-done {case}");
}

/// A scope task still writing to the enclosing frame while two others panic, one with a
/// `Bomb`: the scope re-raises a panic only after that task has finished. (The scope's
/// worker does not wait for the first task to start elsewhere: under relay, a worker
/// spinning in `poll` now and then never hands a queued job to a thief, at 4bfc601 too.)
fn scope_bomb(s: Scheduler) {
    let pool = Pool::builder().workers(2).scheduler(s).build().unwrap();
    let mut v = Vec::new();
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.run(|w| {
            w.scope(|sc| {
                let v = &mut v;
                sc.spawn(move |_| {
                    sleep(Duration::from_millis(300));
                    v.push(1);
                });
                sc.spawn(|_| panic::panic_any(Bomb));
                sc.spawn(|_| panic!("plain"));
            })
        })
    }));
    let p = r.expect_err("the scope re-raises a task's panic");
    assert!(p.is::<Bomb>() || is_plain(&*p, "plain"));
    defuse(p);
    assert_eq!(v, [1], "the scope returned before its task finished");
    assert_eq!(pool.run(|w| fib(w, 15)), 610);
}

/// `join` whose stolen branch runs a scope with a plain and a `Bomb` panic, which the
/// joining worker may pick up while it leapfrogs: `join` returns only once the branch
/// has written to the joining frame.
fn join_bomb(s: Scheduler) {
    let pool = Pool::builder().workers(3).scheduler(s).build().unwrap();
    let mut buf = Vec::new();
    let stolen = AtomicBool::new(false);
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.run(|w| {
            let (buf, stolen) = (&mut buf, &stolen);
            w.join(
                |w| {
                    // Bounded: under relay, a task is now and then never requested from a
                    // worker spinning in `poll` (seen at 4bfc601 too); `b` then runs inline.
                    let deadline = Instant::now() + Duration::from_secs(2);
                    while !stolen.load(SeqCst) && Instant::now() < deadline {
                        w.poll();
                        std::hint::spin_loop();
                    }
                },
                move |w| {
                    stolen.store(true, SeqCst);
                    let r = panic::catch_unwind(AssertUnwindSafe(|| {
                        w.scope(|sc| {
                            sc.spawn(|_| panic!("plain"));
                            sc.spawn(|_| panic::panic_any(Bomb));
                            sleep(Duration::from_millis(300));
                        })
                    }));
                    defuse(r.expect_err("the scope re-raises its tasks' panic"));
                    buf.push(1);
                },
            )
        })
    }));
    r.expect("join returns normally: its branch caught its own panic");
    assert_eq!(buf, [1], "join returned before its stolen branch finished");
    assert_eq!(pool.run(|w| fib(w, 15)), 610);
}

/// A worker of pool `a` waits in `b.run` while `a` holds panicking scope tasks (one with
/// a `Bomb`) it may pick up meanwhile; the waiting task's frame must outlive `b`'s root.
fn run_from_other_pool_bomb(s: Scheduler) {
    let a = Pool::builder().workers(2).scheduler(s).build().unwrap();
    let b = Pool::builder().workers(1).scheduler(s).build().unwrap();
    let mut v = Vec::new();
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        a.run(|w| {
            w.scope(|sc| {
                sc.spawn(|_| panic!("plain"));
                sc.spawn(|_| panic::panic_any(Bomb));
                sc.spawn(|_| panic::panic_any(Bomb));
                let v = &mut v;
                b.run(move |_| {
                    sleep(Duration::from_millis(200));
                    v.push(1);
                });
            })
        })
    }));
    defuse(r.expect_err("the scope re-raises a task's panic"));
    assert_eq!(v, [1]);
    assert_eq!(a.run(|w| fib(w, 15)), 610);
    assert_eq!(b.run(|w| fib(w, 15)), 610);
}

/// Detached panics, two with a `Bomb`, then a barrier: it re-raises one of them, and the
/// pool stays usable (at 4bfc601 a worker died and the barrier hung).
fn detached_bombs_barrier(s: Scheduler) {
    let pool = Pool::builder().workers(2).scheduler(s).build().unwrap();
    pool.spawn_detached(|_| panic!("plain"));
    pool.spawn_detached(|_| panic::panic_any(Bomb));
    pool.spawn_detached(|_| panic::panic_any(Bomb));
    let p = panic::catch_unwind(AssertUnwindSafe(|| pool.barrier()))
        .expect_err("the barrier re-raises a detached panic");
    assert!(p.is::<Bomb>() || is_plain(&*p, "plain"));
    defuse(p);
    pool.barrier();
    let n = Arc::new(AtomicUsize::new(0));
    for _ in 0..8 {
        let n = Arc::clone(&n);
        pool.spawn_detached(move |w| {
            n.fetch_add(fib(w, 10) as usize, SeqCst);
        });
    }
    pool.barrier();
    assert_eq!(n.load(SeqCst), 8 * 55);
    assert_eq!(pool.run(|w| fib(w, 15)), 610);
}

/// `Pool::drop` with a detached `Bomb` not yet seen by a barrier: the drop hands the
/// payload to its caller after stopping the workers.
fn drop_resumes_bomb(s: Scheduler, tag: &str) {
    let prefix = format!("i8db{tag}");
    let p = prefix.clone();
    let pool = Pool::builder()
        .workers(1)
        .scheduler(s)
        .thread_name(move |i| format!("{p}{i}"))
        .build()
        .unwrap();
    wait_threads(&prefix, 1);
    panic_before_the_drop(&pool, || panic::panic_any(Bomb));
    let p = panic::catch_unwind(AssertUnwindSafe(|| drop(pool)))
        .expect_err("Pool::drop re-raises the detached panic");
    assert!(p.is::<Bomb>(), "the payload is the Bomb itself");
    defuse(p);
    assert_eq!(threads_named(&prefix), 0, "Pool::drop left workers running");
}

/// Spawns a detached task running `f` and runs it at once, in a root on `pool`'s only
/// worker (no thief can take it), so that its panic is kept before the pool is dropped:
/// the drop does not wait for tasks still to run.
fn panic_before_the_drop(pool: &Pool, f: fn()) {
    pool.run(|w| {
        w.spawn_detached(move |_| f());
        assert_eq!(heist::yield_local(), Some(heist::Yield::Executed));
    });
}

/// A detached panic that no barrier saw is re-raised by `Pool::drop`.
fn drop_resumes_plain(s: Scheduler) {
    let pool = Pool::builder().workers(1).scheduler(s).build().unwrap();
    panic_before_the_drop(&pool, || panic!("not lost"));
    let p = panic::catch_unwind(AssertUnwindSafe(|| drop(pool)))
        .expect_err("Pool::drop re-raises the detached panic");
    assert!(is_plain(&*p, "not lost"));
}

/// The last handle of a pool dropped inside one of its own detached tasks, with four
/// detached tasks queued behind it: no deadlock, all four run, and the workers stop.
fn self_drop(s: Scheduler, tag: &str) {
    let prefix = format!("i8sd{tag}");
    let p = prefix.clone();
    let pool = Arc::new(
        Pool::builder()
            .workers(2)
            .scheduler(s)
            .thread_name(move |i| format!("{p}{i}"))
            .build()
            .unwrap(),
    );
    let ran = Arc::new(AtomicUsize::new(0));
    let main_dropped = Arc::new(AtomicBool::new(false));
    let (last, r, d) = (
        Arc::clone(&pool),
        Arc::clone(&ran),
        Arc::clone(&main_dropped),
    );
    pool.spawn_detached(move |w| {
        while !d.load(SeqCst) {
            std::hint::spin_loop();
        }
        for _ in 0..4 {
            let r = Arc::clone(&r);
            w.spawn_detached(move |w| {
                sleep(Duration::from_millis(50));
                r.fetch_add(fib(w, 12) as usize / 144, SeqCst);
            });
        }
        drop(last);
    });
    drop(pool);
    main_dropped.store(true, SeqCst);
    let deadline = Instant::now() + Duration::from_secs(30);
    while ran.load(SeqCst) < 4 {
        assert!(Instant::now() < deadline, "queued detached tasks were lost");
        sleep(Duration::from_millis(5));
    }
    wait_threads(&prefix, 0);
    assert_eq!(ran.load(SeqCst), 4);
}

/// A `thread_name` closure that panics for worker 2: `build` panics, and the workers it
/// started stop.
fn thread_name_panics(s: Scheduler, tag: &str) {
    let prefix = format!("i8tn{tag}");
    let p = prefix.clone();
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        Pool::builder()
            .workers(4)
            .scheduler(s)
            .thread_name(move |i| {
                assert_ne!(i, 2, "no name for worker 2");
                format!("{p}{i}")
            })
            .build()
    }));
    assert!(r.is_err(), "build re-raises the closure's panic");
    // Workers left running would show up as soon as they have named themselves.
    let until = Instant::now() + Duration::from_millis(500);
    while Instant::now() < until {
        assert_eq!(threads_named(&prefix), 0, "build left workers running");
        sleep(Duration::from_millis(5));
    }
}

/// A promise whose handle is forgotten: its panic reaches the caller of `promises`, at
/// every deque capacity (at capacity 1 the task runs at spawn).
fn forgotten_promise(s: Scheduler) {
    for cap in [1, 2, 1 << 14] {
        for n in [1, 2] {
            let pool = support::pool(s, n, cap);
            let r = pool.run(|w| {
                panic::catch_unwind(AssertUnwindSafe(|| {
                    w.promises(|f| std::mem::forget(f.spawn(|_| -> u32 { panic!("forgotten") })))
                }))
            });
            let p = r.expect_err("the forgotten promise's panic reaches `promises`' caller");
            assert!(is_plain(&*p, "forgotten"), "capacity {cap}, {n} workers");
            let r = pool.run(|w| {
                panic::catch_unwind(AssertUnwindSafe(|| {
                    w.promises(|f| {
                        std::mem::forget(f.spawn(|_| -> u32 { panic::panic_any(Bomb) }));
                        let a = f.spawn(|_| 1u32);
                        a.join()
                    })
                }))
            });
            let p = r.expect_err("the forgotten promise's panic reaches `promises`' caller");
            assert!(p.is::<Bomb>(), "capacity {cap}, {n} workers");
            defuse(p);
            assert_eq!(pool.run(|w| fib(w, 12)), 144);
        }
    }
}

/// Promises joined in any order give the right results at every deque capacity, and a
/// panic of one joined out of order reaches its joiner while the others finish.
fn promises_order(s: Scheduler) {
    for cap in [1, 2, 3, 64, 1 << 14] {
        let pool = support::pool(s, 2, cap);
        for order in 0..6usize {
            let sum = pool.run(|w| {
                w.promises(|f| {
                    let mut hs: Vec<_> = (0..3u64)
                        .map(|i| Some(f.spawn(move |w| fib(w, 10 + i))))
                        .collect();
                    let perm = [
                        [0, 1, 2],
                        [0, 2, 1],
                        [1, 0, 2],
                        [1, 2, 0],
                        [2, 0, 1],
                        [2, 1, 0],
                    ];
                    perm[order]
                        .iter()
                        .map(|&i| hs[i].take().expect("joined once").join())
                        .sum::<u64>()
                })
            });
            assert_eq!(sum, 55 + 89 + 144, "capacity {cap}, order {order}");
        }
        let ran = std::sync::atomic::AtomicUsize::new(0);
        let r = pool.run(|w| {
            panic::catch_unwind(AssertUnwindSafe(|| {
                w.promises(|f| {
                    let a = f.spawn(|_| -> u64 { panic!("oldest") });
                    let b = f.spawn(|w| {
                        ran.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        fib(w, 11)
                    });
                    a.join() + b.join()
                })
            }))
        });
        let p = r.expect_err("the oldest promise's panic reaches its joiner");
        assert!(is_plain(&*p, "oldest"), "capacity {cap}");
        assert_eq!(
            ran.into_inner(),
            1,
            "capacity {cap}: the newer promise ran once"
        );
        assert_eq!(pool.run(|w| fib(w, 12)), 144);
    }
}

/// Detached panics, `Bomb`s included, go to the builder's panic handler; a panic of the
/// handler itself reaches the barrier.
fn panic_handler(s: Scheduler) {
    let seen = Arc::new(AtomicUsize::new(0));
    let bombs = Arc::new(AtomicUsize::new(0));
    let (sn, b) = (Arc::clone(&seen), Arc::clone(&bombs));
    let pool = Pool::builder()
        .workers(2)
        .scheduler(s)
        .panic_handler(move |p| {
            sn.fetch_add(1, SeqCst);
            if p.is::<Bomb>() {
                b.fetch_add(1, SeqCst);
                defuse(p);
            } else if is_plain(&*p, "handler, panic") {
                panic!("from the handler");
            }
        })
        .build()
        .unwrap();
    for _ in 0..3 {
        pool.spawn_detached(|_| panic::panic_any(Bomb));
        pool.spawn_detached(|_| panic!("plain"));
    }
    pool.run(|w| w.spawn_detached(|_| panic!("plain")));
    pool.barrier();
    assert_eq!((seen.load(SeqCst), bombs.load(SeqCst)), (7, 3));
    pool.spawn_detached(|_| panic!("handler, panic"));
    let p = panic::catch_unwind(AssertUnwindSafe(|| pool.barrier()))
        .expect_err("the handler's own panic reaches the barrier");
    assert_eq!(p.downcast_ref::<&str>(), Some(&"from the handler"));
    pool.barrier();
    assert_eq!(pool.run(|w| fib(w, 12)), 144);
}

/// The last handle dropped inside a detached task after another detached task panicked,
/// with no panic handler: nobody can receive the panic, so the process aborts with a
/// message rather than lose it (checked by the parent, see `self_drop_panic_aborts_*`).
fn self_drop_panic_aborts(s: Scheduler) {
    let pool = Arc::new(Pool::builder().workers(2).scheduler(s).build().unwrap());
    let main_dropped = Arc::new(AtomicBool::new(false));
    let (last, d) = (Arc::clone(&pool), Arc::clone(&main_dropped));
    pool.spawn_detached(|_| panic!("nobody left to re-raise this"));
    pool.spawn_detached(move |_| {
        while !d.load(SeqCst) {
            std::hint::spin_loop();
        }
        drop(last);
    });
    drop(pool);
    main_dropped.store(true, SeqCst);
    // The abort comes from a worker; the parent's timeout bounds this wait.
    loop {
        sleep(Duration::from_secs(1));
    }
}

#[test]
fn self_drop_panic_aborts_lace() {
    check_aborts("self_drop_panic_aborts-lace");
}

#[test]
fn self_drop_panic_aborts_relay() {
    check_aborts("self_drop_panic_aborts-relay");
}

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        mod lace {
            $(#[test] fn $name() { super::check(concat!(stringify!($name), "-lace")); })*
        }
        mod relay {
            $(#[test] fn $name() { super::check(concat!(stringify!($name), "-relay")); })*
        }
    };
}

cases!(
    scope_bomb,
    join_bomb,
    run_from_other_pool_bomb,
    detached_bombs_barrier,
    drop_resumes_bomb,
    drop_resumes_plain,
    self_drop,
    thread_name_panics,
    forgotten_promise,
    promises_order,
    panic_handler,
);
