//! Coarse tasks: work made available while another worker is idle or asleep is taken up
//! by that worker, whether or not its owner ever comes back to the runtime. In each shape
//! the owner makes work available and then spins, outside heist, until that work has run:
//! it finishes only if an idle worker took the work. Both schedulers, 2, 3 and 8 workers
//! (more than the cores), each run under a timeout so that a lost hand-off fails instead
//! of hanging. No timing is asserted.

use heist::prelude::*;
use heist::{Pool, Scheduler, Worker};
use std::hint::spin_loop;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Acquire, Ordering::Release};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Rounds of each shape per pool: the pool's other workers are asleep at the first round
/// and may still be on their way to sleep at the later ones.
const ROUNDS: usize = 20;

/// Runs `shape` `ROUNDS` times on each pool, failing if a pool takes over a minute.
fn on_pools(name: &str, shape: impl Fn(&Pool) + Send + Sync + 'static) {
    let shape = Arc::new(shape);
    for s in [Scheduler::Lace, Scheduler::Relay] {
        for n in [2, 3, 8] {
            let (tx, rx) = mpsc::channel();
            let shape = shape.clone();
            std::thread::spawn(move || {
                let pool = Pool::builder().workers(n).scheduler(s).build().unwrap();
                let r = catch_unwind(AssertUnwindSafe(|| {
                    for round in 0..ROUNDS {
                        if round % 4 == 3 {
                            // Let the other workers fall asleep.
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        shape(&pool);
                    }
                }));
                let _ = tx.send(r);
            });
            let secs = std::env::var("HEIST_TEST_TIMEOUT")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(60);
            match rx.recv_timeout(Duration::from_secs(secs)) {
                Ok(Ok(())) => {}
                Ok(Err(p)) => resume_unwind(p),
                Err(_) => panic!("{name}: {s:?} with {n} workers: hung (over {secs} s)"),
            }
        }
    }
}

/// Spins outside heist until `flag` is set.
fn spin_until(flag: &AtomicBool) {
    while !flag.load(Acquire) {
        spin_loop();
    }
}

/// Spins outside heist until `count` reaches `n`.
fn spin_until_count(count: &AtomicUsize, n: usize) {
    while count.load(Acquire) < n {
        spin_loop();
    }
}

#[test]
fn scope_spawn_then_spin() {
    on_pools("scope", |pool| {
        let flag = AtomicBool::new(false);
        pool.run(|w| {
            w.scope(|s| {
                s.spawn(|_| flag.store(true, Release));
                spin_until(&flag);
            })
        });
    });
}

#[test]
fn scope_four_spawns_then_spin_for_all() {
    on_pools("scope of four", |pool| {
        let done = AtomicUsize::new(0);
        pool.run(|_| {
            heist::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|_| {
                        done.fetch_add(1, Release);
                    });
                }
                spin_until_count(&done, 4);
            })
        });
    });
}

#[test]
fn join_first_branch_spins() {
    on_pools("join", |pool| {
        let flag = AtomicBool::new(false);
        pool.run(|w| {
            w.join(|_| spin_until(&flag), |_| flag.store(true, Release));
        });
    });
}

#[test]
fn rayon_join_from_outside_first_branch_spins() {
    on_pools("join from outside", |pool| {
        let flag = AtomicBool::new(false);
        pool.run(|_| heist::join(|| spin_until(&flag), || flag.store(true, Release)));
    });
}

#[test]
fn promise_then_spin() {
    on_pools("promise", |pool| {
        let flag = AtomicBool::new(false);
        pool.run(|w| {
            w.promises(|p| {
                let h = p.spawn(|_| flag.store(true, Release));
                spin_until(&flag);
                h.join();
            })
        });
    });
}

#[test]
fn detached_then_spin() {
    on_pools("detached", |pool| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        pool.run(move |w: &Worker| {
            w.spawn_detached(move |_| f.store(true, Release));
            spin_until(&flag);
        });
        pool.barrier();
    });
}

/// `k` items; item 0 spins until every other item has run.
fn loop_first_item_waits_for_the_rest(k: usize) {
    on_pools("loop", move |pool| {
        let done = AtomicUsize::new(0);
        pool.run(|_| {
            (0..k).into_par_iter().for_each(|i| {
                if i == 0 {
                    spin_until_count(&done, k - 1);
                } else {
                    done.fetch_add(1, Release);
                }
            })
        });
    });
}

#[test]
fn loop_of_two() {
    loop_first_item_waits_for_the_rest(2);
}

#[test]
fn loop_of_four() {
    loop_first_item_waits_for_the_rest(4);
}

#[test]
fn loop_of_sixty_four() {
    loop_first_item_waits_for_the_rest(64);
}

/// The last item waits for the first: a loop's owner that folds from the front must
/// have let the rest go before it reaches the waiting item.
#[test]
fn loop_last_item_waits_for_the_first() {
    on_pools("loop, last waits", |pool| {
        let flag = AtomicBool::new(false);
        pool.run(|_| {
            (0..8usize).into_par_iter().for_each(|i| {
                if i == 7 {
                    spin_until(&flag);
                } else if i == 0 {
                    flag.store(true, Release);
                }
            })
        });
    });
}

#[test]
fn nested_join_of_two_loops() {
    on_pools("nested loops", |pool| {
        let done = AtomicUsize::new(0);
        let body = |i: usize| {
            if i == 0 {
                spin_until_count(&done, 7);
            } else {
                done.fetch_add(1, Release);
            }
        };
        pool.run(|w| {
            w.join(
                |_| (0..4usize).into_par_iter().for_each(body),
                |_| (4..8usize).into_par_iter().for_each(body),
            )
        });
    });
}

#[test]
fn team_member_spins_for_its_partner() {
    on_pools("team", |pool| {
        let seen = AtomicUsize::new(0);
        pool.run(|w| {
            w.team(2, |t| {
                seen.fetch_add(1, Release);
                // Each member waits, outside heist, for the other to have started.
                spin_until_count(&seen, 2);
                let _ = t.rank();
            })
        });
        assert_eq!(seen.load(Acquire), 2);
    });
}
