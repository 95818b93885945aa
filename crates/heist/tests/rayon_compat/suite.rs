// The same program, included once with `rt` = rayon and once with `rt` = heist (see
// `rayon_compat.rs`): every call below is spelled as a rayon user spells it. Each case
// returns a string describing what it saw, and the two crates' strings must be equal.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rt::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// A tree of scope spawns, each node adding its id.
fn tree<'a>(s: &rt::Scope<'a>, depth: u32, id: u64, sum: &'a AtomicU64) {
    sum.fetch_add(id, Relaxed);
    if depth > 0 {
        s.spawn(move |s| tree(s, depth - 1, 2 * id, sum));
        s.spawn(move |s| tree(s, depth - 1, 2 * id + 1, sum));
    }
}

fn tree_fifo<'a>(s: &rt::ScopeFifo<'a>, depth: u32, id: u64, sum: &'a AtomicU64) {
    sum.fetch_add(id, Relaxed);
    if depth > 0 {
        s.spawn_fifo(move |s| tree_fifo(s, depth - 1, 2 * id, sum));
        s.spawn_fifo(move |s| tree_fifo(s, depth - 1, 2 * id + 1, sum));
    }
}

fn global_pool() -> String {
    let first = rt::ThreadPoolBuilder::new().num_threads(3).build_global();
    let again = rt::ThreadPoolBuilder::new().num_threads(2).build_global();
    format!(
        "first {:?}, again err {}, threads {}, index {:?}",
        first.map_err(|e| e.to_string()),
        again.is_err(),
        rt::current_num_threads(),
        rt::current_thread_index()
    )
}

fn pool_identity() -> String {
    let pool = rt::ThreadPoolBuilder::new()
        .num_threads(4)
        .thread_name(|i| format!("compat-{i}"))
        .stack_size(4 << 20)
        .build()
        .unwrap();
    let inside = pool.install(|| {
        let name = std::thread::current().name().map(str::to_owned);
        (
            rt::current_num_threads(),
            rt::current_thread_index().is_some_and(|i| i < 4),
            name.is_some_and(|n| n.starts_with("compat-")),
        )
    });
    let own = pool.install(|| pool.current_thread_index().is_some());
    format!(
        "threads {} {}, outside index {:?}, inside {inside:?} {own}",
        pool.current_num_threads(),
        rt::current_num_threads(),
        pool.current_thread_index(),
    )
}

fn broadcasts() -> String {
    let pool = rt::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    let a = pool.broadcast(|cx| (cx.index(), cx.num_threads()));
    let b = pool.install(|| rt::broadcast(|cx| cx.index() * 10 + cx.num_threads()));
    let c = rt::broadcast(|cx| cx.num_threads());
    let nested = pool.install(|| pool.install(|| pool.broadcast(|cx| cx.index())));
    let boom = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.broadcast(|cx| {
            if cx.index() == 2 {
                panic!("compat: broadcast");
            }
            cx.index()
        })
    }));
    let after = pool.broadcast(|cx| cx.index()).len();
    format!("{a:?} {b:?} {c:?} {nested:?} panicked {} then {after}", boom.is_err())
}

fn joins() -> String {
    let pool = rt::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let one = rt::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let f = pool.install(|| fib(20));
    let g = pool.join(|| fib(10), || fib(11));
    let outside = rt::join_context(|cx| cx.migrated(), |cx| cx.migrated());
    let single = one.install(|| rt::join_context(|cx| cx.migrated(), |cx| cx.migrated()));
    let inside_a = pool.install(|| rt::join_context(|cx| cx.migrated(), |_| ()).0);
    let boom = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| rt::join(|| 1, || -> u64 { panic!("compat: join") }))
    }));
    format!(
        "{f} {g:?} outside {outside:?} single {single:?} inside a {inside_a} panicked {} then {}",
        boom.is_err(),
        pool.install(|| fib(12))
    )
}

