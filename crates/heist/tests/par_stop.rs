//! A panic in a loop's `finish` or `combine` (the callbacks that run once a piece ends,
//! outside any block).
//!
//! On a worker (the driver's pieces) it stops nothing: every other piece runs to its end
//! before the panic reaches the caller, as in rayon, whose `join` runs both sides
//! whatever one does (`panic_fuse` is what stops them early).
//!
//! In a loop the caller helps with ([`heist::PoolBuilder::caller_helps`]: the caller and
//! its helper share the loop), it stops the pieces still running at their next block, as
//! a panic in an item does, on 1–16 workers under both schedulers.
//!
//! The loops are built so that the first piece to end holds cheap items while the piece
//! of the lowest items has many costly ones left; once the panic has happened, each of
//! those sleeps a millisecond. Without the stop, the pieces would fold all of them; the
//! checks below hold whatever the timing:
//! - `finish`: the panicking piece's producer is dropped as its frame unwinds, after the
//!   driver has raised the loop's stop flag; from then on a piece folds at most the one
//!   block it is in.
//! - `combine`: no frame of the user's is dropped after the flag is raised, so the check
//!   is that at most half of the costly items left at the panic were folded after it:
//!   hundreds of milliseconds of sleep against one unwinding (the panic hook is quiet).

mod par_pools;

use heist::iter::plumbing::{bridge, Kernel, UnindexedProducer};
use heist::Pool;
use par_pools::on_every_pool;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

/// Items in the loop; the lowest `HEAVY` are costly.
const ITEMS: usize = 8192;
const HEAVY: usize = 2048;

/// An item's work: the costly ones sleep once the bomb has gone off (if the run is
/// `sleepy`).
fn work(run: &Run, i: usize) {
    if i >= HEAVY {
        std::hint::black_box(i);
    } else if run.sleepy && run.fired.load(SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    } else {
        (0..300).fold(i, |a, r| std::hint::black_box(a.rotate_left(5) ^ r));
    }
}

/// Keeps the bombs' panics quiet, so that a backtrace does not slow their unwinding.
fn quiet_bombs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&"bomb") {
                default(info);
            }
        }));
    });
}

#[derive(Clone, Copy, PartialEq)]
enum Bomb {
    Finish,
    Combine,
}

/// One run of the loop: what its pieces report.
struct Run {
    bomb: Bomb,
    /// Whether costly items sleep after the bomb.
    sleepy: bool,
    /// The bomb went off (set just before its panic).
    fired: AtomicBool,
    /// The loop's stop flag is raised (set after the panic unwound past the driver).
    raised: AtomicBool,
    /// The most blocks one piece folded to the end after `raised`.
    max_late: AtomicUsize,
    /// Costly items folded, and how many were left when the bomb went off.
    heavy_done: AtomicUsize,
    heavy_left: AtomicUsize,
    /// Costly items in blocks that ended after the bomb went off.
    heavy_after: AtomicUsize,
}

impl Run {
    fn new(bomb: Bomb) -> Run {
        Run {
            bomb,
            sleepy: true,
            fired: AtomicBool::new(false),
            raised: AtomicBool::new(false),
            max_late: AtomicUsize::new(0),
            heavy_done: AtomicUsize::new(0),
            heavy_left: AtomicUsize::new(0),
            heavy_after: AtomicUsize::new(0),
        }
    }

    /// Sets off the bomb if it has not gone off yet.
    fn fire(&self) {
        if !self.fired.swap(true, SeqCst) {
            self.heavy_left
                .store(HEAVY - self.heavy_done.load(SeqCst), SeqCst);
            if self.bomb == Bomb::Finish {
                FINISH_PANICKED.set(self as *const Run as usize);
            }
            panic!("bomb");
        }
    }
}

thread_local! {
    /// The run whose `finish` panicked on this thread, until its piece's producer drops.
    static FINISH_PANICKED: Cell<usize> = const { Cell::new(0) };
}

/// The items `lo..hi`, cut at will (a plain range).
struct Items<'a> {
    lo: usize,
    hi: usize,
    run: &'a Run,
}

impl Drop for Items<'_> {
    fn drop(&mut self) {
        // The first producer dropped on the thread whose `finish` panicked is that
        // piece's own, as its frame unwinds past the driver's stop guard.
        if FINISH_PANICKED.get() == self.run as *const Run as usize {
            FINISH_PANICKED.set(0);
            self.run.raised.store(true, SeqCst);
        }
    }
}

impl<'a> UnindexedProducer for Items<'a> {
    type Item = usize;
    type IntoIter = std::ops::Range<usize>;
    fn len(&self) -> usize {
        self.hi - self.lo
    }
    fn split_at(self, i: usize) -> (Self, Self) {
        let (lo, hi, run) = (self.lo, self.hi, self.run);
        let mid = lo + i;
        (Items { lo, hi: mid, run }, Items { lo: mid, hi, run })
    }
    fn into_iter(self) -> Self::IntoIter {
        self.lo..self.hi
    }
    fn max_len(&self) -> usize {
        1
    }
    const CUTS: bool = true;
    unsafe fn cut(&self, from: usize, to: usize) -> Self {
        let lo = self.lo;
        Items {
            lo: lo + from,
            hi: lo + to,
            run: self.run,
        }
    }
}

