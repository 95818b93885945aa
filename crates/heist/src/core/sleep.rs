//! Idle workers: a short bounded back-off, then sleep until woken. The papers' workers
//! spin while idle; heist's workers sleep, so that an idle pool costs nothing.
//!
//! The handshake (PROTOCOLS.md, "Sleep and wake"; loom models in `core/loom_sleep.rs`): a
//! sleeper announces itself in `sleepers`, then a SeqCst fence, then its last look for
//! work and for what it waits for; a waker makes its work visible, then a SeqCst fence,
//! then reads `sleepers`. Of two such fences one comes first, so either the sleeper's
//! last look sees the work or the waker sees the sleeper. Every waker goes through the
//! `wake_*` functions, which start with that fence and that load: with nobody asleep a
//! wake-up costs one fence and one relaxed load, and takes no lock. A wake-up that the
//! sleeper's last look does not cover is a hint, caught at worst by the sleep's timeout.

use crate::core::frame::Roots;
use crate::core::sync::{fence, AtomicUsize, Condvar, Mutex, MutexGuard};
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::PoisonError;
use std::time::Duration;

/// Steal rounds spent spinning before an idle worker starts yielding.
pub(crate) const SPIN_ROUNDS: u32 = 64;
/// Rounds spent yielding before it sleeps, at least.
pub(crate) const YIELD_ROUNDS: u32 = 16;
/// How long, at least, an idle worker yields before it sleeps. Waking a sleeper onto an
/// idle CPU took 30–55 µs on the 2-core VMs here (a plain condvar wake-up between two
/// threads pinned apart), against 5 µs for one that lands on its waker's CPU. A worker
/// that slept after its 16 yields (about 10 µs) paid that at every parallel call a
/// program makes from sequential code, rayon-demo's `life` 100 times a run. Yielding
/// costs a CPU nothing another thread wants, and an idle pool still sleeps after this.
pub(crate) const YIELD_FOR: Duration = Duration::from_micros(100);
/// How long an idle worker searches before its first glance at the other workers'
/// private tasks (`Worker::glance`). An owner that polls (relay) or pushes and pops
/// (Lace) answers a request or a split request within a task's time, far below this
/// for the fine-grained tasks the papers measure; a request unanswered this long is
/// most likely at an owner in a long leaf.
pub(crate) const GLANCE_AFTER: Duration = Duration::from_micros(2);

struct Parker {
    woken: Mutex<bool>,
    cv: Condvar,
    place: crate::core::affinity::Place,
    /// The waker that shared work for this sleeper, plus one (0: none): where it looks
    /// first.
    hint: AtomicUsize,
}