fn scopes() -> String {
    let pool = rt::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let sum = &AtomicU64::new(0);
    let mut out = Vec::new();
    rt::scope(|s| tree(s, 8, 1, sum));
    out.push(sum.swap(0, Relaxed));
    pool.scope(|s| tree(s, 6, 1, sum));
    out.push(sum.swap(0, Relaxed));
    rt::scope_fifo(|s| tree_fifo(s, 7, 1, sum));
    out.push(sum.swap(0, Relaxed));
    pool.scope_fifo(|s| tree_fifo(s, 5, 1, sum));
    out.push(sum.swap(0, Relaxed));
    let local = std::rc::Rc::new(3u32); // not `Send`: in-place scopes keep `op` here
    let r = rt::in_place_scope(|s| {
        let d = *local;
        s.spawn(move |s| tree(s, d, 1, sum));
        d
    });
    out.push(sum.swap(0, Relaxed) + u64::from(r));
    let r = pool.in_place_scope(|s| {
        let d = *local + 1;
        s.spawn(move |s| tree(s, d, 1, sum));
        d
    });
    out.push(sum.swap(0, Relaxed) + u64::from(r));
    rt::in_place_scope_fifo(|s| s.spawn_fifo(|s| tree_fifo(s, 4, 1, sum)));
    out.push(sum.swap(0, Relaxed));
    pool.install(|| rt::in_place_scope(|s| tree(s, 5, 1, sum)));
    out.push(sum.swap(0, Relaxed));
    pool.in_place_scope_fifo(|s| tree_fifo(s, 3, 1, sum));
    out.push(sum.swap(0, Relaxed));
    let boom = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn(|_| panic!("compat: scope"));
            s.spawn(|s| tree(s, 4, 1, sum));
        })
    }));
    out.push(sum.swap(0, Relaxed));
    format!("{out:?} panicked {}", boom.is_err())
}

/// Receives `n` values, sorted; panics after a generous timeout.
fn collect(rx: &mpsc::Receiver<u64>, n: usize) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n)
        .map(|_| rx.recv_timeout(Duration::from_secs(60)).expect("a spawned task ran"))
        .collect();
    v.sort_unstable();
    v
}

fn spawns() -> String {
    let pool = rt::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let (tx, rx) = mpsc::channel();
    for i in 0..50 {
        let tx = tx.clone();
        pool.spawn(move || tx.send(i).unwrap());
    }
    let a = collect(&rx, 50);
    for i in 0..20 {
        let tx = tx.clone();
        pool.spawn_fifo(move || tx.send(i * 3).unwrap());
    }
    let b = collect(&rx, 20);
    for i in 0..20 {
        let (t1, t2) = (tx.clone(), tx.clone());
        rt::spawn(move || t1.send(i + 100).unwrap());
        rt::spawn_fifo(move || t2.send(i + 200).unwrap());
    }
    let c = collect(&rx, 40);
    let tx2 = tx.clone();
    pool.install(move || {
        // Spawns from a task: they go to this pool, and may spawn more.
        for i in 0..10 {
            let tx = tx2.clone();
            rt::spawn(move || {
                let tx2 = tx.clone();
                rt::spawn(move || tx2.send(i + 1000).unwrap());
                tx.send(i).unwrap();
            });
        }
    });
    let d = collect(&rx, 20);
    format!("{a:?} {b:?} {c:?} {d:?}")
}

fn panic_handlers() -> String {
    let (tx, rx) = mpsc::channel::<String>();
    let tx = Mutex::new(tx);
    let pool = rt::ThreadPoolBuilder::new()
        .num_threads(2)
        .panic_handler(move |p| {
            let msg = p.downcast_ref::<&str>().copied().unwrap_or("?").to_owned();
            tx.lock().unwrap().send(msg).unwrap();
        })
        .build()
        .unwrap();
    pool.spawn(|| panic!("compat: spawned"));
    let a = rx.recv_timeout(Duration::from_secs(60)).unwrap();
    pool.install(|| rt::spawn_fifo(|| panic!("compat: spawned from a task")));
    let b = rx.recv_timeout(Duration::from_secs(60)).unwrap();
    let ok = Arc::new(AtomicUsize::new(0));
    let ok2 = Arc::clone(&ok);
    let (done_tx, done_rx) = mpsc::channel();
    pool.spawn(move || {
        ok2.fetch_add(1, Relaxed);
        done_tx.send(()).unwrap();
    });
    done_rx.recv_timeout(Duration::from_secs(60)).unwrap();
    format!("{a} / {b} / {}", ok.load(Relaxed))
}

