//! Loops started outside the pool (`Pool::enter`, `par/outside.rs`), which workers join
//! while the caller works (through a progress word for ranges and slices, by hand-offs
//! for every other source), and thief-side splitting (`ThiefSplitting`, `par/claim.rs`).
//! Results must equal seq's in order, panics must reach the caller, the caller must not
//! return while a worker still runs part of its loop, and the pool must stay usable; on
//! 1–16 workers under both schedulers.

mod par_pools;

use heist::iter::ThiefSplitting;
use heist::prelude::*;
use par_pools::on_every_pool;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Mutex;
use std::thread::{self, ThreadId};
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

impl heist::iter::plumbing::UnindexedProducer for Fragile {
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

/// Items of a handed loop: what ran where, and how many run now.
#[derive(Default)]
struct Watch {
    threads: Mutex<HashSet<ThreadId>>,
    active: AtomicUsize,
}

impl Watch {
    /// `slow(x)`, noting the thread and that an item runs meanwhile.
    fn item(&self, x: u64) -> u64 {
        self.active.fetch_add(1, SeqCst);
        if x % 64 == 0 {
            self.threads.lock().unwrap().insert(thread::current().id());
        }
        let y = slow(x);
        self.active.fetch_sub(1, SeqCst);
        y
    }

    /// Whether some item ran on a thread other than this one.
    fn helped(&self) -> bool {
        let me = thread::current().id();
        self.threads.lock().unwrap().iter().any(|t| *t != me)
    }
}

#[test]
fn handed_loops_from_outside_equal_seq() {
    on_every_pool(|pool| {
        let mut helped = false;
        for round in 0.. {
            let watch = Watch::default();
            for n in [0u64, 1, 7, 1000, 60_000] {
                // A mutable slice: each item written exactly once.
                let mut v: Vec<u64> = (0..n).collect();
                pool.enter(|| v.par_iter_mut().for_each(|x| *x += watch.item(*x)));
                assert!(v.iter().copied().eq((0..n).map(|x| x + slow(x))), "{n}");
                // A zip of a mutable slice and a slice, enumerated.
                let b: Vec<u64> = (0..n).rev().collect();
                pool.enter(|| {
                    v.par_iter_mut()
                        .zip(&b)
                        .enumerate()
                        .for_each(|(i, (x, y))| *x = watch.item(*y) ^ i as u64)
                });
                let expect = (0..n).rev().enumerate().map(|(i, y)| slow(y) ^ i as u64);
                assert!(v.iter().copied().eq(expect), "zip of {n}");
                // Order kept: a non-commutative reduce and a collect over a zip.
                let cat = pool.enter(|| {
                    v.par_iter()
                        .zip(b.par_iter())
                        .map(|(x, y)| format!("{},", watch.item(*x) ^ y))
                        .reduce(String::new, |a, b| a + &b)
                });
                let seq: String = v
                    .iter()
                    .zip(&b)
                    .map(|(x, y)| format!("{},", slow(*x) ^ y))
                    .collect();
                assert_eq!(cat, seq, "reduce over a zip of {n}");
                let chunks: Vec<u64> = pool.enter(|| {
                    v.par_chunks_mut(7)
                        .rev()
                        .map(|c| {
                            c.iter_mut()
                                .map(|x| {
                                    *x = watch.item(*x);
                                    *x
                                })
                                .sum()
                        })
                        .collect()
                });
                let mut w: Vec<u64> = b.iter().zip(0..).map(|(y, i)| slow(*y) ^ i).collect();
                let expect: Vec<u64> = w
                    .chunks_mut(7)
                    .rev()
                    .map(|c| {
                        c.iter_mut()
                            .map(|x| {
                                *x = slow(*x);
                                *x
                            })
                            .sum()
                    })
                    .collect();
                assert_eq!(chunks, expect, "chunks of {n}");
                assert_eq!(v, w, "chunks of {n}");
            }
            helped |= watch.helped();
            // A worker took part at least once (the loops of 60 000 are long enough to
            // hand over; `on_every_pool` fails the test after a minute).
            if helped && round >= 1 {
                break;
            }
        }
    });
}

#[test]
fn a_panic_in_a_handed_loop_from_outside_reaches_the_caller() {
    on_every_pool(|pool| {
        let n = 30_000u64;
        let b: Vec<u64> = (0..n).collect();
        for bad in [0, n / 3, n - 1] {
            let watch = Watch::default();
            let mut v = vec![0u64; n as usize];
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.enter(|| {
                    v.par_iter_mut().zip(&b).for_each(|(x, y)| {
                        assert!(*y != bad, "bomb at {y}");
                        *x += 1 + watch.item(*y);
                    })
                })
            }));
            // Nothing of the loop runs once the caller is back, and no item ran twice.
            assert_eq!(watch.active.load(SeqCst), 0, "an item still runs");
            let p = r.expect_err("the panic was lost");
            let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
            assert_eq!(msg, format!("bomb at {bad}"));
            assert!(v.iter().zip(&b).all(|(x, y)| *x == 0 || *x == 1 + slow(*y)));
            let s: u64 = pool.enter(|| v.par_iter_mut().zip(&b).map(|(x, y)| *x + y).sum());
            assert_eq!(s, v.iter().zip(&b).map(|(x, y)| x + y).sum::<u64>());
        }
    });
}

/// Counts its drops.
struct Counted<'a>(u64, &'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.1.fetch_add(1, SeqCst);
    }
}

#[test]
fn owned_items_handed_from_outside_drop_once() {
    on_every_pool(|pool| {
        let n = 20_000u64;
        for bad in [None, Some(0), Some(n / 2), Some(n - 1)] {
            let drops = AtomicUsize::new(0);
            let items: Vec<Counted> = (0..n).map(|i| Counted(i, &drops)).collect();
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.enter(|| {
                    items
                        .into_par_iter()
                        .zip(0..n)
                        .map(|(c, i)| {
                            assert!(Some(i) != bad, "bomb");
                            slow(c.0) + i
                        })
                        .sum::<u64>()
                })
            }));
            assert_eq!(drops.load(SeqCst), n as usize, "bad at {bad:?}");
            match bad {
                None => assert_eq!(r.unwrap(), (0..n).map(|i| slow(i) + i).sum::<u64>()),
                Some(_) => assert!(r.is_err(), "the panic was lost"),
            }
        }
    });
}
