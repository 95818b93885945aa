//! Lace's non-blocking split deque ("Lace: non-blocking split deque for work-stealing",
//! §3–4). Positions below `split` are shared
//! and may be stolen by a CAS on the packed `{tail, split}` word; positions from `split`
//! to `head` are private. The owner moves `split` up when a thief asks (grow) and down
//! when it runs out of private work (shrink). Grow and shrink are CAS loops on the packed
//! word rather than Lace's 32-bit store into half of it, which Rust's memory model does
//! not allow; the shrink CAS is the one fence of the protocol.
//!
//! The owner's fast paths compare `head` with the two words of the gate and nothing else:
//! push with `limit` (the array's end, or its start to force the slow path) and pop with
//! `floor` (the private part's start, or the array's end to force the slow path). A thief
//! that finds nothing shared raises the gate (Lace's split request, `splitreq`) by a store
//! of `limit := start`, so "full" and "asked to share" cost one compare together. The
//! relay scheduler raises the same gate for "a steal request is waiting", so that the
//! owner polls at its next push or pop. The owner
//! sits at a fixed offset from its deque's gate (`Home`), so the compare needs no pointer
//! load either.

use crate::stats::{stat, Counters};
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, Padded};
use crate::task::Slot;
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::{self, offset_of};
use std::ptr::{self, NonNull};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

fn pack(tail: u32, split: u32) -> u64 {
    u64::from(tail) | (u64::from(split) << 32)
}

fn unpack(ts: u64) -> (u32, u32) {
    (ts as u32, (ts >> 32) as u32)
}

/// The two words the owner's fast paths compare `head` with (see the module docs).
struct Gate {
    limit: AtomicPtr<Slot>,
    floor: AtomicPtr<Slot>,
}

/// A worker's deque: the slot array and the words thieves and requesters touch.
pub(crate) struct Deque {
    /// `{tail, split}`: the first unstolen task and the first private one.
    ts: Padded<AtomicU64>,
    /// Hint that nothing is left to steal; the owner sets it, thieves check it first.
    allstolen: AtomicBool,
    gate: Padded<Gate>,
    slots: Box<[Slot]>,
}

/// What `steal` found.
pub(crate) enum Steal<'a> {
    /// The slot is claimed; run it and mark it done.
    Taken(&'a Slot),
    /// Lost a race with another thief or the owner; the deque may still have work.
    Busy,
    /// Nothing shared (the gate has been raised for the owner to share more).
    Empty,
}

impl Deque {
    /// Where the gate words lie in a `Deque`, for [`Home::GATE_OFFSET`].
    pub(crate) const GATE_OFFSET: usize = offset_of!(Deque, gate) + offset_of!(Padded<Gate>, 0);

    /// A deque of `capacity` slots (for the loom models).
    #[cfg(all(test, loom))]
    pub(crate) fn new(capacity: usize) -> Deque {
        Deque::try_new(capacity).expect("a model's deque fits in memory")
    }

    /// A deque of `capacity` slots (less than `u32::MAX`), and one more that only a scope's
    /// mark may take (`Owner::mark_slot`), so that a full deque still takes one; or the
    /// allocation that failed. Outside loom the slots are not written: the system backs
    /// the array only as deep as the deque is used.
    pub(crate) fn try_new(capacity: usize) -> Result<Deque, crate::mem::NoMemory> {
        assert!(capacity < u32::MAX as usize);
        #[cfg(loom)]
        let slots = crate::mem::try_boxed(capacity + 1, |_| Slot::new())?;
        // SAFETY: all-zero bytes are `Slot::new()`: `thief` 0, `entry` `None` (a null
        // reference), and a payload that may hold anything.
        #[cfg(not(loom))]
        let slots = unsafe { crate::mem::try_zeroed::<Slot>(capacity + 1)? };
        Ok(Deque::with_slots(slots))
    }

    fn with_slots(slots: Box<[Slot]>) -> Deque {
        let start = slots.as_ptr() as *mut Slot;
        Deque {
            ts: Padded(AtomicU64::new(0)),
            allstolen: AtomicBool::new(true),
            gate: Padded(Gate {
                limit: AtomicPtr::new(start),
                floor: AtomicPtr::new(start),
            }),
            slots,
        }
    }

