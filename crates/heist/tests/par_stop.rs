//! A panic in a loop's `finish` or `combine` (the callbacks that run once a piece ends,
//! outside any block) stops nothing: every other piece runs to its end before the panic
//! reaches the caller, as in rayon, whose `join` runs both sides whatever one does
//! (`panic_fuse` is what stops them early; `par_rayon.rs` checks it). On a worker (the
//! driver's pieces, here one item each) and in a loop the caller helps with
//! ([`heist::PoolBuilder::caller_helps`]: the caller and its helpers share the loop), on
//! 1–16 workers under both schedulers; the pool stays usable.

mod par_pools;

use heist::iter::plumbing::{bridge, Cuts, Kernel, UnindexedProducer};
use heist::Pool;
use par_pools::on_every_pool;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

/// Items in the loop.
const ITEMS: usize = 8192;

/// Keeps the bombs' panics quiet.
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
    /// The producer's `max_len`: 1 makes every piece one item on a worker.
    max_len: usize,
    /// The bomb went off (set just before its panic).
    fired: AtomicBool,
    /// Items folded.
    done: AtomicUsize,
}

impl Run {
    /// Sets off the bomb if it has not gone off yet.
    fn fire(&self) {
        if !self.fired.swap(true, SeqCst) {
            panic!("bomb");
        }
    }
}

/// The items `lo..hi`, cut at will (a plain range).
struct Items<'a> {
    lo: usize,
    hi: usize,
    run: &'a Run,
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
        self.run.max_len
    }
    const CUTS: Option<Cuts<Self>> = Cuts::SHARED;
    unsafe fn cut(&self, from: usize, to: usize) -> Self {
        let lo = self.lo;
        Items {
            lo: lo + from,
            hi: lo + to,
            run: self.run,
        }
    }
}

/// Counts the items folded; its `finish` or `combine` sets off the bomb.
struct Probe<'a>(&'a Run);

impl Kernel<usize> for Probe<'_> {
    type Acc = ();
    type Output = ();
    fn start(&self) {}
    fn fold<I: Iterator<Item = usize>>(&self, (): (), items: I) {
        let n = items
            .inspect(|i| {
                std::hint::black_box(i);
            })
            .count();
        self.0.done.fetch_add(n, SeqCst);
    }
    fn finish(&self, (): ()) {
        if self.0.bomb == Bomb::Finish {
            self.0.fire();
        }
    }
    fn combine(&self, (): (), (): ()) {
        if self.0.bomb == Bomb::Combine {
            self.0.fire();
        }
    }
}

/// Runs the loop on a worker of `pool`, or `outside` it (through `Pool::enter`, which the
/// caller helps with: `on_every_pool` builds pools with `caller_helps`).
fn go(pool: &Pool, outside: bool, run: &Run) -> std::thread::Result<()> {
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

/// Sums a loop without a bomb: the pool is still usable.
fn still_usable(pool: &Pool) {
    let s: usize = pool.run(|_| {
        use heist::prelude::*;
        (0..ITEMS).into_par_iter().sum()
    });
    assert_eq!(s, ITEMS * (ITEMS - 1) / 2);
}

/// Runs the loop until its bomb goes off (a `combine` needs a split), and checks that
/// every item was folded before the panic came back.
fn check(pool: &Pool, outside: bool, bomb: Bomb) {
    quiet_bombs();
    for _ in 0..200 {
        let run = Run {
            bomb,
            max_len: if outside { usize::MAX } else { 1 },
            fired: AtomicBool::new(false),
            done: AtomicUsize::new(0),
        };
        let r = go(pool, outside, &run);
        assert_eq!(run.done.load(SeqCst), ITEMS, "every item is folded");
        if !run.fired.load(SeqCst) {
            // No piece was split off, so nothing combined.
            assert!(bomb == Bomb::Combine && r.is_ok());
            continue;
        }
        let p = r.expect_err("the bomb's panic must reach the caller");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"bomb"));
        still_usable(pool);
        return;
    }
}

#[test]
fn a_panic_in_finish_lets_the_other_pieces_finish() {
    on_every_pool(|pool| {
        check(pool, false, Bomb::Finish);
        check(pool, true, Bomb::Finish);
    });
}

#[test]
fn a_panic_in_combine_lets_the_other_pieces_finish() {
    on_every_pool(|pool| {
        check(pool, false, Bomb::Combine);
        check(pool, true, Bomb::Combine);
    });
}
