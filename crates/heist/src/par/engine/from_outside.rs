//! Loops called outside every pool. As the invoker of the work-stealing tree (On
//! Lock-Free Work-stealing Iterators for Parallel Data Structures, §5.3), the calling
//! thread works on the loop itself from the start, with no round trip; the pool's workers
//! join in once what is left looks worth their wake-up. How they join depends on the
//! producer:
//! - one that can be cut ([`Producer::CUTS`]: ranges and slices) is shared through a
//!   progress word, from which a helper cuts pieces itself (`par/engine/claim.rs`);
//! - any other is handed over: the caller splits its rest, as an owner splits for a steal
//!   request (Embracing Explicit Communication in Work-Stealing Runtime Systems, §5.3.2),
//!   and injects the upper parts as one job that the workers split further among
//!   themselves. Once that job is done and the rest still looks worth it, the caller hands
//!   over again. A part that no worker has taken when the caller has finished its own is
//!   taken back, so the caller never waits for a wake-up. Before it returns (also when it
//!   unwinds), the caller waits for a part a worker has taken (PROTOCOLS.md, "Loops from
//!   outside: hand-offs"; loom model in `par/engine/loom_claim.rs`).

use crate::par::engine::claim::{await_latch, shared, Progress};
use crate::par::engine::driver::{fold_block, len_bounds, piece, Kernel, Loop, Producer};
use crate::par::engine::pace::Blocks;
use crate::par::engine::seam::task::{self, JobRef, Panic};
use crate::par::engine::seam::worker::Worker;
use crate::par::engine::seam::Latch;
use crate::par::engine::seam::Pool;
use crate::par::engine::seam::{AtomicUsize, RaceCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// How much work the rest of a loop started outside the pool must look like before a
/// worker is woken for it: a wake-up and the hand-over take several microseconds (a
/// sleeping worker's median wake-up measured 10 µs on 2 cores). Swept over 5–80 µs on
/// slices, zips and mutable slices of 10^4–3·10^5 items at 2 workers: with calls back to
/// back, 10 and 20 µs did best (geometric mean 0.87× and 0.89× seq's time, against
/// 1.03× never waking); with each call after a pause that lets the workers sleep, every
/// wake-up cost more than it gave (1.35× at 10 µs, 1.28× at 20 µs, 1.09× never waking).
const MIN_WAKE: Duration = Duration::from_micros(20);

/// Runs `kernel` over `p` from a thread outside every pool: on this thread, with `pool`'s
/// workers helping once the rest looks worth a wake-up.
pub(crate) fn outside<P, K>(pool: &Pool, mut p: P, kernel: &K) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let min = len_bounds(&p).0;
    let mut acc = kernel.start();
    let mut blocks = Blocks::new(&p);
    loop {
        let len = p.len();
        if len == 0 || kernel.done() {
            return kernel.finish(acc);
        }
        if len / 2 >= min && blocks.worth(len, MIN_WAKE) {
            break;
        }
        let n = blocks.next(len);
        // Inline: a loop that ends here is short, and a call per block would show.
        (acc, p) = p.fold_block(n, kernel, acc);
    }
    if let Some(cuts) = P::CUTS.filter(|_| p.len() <= Progress::MAX) {
        return shared(pool, p, cuts, kernel, acc, blocks);
    }
    handed(pool, p, kernel, acc, blocks)
}

/// A hand-off's state: offered, then taken by a worker or taken back by the caller.
const OFFERED: usize = 0;
const TAKEN: usize = 1;
const TAKEN_BACK: usize = 2;

/// The race for a part handed over: a worker takes it, or the caller takes it back, by a
/// CAS from `OFFERED`; the worker that took it sets `done` when it no longer touches the
/// caller's frame.
pub(crate) struct Ticket {
    state: AtomicUsize,
    done: Latch,
}

impl Ticket {
    pub(crate) fn new() -> Ticket {
        Ticket {
            state: AtomicUsize::new(OFFERED),
            done: Latch::new(),
        }
    }

    /// A worker's try; if it wins, it may use the caller's frame until `finish`.
    pub(crate) fn take(&self) -> bool {
        // Acquire: the part was written before the ticket was shared (the injector's lock
        // orders it too).
        self.state
            .compare_exchange(OFFERED, TAKEN, Acquire, Relaxed)
            .is_ok()
    }

    /// The caller's try; if it loses, a worker has the part, and the caller must `wait`.
    pub(crate) fn take_back(&self) -> bool {
        self.state
            .compare_exchange(OFFERED, TAKEN_BACK, Relaxed, Relaxed)
            .is_ok()
    }