/// The sleep state of a pool.
pub(crate) struct Sleep {
    sleepers: AtomicUsize,
    /// The sleepers, each with whether it may take up a root of `Pool::run`.
    idle: Mutex<Vec<(usize, Roots)>>,
    parkers: Box<[Parker]>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Sleep {
    pub(crate) fn new(workers: usize) -> Sleep {
        let parkers = (0..workers)
            .map(|_| Parker {
                woken: Mutex::new(false),
                cv: Condvar::new(),
                place: Default::default(),
                hint: AtomicUsize::new(0),
            })
            .collect();
        Sleep {
            sleepers: AtomicUsize::new(0),
            idle: Mutex::new(Vec::with_capacity(workers)),
            parkers,
        }
    }

    /// Puts worker `me` to sleep unless `has_work` finds something after it announced
    /// itself. `has_work` must look at everything whose waker this sleep relies on (see
    /// the module docs). With a `timeout` it wakes by itself after that long. `roots`:
    /// whether it may take up a root of `Pool::run` (see `wake_for_root`). True if a
    /// waker ended the sleep; false if `has_work` kept it awake or the timeout ended it.
    pub(crate) fn sleep(
        &self,
        me: usize,
        roots: Roots,
        timeout: Option<Duration>,
        has_work: impl Fn() -> bool,
    ) -> bool {
        {
            let mut idle = lock(&self.idle);
            idle.push((me, roots));
            self.sleepers.store(idle.len(), SeqCst);
        }
        // Pairs with the fence at the start of every `wake_*`.
        fence(SeqCst);
        if has_work() {
            self.withdraw(me);
            return false;
        }
        let parker = &self.parkers[me];
        parker.place.enter();
        let mut woken = lock(&parker.woken);
        while !*woken {
            match timeout {
                None => {
                    woken = parker
                        .cv
                        .wait(woken)
                        .unwrap_or_else(PoisonError::into_inner)
                }
                Some(t) => {
                    let (w, res) = parker
                        .cv
                        .wait_timeout(woken, t)
                        .unwrap_or_else(PoisonError::into_inner);
                    woken = w;
                    if res.timed_out() && !*woken {
                        drop(woken);
                        self.withdraw(me);
                        return false;
                    }
                }
            }
        }
        *woken = false;
        true
    }

    /// Takes `me` off the idle list if it is still there; if a waker got to it first, its
    /// wake-up (given under the list's lock, `mark_woken`) is consumed so that it does not
    /// cut short the next sleep: a sleep cut short would leave `me` on the list.
    fn withdraw(&self, me: usize) {
        let mut idle = lock(&self.idle);
        if let Some(i) = idle.iter().position(|&(w, _)| w == me) {
            idle.swap_remove(i);
            self.sleepers.store(idle.len(), SeqCst);
        } else {
            drop(idle);
            *lock(&self.parkers[me].woken) = false;
        }
    }

    /// Whether `me` is on the idle list (for the models' check that a sleep returns with
    /// its sleeper off it).
    #[cfg(all(test, loom))]
    pub(crate) fn is_listed(&self, me: usize) -> bool {
        lock(&self.idle).iter().any(|&(w, _)| w == me)
    }

    /// The waker's half of the handshake: after the fence, whether anyone sleeps. Call
    /// after making work visible; pairs with the fence in `sleep`.
    #[inline]
    fn anyone_asleep(&self) -> bool {
        fence(SeqCst);
        self.sleepers.load(Relaxed) > 0
    }

    /// Wakes one sleeping worker, if any. Call after making work visible.
    pub(crate) fn wake_one(&self) {
        self.wake_last(|_| true, None);
    }

    /// Wakes one sleeping worker, if any, to look at worker `from`'s deque first. Call
    /// after making work visible there. Returns whether sleepers are left.
    pub(crate) fn wake_one_for(&self, from: usize) -> bool {
        self.wake_last(|_| true, Some(from))
    }

    /// The worker whose wake-up ended `me`'s last sleep to share with it, if any.
    pub(crate) fn take_hint(&self, me: usize) -> Option<usize> {
        let h = &self.parkers[me].hint;
        if h.load(Relaxed) == 0 {
            return None;
        }
        h.swap(0, Relaxed).checked_sub(1)
    }

    /// Wakes one sleeper that may take up a root of `Pool::run`, if any: one that waits
    /// inside a task could not take it, and would leave it to the others' timeouts.
    pub(crate) fn wake_for_root(&self) {
        self.wake_last(|roots| roots == Roots::Included, None);
    }

    /// Wakes the sleeper that went to sleep last among those whose `roots` `pick` accepts,
    /// telling it `from` if given. Returns whether sleepers are left.
    fn wake_last(&self, pick: impl Fn(Roots) -> bool, from: Option<usize>) -> bool {
        if !self.anyone_asleep() {
            return false;
        }
        let (w, left) = {
            let mut idle = lock(&self.idle);
            let i = idle.iter().rposition(|&(_, roots)| pick(roots));
            let w = i.map(|i| idle.swap_remove(i).0);
            self.sleepers.store(idle.len(), SeqCst);
            if let Some(w) = w {
                if let Some(from) = from {
                    self.parkers[w].hint.store(from + 1, Relaxed);
                }
                self.mark_woken(w);
            }
            (w, !idle.is_empty())
        };
        if let Some(w) = w {
            self.notify(w);
        }
        left
    }

    /// Wakes worker `w` if it sleeps (relay: the victim that serves a sleeper's request).
    pub(crate) fn wake(&self, w: usize) {
        if !self.anyone_asleep() {
            return;
        }
        let found = {
            let mut idle = lock(&self.idle);
            let i = idle.iter().position(|&(x, _)| x == w);
            if let Some(i) = i {
                idle.swap_remove(i);
                self.sleepers.store(idle.len(), SeqCst);
                self.mark_woken(w);
            }
            i.is_some()
        };
        if found {
            self.notify(w);
        }
    }

    /// Wakes every sleeper (shutdown, barriers).
    pub(crate) fn wake_all(&self) {
        if !self.anyone_asleep() {
            return;
        }
        // The count is reset under the lock, as every other writer sets it: reset after
        // the lock, it could wipe out a sleeper that counted itself meanwhile.
        let all = {
            let mut idle = lock(&self.idle);
            self.sleepers.store(0, SeqCst);
            let all = std::mem::take(&mut *idle);
            all.iter().for_each(|&(w, _)| self.mark_woken(w));
            all
        };
        for (w, _) in all {
            self.notify(w);
        }
    }

    /// Gives `w`, just taken off the idle list, its wake-up. Under the idle list's lock,
    /// so that a `withdraw` that finds `w` gone finds the wake-up too and consumes it: set
    /// after the lock, it could arrive after the withdraw, and `w`'s next sleep would then
    /// return at once and leave `w` on the list while it runs (PROTOCOLS.md, "Sleep and
    /// wake", History).
    fn mark_woken(&self, w: usize) {
        *lock(&self.parkers[w].woken) = true;
    }

    /// Wakes `w`, whose wake-up `mark_woken` gave it.
    fn notify(&self, w: usize) {
        let p = &self.parkers[w];
        p.place.wake_apart(|| p.cv.notify_one());
    }
}

/// Round `idle` of a wait that spins, then yields `yields` rounds, then naps `nap` a
/// round, so that 16 workers on 2 cores still progress (teams and reductions).
pub(crate) fn wait_round(idle: u32, yields: u32, nap: Duration) {
    if idle < SPIN_ROUNDS {
        for _ in 0..(1u32 << (idle / 16).min(6)) {
            std::hint::spin_loop();
        }
    } else if idle < SPIN_ROUNDS + yields {
        std::thread::yield_now();
    } else {
        std::thread::sleep(nap);
    }
}
