//! Standing offers (`offer.rs`, `par/offered.rs`): while the owner of a loop over a range
//! or a slice folds a block it cannot bound in time, a thief takes the upper half of its
//! rest. The thief must get in while the owner is still inside its first item, results
//! must equal seq's in order, panics on either side must reach the caller after both
//! sides stopped, and the pool must stay usable; on 1–16 workers under both schedulers.

mod par_pools;

use heist::prelude::*;
use heist::{Pool, Scheduler};
use par_pools::on_every_pool;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

/// Busy for about `us` microseconds (not a sleep: the worker stays on its item).
fn spin(us: u64) -> u64 {
    let t = Instant::now();
    let mut x = 0u64;
    while t.elapsed() < Duration::from_micros(us) {
        x = std::hint::black_box(x.wrapping_add(1));
    }
    x & 1
}

/// Waits, busy, until `flag` is set or 20 s have passed; whether it was set.
fn spin_until(flag: &AtomicBool) -> bool {
    let t = Instant::now();
    while !flag.load(SeqCst) {
        if t.elapsed() > Duration::from_secs(20) {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

#[test]
fn a_thief_gets_in_while_the_owner_is_inside_its_first_item() {
    on_every_pool(|pool| {
        if pool.workers() < 2 {
            return;
        }
        for _ in 0..3 {
            let owner: std::sync::Mutex<Option<ThreadId>> = Default::default();
            let helped = AtomicBool::new(false);
            let n = 64u64;
            let s: u64 = pool.run(|_| {
                (0..n)
                    .into_par_iter()
                    .map(|i| {
                        if i == 0 {
                            *owner.lock().unwrap() = Some(thread::current().id());
                            // Only a thief that took the offer can run an item now: the
                            // owner splits between blocks, and it is inside this one.
                            assert!(spin_until(&helped), "no thief got in within 20 s");
                            return 0;
                        }
                        let me = Some(thread::current().id());
                        if *owner.lock().unwrap() != me {
                            helped.store(true, SeqCst);
                        }
                        i
                    })
                    .sum()
            });
            assert_eq!(s, n * (n - 1) / 2);
        }
    });
}

#[test]
fn loops_of_long_items_equal_seq_in_order() {
    on_every_pool(|pool| {
        // Long items throughout: every block stands an offer.
        let words: Vec<String> = (0..40).map(|i| format!("{i},")).collect();
        let cat = pool.run(|_| {
            words
                .par_iter()
                .map(|w| {
                    spin(300);
                    w.clone()
                })
                .reduce(String::new, |a, b| a + &b)
        });
        assert_eq!(cat, words.concat());
        // A long first item, then short ones; collected in order.
        let v: Vec<u64> = pool.run(|_| {
            (0..2000u64)
                .into_par_iter()
                .map(|i| {
                    if i == 0 {
                        spin(3000);
                    }
                    i * 3
                })
                .collect()
        });
        assert!(v.iter().copied().eq((0..2000u64).map(|i| i * 3)));
        // Loops inside long items: only the outer one stands offers.
        let nested: u64 = pool.run(|_| {
            (0..12u64)
                .into_par_iter()
                .map(|i| {
                    spin(200);
                    (0..1000u64).into_par_iter().map(|j| j ^ i).sum::<u64>()
                })
                .sum()
        });
        let expected: u64 = (0..12u64)
            .map(|i| (0..1000u64).map(|j| j ^ i).sum::<u64>())
            .sum();
        assert_eq!(nested, expected);
    });
}

#[test]
fn a_panic_on_either_side_of_a_taken_offer_reaches_the_caller() {
    on_every_pool(|pool| {
        let n = 40u64;
        // In the taker's half, in the owner's first item, and in its half after.
        for bad in [n - 1, 0, 5] {
            let ran = AtomicUsize::new(0);
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.run(|_| {
                    (0..n)
                        .into_par_iter()
                        .map(|i| {
                            ran.fetch_add(1, SeqCst);
                            spin(if i == 0 { 2000 } else { 200 });
                            assert!(i != bad, "bomb at {i}");
                            i
                        })
                        .sum::<u64>()
                })
            }));
            let msg = r.expect_err("the panic was lost");
            let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
            assert_eq!(msg, format!("bomb at {bad}"));
            assert!(ran.load(SeqCst) as u64 <= n);
            // The pool is still usable.
            let s: u64 = pool.run(|_| (0..1000u64).into_par_iter().sum());
            assert_eq!(s, 999 * 1000 / 2);
        }
    });
}

/// Relay's barrier at the root ends by termination detection, which counts a worker idle
/// once the manager has registered it. A thief registered idle that takes an offer must
/// be counted working again before its piece can leave work behind: here a detached task
/// it spawns, still running after the loop ends, which the barrier must wait for.
#[test]
fn a_relay_barrier_waits_for_a_detached_task_spawned_in_a_taken_offer() {
    let pool = Pool::builder()
        .workers(2)
        .scheduler(Scheduler::Relay)
        .build()
        .unwrap();
    for round in 0..10 {
        let finished = Arc::new(AtomicBool::new(false));
        let spawned = AtomicBool::new(false);
        pool.run(|_| {
            // The root runs on the manager. Polling, it registers the other worker idle
            // once its requests have come home with nothing.
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(20) {
                heist::poll();
                spin(10);
            }
            (0..4u64).into_par_iter().for_each(|i| {
                if i == 0 {
                    // The owner's first item: the thief takes the offer meanwhile.
                    assert!(spin_until(&spawned), "no thief got in within 20 s");
                } else if i == 2 {
                    let f = finished.clone();
                    pool.spawn_detached(move |_| {
                        thread::sleep(Duration::from_millis(30));
                        f.store(true, SeqCst);
                    });
                    spawned.store(true, SeqCst);
                }
            });
            pool.barrier();
            assert!(
                finished.load(SeqCst),
                "round {round}: the barrier returned before the detached task ended"
            );
        });
    }
}

/// Runs a loop whose owner waits in its first item until a thief took its offer, in its
/// destructor.
struct LoopOnDrop<'a> {
    sum: &'a AtomicU64,
    helped: &'a AtomicBool,
}

impl Drop for LoopOnDrop<'_> {
    fn drop(&mut self) {
        let owner = thread::current().id();
        let helped = self.helped;
        let s: u64 = (0..64u64)
            .into_par_iter()
            .map(|i| {
                if i == 0 {
                    assert!(spin_until(helped), "no thief got in within 20 s");
                    return 0;
                }
                if thread::current().id() != owner {
                    helped.store(true, SeqCst);
                }
                i
            })
            .sum();
        self.sum.store(s, SeqCst);
    }
}

/// A loop may run in a destructor while its thread unwinds; there a taken offer ends as
/// anywhere else: the owner waits for the taker and adds its half.
#[test]
fn a_loop_in_a_destructor_while_unwinding_keeps_the_takers_half() {
    on_every_pool(|pool| {
        if pool.workers() < 2 {
            return;
        }
        let sum = AtomicU64::new(0);
        let helped = AtomicBool::new(false);
        let r = pool.run(|_| {
            catch_unwind(AssertUnwindSafe(|| {
                let _on_drop = LoopOnDrop {
                    sum: &sum,
                    helped: &helped,
                };
                panic!("unwinding through a loop");
            }))
        });
        assert!(r.is_err());
        assert!(helped.load(SeqCst));
        assert_eq!(sum.load(SeqCst), 64 * 63 / 2);
    });
}