fn yields() -> String {
    let one = rt::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let outside = rt::yield_now();
    let inside = one.install(|| {
        let ran = Arc::new(AtomicUsize::new(0));
        let r2 = Arc::clone(&ran);
        rt::spawn(move || {
            r2.fetch_add(1, Relaxed);
        });
        let first = rt::yield_now();
        let second = rt::yield_now();
        (first, second, ran.load(Relaxed))
    });
    let own = one.install(|| one.yield_now());
    let other = one.yield_now();
    format!("{outside:?} {inside:?} {own:?} {other:?}")
}

fn errors() -> String {
    let zero_ok = rt::ThreadPoolBuilder::new().num_threads(0).build().is_ok();
    let e: Box<dyn std::error::Error> = Box::new(
        rt::ThreadPoolBuilder::new()
            .build_global()
            .expect_err("the global pool exists"),
    );
    format!("{zero_ok} {}", !e.to_string().is_empty())
}

/// A panic handler that sends each payload's message to `tx`.
fn send_panics(tx: mpsc::Sender<String>) -> impl Fn(Box<dyn std::any::Any + Send>) + Send + Sync {
    let tx = Mutex::new(tx);
    move |p| {
        let p = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned());
        tx.lock().unwrap().send(p.unwrap_or_default()).unwrap();
    }
}

/// Receives `n` values, sorted; panics after a generous timeout.
fn collect_any<T: Ord>(rx: &mpsc::Receiver<T>, n: usize) -> Vec<T> {
    let mut v: Vec<T> = (0..n)
        .map(|_| rx.recv_timeout(Duration::from_secs(60)).expect("a message came"))
        .collect();
    v.sort_unstable();
    v
}

fn spawn_broadcasts() -> String {
    let (tx, rx) = mpsc::channel();
    let t = Mutex::new(tx.clone());
    rt::spawn_broadcast(move |cx| t.lock().unwrap().send((cx.index(), cx.num_threads())).unwrap());
    let global = collect_any(&rx, 3);
    let pool = rt::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    let t = Mutex::new(tx.clone());
    pool.spawn_broadcast(move |cx| t.lock().unwrap().send((cx.index() + 10, cx.num_threads())).unwrap());
    let own = collect_any(&rx, 4);
    let t = Mutex::new(tx);
    pool.install(|| {
        rt::spawn_broadcast(move |cx| {
            let index = rt::current_thread_index();
            t.lock().unwrap().send((cx.index() + 20, index.unwrap_or(99))).unwrap()
        })
    });
    let inside = collect_any(&rx, 4);
    let (ptx, prx) = mpsc::channel();
    let (dtx, drx) = mpsc::channel();
    let dtx = Mutex::new(dtx);
    let handled = rt::ThreadPoolBuilder::new()
        .num_threads(3)
        .panic_handler(send_panics(ptx))
        .build()
        .unwrap();
    handled.spawn_broadcast(move |cx| {
        dtx.lock().unwrap().send(cx.index()).unwrap();
        if cx.index() != 1 {
            panic!("compat: spawn_broadcast {}", cx.index());
        }
    });
    let ran = collect_any(&drx, 3);
    let panics = collect_any(&prx, 2);
    format!("{global:?} {own:?} {inside:?} ran {ran:?} panics {panics:?}")
}