    fn start(&self) -> *mut Slot {
        self.slots.as_ptr() as *mut Slot
    }

    /// One past the end of the slot array, the mark's slot included.
    fn end(&self) -> *mut Slot {
        // SAFETY: one past the end of the slot array.
        unsafe { self.start().add(self.slots.len()) }
    }

    /// Takes the oldest shared task, if any (Lace Fig. 4 `steal`). Never retries: a lost
    /// race is reported as `Busy` and the caller picks a victim again.
    pub(crate) fn steal(&self) -> Steal<'_> {
        if self.allstolen.load(Relaxed) {
            return Steal::Empty;
        }
        let ts = self.ts.0.load(Acquire);
        let (tail, split) = unpack(ts);
        if tail < split {
            let next = pack(tail + 1, split);
            return match self.ts.0.compare_exchange(ts, next, AcqRel, Relaxed) {
                Ok(_) => Steal::Taken(&self.slots[tail as usize]),
                Err(_) => Steal::Busy,
            };
        }
        // Raise the gate (Lace's split request); tested first so that idle thieves do not
        // keep taking the line.
        let limit = &self.gate.0.limit;
        if limit.load(Relaxed) != self.start() {
            limit.store(self.start(), Relaxed);
        }
        Steal::Empty
    }

    /// Raises the gate: sends the owner's next push and pop to their slow paths (relay: a
    /// steal request has been queued for it).
    pub(crate) fn raise_gate(&self) {
        self.gate.0.limit.store(self.start(), Relaxed);
        self.gate.0.floor.store(self.end(), Relaxed);
    }

    /// Whether a thief could take something now, for a worker's last look before sleeping.
    pub(crate) fn has_shared(&self) -> bool {
        let (tail, split) = unpack(self.ts.0.load(Acquire));
        !self.allstolen.load(Relaxed) && tail < split
    }
}

/// What `Owner::pop` found for the top task.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pop {
    /// Still ours: run it inline.
    Private,
    /// A thief has it: wait (leapfrog), then call `pop_stolen`.
    Stolen,
}

/// Where an [`Owner`] lives relative to the gate of its deque. The owner's fast paths
/// compute the gate's address from their own instead of loading a pointer to it: one
/// dependent load less in every push and pop.
///
/// # Safety
/// Every `Owner<H>` on which an owner operation is called lies exactly `GATE_OFFSET`
/// bytes before the gate of the deque it was made for (a negative offset: after it).
pub(crate) unsafe trait Home {
    const GATE_OFFSET: isize;
}

/// The owner's private view of its deque: plain cells, read and written by one thread.
/// `head` and `o_split` are slot pointers so that the fast paths need no index arithmetic.
pub(crate) struct Owner<H: Home> {
    head: Cell<*const Slot>,
    o_split: Cell<*const Slot>,
    /// One past the last slot a task may take: the mark's slot lies here.
    end: *const Slot,
    base: *const Slot,
    o_allstolen: Cell<bool>,
    /// One past the highest private spawned task, or `base`: pops below it take the slow
    /// path, so that a sync finds spawned tasks above its own (see `crate::spawn`).
    o_spawn_top: Cell<*const Slot>,
    dq: NonNull<Deque>,
    counters: NonNull<Counters>,
    _home: PhantomData<H>,
}

impl<H: Home> Owner<H> {
    /// # Safety
    /// `dq` and `counters` outlive the `Owner`, only this `Owner` calls the owner
    /// operations on `dq`, and it does so only once it has been placed where `H` says.
    pub(crate) unsafe fn new(dq: &Deque, counters: &Counters) -> Owner<H> {
        let base = dq.start();
        // `gate_addr` reaches the gate from the owner's address, outside the owner, so it
        // takes up this provenance of the gate: exposed here, for the deque's lifetime.
        let _ = (&dq.gate.0 as *const Gate).expose_provenance();
        // Likewise the slot array's, for `slot_ptr`.
        let _ = base.expose_provenance();
        // All stolen, with the gate raised: the first push takes the slow path.
        dq.gate.0.limit.store(base, Relaxed);
        dq.gate.0.floor.store(base, Relaxed);
        Owner {
            head: Cell::new(base),
            o_split: Cell::new(base),
            end: dq.end().wrapping_sub(1),
            base,
            o_allstolen: Cell::new(true),
            o_spawn_top: Cell::new(base),
            dq: NonNull::from(dq),
            counters: NonNull::from(counters),
            _home: PhantomData,
        }
    }