/// Folds the items; its piece state counts the blocks folded after `raised`.
struct Probe<'a>(&'a Run);

impl Kernel<usize> for Probe<'_> {
    type Acc = usize;
    type Output = usize;
    fn start(&self) -> usize {
        0
    }
    fn fold<I: Iterator<Item = usize>>(&self, late: usize, items: I) -> usize {
        let run = self.0;
        let mut heavy = 0;
        for i in items {
            work(run, i);
            heavy += usize::from(i < HEAVY);
        }
        run.heavy_done.fetch_add(heavy, SeqCst);
        if run.fired.load(SeqCst) {
            run.heavy_after.fetch_add(heavy, SeqCst);
        }
        if !run.raised.load(SeqCst) {
            return late;
        }
        run.max_late.fetch_max(late + 1, SeqCst);
        late + 1
    }
    fn finish(&self, late: usize) -> usize {
        if self.0.bomb == Bomb::Finish {
            self.0.fire();
        }
        late
    }
    fn combine(&self, l: usize, r: usize) -> usize {
        if self.0.bomb == Bomb::Combine {
            self.0.fire();
        }
        l.max(r)
    }
}

/// Runs the loop until a run shows what it must (a piece running when the stop came),
/// at most `tries` times and for at most 20 s, checking each; returns whether one showed
/// it. Whether a run shows it is up to the scheduling of the host: on a loaded machine
/// the pool's one worker may not run at all while the caller folds the loop alone, and
/// a few hundred runs in a row can go by that way.
fn runs_until_shown(
    tries: usize,
    bomb: Bomb,
    go: impl Fn(&Run) -> std::thread::Result<usize>,
) -> bool {
    quiet_bombs();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    for _ in 0..tries {
        if std::time::Instant::now() > deadline {
            break;
        }
        let run = Run::new(bomb);
        let r = go(&run);
        if !run.fired.load(SeqCst) {
            // No piece was split off, so nothing combined.
            assert!(bomb == Bomb::Combine && r.is_ok());
            continue;
        }
        let p = r.expect_err("the bomb's panic must reach the caller");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"bomb"));
        let shown = match bomb {
            Bomb::Finish => {
                let late = run.max_late.load(SeqCst);
                assert!(late <= 1, "a piece folded {late} blocks after the stop");
                late == 1
            }
            Bomb::Combine => {
                let (left, after) = (run.heavy_left.load(SeqCst), run.heavy_after.load(SeqCst));
                let shown = left >= HEAVY / 2;
                assert!(
                    !shown || after < left / 2,
                    "{after} of the {left} costly items left at the panic were folded after it"
                );
                shown
            }
        };
        if shown {
            return true;
        }
    }
    false
}

/// Runs the loop on a worker of `pool`, or `outside` it (through `Pool::enter`, which the
/// caller helps with: `on_every_pool` builds pools with `caller_helps`).
fn go(pool: &Pool, outside: bool, run: &Run) -> std::thread::Result<usize> {
    let items = Items {
        lo: 0,
        hi: ITEMS,
        run,
    };
    let kernel = Probe(run);
    catch_unwind(AssertUnwindSafe(|| match outside {
        false => pool.run(|_| bridge(items, &kernel)),
        true => pool.enter(|| bridge(items, &kernel)),
    }))
}

/// Sums the loop without a bomb: the pool is still usable.
fn still_usable(pool: &Pool) {
    let s: usize = pool.run(|_| {
        use heist::prelude::*;
        (0..ITEMS).into_par_iter().sum()
    });
    assert_eq!(s, ITEMS * (ITEMS - 1) / 2);
}

#[test]
fn on_a_worker_a_panic_in_finish_or_combine_lets_the_other_pieces_finish() {
    quiet_bombs();
    on_every_pool(|pool| {
        for bomb in [Bomb::Finish, Bomb::Combine] {
            let run = Run {
                sleepy: false,
                ..Run::new(bomb)
            };
            // Pieces of one item each (`max_len`): the first to end fires.
            let p = go(pool, false, &run).expect_err("the bomb's panic must reach the caller");
            assert_eq!(p.downcast_ref::<&str>(), Some(&"bomb"));
            assert_eq!(
                run.heavy_done.load(SeqCst),
                HEAVY,
                "every costly item is folded"
            );
            still_usable(pool);
        }
    });
}

#[test]
fn a_panic_in_finish_stops_the_pieces_of_a_loop_the_caller_helps_with() {
    on_every_pool(|pool| {
        // The caller folds the costly items while a helper ends a piece.
        let shown = runs_until_shown(5000, Bomb::Finish, |run| go(pool, true, run));
        assert!(shown, "no piece was running at the stop");
        still_usable(pool);
    });
}

#[test]
fn a_panic_in_combine_stops_the_pieces_of_a_loop_the_caller_helps_with() {
    on_every_pool(|pool| {
        let shown = runs_until_shown(5000, Bomb::Combine, |run| go(pool, true, run));
        assert!(shown, "no piece was running at the stop");
        still_usable(pool);
    });
}
