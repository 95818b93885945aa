use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
fn main() {
    let cap: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n: usize = std::env::args().nth(2).unwrap().parse().unwrap();
    let pool = heist::Pool::builder()
        .workers(1)
        .scheduler(heist::Scheduler::Lace)
        .deque_capacity(cap)
        .build()
        .unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    pool.run(|w| {
        for _ in 0..n {
            let r = ran.clone();
            w.spawn_detached(move |_| {
                r.fetch_add(1, SeqCst);
            });
        }
        eprintln!("spawned; ran so far {}", ran.load(SeqCst));
        w.barrier();
    });
    eprintln!("ran {}", ran.load(SeqCst));
}