fn scope_broadcasts() -> String {
    let pool = rt::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let sum = &AtomicU64::new(0);
    let mut out = Vec::new();
    pool.scope(|s| {
        s.spawn_broadcast(|s, cx| {
            sum.fetch_add(1 << cx.index(), Relaxed);
            s.spawn(move |s| tree(s, 3, 1, sum));
        })
    });
    out.push(sum.swap(0, Relaxed));
    pool.scope_fifo(|s| {
        s.spawn_broadcast(|s, cx| {
            sum.fetch_add(10 << cx.index(), Relaxed);
            s.spawn_fifo(move |s| tree_fifo(s, 2, 1, sum));
        })
    });
    out.push(sum.swap(0, Relaxed));
    rt::in_place_scope(|s| s.spawn_broadcast(|_, cx| {
        sum.fetch_add(cx.num_threads() as u64 * 100, Relaxed);
    }));
    out.push(sum.swap(0, Relaxed));
    pool.in_place_scope_fifo(|s| s.spawn_broadcast(|_, cx| {
        sum.fetch_add(1000 << cx.index(), Relaxed);
    }));
    out.push(sum.swap(0, Relaxed));
    let calls = &AtomicUsize::new(0);
    let boom = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn_broadcast(|_, cx| {
                calls.fetch_add(1, Relaxed);
                if cx.index() == 1 {
                    panic!("compat: scope broadcast");
                }
            })
        })
    }));
    format!("{out:?} panicked {} after {} calls", boom.is_err(), calls.load(Relaxed))
}

fn local_yields() -> String {
    // `current_thread_has_pending_tasks` is a method here: the `rayon` crate does not
    // re-export rayon-core's free function of that name.
    let one = rt::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let other = rt::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let outside = (
        rt::yield_local(),
        one.yield_local(),
        one.current_thread_has_pending_tasks(),
    );
    let inside = one.install(|| {
        let ran = Arc::new(AtomicUsize::new(0));
        let before = one.current_thread_has_pending_tasks();
        let r2 = Arc::clone(&ran);
        rt::spawn(move || {
            r2.fetch_add(1, Relaxed);
        });
        let queued = one.current_thread_has_pending_tasks();
        let first = rt::yield_local();
        let second = rt::yield_local();
        let after = one.current_thread_has_pending_tasks();
        let in_join = rt::join(|| one.current_thread_has_pending_tasks(), || ()).0;
        let r3 = Arc::clone(&ran);
        rt::spawn(move || {
            r3.fetch_add(10, Relaxed);
        });
        let own = (
            one.current_thread_has_pending_tasks(),
            one.yield_local(),
            one.yield_local(),
        );
        let elsewhere = (other.yield_local(), other.current_thread_has_pending_tasks());
        (before, queued, first, second, after, in_join, own, elsewhere, ran.load(Relaxed))
    });
    format!("{outside:?} {inside:?}")
}

fn lifecycle_handlers() -> String {
    let (tx, rx) = mpsc::channel();
    let (ptx, prx) = mpsc::channel();
    let (start_tx, exit_tx) = (Mutex::new(tx.clone()), Mutex::new(tx));
    let pool = rt::ThreadPoolBuilder::new()
        .num_threads(3)
        .panic_handler(send_panics(ptx))
        .start_handler(move |i| {
            let here = rt::current_thread_index();
            start_tx.lock().unwrap().send(format!("start {i} {here:?}")).unwrap();
            if i == 1 {
                panic!("compat: start handler");
            }
        })
        .exit_handler(move |i| {
            let here = rt::current_thread_index();
            exit_tx.lock().unwrap().send(format!("exit {i} {here:?}")).unwrap();
            if i == 2 {
                panic!("compat: exit handler");
            }
        })
        .build()
        .unwrap();
    let started = collect_any(&rx, 3);
    let f = pool.install(|| fib(15));
    drop(pool);
    let exited = collect_any(&rx, 3);
    let panics = collect_any(&prx, 2);
    format!("{started:?} {f} {exited:?} {panics:?}")
}

