//! rayon's semantics on every pool shape: order-keeping reduce and collect, first-by-
//! index finds, early stops, panics that reach the caller, on 1–16 workers (more than
//! the cores) under both schedulers.

use heist::prelude::*;
mod par_pools;

use par_pools::on_every_pool;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

#[test]
fn non_commutative_reduce_equals_seq() {
    on_every_pool(|pool| {
        let words: Vec<String> = (0..20_000).map(|i| format!("{i},")).collect();
        let expect = words.concat();
        for _ in 0..5 {
            let got = pool.run(|_| {
                words
                    .par_iter()
                    .map(|s| s.to_string())
                    .reduce(String::new, |a, b| a + &b)
            });
            assert_eq!(got, expect);
            let via_fold: String = pool.run(|_| {
                words
                    .par_iter()
                    .fold(String::new, |a, b| a + b)
                    .reduce(String::new, |a, b| a + &b)
            });
            assert_eq!(via_fold, expect);
            let chars: String = pool.run(|_| expect.par_chars().collect());
            assert_eq!(chars, expect);
        }
    });
}

#[test]
fn collect_keeps_order() {
    on_every_pool(|pool| {
        let n = 200_000u32;
        let v: Vec<u32> = pool.run(|_| (0..n).into_par_iter().map(|x| x ^ 5).collect());
        assert!(v.iter().copied().eq((0..n).map(|x| x ^ 5)));
        let f: Vec<u32> = pool.run(|_| (0..n).into_par_iter().filter(|x| x % 3 == 1).collect());
        assert!(f.iter().copied().eq((0..n).filter(|x| x % 3 == 1)));
        let nested: Vec<u32> = pool.run(|_| {
            (0..300u32)
                .into_par_iter()
                .flat_map(|i| (0..i).into_par_iter().map(move |j| i * 1000 + j))
                .collect()
        });
        let expect: Vec<u32> = (0..300u32)
            .flat_map(|i| (0..i).map(move |j| i * 1000 + j))
            .collect();
        assert_eq!(nested, expect);
    });
}

#[test]
fn finds_and_early_stops() {
    on_every_pool(|pool| {
        let n = 1_000_000u64;
        let first = pool.run(|_| {
            (0..n)
                .into_par_iter()
                .find_first(|x| x % 1000 == 999 && *x > 5000)
        });
        assert_eq!(first, Some(5999));
        let last = pool.run(|_| (0..n).into_par_iter().find_last(|x| x % 1000 == 3));
        assert_eq!(last, Some(999_003));
        let any = pool.run(|_| (0..n).into_par_iter().find_any(|x| x % 100_000 == 77_777));
        assert!(matches!(any, Some(x) if x % 100_000 == 77_777));
        let pos = pool.run(|_| (0..n).into_par_iter().position_any(|x| x == 123_456));
        assert_eq!(pos, Some(123_456));
        // An early stop leaves most items untouched.
        let seen = AtomicUsize::new(0);
        let found = pool.run(|_| {
            (0..n).into_par_iter().any(|x| {
                seen.fetch_add(1, Relaxed);
                x == 10
            })
        });
        assert!(found);
        assert!(
            seen.load(Relaxed) < n as usize,
            "any() went through all items"
        );
        let r: Result<(), u64> = pool.run(|_| {
            (0..n)
                .into_par_iter()
                .try_for_each(|x| if x == 4321 { Err(x) } else { Ok(()) })
        });
        assert_eq!(r, Err(4321));
    });
}

#[test]
fn panic_reaches_caller_and_pool_stays_usable() {
    on_every_pool(|pool| {
        for at in [0u64, 1, 5_000, 99_999] {
            let ran = AtomicUsize::new(0);
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.run(|_| {
                    (0..100_000u64).into_par_iter().for_each(|x| {
                        ran.fetch_add(1, Relaxed);
                        if x == at {
                            panic!("item {x}");
                        }
                    })
                })
            }));
            let msg = r.expect_err("the panic must reach the caller");
            assert_eq!(
                msg.downcast_ref::<String>().map(String::as_str),
                Some(&*format!("item {at}"))
            );
            let owned: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.run(|_| {
                    owned.clone().into_par_iter().for_each(|s| {
                        if s == "500" {
                            panic!("owned");
                        }
                    })
                })
            }));
            assert!(r.is_err());
            let s: u64 = pool.run(|_| (0..1000u64).into_par_iter().sum());
            assert_eq!(s, 499_500);
        }
    });
}