    /// Whether the worker that took the part is done with the caller's frame.
    pub(crate) fn finished(&self) -> bool {
        self.done.probe()
    }

    /// The caller waits for the worker that took the part.
    pub(crate) fn wait(&self) {
        await_latch(&self.done);
    }

    /// The worker that took the part is done with the caller's frame.
    ///
    /// # Safety
    /// The caller of `take` that won; `this` stays live during the call (the worker holds
    /// a reference count).
    pub(crate) unsafe fn finish(this: *const Ticket) {
        // SAFETY: the contract above.
        unsafe { Latch::set(&raw const (*this).done) };
    }
}

/// What a hand-off's job points to, reference counted so that a worker that comes after
/// the caller took the part back touches nothing else.
struct Offer {
    ticket: Ticket,
    /// The caller's `Slot`.
    slot: *const (),
}

// SAFETY: `slot` is dereferenced only by the worker that took the part, before `finish`,
// while the caller waits for that before its `Slot` goes away (see `handed`); the ticket
// is atomics and a latch.
unsafe impl Send for Offer {}
// SAFETY: as above.
unsafe impl Sync for Offer {}

/// The caller's side of its hand-offs, one at a time: the part offered, and its outcome.
struct Slot<'l, 'k, P, K: Kernel<P::Item>>
where
    P: Producer,
{
    lp: &'l Loop<'k, K>,
    /// The part offered; the worker that takes it, or the caller that takes it back, takes
    /// it out.
    part: RaceCell<Option<P>>,
    /// The outcome, written by the worker before `finish`.
    out: RaceCell<Option<std::thread::Result<K::Output>>>,
}

// SAFETY: a worker reaches a `Slot` only after winning the ticket, and until `finish`; the
// caller touches `part` only while the part is offered or after taking it back (after
// which no worker touches the slot), and `out` only after `finish`. `P: Send` and
// `K::Output: Send` let the part and the outcome cross; the loop is `Sync` (`K: Sync`).
unsafe impl<P: Producer, K: Kernel<P::Item>> Sync for Slot<'_, '_, P, K> {}

/// The hand-off job: if the part is still offered, run it as a piece of the caller's loop
/// on this worker, where other workers can split it further.
///
/// # Safety
/// `data` is an `Arc<Offer>` made by `Handoffs::offer` for a `Slot<P, K>`; called once.
unsafe fn take_part<P, K>(data: *const (), w: &Worker)
where
    P: Producer,
    K: Kernel<P::Item>,
{
    // SAFETY: the contract above: this job owns one reference count.
    let offer = unsafe { Arc::from_raw(data.cast::<Offer>()) };
    if offer.ticket.take() {
        // SAFETY: taken: the caller's slot is alive until `finish` (see `Slot`).
        let slot = unsafe { &*offer.slot.cast::<Slot<'_, '_, P, K>>() };
        // SAFETY: taken: only this worker touches the part now.
        let part = unsafe { slot.part.with_mut(|p| (*p).take()) };
        let lp = slot.lp;
        let out = panic::catch_unwind(AssertUnwindSafe(|| {
            let part = part.expect("heist: an offered part is in its slot");
            let blocks = Blocks::new(&part);
            piece(w, lp, part, lp.kernel.start(), blocks)
        }));
        // SAFETY: only this worker writes `out`, and the caller reads it after `finish`;
        // the ticket outlives the call (this job holds a reference count).
        unsafe {
            slot.out.with_mut(|o| *o = Some(out));
            Ticket::finish(&raw const offer.ticket);
        }
    }
    drop(offer);
}

/// The caller's hand-offs: the one in flight, and what the finished ones gave.
struct Handoffs<'s, 'l, 'k, P, K: Kernel<P::Item>>
where
    P: Producer,
{
    pool: &'s Pool,
    slot: &'s Slot<'l, 'k, P, K>,
    /// The part in flight, if any.
    offer: Option<Arc<Offer>>,
    /// The finished parts' outputs, combined; each part lies above the caller's rest and
    /// below the parts handed before it.
    helped: Option<K::Output>,
    /// The first panic of a finished part.
    panic: Option<Panic>,
}

