//! Relay's side of a loop's |S|+1 cut (Embracing Explicit Communication in Work-Stealing
//! Runtime Systems, §5.3.2, Fig. 5.13): a loop that splits for |S| waiting steal requests
//! takes them all first, cuts its rest into |S|+1 pieces, pushes |S| of them, and then
//! answers each request with one piece, whatever its steal-half flag says.

use super::request;
use super::termination;
use super::{lower_gate_then_fence, relay, state, Request};
use crate::worker::Worker;

/// The requests (and manager updates) taken from a worker's channel for one cut.
#[derive(Default)]
pub(crate) struct Waiting(Vec<Request>);

impl Waiting {
    /// Lowers `w`'s flag and takes every request waiting for it. A request that comes
    /// later raises the flag again and is handled at the next push or pop, as usual.
    pub(crate) fn take(w: &Worker) -> Waiting {
        lower_gate_then_fence(w.owner());
        let ch = relay(w).channels(w.index());
        Waiting(std::iter::from_fn(|| ch.requests.recv()).collect())
    }

    /// How many of them are other thieves' steal requests: the |S| of the cut.
    pub(crate) fn thieves(&self, w: &Worker) -> usize {
        let me = w.index() as u32;
        self.0.iter().filter(|r| !r.update && r.thief != me).count()
    }

    /// Handles every request taken, after the pieces were pushed: a thief's request
    /// takes one task (its piece), or is forwarded if a thief took the piece first.
    pub(crate) fn answer(self, w: &Worker) {
        if self.0.is_empty() {
            return;
        }
        state(w).spawned.set(true);
        for mut req in self.0 {
            req.amount = super::StealAmount::One;
            request::handle(w, req);
        }
        termination::check(w);
    }
}
