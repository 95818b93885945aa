//! Lace ("Lace: non-blocking split deque for work-stealing", van Dijk and van de Pol):
//! the non-blocking split deque. Leapfrogging lives with the rest of the waiting logic in
//! `worker.rs`.

pub(crate) mod deque;

#[cfg(all(test, loom))]
mod loom_tests;
