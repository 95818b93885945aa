//! The registration word of a coordinator ("Work-stealing for mixed-mode parallelism by
//! deterministic team-building", §3, Alg. 6, 7 and 9): four 16-bit fields in one 64-bit
//! word, changed only by compare-and-swap.
//!
//! - `r`: workers the coordinator's pending team task needs (0: none pending);
//! - `a`: workers registered, the coordinator included;
//! - `t`: the size of the team fixed for execution (0 while forming); a fixed team
//!   persists after its task, for the next task of the same size;
//! - `n`: the revocation counter; a registration made under another `n` is void.
//!
//! One CAS registers a joining worker; the coordinator fixes the team with one more.

use crate::core::sync::AtomicU64;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};

/// A decoded registration word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Reg {
    pub(crate) r: u16,
    pub(crate) a: u16,
    pub(crate) t: u16,
    pub(crate) n: u16,
}

impl Reg {
    pub(crate) fn pack(self) -> u64 {
        u64::from(self.r)
            | u64::from(self.a) << 16
            | u64::from(self.t) << 32
            | u64::from(self.n) << 48
    }

    pub(crate) fn unpack(w: u64) -> Reg {
        Reg {
            r: w as u16,
            a: (w >> 16) as u16,
            t: (w >> 32) as u16,
            n: (w >> 48) as u16,
        }
    }
}

/// A coordinator's registration word.
pub(crate) struct Word(AtomicU64);

impl Word {
    pub(crate) fn new() -> Word {
        Word(AtomicU64::new(
            Reg {
                a: 1,
                ..Reg::default()
            }
            .pack(),
        ))
    }

    pub(crate) fn load(&self) -> Reg {
        Reg::unpack(self.0.load(Acquire))
    }

    fn cas(&self, old: Reg, new: Reg) -> bool {
        self.0
            .compare_exchange(old.pack(), new.pack(), AcqRel, Relaxed)
            .is_ok()
    }

    /// A joining worker's one CAS: registers while the team is forming and short of
    /// members, unless `held(n)` says the worker holds a registration under the current
    /// `n` already (it is counted once). Returns the `n` it registered under.
    pub(crate) fn register(&self, held: impl Fn(u16) -> bool) -> Option<u16> {
        loop {
            let old = self.load();
            if old.r < 2 || old.t != 0 || old.a >= old.r || held(old.n) {
                return None;
            }
            if self.cas(
                old,
                Reg {
                    a: old.a + 1,
                    ..old
                },
            ) {
                return Some(old.n);
            }
        }
    }

    /// Withdraws a registration made under `n`, unless the team was fixed with a task
    /// pending (then the member must run it). True if the member is free to go.
    pub(crate) fn leave(&self, n: u16) -> bool {
        loop {
            let old = self.load();
            if old.n != n {
                return true; // revoked: the registration is void already
            }
            if old.t != 0 && old.r != 0 {
                return false; // a task of the fixed team is pending
            }
            if self.cas(
                old,
                Reg {
                    a: old.a - 1,
                    t: 0,
                    ..old
                },
            ) {
                return true;
            }
        }
    }

    /// The coordinator asks for a team of `r`. A persisting team of exactly `r` is reused
    /// (true); otherwise every registration is revoked and forming starts afresh.
    pub(crate) fn request(&self, r: u16) -> bool {
        loop {
            let old = self.load();
            let (new, kept) = if old.t == r && old.a == r {
                (Reg { r, ..old }, true)
            } else {
                let fresh = Reg {
                    r,
                    a: 1,
                    t: 0,
                    n: old.n.wrapping_add(1),
                };
                (fresh, false)
            };
            if self.cas(old, new) {
                return kept;
            }
        }
    }

    /// The coordinator fixes its team once `a == r` (the second CAS of the paper).
    pub(crate) fn fix(&self) -> bool {
        let old = self.load();
        old.r >= 2 && old.t == 0 && old.a == old.r && self.cas(old, Reg { t: old.r, ..old })
    }

    /// The coordinator gives up its pending request (a higher-priority team needs it):
    /// every registration with it is revoked.
    pub(crate) fn revoke(&self) {
        loop {
            let old = self.load();
            let new = Reg {
                r: 0,
                a: 1,
                t: 0,
                n: old.n.wrapping_add(1),
            };
            if self.cas(old, new) {
                return;
            }
        }
    }

    /// The team's task is done: nothing pending, the team persists (`t` kept) until a
    /// member leaves or another request comes.
    pub(crate) fn finish(&self) {
        loop {
            let old = self.load();
            if self.cas(old, Reg { r: 0, ..old }) {
                return;
            }
        }
    }
}
