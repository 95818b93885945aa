//! With the `stats` feature: a loop that nobody asks about never splits, and a uniform
//! loop on two workers splits only a few times.
#![cfg(feature = "stats")]

use heist::prelude::*;
use heist::{Pool, Scheduler};

fn splits(pool: &Pool) -> u64 {
    pool.stats().iter().map(|s| s.splits).sum()
}

#[test]
fn one_worker_never_splits() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        let pool = Pool::builder().workers(1).scheduler(s).build().unwrap();
        pool.reset_stats();
        let n: u64 = pool.run(|_| (0..5_000_000u64).into_par_iter().map(|x| x & 3).sum());
        assert_eq!(n, 7_500_000);
        assert_eq!(splits(&pool), 0, "{s:?}");
        assert!(pool.stats()[0].blocks > 0);
    }
}

#[test]
fn a_uniform_loop_splits_a_few_times() {
    for s in [Scheduler::Lace, Scheduler::Relay] {
        let pool = Pool::builder().workers(2).scheduler(s).build().unwrap();
        pool.reset_stats();
        let n: u64 = pool.run(|_| (0..20_000_000u64).into_par_iter().map(|x| x & 3).sum());
        assert_eq!(n, 30_000_000);
        let k = splits(&pool);
        assert!(k <= 64, "{s:?}: {k} splits");
    }
}
