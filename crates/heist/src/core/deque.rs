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
//!
//! A **lifeline** lets an idle worker share (Lace) or take (relay) the private tasks of an
//! owner that does not come back to the runtime (PROTOCOLS.md, "Lifelines"). The owner
//! publishes `head` and orders it against its gate words with a compiler-only fence; the
//! thief pays with an asymmetric fence (`sync::heavy_fence`). The owner's slow paths hold
//! the `LOCK` bit of `ts` (`Owner::hold`), which keeps lifelines out, and find there what
//! a lifeline changed.

use crate::core::stats::{stat, Counters};
use crate::core::sync::{
    heavy_fence, light_fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Padded,
};
use crate::core::task::Slot;
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::{self, offset_of};
use std::ptr::{self, NonNull};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

/// `ts` bit: the owner is in a slow path that relies on `o_split` (`Owner::hold`).
const LOCK: u64 = 1 << 62;
/// `ts` bit: a lifeline is on its way (`Deque::lifeline`).
const PROD: u64 = 1 << 63;
const FLAGS: u64 = LOCK | PROD;
/// `split` takes the 30 bits below the flags; capacities stay below `1 << 30`.
const SPLIT_MASK: u32 = (1 << 30) - 1;
/// Slots past the task slots: the mark's, and one for a `join` that finds a mark there
/// (`Owner::join_slot`).
pub(crate) const SPARES: usize = 2;

fn pack(tail: u32, split: u32) -> u64 {
    u64::from(tail) | (u64::from(split) << 32)
}

fn unpack(ts: u64) -> (u32, u32) {
    (ts as u32, (ts >> 32) as u32 & SPLIT_MASK)
}

/// The words the owner's fast paths compare `head` with (see the module docs), `head`
/// itself, and the lifeline's sign, on one line.
struct Gate {
    limit: AtomicPtr<Slot>,
    floor: AtomicPtr<Slot>,
    /// The owner's next free slot. Only the owner writes it; a lifeline reads it.
    head: AtomicPtr<Slot>,
    /// Set by a lifeline before its heavy fence, cleared by the owner under `LOCK`: an
    /// owner that lowers `floor` outside `LOCK` raises it again while this is set.
    lifeline: AtomicBool,
}

/// A worker's deque: the slot array and the words thieves and requesters touch.
pub(crate) struct Deque {
    /// `{tail, split}`: the first unstolen task and the first private one.
    ts: Padded<AtomicU64>,
    /// Hint that nothing is left to steal; the owner sets it, thieves check it first.
    allstolen: AtomicBool,
    /// The thief whose lifeline is under way (index + 1), or 0: one at a time.
    holder: AtomicUsize,
    gate: Padded<Gate>,
    slots: SlotArray,
}

#[cfg(loom)]
type SlotArray = Box<[Slot]>;
#[cfg(not(loom))]
type SlotArray = crate::core::mem::Zeroed<Slot>;