    /// For an owner whose deque no thief touches (relay: tasks leave only when the owner
    /// hands them out): nothing is ever published, so a push takes the slow path only
    /// while the gate is raised. The gate stays raised from `new`, so the first push
    /// looks at whatever was asked before this owner existed.
    pub(crate) fn start_private(&self) {
        self.o_allstolen.set(false);
    }

    /// Whether this owner sits where `H` says, so that `gate` finds its deque's gate.
    pub(crate) fn is_home(&self) -> bool {
        ptr::eq(self.gate_addr(), &self.dq().gate.0)
    }

    /// A pointer to the slot at `slot`'s address with the whole array's provenance (exposed
    /// in `new`). A pointer derived from `&Slot` covers that one slot only, while `head`
    /// is stepped from it to its neighbours. Compiles to the address itself.
    #[inline(always)]
    fn slot_ptr(addr: usize) -> *const Slot {
        ptr::with_exposed_provenance(addr)
    }

    /// The gate's address, computed from the owner's. A pointer derived from `&self`
    /// covers only the owner, so the address takes up the gate's own provenance, exposed
    /// in `new` (the same code as an offset from `self`).
    #[inline(always)]
    fn gate_addr(&self) -> *const Gate {
        let addr = (self as *const Self).addr();
        ptr::with_exposed_provenance(addr.wrapping_add_signed(H::GATE_OFFSET))
    }

    /// The lowest and highest address of the words every push and pop touches: `head`
    /// and the gate.
    pub(crate) fn hot_words(&self) -> (usize, usize) {
        let head = &self.head as *const _ as usize;
        let gate = self.gate_addr() as usize;
        let end = gate + mem::size_of::<Gate>();
        (
            head.min(gate),
            end.max(head + mem::size_of::<*const Slot>()),
        )
    }

    #[inline(always)]
    fn dq(&self) -> &Deque {
        // SAFETY: the contract of `Owner::new`.
        unsafe { self.dq.as_ref() }
    }

    #[inline(always)]
    fn gate(&self) -> &Gate {
        debug_assert!(self.is_home());
        // SAFETY: by the contract of `Home` and `Owner::new`, the owner sits `GATE_OFFSET`
        // bytes before the gate of its deque, which outlives it; `new` exposed a pointer
        // to that gate (from `&Deque`, so valid for shared atomic access while the deque
        // lives), whose provenance `gate_addr`'s pointer takes up.
        unsafe { &*self.gate_addr() }
    }

    #[inline(always)]
    fn counters(&self) -> &Counters {
        // SAFETY: the contract of `Owner::new`.
        unsafe { self.counters.as_ref() }
    }

    fn index(&self, p: *const Slot) -> u32 {
        // SAFETY: `p` lies within (or one past) the slot array that starts at `base`.
        unsafe { p.offset_from(self.base) as u32 }
    }

    fn at(&self, i: u32) -> *const Slot {
        // SAFETY: `i` is at most the array length (callers pass head or split values).
        unsafe { self.base.add(i as usize) }
    }

    /// The slot to write for a push that can take the fast path: the deque is not full,
    /// nothing is requested and nothing needs publishing.
    #[inline(always)]
    pub(crate) fn fast_slot(&self) -> Option<&Slot> {
        let head = self.head.get();
        // SAFETY: `limit <= end`, so below it `head` points into the slot array.
        (head < self.gate().limit.load(Relaxed).cast_const()).then(|| unsafe { &*head })
    }

    /// Completes a fast-path push of `slot`, the one `fast_slot` returned. `head` is set
    /// from `slot` rather than reloaded, since the payload stores may alias it.
    #[inline(always)]
    pub(crate) fn advance(&self, slot: &Slot) {
        debug_assert_eq!(self.head.get(), slot as *const Slot);
        // `fast_slot` checked `slot = head < limit <= end`.
        let next = (slot as *const Slot).addr() + mem::size_of::<Slot>();
        self.head.set(Self::slot_ptr(next));
    }

