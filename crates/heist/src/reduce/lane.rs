//! One worker's part of a reduction ("Blaze-Tasks", §4.2 the task pool, §4.4
//! termination): its private queue and the shared part that thieves take from, its
//! made/done counters, and the load it shows to thieves.
//!
//! Blaze's queue is an owner-only-producer FIFO that thieves drain with a CAS per task.
//! Here the queue is private (a `Vec` used LIFO, no atomics), and work reaches thieves
//! only when they ask: a thief raises the victim's `hungry` flag, and the owner moves the
//! older half of its queue into a mutex-guarded shared part at its next push or pop
//! (private-deque stealing, as in the relay scheduler).

use crate::core::sync::lock;
use crate::core::sync::AtomicU64;
use std::cell::{Cell, UnsafeCell};
use std::mem::{align_of, size_of, MaybeUninit};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize};
use std::sync::Mutex;

pub(super) const FREE: u8 = 0;
pub(super) const IN: u8 = 1;
pub(super) const LEFT: u8 = 2;

/// Keeps what one side writes often off the cache lines the other side reads.
#[repr(align(128))]
pub(super) struct Padded<X>(pub(super) X);

/// One worker's part of a reduction.
pub(super) struct Lane<T> {
    /// Written by the owner, read only by termination checks.
    pub(super) counts: Padded<Counts>,
    /// Read by thieves as they choose and ask.
    pub(super) offer: Padded<Offer>,
    pub(super) shared: Padded<Mutex<Vec<T>>>,
    /// Owner only, while `offer.state` is `IN`; the newest task last.
    private: UnsafeCell<Vec<T>>,
}

pub(super) struct Counts {
    /// Tasks pushed by this lane's worker.
    pub(super) made: AtomicU64,
    /// Tasks run to completion by this lane's worker.
    pub(super) done: AtomicU64,
}

impl Counts {
    pub(super) fn new() -> Counts {
        Counts {
            made: AtomicU64::new(0),
            done: AtomicU64::new(0),
        }
    }

    /// Publishes a worker's counts: `made` first, so that a checker that sees a
    /// completion also sees the pushes of that task.
    pub(super) fn publish(&self, made: u64, done: u64) {
        self.made.store(made, Release);
        self.done.store(done, Release);
    }
}

/// Blaze's termination test: all `done` counters, then all `made` counters. Every
/// completion read in the first scan has its task's push in the second (published with
/// it or before the task left its maker), so equal sums mean every published push is a
/// published completion. Then nothing runs: the pushes of a published completion are
/// published, so by induction from the root every task is among them.
pub(super) fn ended<'a>(counts: impl Iterator<Item = &'a Counts> + Clone) -> bool {
    let done: u64 = counts.clone().map(|c| c.done.load(Acquire)).sum();
    let made: u64 = counts.map(|c| c.made.load(Acquire)).sum();
    done == made
}

pub(super) struct Offer {
    /// `FREE`, `IN` while its worker takes part, `LEFT` after.
    pub(super) state: AtomicU8,
    /// Raised by a thief: the owner should move work into `shared`.
    pub(super) hungry: AtomicBool,
    /// The lane's tasks when its owner last handed work out or took some in: a hint
    /// for thieves choosing victims, published only then (never per task).
    pub(super) load: AtomicUsize,
    /// Tasks in `shared`.
    pub(super) shared_len: AtomicUsize,
}

impl<T> Lane<T> {
    pub(super) fn new() -> Self {
        Lane {
            counts: Padded(Counts::new()),
            offer: Padded(Offer {
                state: AtomicU8::new(FREE),
                hungry: AtomicBool::new(false),
                load: AtomicUsize::new(0),
                shared_len: AtomicUsize::new(0),
            }),
            shared: Padded(Mutex::new(Vec::new())),
            private: UnsafeCell::new(Vec::new()),
        }
    }

    /// Takes the lane for its worker with `root` queued (the caller of the reduction).
    pub(super) fn start(&mut self, root: T) {
        self.offer.0.state.store(IN, Relaxed);
        self.private.get_mut().push(root);
        self.counts.0.made.store(1, Relaxed);
        self.offer.0.load.store(1, Relaxed);
    }

