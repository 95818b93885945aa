use std::time::Instant;
fn fib(w: &heist::Worker, n: u64) -> u64 {
    if n < 2 { return n; }
    let (a, b) = w.join(move |w| fib(w, n - 1), move |w| fib(w, n - 2));
    a + b
}
fn cpu() -> Vec<(String, u64)> {
    let mut v = vec![];
    for e in std::fs::read_dir("/proc/self/task").unwrap() {
        let p = e.unwrap().path();
        let name = std::fs::read_to_string(p.join("comm")).unwrap().trim().to_string();
        let ss = std::fs::read_to_string(p.join("schedstat")).unwrap();
        let ns: u64 = ss.split_whitespace().next().unwrap().parse().unwrap();
        v.push((name, ns / 1_000_000));
    }
    v
}
fn main() {
    let pool = heist::Pool::builder().workers(2).build().unwrap();
    for _ in 0..4 {
        let c0 = cpu();
        let t = Instant::now();
        let r = pool.run(|w| fib(w, 36));
        let el = t.elapsed();
        let c1 = cpu();
        let d: Vec<_> = c0.iter().zip(c1.iter()).map(|(a, b)| (a.0.clone(), b.1 - a.1)).collect();
        eprintln!("{r} {el:?} cpu ms {d:?} {:?}", pool.stats().iter().map(|s| (s.steals, s.leaps, s.grows, s.shrinks, s.sleeps)).collect::<Vec<_>>());
        pool.reset_stats();
    }
}