fn spawn_handlers() -> String {
    let (tx, rx) = mpsc::channel();
    let handles = Mutex::new(Vec::new());
    let pool = rt::ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name(|i| format!("compat-spawned-{i}"))
        .stack_size(1 << 21)
        .spawn_handler(|thread| {
            tx.send((thread.index(), thread.name().map(str::to_owned), thread.stack_size()))
                .unwrap();
            let h = std::thread::Builder::new()
                .name(thread.name().unwrap().to_owned())
                .spawn(|| thread.run())?;
            handles.lock().unwrap().push(h);
            Ok(())
        })
        .build()
        .unwrap();
    let seen = collect_any(&rx, 3);
    let named = pool.install(|| {
        let name = std::thread::current().name().map(str::to_owned);
        (fib(16), name.is_some_and(|n| n.starts_with("compat-spawned-")))
    });
    drop(pool);
    // The pool stops the threads it did not start; they end by themselves.
    let joined = handles.into_inner().unwrap().into_iter().map(|h| h.join().is_ok());
    let joined: Vec<bool> = joined.collect();
    let name = Mutex::new(None);
    let unnamed = rt::ThreadPoolBuilder::new()
        .num_threads(1)
        .spawn_handler(|thread| {
            *name.lock().unwrap() = Some(thread.name().map(str::to_owned));
            std::thread::spawn(move || thread.run());
            Ok(())
        })
        .build()
        .map(|p| p.install(|| fib(10)));
    let unnamed = (unnamed.ok(), name.into_inner().unwrap());
    // Fails at the second thread: the first must stop (joined below).
    let first = Mutex::new(None);
    let failed = rt::ThreadPoolBuilder::new()
        .num_threads(3)
        .spawn_handler(|thread| {
            if thread.index() == 1 {
                return Err(std::io::Error::other("compat: no more threads"));
            }
            *first.lock().unwrap() = Some(std::thread::spawn(move || thread.run()));
            Ok(())
        })
        .build();
    let error = failed.map(|_| ()).map_err(|e| e.to_string().contains("compat: no more threads"));
    let first_ended = first.into_inner().unwrap().map(|h| h.join().is_ok());
    format!("{seen:?} {named:?} {joined:?} {unnamed:?} {error:?} {first_ended:?}")
}

fn scoped_pools() -> String {
    let data = [3u64, 4, 5];
    let wrapped = AtomicUsize::new(0);
    let r = rt::ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("compat-scoped-{i}"))
        .build_scoped(
            |thread| {
                wrapped.fetch_add(data.len(), Relaxed); // borrows from this stack
                thread.run()
            },
            |pool| {
                pool.install(|| {
                    // Which of the two workers takes the job is not specified.
                    let name = std::thread::current()
                        .name()
                        .map(|n| n.starts_with("compat-scoped-"));
                    (data.iter().map(|&n| fib(n + 10)).sum::<u64>(), name)
                })
            },
        );
    // The threads have been joined: the wrapper has run on both.
    format!("{r:?} {}", wrapped.load(Relaxed))
}

#[allow(deprecated)]
fn accepted_settings() -> String {
    let max = rt::max_num_threads();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let default = rt::ThreadPoolBuilder::new().num_threads(0).build().unwrap();
    let breadth = rt::ThreadPoolBuilder::new().num_threads(2).breadth_first().build().unwrap();
    let sum = &AtomicU64::new(0);
    breadth.scope(|s| tree(s, 6, 1, sum));
    // `use_current_thread` on a thread of its own: rayon makes it a worker for good.
    let current = std::thread::spawn(|| {
        let pool = rt::ThreadPoolBuilder::new()
            .num_threads(2)
            .use_current_thread()
            .build()
            .unwrap();
        (pool.install(|| fib(18)), pool.current_num_threads())
    })
    .join()
    .unwrap();
    format!(
        "max >= 255 {}, default = cores {}, breadth {} {}, current {current:?}",
        max >= 255,
        default.current_num_threads() == cores,
        breadth.install(|| fib(10)), // rayon's breadth-first fib nests deep
        sum.load(Relaxed)
    )
}

/// Every case, by name, in a fixed order; `build_global` first, before anything starts
/// the global pool.
pub fn run_all() -> Vec<(&'static str, String)> {
    type Case = (&'static str, fn() -> String);
    let cases: [Case; 16] = [
        ("global_pool", global_pool),
        ("pool_identity", pool_identity),
        ("broadcasts", broadcasts),
        ("joins", joins),
        ("scopes", scopes),
        ("spawns", spawns),
        ("panic_handlers", panic_handlers),
        ("yields", yields),
        ("errors", errors),
        ("spawn_broadcasts", spawn_broadcasts),
        ("scope_broadcasts", scope_broadcasts),
        ("local_yields", local_yields),
        ("lifecycle_handlers", lifecycle_handlers),
        ("spawn_handlers", spawn_handlers),
        ("scoped_pools", scoped_pools),
        ("accepted_settings", accepted_settings),
    ];
    cases.iter().map(|&(name, f)| (name, f())).collect()
}
