//! hashbrown's `HashTable` split by bucket ranges (feature `hashbrown`): every entry
//! once, in the table's own order, on every pool shape.
#![cfg(feature = "hashbrown")]

use hashbrown::HashTable;
use heist::prelude::*;
use heist::{Pool, Scheduler};
use std::hash::BuildHasher;

#[test]
fn hash_table_in_bucket_order() {
    let hasher = std::collections::hash_map::RandomState::new();
    let mut t = HashTable::new();
    for i in 0..50_000u64 {
        t.insert_unique(hasher.hash_one(i), i, |x| hasher.hash_one(*x));
    }
    let expect: Vec<u64> = t.iter().copied().collect();
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in [1, 2, 8] {
            let pool = Pool::builder().workers(n).scheduler(s).build().unwrap();
            let got: Vec<u64> = pool.run(|_| t.par_iter().copied().collect());
            assert_eq!(got, expect, "{s:?}, {n} workers");
            let sum: u64 = pool.run(|_| t.par_iter().sum());
            assert_eq!(sum, 50_000 * 49_999 / 2);
        }
    }
    let empty: HashTable<u8> = HashTable::new();
    assert_eq!(empty.par_iter().count(), 0);
}
