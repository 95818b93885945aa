//! Relay's side of a loop's |S|+1 cut (Embracing Explicit Communication in Work-Stealing
//! Runtime Systems, §5.3.2, Fig. 5.13): a loop that splits for |S| waiting steal requests
//! takes them all first, cuts its rest into |S|+1 pieces, pushes |S| of them, and then
//! answers each request with one piece, whatever its steal-half flag says.

use super::request;
use super::termination;
use super::{lower_gate_then_fence, relay, state, took_offer, Request};
use crate::core::worker::Worker;

/// The requests (and manager updates) taken from a worker's channel for one cut. They
/// are answered by [`Waiting::answer`], or when dropped (a cut that unwinds), so that no
/// thief waits for an answer that never comes.
#[derive(Default)]
pub(crate) struct Waiting<'w> {
    w: Option<&'w Worker>,
    reqs: Vec<Request>,
}

impl<'w> Waiting<'w> {
    /// Lowers `w`'s flag and takes every request waiting for it. A request that comes
    /// later raises the flag again and is handled at the next push or pop, as usual.
    pub(crate) fn take(w: &'w Worker) -> Waiting<'w> {
        let held = w.owner().hold();
        lower_gate_then_fence(w.owner());
        drop(held);
        let ch = relay(w).channels(w.index());
        // A held request (`Peer::hold`) is one of the |S|: `split_demanded` counted it.
        let held = state(w).held.take();
        Waiting {
            w: Some(w),
            reqs: held
                .into_iter()
                .chain(std::iter::from_fn(|| ch.requests.recv()))
                .collect(),
        }
    }

    /// How many of them are other thieves' steal requests still to answer: the |S| of
    /// the cut (a thief that took an offer since it asked has work).
    pub(crate) fn thieves(&self) -> usize {
        let Some(w) = self.w else { return 0 };
        let me = w.index() as u32;
        self.reqs
            .iter()
            .filter(|r| !r.update && r.thief != me && !took_offer(w, r.thief))
            .count()
    }

    /// Into how many parts a split cuts the rest: |S|+1 on relay (1: no split, when no
    /// thief waits); two on Lace, whose thieves take the pushed part themselves.
    pub(crate) fn ways(&self) -> usize {
        match self.w {
            Some(_) => self.thieves() + 1,
            None => 2,
        }
    }

    /// Handles every request taken, after the pieces were pushed: a thief's request
    /// takes one task (its piece), or is forwarded if a thief took the piece first.
    pub(crate) fn answer(mut self) {
        self.answer_now();
    }

    fn answer_now(&mut self) {
        let Some(w) = self.w else {
            return;
        };
        if self.reqs.is_empty() {
            return;
        }
        state(w).spawned.set(true);
        let _held = w.owner().hold();
        for mut req in std::mem::take(&mut self.reqs) {
            req.amount = super::StealAmount::One;
            request::handle(w, req);
        }
        // One held again is handled at the next poll, as in `poll`.
        if state(w).held.get().is_some() {
            w.registry().infos[w.index()].deque.raise_gate();
        }
        termination::check(w);
    }
}

impl crate::core::schedule::Requests for Waiting<'_> {
    fn ways(&self) -> usize {
        Waiting::ways(self)
    }

    fn answer(self: Box<Self>) {
        Waiting::answer(*self);
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.answer_now();
    }
}
