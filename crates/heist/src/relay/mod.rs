//! The relay scheduler (seed 000 ch. 3–4): private deques, steal requests over channels.
//! (Under construction: every entry point currently reports "nothing".)

use crate::lace::deque::Pop;
use crate::worker::Worker;

pub(crate) fn poll(_w: &Worker) {}

pub(crate) fn pop_slow(w: &Worker) -> Pop {
    w.owner().pop_slow()
}

pub(crate) fn steal(_w: &Worker, _victim: usize) -> bool {
    false
}