    /// The slot the next push writes, or `None` when the deque is full.
    #[inline(always)]
    pub(crate) fn next_slot(&self) -> Option<&Slot> {
        let head = self.head.get();
        // SAFETY: below `end`, `head` points into the slot array, which outlives `self`.
        (head < self.end).then(|| unsafe { &*head })
    }

    /// The slot a scope's mark takes (`Worker::push_mark`), pushed like a task with
    /// `push`: the next slot, or the one past `end` that no task takes. `None` once a
    /// mark lies there.
    pub(crate) fn mark_slot(&self) -> Option<&Slot> {
        let head = self.head.get();
        // SAFETY: at or below `end`, `head` points into the slot array (one longer).
        (head <= self.end).then(|| unsafe { &*head })
    }

    /// Pushes the task just written into `next_slot()` (or a mark into `mark_slot()`).
    /// Returns true when the scheduler has slow-path work: the deque was all stolen, or a
    /// thief or requester raised the gate.
    #[inline(always)]
    pub(crate) fn push(&self) -> bool {
        // SAFETY: `next_slot` or `mark_slot` returned `head`, a slot of the array.
        self.head.set(unsafe { self.head.get().add(1) });
        self.o_allstolen.get() || self.gate().limit.load(Relaxed).cast_const() == self.base
    }

    /// Pops the top task, `top`, if it is private and no request is pending. Joins are
    /// strictly nested, so the caller knows the top slot and `head` need not be loaded:
    /// the pop does not wait on the last store to `head` (made deep inside the task that
    /// ran since the push).
    #[inline(always)]
    pub(crate) fn try_pop_private(&self, top: &Slot) -> bool {
        let top = top as *const Slot;
        if top >= self.gate().floor.load(Relaxed).cast_const() {
            // Spawned tasks above `top` keep the floor above it (`set_spawn_top`).
            debug_assert_eq!(self.head.get(), top.wrapping_add(1));
            self.head.set(Self::slot_ptr(top.addr()));
            return true;
        }
        false
    }

    /// Opens the gates again: pushes up to the end, pops down to `o_split` (or the
    /// highest spawned task).
    fn open(&self) {
        self.gate().limit.store(self.end.cast_mut(), Relaxed);
        self.lower_floor();
    }

    /// Moves `o_split` (and the pop gate with it).
    fn set_split(&self, p: *const Slot) {
        self.o_split.set(p);
        self.lower_floor();
    }

    /// Sets the pop gate to the lowest slot a fast pop may take: private, and at or above
    /// every private spawned task. Under relay a requester may have raised the gate; the
    /// push gate still carries that request to the next push or poll.
    fn lower_floor(&self) {
        let floor = self.o_split.get().max(self.o_spawn_top.get());
        self.gate().floor.store(floor.cast_mut(), Relaxed);
    }

    /// One past the highest private spawned task (`base` if none).
    pub(crate) fn spawn_top(&self) -> *const Slot {
        self.o_spawn_top.get()
    }

    /// Records `p` as one past the highest private spawned task: after a spawn pushed
    /// at `p - 1`, or after popping one (`p` is then the link it was pushed with). A pop
    /// gate raised all the way (`raise_gate`: a relay request waits) stays raised, so
    /// that the next pop polls; it is the highest floor, so no sync misses a spawned task.
    #[inline]
    pub(crate) fn set_spawn_top(&self, p: *const Slot) {
        self.o_spawn_top.set(p);
        if self.gate().floor.load(Relaxed) != self.dq().end() {
            self.lower_floor();
        }
    }

    /// The first slot of the array.
    pub(crate) fn bottom(&self) -> *const Slot {
        self.base
    }

    /// Lace: shares half of the private tasks if a thief asked, as a push would. For an
    /// owner that waits with private tasks below its top.
    pub(crate) fn grow_if_asked(&self) {
        let head = self.index(self.head.get());
        let asked = self.gate().limit.load(Relaxed).cast_const() == self.base;
        if asked && !self.o_allstolen.get() && self.index(self.o_split.get()) < head {
            self.grow(head);
        }
    }

