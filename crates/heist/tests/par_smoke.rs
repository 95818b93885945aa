//! Smoke checks of the parallel iterators on pools of 1–16 workers and both schedulers.

use heist::prelude::*;
use heist::{Pool, Scheduler};

fn pools() -> Vec<Pool> {
    let mut v = Vec::new();
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in [1, 2, 8, 16] {
            v.push(Pool::builder().workers(n).scheduler(s).build().unwrap());
        }
    }
    v
}

#[test]
fn sums_and_collects() {
    for pool in pools() {
        let n = 100_000u64;
        let s: u64 = pool.run(|_| (0..n).into_par_iter().map(|x| x * 3).sum());
        assert_eq!(s, 3 * n * (n - 1) / 2);
        let v: Vec<u64> = pool.run(|_| (0..n).into_par_iter().filter(|x| x % 7 == 0).collect());
        assert_eq!(v, (0..n).filter(|x| x % 7 == 0).collect::<Vec<_>>());
        let words: Vec<String> = (0..5000).map(|i| i.to_string()).collect();
        let cat = pool.run(|_| words.par_iter().cloned().reduce(String::new, |a, b| a + &b));
        assert_eq!(cat, words.concat());
    }
}

#[test]
fn off_the_pool() {
    let s: i64 = (-500i64..500).into_par_iter().sum();
    assert_eq!(s, -500);
}