    /// Whether a thief could ask this lane for work: its owner takes part.
    pub(super) fn active(&self) -> bool {
        self.offer.0.state.load(Relaxed) == IN
    }

    /// Tasks a thief may hope to find here.
    pub(super) fn load(&self) -> usize {
        self.offer.0.load.load(Relaxed) + self.offer.0.shared_len.load(Relaxed)
    }

    /// Raises the `hungry` flag (a thief asks for work).
    pub(super) fn ask(&self) {
        let hungry = &self.offer.0.hungry;
        if !hungry.load(Relaxed) {
            hungry.store(true, Relaxed);
        }
    }
}

/// Moves the newest task out of `q`, with its new length.
///
/// A task aligned to 8 bytes is read one 8-byte word at a time (volatile loads, which
/// the compiler may not merge): such a task was usually stored moments ago by a push,
/// field by field, and a wider load spanning several of those stores would wait for them
/// to reach the cache (a store-forwarding stall, about a tenth of a small task's time:
/// knapsack's three-word tasks ran 1.8× heist-join's time at one worker read whole).
/// A task of narrower alignment is read whole: its fields are small (UTS's 20-byte
/// state is a byte array), and split into them it costs more to put back together than
/// the stall (1.16× heist-join's time read by fields, 0.93× read whole).
#[inline(always)]
fn pop_newest<T>(q: &mut Vec<T>) -> Option<(T, usize)> {
    let len = q.len().checked_sub(1)?;
    // SAFETY: `len < q.len()`, so the slot holds an initialised task; the length drops
    // first, so the task is moved out exactly once.
    unsafe {
        q.set_len(len);
        let src = q.as_ptr().add(len);
        let t = if align_of::<T>() >= 8 {
            read_by_words(src)
        } else {
            std::ptr::read(src)
        };
        Some((t, len))
    }
}

/// Reads the value at `src`, of a type aligned to at least 8 bytes, one 8-byte word at a
/// time.
///
/// # Safety
/// As `std::ptr::read`, and `T` is aligned to at least 8 bytes.
#[inline(always)]
unsafe fn read_by_words<T>(src: *const T) -> T {
    let mut out = MaybeUninit::<T>::uninit();
    let src = src.cast::<MaybeUninit<u64>>();
    let dst = out.as_mut_ptr().cast::<MaybeUninit<u64>>();
    for i in 0..size_of::<T>() / 8 {
        // SAFETY: both places are aligned for `T`, hence for words, and a size is a
        // multiple of its alignment, so the words cover `T` exactly; `MaybeUninit`
        // words carry padding and provenance as they are.
        unsafe { dst.add(i).write(std::ptr::read_volatile(src.add(i))) };
    }
    // SAFETY: every byte of `*src`, a valid `T`, was copied.
    unsafe { out.assume_init() }
}

/// The owner's view of its lane while it takes part.
pub(super) struct Owner<'a, T> {
    pub(super) lane: &'a Lane<T>,
    made: Cell<u64>,
    pub(super) done: Cell<u64>,
}

impl<'a, T> Owner<'a, T> {
    /// The owner of `lane`, which its worker claimed (state `IN`).
    pub(super) fn new(lane: &'a Lane<T>) -> Self {
        Owner {
            lane,
            made: Cell::new(lane.counts.0.made.load(Relaxed)),
            done: Cell::new(lane.counts.0.done.load(Relaxed)),
        }
    }

    /// Runs `f` on the private queue. `f` must not run user code that could reach this
    /// owner again (only task drops run inside, and they cannot reach it).
    #[inline(always)]
    pub(super) fn with<X>(&self, f: impl FnOnce(&mut Vec<T>) -> X) -> X {
        // SAFETY: only the owner, on its own thread, touches `private` while its lane is
        // `IN` (`Owner` is neither `Send` nor `Sync`), and no caller re-enters `with`
        // inside `f`, so this is the only reference.
        f(unsafe { &mut *self.lane.private.get() })
    }