    /// Pops `top`, the top slot and a spawned task, if it is private and nobody waits
    /// on the push gate (a thief's split request or a relay request, which the slow pop
    /// answers). The pop gate does not apply: it keeps syncs below spawned tasks off
    /// their fast path, and this is the pop of such a task.
    #[inline]
    pub(crate) fn pop_spawned(&self, top: &Slot) -> bool {
        let top = top as *const Slot;
        let asked = self.gate().limit.load(Relaxed).cast_const() == self.base;
        if top >= self.o_split.get() && !asked {
            debug_assert_eq!(self.head.get(), top.wrapping_add(1));
            self.head.set(Self::slot_ptr(top.addr()));
            return true;
        }
        false
    }

    /// Whether `slot` (in use, below `head`) is private: no thief can take it.
    pub(crate) fn is_private(&self, slot: &Slot) -> bool {
        (slot as *const Slot) >= self.o_split.get()
    }

    /// Lace: makes the slot `slot` private again if no thief took it yet, by a CAS that
    /// moves `split` down to it, like `shrink`. Returns whether `slot` is private now; if
    /// not, a thief has it.
    pub(crate) fn take_back(&self, slot: &Slot) -> bool {
        if self.is_private(slot) {
            return true;
        }
        let at = self.index(slot);
        self.lower_split(|tail, _| (tail <= at).then_some(at))
    }

    /// The slow half of Lace's push: publish the first task after everything was stolen,
    /// or grow the shared part for a waiting thief. Either way tasks become stealable.
    #[cold]
    #[inline(never)]
    pub(crate) fn push_slow(&self) {
        let dq = self.dq();
        let head = self.index(self.head.get());
        if self.o_allstolen.get() {
            // Everything older is stolen, so the new task becomes the only shared one.
            dq.ts.0.store(pack(head - 1, head), Release);
            dq.allstolen.store(false, Relaxed);
            self.o_allstolen.set(false);
            self.o_split.set(self.at(head));
            self.open();
        } else {
            self.grow(head);
        }
    }

    /// Moves `split` up to the ceiling of the middle of the private part.
    fn grow(&self, head: u32) {
        let dq = self.dq();
        let o_split = self.index(self.o_split.get());
        let split = o_split + (head - o_split).div_ceil(2);
        let mut ts = dq.ts.0.load(Relaxed);
        loop {
            let (tail, _) = unpack(ts);
            match dq
                .ts
                .0
                .compare_exchange_weak(ts, pack(tail, split), Release, Relaxed)
            {
                Ok(_) => break,
                Err(now) => ts = now,
            }
        }
        self.o_split.set(self.at(split));
        self.open();
        stat!(self.counters(), grows);
    }

    /// The slow half of Lace's pop (Fig. 4): shrink the shared part when the private part
    /// is empty, and grow it afterwards if a thief asked.
    #[cold]
    #[inline(never)]
    pub(crate) fn pop_slow(&self) -> Pop {
        let head = self.index(self.head.get());
        debug_assert!(head > 0);
        let o_split = self.index(self.o_split.get());
        if self.o_allstolen.get() || (o_split == head && self.shrink()) {
            return Pop::Stolen;
        }
        self.head.set(self.at(head - 1));
        let asked = self.gate().limit.load(Relaxed).cast_const() == self.base;
        if asked && head - 1 > self.index(self.o_split.get()) {
            self.grow(head - 1);
        }
        Pop::Private
    }

    /// Takes back the upper half of the shared part; true if everything was stolen.
    fn shrink(&self) -> bool {
        let moved =
            self.lower_split(|tail, split| (tail < split).then(|| tail + (split - tail) / 2));
        if !moved {
            self.set_allstolen();
        }
        !moved
    }

    /// Moves `split` down to `to(tail, split)` by a CAS, unless `to` gives `None` (for the
    /// `tail` and `split` last read); returns whether it moved. AcqRel: this CAS is Lace's
    /// fence; it orders the new split before any later thief CAS, which then fails or sees
    /// the smaller split.
    fn lower_split(&self, to: impl Fn(u32, u32) -> Option<u32>) -> bool {
        let dq = self.dq();
        let mut ts = dq.ts.0.load(Acquire);
        loop {
            let (tail, split) = unpack(ts);
            let Some(new_split) = to(tail, split) else {
                return false;
            };
            match dq
                .ts
                .0
                .compare_exchange(ts, pack(tail, new_split), AcqRel, Acquire)
            {
                Ok(_) => {
                    self.set_split(self.at(new_split));
                    stat!(self.counters(), shrinks);
                    return true;
                }
                Err(now) => ts = now,
            }
        }
    }

