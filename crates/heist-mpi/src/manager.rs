//! A rank's manager: the one holder of its MPI state (thesis §4.1's manager, one per
//! node as §7.2 proposes). It takes in messages, forwards steal requests that the rank
//! cannot serve instead of refusing them (thesis §3.3), sends its own requests, spreads
//! bound updates, counts every message for termination detection, and runs the waves.
//! Whichever thread of the rank holds the lock acts as the manager: a worker at a task
//! boundary while the rank works, the rank loop while it is idle.

use crate::raw::{self, Comm, Msg, Outbox, Wave, WAVE};
use crate::wire::{self, Request};
use crate::{Error, ErrorKind, Report};
use std::sync::atomic::AtomicI64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// Indices of the wave counters: task batches sent and received (the basic messages of
/// the termination proof), and every other message sent and received.
pub(crate) const TASKS_SENT: usize = 0;
pub(crate) const TASKS_RECEIVED: usize = 1;
pub(crate) const CTRL_SENT: usize = 2;
pub(crate) const CTRL_RECEIVED: usize = 3;

/// A rank's MPI state.
pub(crate) struct Manager {
    comm: Comm,
    out: Outbox,
    counts: [u64; WAVE],
    wave: Option<Wave>,
    /// A finished wave whose sums the rank loop has not looked at yet.
    done: Option<[u64; WAVE]>,
    /// Steal requests received and not yet served or routed.
    pub(crate) requests: Vec<Request>,
    /// Task batches received and not yet decoded.
    pub(crate) inbox: Vec<Vec<u8>>,
    /// Partial results that arrived before the combining tree asked for them.
    pub(crate) early: Vec<Msg>,
    /// The failure of the lowest failing rank heard of.
    pub(crate) failure: Option<Error>,
    /// This rank's own request is out.
    pub(crate) outstanding: bool,
    /// Requests of ours that came back unanswered in a row.
    pub(crate) misses: u32,
    pub(crate) retry_at: Option<Instant>,
    /// Termination is known: requests go straight home, none are sent.
    pub(crate) finished: bool,
    bound_sent: i64,
    rng: u64,
    max_hops: u32,
    pub(crate) stats: Report,
}

