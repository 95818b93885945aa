//! fib(n) with no cut-off: the cost of a join. `cargo run --release --example fib -- 36 2`

use std::hint::black_box;
use std::time::Instant;

#[path = "../tests/support/fib.rs"]
mod fib;

use fib::fib;

fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    fib_seq(n - 1) + fib_seq(n - 2)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(Ok(32), |s| s.parse())?;
    let workers: usize = args.next().map_or(Ok(2), |s| s.parse())?;
    let pool = heist::Pool::builder().workers(workers).build()?;
    for _ in 0..3 {
        let t = Instant::now();
        let s = fib_seq(black_box(n));
        let ts = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let p = pool.run(|w| fib(w, black_box(n)));
        let tp = t.elapsed().as_secs_f64();
        assert_eq!(s, p);
        if heist::STATS_ENABLED {
            println!("{:?}", pool.stats());
            pool.reset_stats();
        }
        println!(
            "fib({n}) = {p}: seq {ts:.3} s, heist {workers} workers {tp:.3} s, ratio {:.2}",
            tp / ts
        );
    }
    Ok(())
}