#[test]
fn stress_nested_and_uneven() {
    on_every_pool(|pool| {
        for round in 0..20u64 {
            let total: u64 = pool.run(|_| {
                (0..200u64)
                    .into_par_iter()
                    .map(|i| {
                        let cost: u64 = if i % 50 == round % 50 { 20_000 } else { 10 };
                        (0..cost).into_par_iter().map(|j| j ^ i).sum::<u64>()
                    })
                    .sum()
            });
            let expect: u64 = (0..200u64)
                .map(|i| {
                    let cost: u64 = if i % 50 == round % 50 { 20_000 } else { 10 };
                    (0..cost).map(|j| j ^ i).sum::<u64>()
                })
                .sum();
            assert_eq!(total, expect);
        }
        let mut v: Vec<u64> = (0..300_000u64)
            .map(|x| x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 7)
            .collect();
        let mut expect = v.clone();
        expect.sort_unstable();
        pool.run(|_| v.par_sort_unstable());
        assert_eq!(v, expect);
    });
}

#[test]
fn from_outside_any_pool() {
    let s: i64 = (-500i64..500).into_par_iter().sum();
    assert_eq!(s, -500);
    let v: Vec<i64> = (0..10_000i64).into_par_iter().rev().collect();
    assert!(v.iter().copied().eq((0..10_000i64).rev()));
}

#[test]
fn a_loop_is_shared_when_a_worker_is_idle() {
    on_every_pool(|pool| {
        if pool.workers() < 2 {
            return;
        }
        // Items of 20 µs: a loop of 200 is worth splitting, so an idle worker gets part of
        // it (tried until seen; `on_every_pool` fails the test after a minute).
        loop {
            let threads = std::sync::Mutex::new(std::collections::HashSet::new());
            let sum: u64 = pool.run(|_| {
                (0..200u64)
                    .into_par_iter()
                    .map(|i| {
                        threads.lock().unwrap().insert(std::thread::current().id());
                        let t = std::time::Instant::now();
                        while t.elapsed() < Duration::from_micros(20) {}
                        i
                    })
                    .sum()
            });
            assert_eq!(sum, 19_900);
            if threads.into_inner().unwrap().len() >= 2 {
                break;
            }
        }
    });
}

#[test]
fn a_panicking_comparison_leaves_the_items_and_the_pool() {
    on_every_pool(|pool| {
        let orig: Vec<String> = (0..40_000u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40).to_string())
            .collect();
        for stable in [false, true] {
            let mut v = orig.clone();
            let calls = AtomicUsize::new(0);
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.run(|_| {
                    let cmp = |a: &String, b: &String| {
                        if calls.fetch_add(1, Relaxed) == 100_000 {
                            panic!("comparison");
                        }
                        a.cmp(b)
                    };
                    if stable {
                        v.par_sort_by(cmp)
                    } else {
                        v.par_sort_unstable_by(cmp)
                    }
                })
            }));
            assert!(r.is_err(), "the comparison's panic reaches the caller");
            let (mut a, mut b) = (v.clone(), orig.clone());
            a.sort();
            b.sort();
            assert_eq!(a, b, "the slice still holds every item once");
            pool.run(|_| v.par_sort());
            assert_eq!(v, b);
        }
    });
}

/// Counts its drops.
struct Tracked<'a>(&'a AtomicUsize);

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Relaxed);
    }
}

#[test]
fn an_in_place_collect_drops_each_written_item_once_on_a_panic() {
    on_every_pool(|pool| {
        for at in [0u64, 1, 777, 19_999] {
            let (made, dropped) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.run(|_| {
                    let mut v = vec![Tracked(&dropped)];
                    made.fetch_add(1, Relaxed);
                    (0..20_000u64)
                        .into_par_iter()
                        .map(|x| {
                            if x == at {
                                panic!("item {x}");
                            }
                            made.fetch_add(1, Relaxed);
                            Tracked(&dropped)
                        })
                        .collect_into_vec(&mut v);
                })
            }));
            assert!(r.is_err(), "the panic reaches the caller");
            assert_eq!(made.load(Relaxed), dropped.load(Relaxed), "panic at {at}");
            let v: Vec<u64> = pool.run(|_| (0..5000u64).into_par_iter().map(|x| x * 2).collect());
            assert!(v.iter().copied().eq((0..5000).map(|x| x * 2)));
        }
    });
}

/// An indexed iterator whose producer claims `claimed` items but yields `real` of them.
struct Liar {
    claimed: usize,
    real: usize,
}