    /// Releases the top slot after its thief finished (Lace `pop_stolen`): everything
    /// below it is stolen as well.
    pub(crate) fn pop_stolen(&self) {
        self.pop_handed_out();
        self.set_allstolen();
    }

    /// Releases the top slot of a private deque (`start_private`) after the thief it was
    /// handed out to finished: everything below it was handed out as well.
    pub(crate) fn pop_handed_out(&self) {
        // SAFETY: the finished slot is at `head - 1 >= base`.
        let head = unsafe { self.head.get().sub(1) };
        self.head.set(head);
        self.set_split(head);
    }

    /// The slot at the top of the deque, if any.
    pub(crate) fn top(&self) -> Option<&Slot> {
        let head = self.head.get();
        // SAFETY: `head > base`, so `head - 1` is a live slot of the array.
        (head > self.base).then(|| unsafe { &*head.sub(1) })
    }

    /// The slot at the top of the deque and the number of slots below it, if any.
    pub(crate) fn top_and_below(&self) -> Option<(&Slot, u32)> {
        self.top().map(|t| (t, self.depth() - 1))
    }

    /// `head`: the slot the next push writes (one past the top).
    #[inline(always)]
    pub(crate) fn head(&self) -> *const Slot {
        self.head.get()
    }

    /// Stores `head`, which is `head` already: a later read of it is then known to the
    /// compiler on every path that stored it, also after calls it cannot see into.
    #[inline(always)]
    pub(crate) fn restate_head(&self, head: *const Slot) {
        debug_assert_eq!(self.head.get(), head);
        self.head.set(head);
    }

    /// The position of `slot` (a slot of this deque, or one past its last).
    pub(crate) fn index_of(&self, slot: *const Slot) -> u32 {
        self.index(slot)
    }

    /// The number of slots in use.
    pub(crate) fn depth(&self) -> u32 {
        self.index(self.head.get())
    }

    /// Relay: the number of private tasks, which a steal request may take.
    pub(crate) fn private_len(&self) -> u32 {
        self.index(self.head.get()) - self.index(self.o_split.get())
    }

    /// Relay: hands the `k` oldest private tasks out; returns a pointer to the first of
    /// them that reaches all `k` (a `&Slot` would reach the first only).
    pub(crate) fn hand_out(&self, k: u32) -> *const Slot {
        debug_assert!(!self.o_allstolen.get() && k >= 1 && k <= self.private_len());
        let first = self.o_split.get();
        // SAFETY: `o_split + k <= head`, inside the slot array.
        self.set_split(unsafe { first.add(k as usize) });
        first
    }

    /// The pop of a private deque (`start_private`) after polling: the top task is ours
    /// unless it was handed out.
    pub(crate) fn pop_unless_handed_out(&self) -> Pop {
        let head = self.head.get();
        if head > self.o_split.get() {
            // SAFETY: `head > o_split >= base`.
            self.head.set(unsafe { head.sub(1) });
            return Pop::Private;
        }
        Pop::Stolen
    }

    /// Whether the gate is raised: a thief asks to share (Lace), a steal request may be
    /// waiting (relay), the deque is full, or (Lace) it is all stolen.
    pub(crate) fn gate_raised(&self) -> bool {
        self.gate().limit.load(Relaxed).cast_const() == self.base
    }

    /// Lowers the gate (relay: before the owner drains its request channel).
    pub(crate) fn lower_gate(&self) {
        self.open();
    }

    fn set_allstolen(&self) {
        let dq = self.dq();
        self.o_allstolen.set(true);
        dq.allstolen.store(true, Relaxed);
        // The owner's own next push must publish; thieves leave the gate alone meanwhile.
        self.gate().limit.store(self.base.cast_mut(), Relaxed);
    }
}