    /// Publishes the counts. Called before tasks are handed to thieves and whenever the
    /// private queue runs dry, never per task: the termination test needs only that a
    /// task's pushes are published no later than its completion, and before any of them
    /// can reach a thief.
    pub(super) fn publish(&self) {
        self.lane.counts.0.publish(self.made.get(), self.done.get());
    }

    #[inline]
    pub(super) fn pop(&self) -> Option<T> {
        match self.with(pop_newest) {
            Some((t, len)) => {
                if self.lane.offer.0.hungry.load(Relaxed) && len > 0 {
                    self.donate();
                }
                Some(t)
            }
            None => self.reclaim(),
        }
    }

    #[inline]
    pub(super) fn push(&self, task: T) {
        let len = self.with(|q| {
            q.push(task);
            q.len()
        });
        self.made.set(self.made.get() + 1);
        if self.lane.offer.0.hungry.load(Relaxed) && len >= 2 {
            self.donate();
        }
    }

    /// Hands queued tasks to a thief that asked, if any ([`super::ReduceCtx::poll`]).
    pub(super) fn poll(&self) {
        if self.lane.offer.0.hungry.load(Relaxed) && self.with(|q| !q.is_empty()) {
            self.donate();
        }
    }

    /// Moves the older half of the private queue into the shared part for thieves.
    #[cold]
    fn donate(&self) {
        self.publish();
        let mut shared = lock(&self.lane.shared.0);
        let left = self.with(|q| {
            shared.extend(q.drain(..q.len().div_ceil(2)));
            q.len()
        });
        self.lane.offer.0.shared_len.store(shared.len(), Release);
        self.lane.offer.0.hungry.store(false, Relaxed);
        self.lane.offer.0.load.store(left + shared.len(), Relaxed);
    }

    /// Takes back what no thief took from the shared part.
    #[cold]
    fn reclaim(&self) -> Option<T> {
        if self.lane.offer.0.shared_len.load(Acquire) == 0 {
            self.lane.offer.0.load.store(0, Relaxed);
            return None;
        }
        let mut shared = lock(&self.lane.shared.0);
        let (t, len) = self.with(|q| {
            q.extend(shared.drain(..));
            (q.pop(), q.len())
        });
        self.lane.offer.0.shared_len.store(0, Release);
        drop(shared);
        self.lane.offer.0.load.store(len, Relaxed);
        t
    }

    /// Takes half of `victim`'s shared part (at least one task) into this owner's queue.
    pub(super) fn take_from(&self, victim: &Lane<T>) -> bool {
        if victim.offer.0.shared_len.load(Acquire) == 0 {
            return false;
        }
        let Ok(mut shared) = victim.shared.0.try_lock() else {
            return false;
        };
        let k = shared.len().div_ceil(2);
        let len = self.with(|q| {
            q.extend(shared.drain(..k));
            q.len()
        });
        victim.offer.0.shared_len.store(shared.len(), Release);
        drop(shared);
        self.lane.offer.0.load.store(len, Relaxed);
        k > 0
    }

    /// Drops what is left in the private queue (the reduction stopped), each task once.
    pub(super) fn drain(&self) {
        self.with(super::drain);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::pop_newest;

    #[test]
    fn pops_return_the_newest_task_whole_at_every_alignment() {
        // Word-read: 8-aligned with padding and an owned pointer; read whole: byte arrays.
        let mut q: Vec<(u8, Box<u64>, [u8; 3])> = (0..5)
            .map(|i| (i, Box::new(u64::from(i) * 7), [i; 3]))
            .collect();
        for i in (0..5u8).rev() {
            let (t, len) = pop_newest(&mut q).unwrap();
            assert_eq!(
                (t.0, *t.1, t.2, len),
                (i, u64::from(i) * 7, [i; 3], usize::from(i))
            );
        }
        assert!(pop_newest(&mut q).is_none());
        let mut q: Vec<([u8; 20], u32)> = vec![([1; 20], 2), ([3; 20], 4)];
        assert_eq!(pop_newest(&mut q), Some((([3; 20], 4), 1)));
        let mut q = vec![(), ()];
        assert_eq!(pop_newest(&mut q), Some(((), 1)));
    }
}