impl<P: Producer, K: Kernel<P::Item>> Handoffs<'_, '_, '_, P, K> {
    /// Offers `part` to the pool as one job (none is in flight).
    fn offer(&mut self, part: P) {
        // SAFETY: no part is in flight, so no worker touches the slot.
        unsafe { self.slot.part.with_mut(|p| *p = Some(part)) };
        let offer = Arc::new(Offer {
            ticket: Ticket::new(),
            slot: (self.slot as *const Slot<'_, '_, P, K>).cast(),
        });
        let data = Arc::into_raw(Arc::clone(&offer)).cast();
        // SAFETY: the job owns a reference count, so the offer outlives it; it touches
        // the slot only once it has taken the part, and the caller then waits for it
        // before the slot goes away (`settle`, also on unwinding: `Drop`); the job catches
        // its panics.
        let job = unsafe { JobRef::new(data, take_part::<P, K>) };
        let registry = self.pool.registry();
        registry.in_flight.fetch_add(1, SeqCst);
        registry.inject(job);
        self.offer = Some(offer);
    }

    /// Whether the part in flight (if any) is done.
    fn finished(&self) -> bool {
        self.offer.as_ref().is_some_and(|o| o.ticket.finished())
    }

    /// Ends the part in flight: takes it back if no worker has it (and returns it), else
    /// waits for it.
    fn end(&mut self) -> Option<Result<P, Option<std::thread::Result<K::Output>>>> {
        let offer = self.offer.take()?;
        self.pool.registry().in_flight.fetch_sub(1, SeqCst);
        if offer.ticket.take_back() {
            // SAFETY: taken back: no worker touches the slot.
            let part = unsafe { self.slot.part.with_mut(|p| (*p).take()) };
            return Some(Ok(part.expect("heist: an offered part is in its slot")));
        }
        offer.ticket.wait();
        // SAFETY: finished: the worker wrote the outcome and no longer touches the slot.
        Some(Err(unsafe { self.slot.out.with_mut(|o| (*o).take()) }))
    }

    /// Ends the part in flight and keeps its outcome; returns the part if it was taken
    /// back.
    fn settle(&mut self, kernel: &K) -> Option<P> {
        match self.end()? {
            Ok(part) => Some(part),
            Err(out) => {
                match out.expect("heist: a finished part has an outcome") {
                    Ok(o) => {
                        self.helped = Some(match self.helped.take() {
                            Some(later) => kernel.combine(o, later),
                            None => o,
                        });
                    }
                    Err(p) => task::keep_first(&mut self.panic, p),
                }
                None
            }
        }
    }
}

impl<P: Producer, K: Kernel<P::Item>> Drop for Handoffs<'_, '_, '_, P, K> {
    /// When the caller leaves its loop early (it unwinds): stops the loop, takes back or
    /// waits for the part in flight, and drops what the parts gave. On the normal path
    /// nothing is left to do.
    fn drop(&mut self) {
        if self.offer.is_some() {
            self.slot.lp.stop.store(true, Relaxed);
        }
        let lost = match self.end() {
            Some(Ok(part)) => task::drop_caught(part),
            Some(Err(Some(Err(p)))) => Some(p),
            Some(Err(out)) => task::drop_caught(out),
            None => None,
        };
        lost.into_iter().for_each(task::drop_panic);
        task::drop_caught(self.helped.take())
            .into_iter()
            .for_each(task::drop_panic);
        self.panic.take().into_iter().for_each(task::drop_panic);
    }
}

/// Runs the rest of a loop from outside on this thread, handing parts of it to `pool`.
fn handed<P, K>(pool: &Pool, mut p: P, kernel: &K, mut acc: K::Acc, mut blocks: Blocks) -> K::Output
where
    P: Producer,
    K: Kernel<P::Item>,
{
    let lp = Loop::new(kernel);
    let slot = Slot {
        lp: &lp,
        part: RaceCell::new(None),
        out: RaceCell::new(None),
    };
    let mut offers = Handoffs {
        pool,
        slot: &slot,
        offer: None,
        helped: None,
        panic: None,
    };
    let min = len_bounds(&p).0;
    let ways = pool.workers() + 1;
    loop {
        loop {
            if offers.finished() {
                offers.settle(kernel);
            }
            let len = p.len();
            if len == 0 || lp.stopped() {
                break;
            }
            if offers.offer.is_none() && len / 2 >= min && blocks.worth(len, MIN_WAKE) {
                // Keep one share, offer the others (the workers split them).
                let (mine, part) = p.split_at((len / ways).max(min));
                p = mine;
                offers.offer(part);
                continue;
            }
            let n = blocks.next(len);
            (acc, p) = fold_block(p, n, kernel, acc);
        }
        match offers.settle(kernel) {
            // Taken back: it follows what this thread folded, so the same fold goes on.
            Some(part) if !lp.stopped() => p = part,
            _ => break,
        }
    }
    if let Some(p) = offers.panic.take() {
        task::drop_caught(acc)
            .into_iter()
            .for_each(task::drop_panic);
        panic::resume_unwind(p);
    }
    let helped = offers.helped.take();
    drop(offers);
    let mine = kernel.finish(acc);
    match helped {
        Some(h) => kernel.combine(mine, h),
        None => mine,
    }
}