/// What a lifeline does with the private tasks it reaches.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Lace: moves `split` up over half of them, for thieves to steal.
    Share,
    /// Relay: takes half of them (`tail` and `split` move up together), for the thief to
    /// run as a batch.
    Take,
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

    /// A deque of `capacity` slots (less than `SPLIT_MASK`), and [`SPARES`] more: one that
    /// only a scope's mark may keep (`Owner::mark_slot`), so that a full deque still takes
    /// one, and room for the push of a `join` that finds the deque full
    /// (`Owner::join_slot`); or the allocation that failed. Outside loom the slots are not
    /// written: the system backs the array only as deep as the deque is used.
    pub(crate) fn try_new(capacity: usize) -> Result<Deque, crate::core::mem::NoMemory> {
        assert!(capacity < SPLIT_MASK as usize);
        #[cfg(loom)]
        let slots = crate::core::mem::try_boxed(capacity + SPARES, |_| Slot::new())?;
        // SAFETY: all-zero bytes are `Slot::new()`: `thief` 0, `entry` `None` (a null
        // reference), and a payload that may hold anything.
        #[cfg(not(loom))]
        let slots = unsafe { crate::core::mem::try_zeroed::<Slot>(capacity + SPARES)? };
        Ok(Deque::with_slots(slots))
    }

    fn with_slots(slots: SlotArray) -> Deque {
        let start = slots.as_ptr() as *mut Slot;
        Deque {
            ts: Padded(AtomicU64::new(0)),
            allstolen: AtomicBool::new(true),
            holder: AtomicUsize::new(0),
            gate: Padded(Gate {
                limit: AtomicPtr::new(start),
                floor: AtomicPtr::new(start),
                head: AtomicPtr::new(start),
                lifeline: AtomicBool::new(false),
            }),
            slots,
        }
    }

    fn start(&self) -> *mut Slot {
        self.slots.as_ptr() as *mut Slot
    }

    /// One past the end of the slot array, the spare slots included.
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
            let next = pack(tail + 1, split) | (ts & FLAGS);
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

    /// Raises the push gate unless it is raised: a sleeper's sign (PROTOCOLS.md,
    /// "Lifelines") that its owner's next push shares the task and wakes it.
    pub(crate) fn raise_limit(&self) {
        let limit = &self.gate.0.limit;
        if limit.load(Relaxed) != self.start() {
            limit.store(self.start(), Relaxed);
        }
    }

    /// Whether a thief could take something now, for a worker's last look before sleeping.
    pub(crate) fn has_shared(&self) -> bool {
        let (tail, split) = unpack(self.ts.0.load(Acquire));
        !self.allstolen.load(Relaxed) && tail < split
    }

    /// The owner's `head`, as an index, at most the first spare slot's: a task in a
    /// spare slot is about to go back to its `join` (`Owner::join_slot`), and a mark there
    /// is nothing to run, so a lifeline reaches neither.
    fn head_index(&self) -> u32 {
        let head = self.gate.0.head.load(Acquire);
        let index = (head.addr() - self.start().addr()) / mem::size_of::<Slot>();
        index.min(self.slots.len() - SPARES) as u32
    }

    /// Whether the owner holds private tasks and nothing is shared (a hint, for a
    /// lifeline; the owner may be in a slow path, which a lifeline then waits out).
    pub(crate) fn has_private(&self) -> bool {
        self.private_words().is_some()
    }

    /// The words `has_private` reads (`ts` and `head`), if it holds. Equal words read
    /// some time apart suggest that the owner did not touch its deque meanwhile.
    pub(crate) fn private_words(&self) -> Option<(u64, u32)> {
        let ts = self.ts.0.load(Acquire);
        let (tail, split) = unpack(ts);
        let head = self.head_index();
        (tail == split && head > split).then_some((ts, head))
    }

    /// A lifeline (PROTOCOLS.md, "Lifelines"): reaches half of the owner's private tasks
    /// without the owner's help, as `reach` says, and returns the first of them and their
    /// number. `before` runs just before the tasks change hands. `thief` is the caller's
    /// index. `None` if the owner has none, or is in a slow path, or another lifeline is
    /// under way, or the system has no asymmetric fence.
    pub(crate) fn lifeline(
        &self,
        thief: usize,
        reach: Reach,
        before: impl FnOnce(),
    ) -> Option<(*const Slot, u32)> {
        if !self.has_private() {
            return None;
        }
        let me = thief + 1;
        if self
            .holder
            .compare_exchange(0, me, Acquire, Relaxed)
            .is_err()
        {
            return None;
        }
        let got = self.lifeline_held(reach, before);
        self.holder.store(0, Release);
        got
    }

    /// `lifeline`, with the holder word taken: no other lifeline sets `PROD` meanwhile.
    fn lifeline_held(&self, reach: Reach, before: impl FnOnce()) -> Option<(*const Slot, u32)> {
        let ts = self.ts.0.load(Acquire);
        let (tail, split) = unpack(ts);
        if ts & FLAGS != 0 || tail != split {
            return None;
        }
        let held = ts | PROD;
        if self
            .ts
            .0
            .compare_exchange(ts, held, AcqRel, Relaxed)
            .is_err()
        {
            return None;
        }
        let gate = &self.gate.0;
        gate.lifeline.store(true, Relaxed);
        gate.floor.store(self.end(), Relaxed);
        // From here on, every owner pop sees the raised floor (or its `head` store is
        // visible to the load below), and the owner lowers the floor only under `LOCK`,
        // which clears `PROD`, or raises it again seeing `lifeline`.
        let fenced = heavy_fence();
        let raised = gate.floor.load(Relaxed) == self.end();
        let head = self.head_index();
        if fenced && raised && head > split {
            let new_split = split + (head - split).div_ceil(2);
            let new_tail = match reach {
                Reach::Share => tail,
                Reach::Take => new_split,
            };
            before();
            let next = pack(new_tail, new_split);
            if self
                .ts
                .0
                .compare_exchange(held, next, AcqRel, Relaxed)
                .is_ok()
            {
                // SAFETY: `split < new_split <= head <= end`: a slot of the array.
                let first = unsafe { self.start().add(split as usize) };
                return Some((first, new_split - split));
            }
        }
        // Unless the owner has cleared it, `PROD` is still ours: nobody else sets it
        // while we hold `holder`, and thieves keep the flags of what they CAS.
        let mut cur = self.ts.0.load(Relaxed);
        while cur & PROD != 0 {
            match self
                .ts
                .0
                .compare_exchange(cur, cur & !PROD, Release, Relaxed)
            {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
        None
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

/// The owner's private view of its deque: plain cells, read and written by one thread,
/// and `head`, which it alone writes, in the gate. `o_split` and `head` are slot pointers
/// so that the fast paths need no index arithmetic.
pub(crate) struct Owner<H: Home> {
    o_split: Cell<*const Slot>,
    /// One past the last slot a task may take: the mark's slot lies here.
    end: *const Slot,
    base: *const Slot,
    o_allstolen: Cell<bool>,
    /// One past the highest private spawned task, or `base`: pops below it take the slow
    /// path, so that a sync finds spawned tasks above its own (see `crate::core::spawn`).
    o_spawn_top: Cell<*const Slot>,
    /// Whether this owner holds `LOCK` (`hold`).
    held: Cell<bool>,
    dq: NonNull<Deque>,
    counters: NonNull<Counters>,
    _home: PhantomData<H>,
}

/// An owner's hold on its deque (`Owner::hold`): `o_split` is exact while it lives, and
/// no lifeline reaches a private slot.
pub(crate) struct Held<'a, H: Home>(&'a Owner<H>);

impl<H: Home> Drop for Held<'_, H> {
    fn drop(&mut self) {
        self.0.release();
    }
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
        dq.gate.0.head.store(base, Relaxed);
        Owner {
            o_split: Cell::new(base),
            end: dq.end().wrapping_sub(SPARES),
            base,
            o_allstolen: Cell::new(true),
            o_spawn_top: Cell::new(base),
            held: Cell::new(false),
            dq: NonNull::from(dq),
            counters: NonNull::from(counters),
            _home: PhantomData,
        }
    }

    /// For an owner whose deque no thief touches (relay: tasks leave only when the owner
    /// hands them out, or a lifeline takes them): nothing is ever published, so a push
    /// takes the slow path only while the gate is raised. The gate stays raised from
    /// `new`, so the first push looks at whatever was asked before this owner existed.
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

    /// The lowest and highest address of the words every push and pop touches: the
    /// gate, `head` included.
    pub(crate) fn hot_words(&self) -> (usize, usize) {
        let gate = self.gate_addr() as usize;
        (gate, gate + mem::size_of::<Gate>())
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

    /// `head`: the slot the next push writes (one past the top). Only this owner writes it.
    #[inline(always)]
    pub(crate) fn head(&self) -> *const Slot {
        self.gate().head.load(Relaxed)
    }

    /// Publishes `head` for lifelines: release, so that a lifeline that reads it sees the
    /// tasks below it.
    #[inline(always)]
    fn set_head(&self, head: *const Slot) {
        self.gate().head.store(head.cast_mut(), Release);
    }

    /// Whether the push gate is raised: a thief asks to share (Lace), a steal request may
    /// be waiting (relay), a sleeper wants a share (either), or (Lace) it is all stolen.
    #[inline(always)]
    pub(crate) fn gate_raised(&self) -> bool {
        self.gate().limit.load(Relaxed).cast_const() == self.base
    }

    /// The slot to write for a push that can take the fast path: the deque is not full.
    #[inline(always)]
    pub(crate) fn fast_slot(&self) -> Option<&Slot> {
        let head = self.head();
        // SAFETY: below `end`, `head` points into the slot array.
        (head < self.end).then(|| unsafe { &*head })
    }

    /// The slot a `join`'s push writes: `head`, without a look at the end. `head` is at
    /// most one past the mark's slot, so this is a slot of the array: a spare one if the
    /// deque is full. `advance` then reports slow-path work, and the `join` takes its
    /// task back out of a spare slot (`is_spare`) and runs it inline; no one else reads a
    /// spare slot (`Deque::head_index`). One compare less on `join`'s path than
    /// `fast_slot`.
    #[inline(always)]
    pub(crate) fn join_slot(&self) -> &Slot {
        let head = self.head();
        debug_assert!(head <= self.end.wrapping_add(1));
        // SAFETY: `head <= end + 1` (pushes through `fast_slot` and `next_slot` stop at
        // `end`, `mark_slot` at `end + 1`, and a `join` that wrote a spare slot puts
        // `head` back), and the array holds `SPARES` = 2 slots from `end` on.
        unsafe { &*head }
    }

    /// Whether `slot` is a spare slot, past the task slots (see `join_slot`).
    #[inline]
    pub(crate) fn is_spare(&self, slot: &Slot) -> bool {
        (slot as *const Slot) >= self.end
    }

    /// Puts `head` back at `slot` after a `join` took its task back out of that spare
    /// slot: the push is undone.
    pub(crate) fn unpush_spare(&self, slot: &Slot) {
        debug_assert!(self.is_spare(slot));
        self.gate().head.store(
            Self::slot_ptr((slot as *const Slot).addr()).cast_mut(),
            Release,
        );
    }

    /// Completes a fast-path push of `slot`, the one `fast_slot` returned: publishes
    /// `head`, then looks at the gate. True if the push has slow-path work (the deque was
    /// all stolen, or the gate is raised). `head` is set from `slot` rather than reloaded,
    /// since the payload stores may alias it. The order (store `head`, then load the gate)
    /// is what a lifeline relies on: either it sees the task, or this push sees its sign.
    #[inline(always)]
    pub(crate) fn advance(&self, slot: &Slot) -> bool {
        debug_assert_eq!(self.head(), slot as *const Slot);
        let next = Self::slot_ptr((slot as *const Slot).addr() + mem::size_of::<Slot>());
        self.set_head(next);
        light_fence();
        // Open, `limit` is the end, which `next` reaches only when this push filled the
        // deque (a harmless trip to the slow path); raised, it is the start. One compare
        // with a register, where `gate_raised` would load `base` too.
        self.gate().limit.load(Relaxed).cast_const() <= next
    }

    /// The slot the next push writes, or `None` when the deque is full.
    #[inline(always)]
    pub(crate) fn next_slot(&self) -> Option<&Slot> {
        self.fast_slot()
    }

    /// The slot a scope's mark takes (`Worker::push_mark`), pushed like a task with
    /// `push`: the next slot, or the one past `end` that no task takes. `None` once a
    /// mark lies there.
    pub(crate) fn mark_slot(&self) -> Option<&Slot> {
        let head = self.head();
        // SAFETY: at or below `end`, `head` points into the slot array (one longer).
        (head <= self.end).then(|| unsafe { &*head })
    }

    /// Pushes the task just written into `next_slot()` (or a mark into `mark_slot()`).
    /// Returns true when the scheduler has slow-path work: the deque was all stolen, or a
    /// thief, requester or sleeper raised the gate.
    #[inline(always)]
    pub(crate) fn push(&self) -> bool {
        // SAFETY: `next_slot` or `mark_slot` returned `head`, a slot of the array.
        self.set_head(unsafe { self.head().add(1) });
        light_fence();
        self.o_allstolen.get() || self.gate_raised()
    }

    /// Pops the top task, `top`, if it is private and no request is pending. Joins are
    /// strictly nested, so the caller knows the top slot. `head` is lowered first and the
    /// floor read after (Cilk's THE order): either a lifeline sees the slot gone, or this
    /// pop sees the floor it raised. Spawned tasks above `top` keep the floor above it
    /// (`set_spawn_top`), so then the pop fails and `head` goes back to where it was.
    #[inline(always)]
    pub(crate) fn try_pop_private(&self, top: &Slot) -> bool {
        let top = top as *const Slot;
        let gate = self.gate();
        // Loaded, not recomputed: what lies above a popped slot (spawned tasks, spills'
        // marks, slots a drain left) is not known to the owner without it.
        let head = gate.head.load(Relaxed);
        gate.head
            .store(Self::slot_ptr(top.addr()).cast_mut(), Relaxed);
        light_fence();
        if top >= gate.floor.load(Relaxed).cast_const() {
            debug_assert!(Self::spent_between(top, head));
            return true;
        }
        self.restore_head(head);
        false
    }

    /// Whether every slot above `top` and below `head` is spent: a spawned task its owner
    /// ran in place, or a claimed slot whose scope has ended (PROTOCOLS.md, "Spawned
    /// tasks in the deque", rule 2). The pop of `top` drops those with `head`; anything
    /// else there keeps the floor above `top`. For debug assertions.
    fn spent_between(top: *const Slot, head: *const Slot) -> bool {
        use crate::core::task::Kind;
        let mut s = top.wrapping_add(1);
        while s < head {
            // SAFETY: `s` lies between a popped slot and `head` of the owner's own deque:
            // a filled slot whose entry only the owner writes.
            if !matches!(unsafe { (*s).kind() }, Kind::Ran | Kind::Claimed) {
                return false;
            }
            s = s.wrapping_add(1);
        }
        true
    }

    /// Puts `head` back after a fast pop that found the gate down.
    #[cold]
    fn restore_head(&self, head: *mut Slot) {
        self.gate().head.store(head, Relaxed);
    }

    /// Undoes a fast pop of `top` that found the gate down.
    #[cold]
    fn unpop(&self, top: *const Slot) {
        self.gate().head.store(
            Self::slot_ptr(top.addr() + mem::size_of::<Slot>()).cast_mut(),
            Relaxed,
        );
    }

    /// Takes `LOCK`, which keeps lifelines out until the hold is dropped, and brings
    /// `o_split` up to what a lifeline may have moved `split` to.
    pub(crate) fn hold(&self) -> Held<'_, H> {
        debug_assert!(!self.held.get(), "heist: a deque's lock is not re-entrant");
        let ts = &self.dq().ts.0;
        let mut cur = ts.load(Acquire);
        let now = loop {
            let next = (cur | LOCK) & !PROD;
            match ts.compare_exchange_weak(cur, next, AcqRel, Acquire) {
                Ok(_) => break next,
                Err(seen) => cur = seen,
            }
        };
        self.held.set(true);
        let gate = self.gate();
        if gate.lifeline.load(Relaxed) {
            gate.lifeline.store(false, Relaxed);
        }
        let (_, split) = unpack(now);
        if !self.o_allstolen.get() && self.at(split) > self.o_split.get() {
            // A lifeline shared (Lace) or took (relay) the slots below `split`.
            self.o_split.set(self.at(split));
        }
        Held(self)
    }

    fn release(&self) {
        debug_assert!(self.held.get());
        self.held.set(false);
        self.dq().ts.0.fetch_and(!LOCK, Release);
    }

    /// Opens the gates again: pushes up to the end, pops down to `o_split` (or the
    /// highest spawned task). Under `LOCK` only (see `set_spawn_top`).
    fn open(&self) {
        debug_assert!(self.held.get());
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
    /// gate raised all the way (`raise_gate`: a relay request waits; or a lifeline) stays
    /// raised, so that the next pop takes the slow path; it is the highest floor, so no
    /// sync misses a spawned task. Outside `LOCK`, a floor stored here is raised again
    /// if a lifeline is under way (the lifeline's own check covers a store it cannot see
    /// yet).
    #[inline]
    pub(crate) fn set_spawn_top(&self, p: *const Slot) {
        self.o_spawn_top.set(p);
        let gate = self.gate();
        if gate.floor.load(Relaxed) != self.dq().end() {
            self.lower_floor();
            light_fence();
            // Never set under a hold: `hold` clears it, and no lifeline starts meanwhile.
            if gate.lifeline.load(Relaxed) {
                gate.floor.store(self.dq().end(), Relaxed);
            }
        }
    }

    /// The first slot of the array.
    pub(crate) fn bottom(&self) -> *const Slot {
        self.base
    }

    /// Lace: shares half of the private tasks if a thief or a sleeper asked, as a push
    /// would, and wakes a sleeper with `wake` (see `share`). For an owner that waits with
    /// private tasks below its top.
    pub(crate) fn grow_if_asked(&self, wake: impl FnOnce() -> bool) {
        if self.gate_raised() {
            self.grow(wake);
        }
    }

    /// Shares the older half of the private tasks, if there are any, then `wake` (as in
    /// `share`).
    pub(crate) fn grow(&self, wake: impl FnOnce() -> bool) {
        let _held = self.hold();
        let head = self.index(self.head());
        if !self.o_allstolen.get() && self.index(self.o_split.get()) < head {
            self.grow_to(head);
            self.share(wake);
        }
    }

    /// After the shared part grew (under a hold): `wake` wakes a sleeper for it and says
    /// whether sleepers are left, and the gate stays raised while one is, so that the
    /// owner's next push or pop shares for it too (PROTOCOLS.md, "Lifelines").
    fn share(&self, wake: impl FnOnce() -> bool) {
        let more = wake();
        self.open();
        if more {
            self.dq().raise_limit();
        }
    }

    /// Pops `top`, the top slot and a spawned task, if it is private and nobody waits
    /// on the push gate (a thief's split request or a relay request, which the slow pop
    /// answers) and no lifeline raised the pop gate. The pop gate's spawn floor does not
    /// apply: it keeps syncs below spawned tasks off their fast path, and this is the pop
    /// of such a task. The THE order of `try_pop_private` holds here as well.
    #[inline]
    pub(crate) fn pop_spawned(&self, top: &Slot) -> bool {
        let top = top as *const Slot;
        if top < self.o_split.get() {
            return false;
        }
        debug_assert_eq!(self.head(), top.wrapping_add(1));
        let gate = self.gate();
        gate.head
            .store(Self::slot_ptr(top.addr()).cast_mut(), Relaxed);
        light_fence();
        if !self.gate_raised() && gate.floor.load(Relaxed) != self.dq().end() {
            return true;
        }
        self.unpop(top);
        false
    }

    /// Whether `slot` (in use, below `head`) is private as of this owner's last look:
    /// exact under a hold, a hint otherwise (a lifeline may have reached it since).
    pub(crate) fn is_private(&self, slot: &Slot) -> bool {
        (slot as *const Slot) >= self.o_split.get()
    }

    /// Makes the slot `slot` private again if no thief took it yet (Lace: by a CAS that
    /// moves `split` down to it, like `shrink`; relay: a slot below `split` was handed
    /// out and stays with its thief). On success, the hold keeps it private until it is
    /// dropped: the caller takes the job out or claims the slot under it.
    pub(crate) fn take_back(&self, slot: &Slot, lower: bool) -> Option<Held<'_, H>> {
        let held = self.hold();
        if self.is_private(slot) {
            return Some(held);
        }
        let at = self.index(slot);
        (lower && self.lower_split(|tail, _| (tail <= at).then_some(at))).then_some(held)
    }

    /// The slow half of Lace's push: publish the first task after everything was stolen,
    /// or grow the shared part for a waiting thief. Either way tasks become stealable.
    /// Then `wake` (which says whether a sleeper is left); the gate stays raised while
    /// one is, so that the next push shares for it too.
    #[cold]
    #[inline(never)]
    pub(crate) fn push_slow(&self, wake: impl FnOnce() -> bool) {
        if !self.o_allstolen.get() && !self.gate_raised() {
            // The push filled the deque (see `advance`); nobody asked.
            return;
        }
        let _held = self.hold();
        let dq = self.dq();
        let head = self.index(self.head());
        if self.o_allstolen.get() {
            // Everything older is stolen, so the new task becomes the only shared one.
            self.swap_ts(|_, _| (head - 1, head), Release);
            dq.allstolen.store(false, Relaxed);
            self.o_allstolen.set(false);
            self.o_split.set(self.at(head));
        } else if self.index(self.o_split.get()) < head {
            self.grow_to(head);
        }
        self.share(wake);
    }

    /// Replaces `tail` and `split` in `ts` by `to(tail, split)`, keeping `LOCK` (held).
    fn swap_ts(&self, to: impl Fn(u32, u32) -> (u32, u32), order: std::sync::atomic::Ordering) {
        debug_assert!(self.held.get());
        let ts = &self.dq().ts.0;
        let mut cur = ts.load(Relaxed);
        loop {
            let (tail, split) = unpack(cur);
            let (tail, split) = to(tail, split);
            match ts.compare_exchange_weak(cur, pack(tail, split) | LOCK, order, Relaxed) {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }

    /// Moves `split` up to the ceiling of the middle of the private part (Lace's grow);
    /// the caller opens the gates.
    fn grow_to(&self, head: u32) {
        let o_split = self.index(self.o_split.get());
        let split = o_split + (head - o_split).div_ceil(2);
        self.swap_ts(|tail, _| (tail, split), Release);
        self.o_split.set(self.at(split));
        stat!(self.counters(), grows);
    }

    /// The slow half of Lace's pop (Fig. 4): shrink the shared part when the private part
    /// is empty, and grow it afterwards if a thief or a sleeper asked (then `wake`, as in
    /// `share`).
    #[cold]
    #[inline(never)]
    pub(crate) fn pop_slow(&self, wake: impl FnOnce() -> bool) -> Pop {
        let _held = self.hold();
        let head = self.index(self.head());
        debug_assert!(head > 0);
        let o_split = self.index(self.o_split.get());
        if self.o_allstolen.get() || (o_split == head && self.shrink()) {
            return Pop::Stolen;
        }
        self.set_head(self.at(head - 1));
        if self.gate_raised() && head - 1 > self.index(self.o_split.get()) {
            self.grow_to(head - 1);
            self.share(wake);
        } else {
            // A lifeline's raised floor is answered: `hold` saw what it did.
            self.lower_floor();
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
        debug_assert!(self.held.get());
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
                .compare_exchange(ts, pack(tail, new_split) | LOCK, AcqRel, Acquire)
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
        let _held = self.hold();
        self.pop_handed_out_held();
        self.set_allstolen();
    }

    /// Releases the top slot of a private deque (`start_private`) after the thief it was
    /// handed out to finished: everything below it was handed out as well.
    pub(crate) fn pop_handed_out(&self) {
        let _held = self.hold();
        self.pop_handed_out_held();
        if !self.o_allstolen.get() {
            let head = self.index(self.head());
            self.swap_ts(|_, _| (head, head), Relaxed);
        }
    }

    fn pop_handed_out_held(&self) {
        // SAFETY: the finished slot is at `head - 1 >= base`.
        let head = unsafe { self.head().sub(1) };
        self.set_head(head);
        self.set_split(head);
    }

    /// The slot at the top of the deque, if any.
    pub(crate) fn top(&self) -> Option<&Slot> {
        let head = self.head();
        // SAFETY: `head > base`, so `head - 1` is a live slot of the array.
        (head > self.base).then(|| unsafe { &*head.sub(1) })
    }

    /// The slot at the top of the deque and the number of slots below it, if any.
    pub(crate) fn top_and_below(&self) -> Option<(&Slot, u32)> {
        self.top().map(|t| (t, self.depth() - 1))
    }

    /// Stores `head`, which is `head` already: a later read of it is then known to the
    /// compiler on every path that stored it, also after calls it cannot see into.
    #[inline(always)]
    pub(crate) fn restate_head(&self, head: *const Slot) {
        debug_assert_eq!(self.head(), head);
    }

    /// The position of `slot` (a slot of this deque, or one past its last).
    pub(crate) fn index_of(&self, slot: *const Slot) -> u32 {
        self.index(slot)
    }

    /// The number of slots in use.
    pub(crate) fn depth(&self) -> u32 {
        self.index(self.head())
    }

    /// Relay: the number of private tasks, which a steal request may take. Exact under a
    /// hold, a hint otherwise.
    pub(crate) fn private_len(&self) -> u32 {
        self.index(self.head())
            .saturating_sub(self.index(self.o_split.get()))
    }

    /// Relay: hands the `k` oldest private tasks out; returns a pointer to the first of
    /// them that reaches all `k` (a `&Slot` would reach the first only). Under a hold.
    pub(crate) fn hand_out(&self, k: u32) -> *const Slot {
        debug_assert!(self.held.get());
        debug_assert!(!self.o_allstolen.get() && k >= 1 && k <= self.private_len());
        let first = self.o_split.get();
        // SAFETY: `o_split + k <= head`, inside the slot array.
        let split = unsafe { first.add(k as usize) };
        self.set_split(split);
        let at = self.index(split);
        self.swap_ts(|_, _| (at, at), Relaxed);
        first
    }

    /// The pop of a private deque (`start_private`) after polling: the top task is ours
    /// unless it was handed out (or taken by a lifeline).
    pub(crate) fn pop_unless_handed_out(&self) -> Pop {
        let _held = self.hold();
        let head = self.head();
        if head > self.o_split.get() {
            // SAFETY: `head > o_split >= base`.
            self.set_head(unsafe { head.sub(1) });
            self.lower_floor();
            return Pop::Private;
        }
        Pop::Stolen
    }

    /// Lowers the gate (relay: before the owner drains its request channel). Under a hold.
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