impl Manager {
    pub(crate) fn new(comm: Comm, max_hops: u32, bound: i64) -> Manager {
        let stats = Report {
            rank: comm.rank,
            ..Report::default()
        };
        Manager {
            rng: 0x9E37_79B9_7F4A_7C15 ^ (comm.rank as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
            max_hops,
            comm,
            out: Outbox::default(),
            counts: [0; WAVE],
            wave: None,
            done: None,
            requests: Vec::new(),
            inbox: Vec::new(),
            early: Vec::new(),
            failure: None,
            outstanding: false,
            misses: 0,
            retry_at: None,
            finished: false,
            bound_sent: bound,
            stats,
        }
    }

    pub(crate) fn rank(&self) -> i32 {
        self.comm.rank
    }

    pub(crate) fn size(&self) -> i32 {
        self.comm.size
    }

    pub(crate) fn comm(&self) -> &Comm {
        &self.comm
    }

    pub(crate) fn failed(&self) -> bool {
        self.failure.is_some()
    }

    fn random(&mut self) -> u64 {
        // xorshift64*
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A random rank other than this one and `not`.
    fn victim(&mut self, not: i32) -> i32 {
        let (me, p) = (self.comm.rank, self.comm.size);
        let skips = if not == me {
            [me, i32::MAX]
        } else {
            [me.min(not), me.max(not)]
        };
        let others = if not == me { p - 1 } else { p - 2 };
        let mut v = (self.random() % others as u64) as i32;
        for skip in skips {
            if v >= skip {
                v += 1;
            }
        }
        v
    }

    /// Sends `bytes`; a task batch counts as a basic message of the termination proof.
    pub(crate) fn send(&mut self, dest: i32, tag: i32, bytes: Vec<u8>) {
        let slot = if tag == wire::TAG_TASKS {
            TASKS_SENT
        } else {
            CTRL_SENT
        };
        if tag != wire::TAG_RESULT {
            self.counts[slot] += 1;
        }
        self.stats.messages_sent += 1;
        self.stats.bytes_sent += bytes.len() as u64;
        self.out.send(&self.comm, dest, tag, bytes);
    }

    /// Takes in every message that has arrived. Requests wait in `requests`, task batches
    /// in `inbox`; bounds and failures take effect at once.
    pub(crate) fn receive_all(&mut self, bound: &AtomicI64) {
        while let Some(m) = raw::try_recv(&self.comm, None) {
            if m.tag == wire::TAG_RESULT {
                self.early.push(m);
                continue;
            }
            self.stats.messages_received += 1;
            self.stats.bytes_received += m.bytes.len() as u64;
            if m.tag == wire::TAG_TASKS {
                self.counts[TASKS_RECEIVED] += 1;
                self.stats.batches_received += 1;
                self.outstanding = false;
                self.misses = 0;
                self.inbox.push(m.bytes);
                continue;
            }
            self.counts[CTRL_RECEIVED] += 1;
            match m.tag {
                wire::TAG_REQUEST => match Request::decode(&m.bytes) {
                    Some(r) if r.thief == self.comm.rank as u32 => self.came_back(),
                    Some(r) => {
                        self.stats.requests_received += 1;
                        self.requests.push(r);
                    }
                    None => {
                        self.record(self.error(ErrorKind::Codec, "malformed steal request".into()))
                    }
                },
                wire::TAG_BOUND => {
                    if let Some(v) = wire::decode_bound(&m.bytes) {
                        bound.fetch_max(v, Relaxed);
                    }
                }
                wire::TAG_ABORT => self.record(wire::decode_failure(&m.bytes, m.source)),
                _ => self.record(Error {
                    rank: m.source,
                    kind: ErrorKind::Codec,
                    message: format!("unknown message tag {}", m.tag),
                }),
            }
        }
    }

    /// Our own request came back unanswered: wait a little before the next, longer after
    /// each miss in a row (up to about a millisecond).
    fn came_back(&mut self) {
        self.outstanding = false;
        self.misses += 1;
        self.stats.requests_returned += 1;
        let wait = Duration::from_micros(20u64 << self.misses.min(6));
        self.retry_at = Some(Instant::now() + wait);
    }

    /// Keeps the failure of the lowest rank.
    fn record(&mut self, e: Error) {
        if self.failure.as_ref().is_none_or(|f| e.rank < f.rank) {
            self.failure = Some(e);
        }
    }

    /// An error of this rank's.
    fn error(&self, kind: ErrorKind, message: String) -> Error {
        Error {
            rank: self.comm.rank,
            kind,
            message,
        }
    }

    /// This rank failed: keep the failure and tell every other rank.
    pub(crate) fn fail(&mut self, kind: ErrorKind, message: String) {
        let e = self.error(kind, message);
        let bytes = wire::encode_failure(&e);
        let (me_i, p) = (self.comm.rank, self.comm.size);
        for r in (0..p).filter(|&r| r != me_i) {
            self.send(r, wire::TAG_ABORT, bytes.clone());
        }
        self.record(e);
    }

    /// Passes on a request this rank cannot serve: forward it to a random rank other than
    /// the thief, or, after `max_hops` forwards (or once termination is known), send it
    /// back to its thief.
    pub(crate) fn route(&mut self, mut r: Request) {
        let home = self.finished || r.hops + 1 >= self.max_hops || self.comm.size <= 2;
        if home {
            self.stats.requests_sent_home += 1;
            self.send(r.thief as i32, wire::TAG_REQUEST, r.encode());
        } else {
            r.hops += 1;
            let v = self.victim(r.thief as i32);
            self.stats.requests_forwarded += 1;
            self.send(v, wire::TAG_REQUEST, r.encode());
        }
    }

    pub(crate) fn route_all(&mut self) {
        for r in std::mem::take(&mut self.requests) {
            self.route(r);
        }
    }

    /// Sends this rank's steal request to a random other rank, if it may.
    pub(crate) fn ask(&mut self, one: bool) {
        if self.outstanding || self.finished || self.failed() || self.comm.size < 2 {
            return;
        }
        if self.retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        let r = Request {
            thief: self.comm.rank as u32,
            hops: 0,
            one,
        };
        let v = self.victim(self.comm.rank);
        self.outstanding = true;
        self.stats.requests_sent += 1;
        self.send(v, wire::TAG_REQUEST, r.encode());
    }

    /// Housekeeping at every poll: complete sends, spread a better bound, move the wave.
    pub(crate) fn maintain(&mut self, bound: i64) {
        self.out.progress();
        if bound > self.bound_sent {
            self.bound_sent = bound;
            self.spread_bound(bound);
        }
        if let Some(w) = self.wave.as_mut() {
            if let Some(sums) = w.test() {
                self.wave = None;
                self.done = Some(sums);
            }
        }
    }

    /// Sends `v` to this rank's hypercube neighbours (rank ^ 2^i); a rank that learns of
    /// a better bound sends it on at its next poll, so an improvement reaches every rank
    /// in at most log2(P) hops and each rank sends it at most log2(P) times.
    fn spread_bound(&mut self, v: i64) {
        let (me, p) = (self.comm.rank, self.comm.size);
        let mut bit = 1;
        while bit < p {
            let n = me ^ bit;
            if n < p {
                self.send(n, wire::TAG_BOUND, wire::encode_bound(v));
            }
            bit <<= 1;
        }
    }

    /// The next finished wave's sums, starting the next wave when `contribute` and none
    /// is running. Only a passive rank may contribute (see PROTOCOLS.md).
    pub(crate) fn wave_step(&mut self, contribute: bool) -> Option<[u64; WAVE]> {
        if let Some(sums) = self.done.take() {
            return Some(sums);
        }
        if contribute && self.wave.is_none() {
            self.stats.waves += 1;
            self.wave = Some(Wave::start(&self.comm, self.counts));
        }
        None
    }

    /// Waits until every send has completed (after termination: all were received).
    pub(crate) fn flush(&mut self) {
        self.out.flush();
    }
}
