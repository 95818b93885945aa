use heist::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering::*};
use std::sync::Arc;
fn main() {
    let s: heist::Scheduler = std::env::args().nth(1).unwrap().parse().unwrap();
    let k: usize = std::env::args().nth(2).unwrap().parse().unwrap();
    let pool = Arc::new(
        heist::Pool::builder()
            .workers(2)
            .scheduler(s)
            .build()
            .unwrap(),
    );
    let p2 = pool.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(2));
        for (i, st) in p2.stats().iter().enumerate() {
            eprintln!("w{i}: {st:?}");
        }
        std::process::exit(1);
    });
    for round in 0..5 {
        let done = AtomicUsize::new(0);
        let t = std::time::Instant::now();
        pool.run(|_| {
            (0..k).into_par_iter().for_each(|i| {
                if i == 0 {
                    while done.load(Acquire) < k - 1 {
                        std::hint::spin_loop();
                    }
                } else {
                    done.fetch_add(1, Release);
                }
            })
        });
        eprintln!("round {round}: {:?}", t.elapsed());
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    for (i, st) in pool.stats().iter().enumerate() {
        eprintln!("w{i}: {st:?}");
    }
}
