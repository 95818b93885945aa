//! The README's usage example, kept compiling: `cargo run --release --example usage`.

fn fib(w: &heist::Worker, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    // The explicit-context fast path: `b` is pushed, `a` runs, `b` is popped or awaited.
    let (a, b) = w.join(|w| fib(w, n - 1), |w| fib(w, n - 2));
    a + b
}

fn main() -> Result<(), heist::BuildError> {
    let pool = heist::Pool::builder().workers(8).build()?;
    println!("{}", pool.run(|w| fib(w, 40)));

    // rayon's shapes work from anywhere (on a worker, or on the global pool).
    let (x, y) = heist::join(|| 1 + 1, || 2 + 2);
    let mut v = vec![1, 2, 3];
    heist::scope(|s| {
        for x in &mut v {
            s.spawn(move |_| *x *= 2);
        }
    });

    // Promises (the thesis's futures): joined in any order; a handle not joined is
    // finished when the scope ends.
    let r = pool.run(|w| {
        w.promises(|s| {
            let p = s.spawn(|w| fib(w, 30));
            let y = fib(w, 29);
            p.join() + y
        })
    });

    // Detached tasks and the task barrier.
    pool.spawn_detached(|w| {
        fib(w, 25);
    });
    pool.barrier();
    println!("{x} {y} {v:?} {r}");
    Ok(())
}
