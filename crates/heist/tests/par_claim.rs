//! Loops shared through a progress word (`par/claim.rs`): loops started outside the pool
//! (`Pool::enter`), which workers join while the caller works, and thief-side splitting
//! (`ThiefSplitting`). Results must equal seq's in order, panics must reach the caller,
//! and the pool must stay usable; on 1–16 workers under both schedulers.

mod par_pools;

use heist::iter::ThiefSplitting;
use heist::prelude::*;
use par_pools::on_every_pool;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// A little work per item, so that a loop of some thousands is long enough to share.
fn slow(x: u64) -> u64 {
    (0..20).fold(x, |a, i| std::hint::black_box(a.rotate_left(7) ^ i)) & 0xffff
}

fn words(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{i},")).collect()
}

#[test]
fn loops_from_outside_equal_seq() {
    on_every_pool(|pool| {
        for n in [0u64, 1, 7, 1000, 100_000] {
            let s: u64 = pool.enter(|| (0..n).into_par_iter().map(slow).sum());
            assert_eq!(s, (0..n).map(slow).sum::<u64>(), "range of {n}");
        }
        let w = words(10_000);
        for _ in 0..2 {
            // A slice (cut by the helper) and a zip (handed to the pool): order kept.
            let cat = pool.enter(|| {
                w.par_iter()
                    .map(|s| s.clone())
                    .reduce(String::new, |a, b| a + &b)
            });
            assert_eq!(cat, w.concat());
            let zipped: Vec<String> =
                pool.enter(|| w.par_iter().zip(&w).map(|(a, b)| a.clone() + b).collect());
            assert!(zipped.iter().zip(&w).all(|(z, s)| *z == s.clone() + s));
            let odd: Vec<u64> = pool.enter(|| {
                (0..50_000u64)
                    .into_par_iter()
                    .filter(|x| slow(*x) % 2 == 1)
                    .collect()
            });
            assert!(odd
                .iter()
                .copied()
                .eq((0..50_000).filter(|x| slow(*x) % 2 == 1)));
        }
        let mut v: Vec<u64> = (0..100_000).collect();
        pool.enter(|| v.par_iter_mut().for_each(|x| *x = slow(*x)));
        assert!(v.iter().copied().eq((0..100_000).map(slow)));
    });
}

#[test]
fn a_panic_in_a_loop_from_outside_reaches_the_caller() {
    on_every_pool(|pool| {
        let n = 30_000u64;
        for bad in [0, n / 2, n - 1] {
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.enter(|| {
                    (0..n)
                        .into_par_iter()
                        .map(|x| {
                            assert!(x != bad, "bomb at {x}");
                            slow(x)
                        })
                        .sum::<u64>()
                })
            }));
            let p = r.expect_err("the panic was lost");
            let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
            assert_eq!(msg, format!("bomb at {bad}"));
            let s: u64 = pool.enter(|| (0..n).into_par_iter().map(slow).sum());
            assert_eq!(s, (0..n).map(slow).sum::<u64>());
        }
    });
}

#[test]
fn thief_splitting_equals_seq() {
    on_every_pool(|pool| {
        let w = words(10_000);
        for _ in 0..2 {
            let cat = pool.run(|_| {
                w.par_iter()
                    .thief_splitting()
                    .map(|s| s.clone())
                    .reduce(String::new, |a, b| a + &b)
            });
            assert_eq!(cat, w.concat());
            let v: Vec<u64> = pool.run(|_| {
                (0..50_000u64)
                    .into_par_iter()
                    .thief_splitting()
                    .map(slow)
                    .collect()
            });
            assert!(v.iter().copied().eq((0..50_000).map(slow)));
            let s: u64 = pool.enter(|| {
                (0..50_000u64)
                    .into_par_iter()
                    .thief_splitting()
                    .map(slow)
                    .sum()
            });
            assert_eq!(s, (0..50_000).map(slow).sum::<u64>());
        }
        // Long items: thieves cut while the owner is inside one.
        let s: u64 = pool.run(|_| {
            (0..64u64)
                .into_par_iter()
                .thief_splitting()
                .map(|x| {
                    std::thread::sleep(Duration::from_micros(200));
                    x
                })
                .sum()
        });
        assert_eq!(s, 64 * 63 / 2);
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.run(|_| {
                (0..100_000u64)
                    .into_par_iter()
                    .thief_splitting()
                    .for_each(|x| assert!(x != 77_777, "bomb"))
            })
        }));
        assert!(r.is_err(), "the panic was lost");
    });
}

/// A range whose `split_at` panics if `armed`; its blocks are folded without it, so only a
/// split for thieves panics. On relay such a split has taken the waiting steal requests
/// by then, and they must still be answered.
struct Fragile {
    lo: u64,
    hi: u64,
    armed: bool,
}

impl heist::iter::plumbing::Producer for Fragile {
    type Item = u64;
    type IntoIter = std::ops::Range<u64>;
    fn len(&self) -> usize {
        (self.hi - self.lo) as usize
    }
    fn split_at(self, i: usize) -> (Self, Self) {
        assert!(!self.armed, "split bomb");
        let mid = self.lo + i as u64;
        let half = |lo, hi| Fragile {
            lo,
            hi,
            armed: false,
        };
        (half(self.lo, mid), half(mid, self.hi))
    }
    fn into_iter(self) -> Self::IntoIter {
        self.lo..self.hi
    }
    fn fold_block<K: heist::iter::plumbing::Kernel<u64>>(
        self,
        n: usize,
        kernel: &K,
        acc: K::Acc,
    ) -> (K::Acc, Self) {
        let mid = self.lo + n as u64;
        let rest = Fragile { lo: mid, ..self };
        (kernel.fold(acc, self.lo..mid), rest)
    }
}

impl ParallelIterator for Fragile {
    type Item = u64;
    fn drive<K: heist::iter::plumbing::Kernel<u64>>(self, kernel: K) -> K::Output {
        heist::iter::plumbing::bridge(self, &kernel)
    }
}

#[test]
fn a_panic_in_a_split_leaves_no_steal_request_behind() {
    on_every_pool(|pool| {
        let slow_sum = |armed| {
            Fragile {
                lo: 0,
                hi: 200_000,
                armed,
            }
            .map(slow)
            .sum::<u64>()
        };
        for _ in 0..3 {
            // The loop panics if it splits for thieves, which it may or may not do.
            let _ = catch_unwind(AssertUnwindSafe(|| pool.run(|_| slow_sum(true))));
            // Every thief must be answered: the pool still balances, and a barrier
            // (termination detection under relay) ends.
            pool.spawn_detached(|_| {});
            pool.barrier();
            assert_eq!(
                pool.run(|_| slow_sum(false)),
                (0..200_000).map(slow).sum::<u64>()
            );
        }
    });
}
