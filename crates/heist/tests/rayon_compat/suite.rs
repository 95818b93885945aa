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

/// Every case, by name, in a fixed order; `build_global` first, before anything starts
/// the global pool.
pub fn run_all() -> Vec<(&'static str, String)> {
    type Case = (&'static str, fn() -> String);
    let cases: [Case; 9] = [
        ("global_pool", global_pool),
        ("pool_identity", pool_identity),
        ("broadcasts", broadcasts),
        ("joins", joins),
        ("scopes", scopes),
        ("spawns", spawns),
        ("panic_handlers", panic_handlers),
        ("yields", yields),
        ("errors", errors),
    ];
    cases.iter().map(|&(name, f)| (name, f())).collect()
}