impl heist::iter::plumbing::UnindexedProducer for Liar {
    type Item = String;
    type IntoIter = std::vec::IntoIter<String>;
    fn len(&self) -> usize {
        self.claimed
    }
    fn split_at(self, i: usize) -> (Self, Self) {
        let lo = Liar {
            claimed: i,
            real: self.real.min(i + 1),
        };
        let hi = Liar {
            claimed: self.claimed - i,
            real: self.real.saturating_sub(i),
        };
        (lo, hi)
    }
    fn into_iter(self) -> Self::IntoIter {
        (0..self.real)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .into_iter()
    }
}

impl heist::iter::plumbing::Producer for Liar {}

impl ParallelIterator for Liar {
    type Item = String;
    fn drive<K: heist::iter::plumbing::Kernel<String>>(self, k: K) -> K::Output {
        heist::iter::plumbing::bridge(self, &k)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.claimed)
    }
    fn with_producer_or_self<CB: heist::iter::plumbing::IndexedOrNot<String>>(
        self,
        cb: CB,
    ) -> CB::Output {
        cb.indexed(self)
    }
}

#[test]
fn a_producer_that_lies_about_its_length_panics_and_writes_nothing_out_of_place() {
    on_every_pool(|pool| {
        for (claimed, real) in [(1000, 999), (1000, 1200), (1000, 0), (3, 4)] {
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.run(|_| Liar { claimed, real }.collect::<Vec<String>>())
            }));
            let msg = r.expect_err("a lying producer is caught");
            let msg = (msg.downcast_ref::<String>().cloned())
                .or_else(|| msg.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            assert!(msg.contains("indexed producer"), "{msg}");
        }
    });
}

#[test]
fn par_bridge_passes_every_item_once() {
    on_every_pool(|pool| {
        for n in [0u64, 1, 255, 256, 257, 50_000] {
            let mut got: Vec<u64> = pool.run(|_| (0..n).par_bridge().map(|x| x * 3).collect());
            got.sort_unstable();
            assert!(got.iter().copied().eq((0..n).map(|x| x * 3)), "n = {n}");
            let firsts = pool.run(|_| (0..n).par_bridge().find_any(|&x| x == n / 2));
            assert_eq!(firsts, (n > 0).then_some(n / 2));
        }
    });
}

#[test]
fn a_tree_loop_gives_the_sequential_results() {
    let t: std::sync::Arc<heist::tree::TreeSet<u64>> =
        std::sync::Arc::new((0..(1 << 16) + 77).map(|i| i * 3).collect());
    on_every_pool(move |pool| {
        let expect: Vec<u64> = t.iter().copied().collect();
        for _ in 0..3 {
            let got: Vec<u64> = pool.run(|_| t.par_iter().copied().collect());
            assert_eq!(got, expect);
            let concat = pool.run(|_| {
                t.par_iter()
                    .take_any(usize::MAX)
                    .map(|x| format!("{x},"))
                    .reduce(String::new, |a, b| a + &b)
            });
            assert_eq!(
                concat,
                expect.iter().map(|x| format!("{x},")).collect::<String>()
            );
            let found = pool.run(|_| t.par_iter().find_first(|&&x| x % 1000 == 999));
            assert_eq!(found, expect.iter().find(|&&x| x % 1000 == 999));
            let heavy: u64 = pool.run(|_| {
                t.par_iter()
                    .map(|&x| (0..x % 64).fold(x, |a, i| a.rotate_left(i as u32) ^ i))
                    .reduce(|| 0, u64::wrapping_add)
            });
            let seq: u64 = expect
                .iter()
                .map(|&x| (0..x % 64).fold(x, |a, i| a.rotate_left(i as u32) ^ i))
                .fold(0, u64::wrapping_add);
            assert_eq!(heavy, seq);
        }
    });
}

#[test]
fn a_panicking_vec_drain_keeps_the_tail_and_drops_each_item_once() {
    on_every_pool(|pool| {
        for at in [0usize, 1, 999] {
            let dropped = AtomicUsize::new(0);
            let mut v: Vec<Tracked<'_>> = (0..3000).map(|_| Tracked(&dropped)).collect();
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.run(|_| {
                    v.par_drain(1000..2000).enumerate().for_each(|(i, t)| {
                        if i == at {
                            panic!("item {i}");
                        }
                        drop(t);
                    })
                })
            }));
            assert!(r.is_err(), "the panic reaches the caller");
            assert_eq!(v.len(), 2000, "the tail closes the gap");
            assert_eq!(
                dropped.load(Relaxed),
                1000,
                "each drained item dropped once"
            );
            drop(v);
            assert_eq!(dropped.load(Relaxed), 3000);
        }
    });
}
