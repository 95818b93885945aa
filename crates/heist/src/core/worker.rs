//! The per-thread worker context and its scheduling loop: `join` (SPAWN and SYNC of
//! "Lace: non-blocking split deque for work-stealing", §4), waiting for a stolen task,
//! looking for work, and the idle back-off that ends in sleep. Where the schedulers
//! differ, the worker asks the seam (`core/schedule.rs`).

use crate::core::deque::{Deque, Home, Owner, Pop};
use crate::core::frame::{Frame, Frames, Roots};
use crate::core::latch::Latch;
use crate::core::registry::{Registry, WorkerInfo};
use crate::core::schedule::Schedule;
use crate::core::sleep::{GLANCE_AFTER, SPIN_ROUNDS, YIELD_FOR, YIELD_ROUNDS};
use crate::core::stats::{stat, Stopwatch};
use crate::core::task::{self, JobRef, Slot, DONE};
use crate::core::trace::EventKind;
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::{self, offset_of};
use std::panic;
use std::ptr;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A heap job, run by a worker.
pub(crate) type Job = JobRef<Worker>;

thread_local! {
    static CURRENT: Cell<*const Worker> = const { Cell::new(ptr::null()) };
    /// Whether this thread's worker is an adopted one (`adopt`), which runs no loop.
    static ADOPTED: Cell<bool> = const { Cell::new(false) };
}

/// The context of one worker thread, handed to every task it runs.
///
/// A `Worker` is tied to its thread (it is neither `Send` nor `Sync`); tasks receive it
/// as `&Worker` and use it to fork more work with [`Worker::join`] without any
/// thread-local look-up.
pub struct Worker {
    index: usize,
    registry: Arc<Registry>,
    owner: Owner<InWorkerSeat>,
    rng: Cell<u64>,
    /// What this worker is inside: the tasks it took up and the waits it sits in.
    frames: Frames,
    /// Addresses that lie in this worker's thread stack and in no other (`Scope::worker`).
    stack: (usize, usize),
    /// Its own side of the loops' standing offers (`crate::core::offer`).
    offers: crate::core::offer::Local,
    /// This worker's counts of detached tasks (`spawn::Counts`), in `registry`: one load
    /// away at every detached spawn and run.
    spawn_counts: *const [AtomicU64; 2],
    /// A victim to try before a random one: the worker that woke this one to share, or
    /// whose tasks a lifeline of this one reached.
    hint: Cell<Option<usize>>,
    /// When its current back-off started yielding (`back_off`).
    yielding_since: Cell<Option<Instant>>,
    /// When its current back-off started, and how far into it the next glance is due
    /// (`glance`).
    idle_since: Cell<Option<Instant>>,
    next_glance: Cell<Duration>,
    /// The private tasks the last glance saw: their worker, and its deque's words.
    glance_seen: Cell<Option<(usize, u64, u32)>>,
    /// Its trace buffer (`crate::trace`).
    #[cfg(feature = "trace")]
    trace: crate::core::trace::Log,
    _not_send: PhantomData<*const ()>,
}

/// The worker running on this thread, if it belongs to `registry`.
pub(crate) fn current_in(registry: &Arc<Registry>) -> Option<*const Worker> {
    let w = CURRENT.with(Cell::get);
    // SAFETY: `CURRENT` is non-null only while `main` runs on this thread, and then it
    // points to that call's live `Worker`, or after `adopt`, whose worker is never freed.
    (!w.is_null() && Arc::ptr_eq(unsafe { &(*w).registry }, registry)).then_some(w)
}

/// The worker of this thread, of any pool, if there is one: one thread-local load.
///
/// # Safety
/// The caller drops the reference before the task it runs in returns.
#[inline(always)]
pub(crate) unsafe fn current<'a>() -> Option<&'a Worker> {
    let w = CURRENT.with(Cell::get);
    // SAFETY: `CURRENT` is non-null only while `main` runs on this thread, and then it
    // points to that call's live `Worker`, which outlives every task it runs, or after
    // `adopt`, whose worker is never freed.
    unsafe { w.as_ref() }
}

/// Runs `f` with the worker of this thread, of any pool, if there is one.
pub(crate) fn with_current<R>(f: impl FnOnce(Option<&Worker>) -> R) -> R {
    let w = CURRENT.with(Cell::get);
    // SAFETY: see `current_in`; the reference does not outlive `f`.
    f(unsafe { w.as_ref() })
}

/// Blocks until `latch` is set: a worker keeps working meanwhile, any other thread sleeps.
pub(crate) fn wait_latch(latch: &Latch) {
    with_current(|w| match w {
        // A worker of another pool: what it waits for may call back into its own pool.
        Some(w) => {
            let _wait = w.frames.enter(Frame::OtherPool);
            w.wait_until(|| latch.probe());
        }
        None => latch.wait(),
    })
}

/// Where a worker's `Owner` lives: inside its `Worker`, which `main` builds in the seat
/// of its `WorkerInfo`, beside the deque the owner is for.
pub(crate) struct InWorkerSeat;

// SAFETY: `main` is the only place a `Worker`, and so an `Owner<InWorkerSeat>`, is made; it
// builds it in place in `infos[index].seat`, whose `deque` is the one the owner is for,
// and checks `is_home` before any owner operation.
unsafe impl Home for InWorkerSeat {
    const GATE_OFFSET: isize = (offset_of!(WorkerInfo, deque) + Deque::GATE_OFFSET) as isize
        - (offset_of!(WorkerInfo, seat) + offset_of!(Worker, owner)) as isize;
}

/// A worker thread's body: `around` runs the scheduling loop it is given, once, with the
/// worker current (the pool's start and exit handlers go around it: `pool/threads.rs`).
pub(crate) fn main(
    registry: Arc<Registry>,
    index: usize,
    around: impl FnOnce(&Registry, &mut dyn FnMut()),
) {
    // Keeps the seat's memory alive until the worker in it has been dropped, also when
    // the worker's own `Arc` is the last one otherwise.
    let keep = Arc::clone(&registry);
    let w = seat(&keep, registry, index);
    w.sched().start(w);
    CURRENT.with(|c| c.set(w));
    let (lo, hi) = w.owner.hot_words();
    around(&keep, &mut || {
        colour_stack(lo, hi, COLOUR_TRIES, &mut || w.run_loop())
    });
    CURRENT.with(|c| c.set(ptr::null()));
    let seat = keep.infos[index].seat.get();
    // SAFETY: the worker was written by `seat`, and nothing refers to it any more: its
    // loop has ended and `CURRENT` is cleared.
    unsafe { ptr::drop_in_place((*seat).as_mut_ptr()) };
    drop(keep);
}

/// Makes the calling thread worker `index` of `registry` without running its loop
/// (rayon's `use_current_thread`): joins, scopes and loops it calls run on it, and it
/// works for the pool only inside them. As rayon does, it stays that worker for the rest
/// of its life, and the registry, which holds the worker in its seat, for the rest of
/// the process, so that this thread's `CURRENT` never dangles.
pub(crate) fn adopt(registry: &Arc<Registry>, index: usize) {
    let keep: &'static Registry = Box::leak(Box::new(Arc::clone(registry)));
    let w = seat(keep, Arc::clone(registry), index);
    w.sched().start(w);
    CURRENT.with(|c| c.set(w));
    ADOPTED.with(|a| a.set(true));
}

/// Whether the calling thread is a worker of any pool.
pub(crate) fn is_worker() -> bool {
    !CURRENT.with(Cell::get).is_null()
}

/// Whether the calling thread is an adopted worker (`adopt`): what it leaves in its deque
/// outside a join or scope of its own may wait there for good.
pub(crate) fn adopted() -> bool {
    ADOPTED.with(Cell::get)
}

/// Builds worker `index` of `registry` (which `keep` is) in its seat, for the calling
/// thread.
fn seat(keep: &Registry, registry: Arc<Registry>, index: usize) -> &Worker {
    let info = &keep.infos[index];
    // SAFETY: the deque and counters live in the registry, which `keep` holds for as long
    // as the `Owner` exists; no other owner of this deque is made, and the owner is used
    // only after it is placed in the seat (checked below).
    let owner = unsafe { Owner::new(&info.deque, &info.counters) };
    let seat = info.seat.get();
    // SAFETY: only this thread touches the seat (see `Seat`), and it is empty: each index
    // gets one thread.
    let w: &Worker = unsafe {
        (*seat).write(Worker {
            index,
            registry,
            owner,
            rng: Cell::new(
                0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
            ),
            frames: Frames::new(),
            stack: stack_bounds().unwrap_or((0, 0)),
            offers: Default::default(),
            spawn_counts: keep.spawns.of(index),
            hint: Cell::new(None),
            yielding_since: Cell::new(None),
            idle_since: Cell::new(None),
            next_glance: Cell::new(GLANCE_AFTER),
            glance_seen: Cell::new(None),
            #[cfg(feature = "trace")]
            trace: crate::core::trace::Log::new(),
            _not_send: PhantomData,
        })
    };
    assert!(
        w.owner.is_home(),
        "heist: a worker's owner is not beside its deque"
    );
    w
}

/// The calling thread's stack block as the thread library reports it (Linux:
/// `pthread_getattr_np`); `None` where it cannot be read. The block is this thread's alone:
/// no other thread's stack lies in it while the thread lives. Miri has no
/// `pthread_getattr_np`, so there the block is unknown and `Scope::worker` gives `None`.
#[cfg(all(target_os = "linux", not(miri)))]
fn stack_bounds() -> Option<(usize, usize)> {
    use std::ffi::{c_int, c_ulong, c_void};
    // Larger than and as aligned as `pthread_attr_t` on every Linux target (36 or 56 bytes).
    #[repr(C, align(8))]
    struct Attr([u8; 128]);
    extern "C" {
        fn pthread_self() -> c_ulong;
        fn pthread_getattr_np(t: c_ulong, attr: *mut Attr) -> c_int;
        fn pthread_attr_getstack(
            attr: *const Attr,
            addr: *mut *mut c_void,
            size: *mut usize,
        ) -> c_int;
        fn pthread_attr_destroy(attr: *mut Attr) -> c_int;
    }
    let mut attr = Attr([0; 128]);
    let (mut addr, mut size) = (ptr::null_mut(), 0usize);
    // SAFETY: `attr` is a buffer at least as large and aligned as a `pthread_attr_t`;
    // `pthread_getattr_np` initialises it for the calling thread, `pthread_attr_getstack`
    // only reads it and writes the two out-parameters, and it is destroyed once, only if
    // it was initialised.
    let ok = unsafe {
        if pthread_getattr_np(pthread_self(), &mut attr) != 0 {
            return None;
        }
        let ok = pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        pthread_attr_destroy(&mut attr);
        ok
    };
    let lo = addr as usize;
    (ok && size > 0).then(|| (lo, lo + size))
}

#[cfg(not(all(target_os = "linux", not(miri))))]
fn stack_bounds() -> Option<(usize, usize)> {
    None
}

/// The stack pointer: read from the register where the architecture is known, since a
/// local's address is not on the thread's stack under AddressSanitizer (its fake stacks);
/// elsewhere the address of a local of the caller's frame.
#[inline(always)]
pub(crate) fn stack_here() -> usize {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        let sp: usize;
        // SAFETY: copies the stack pointer into a register; reads no memory, writes none.
        unsafe {
            std::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags))
        };
        sp
    }
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    {
        let sp: usize;
        // SAFETY: as above.
        unsafe {
            std::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
        };
        sp
    }
    #[cfg(any(miri, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
    {
        let x = 0u8;
        std::hint::black_box(&x) as *const u8 as usize
    }
}

/// How far below the stack pointer an address that aliases the owner's words (modulo
/// 4 KiB) may lie at the closest: task frames above that depth do not alias them.
const ALIAS_DEPTH: usize = 3584;

/// How many frames `colour_stack` may descend: each is at least 64 bytes, so together
/// they span the 4 KiB that aliasing repeats over.
const COLOUR_TRIES: u32 = 4096 / 64;

/// Runs `f` deep enough on the stack that the owner's words (at `lo..hi`) alias, modulo
/// 4 KiB, only the cold frames above and addresses `ALIAS_DEPTH` or more below. A load of
/// `head` or the gate soon after a store to an aliasing stack address waits for that store
/// (4K aliasing), and where the words fall depends on the heap and the process: fib on
/// one worker ran 30–50 % slower in some processes than in others.
#[inline(never)]
fn colour_stack(lo: usize, hi: usize, tries: u32, f: &mut dyn FnMut()) {
    let pad = [0u8; 64];
    let sp = std::hint::black_box(&pad).as_ptr() as usize;
    // Distances below `sp` of the nearest aliases of the last and the first word.
    let near = sp.wrapping_sub(hi) & 0xfff;
    let far = sp.wrapping_sub(lo) & 0xfff;
    if (near >= ALIAS_DEPTH && far >= near) || tries == 0 {
        f();
    } else {
        colour_stack(lo, hi, tries - 1, f);
    }
    std::hint::black_box(&pad);
}

impl Worker {
    /// This worker's index in its pool, `0..workers()`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of workers in this worker's pool.
    pub fn workers(&self) -> usize {
        self.registry.workers()
    }

    /// The part of this worker's thread stack that no other thread's stack overlaps: an
    /// address a thread finds in its own frames lies in it only on this worker's thread.
    pub(crate) fn stack_range(&self) -> (usize, usize) {
        self.stack
    }

    /// Whether more than half of this worker's stack is in use. Such a worker takes no
    /// more work from others while it waits (it still answers thieves, and runs what it
    /// was sent and its own tasks): every task taken up in a wait runs nested in it, and a
    /// chain of waits, each for a task stolen back by the other side, could otherwise
    /// outgrow the stack. False where the stack is unknown.
    pub(crate) fn deep(&self) -> bool {
        let (lo, hi) = self.stack;
        let here = stack_here();
        lo < here && here < lo + (hi - lo) / 2
    }

    /// Runs `a` and `b`, potentially in parallel, and returns both results.
    ///
    /// `b` is pushed onto this worker's deque (stored in the deque itself when it fits),
    /// `a` runs right away, and then `b` is popped and run inline unless a thief took it,
    /// in which case this worker steals from that thief until `b` is done. The path where
    /// nothing is stolen uses no atomic read-modify-write, fence, allocation or
    /// thread-local look-up. A panic in either closure is re-raised here once both have
    /// finished.
    ///
    /// ```
    /// let pool = heist::Pool::builder().workers(2).build().unwrap();
    /// let (a, b) = pool.run(|w| w.join(|_| 1 + 1, |_| 2 + 2));
    /// assert_eq!((a, b), (2, 4));
    /// ```
    #[inline]
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Worker) -> RA + Send,
        B: FnOnce(&Worker) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        #[cfg(feature = "trace")]
        let b = crate::core::trace::task::<{ crate::core::trace::EventKind::Join as u8 }, B, RB>(b);
        self.join_untraced(a, b)
    }

    /// `join` whose `b` is no task of its own in a trace: for the runtime's joins that
    /// only carry other tasks, each traced where it runs (`crate::trace`).
    #[inline(always)]
    pub(crate) fn join_untraced<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Worker) -> RA + Send,
        B: FnOnce(&Worker) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        if !task::fits::<B, RB>() {
            return self.join_spilled(a, b);
        }
        self.join_direct(a, b)
    }

    /// `join` for a `b` that fits in a slot.
    #[inline(always)]
    fn join_direct<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Worker) -> RA + Send,
        B: FnOnce(&Worker) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let slot = self.owner.join_slot();
        // SAFETY: `slot` is the free slot at `head` (a spare one if the deque is full),
        // not yet visible to thieves, and `fits::<B, RB>()` holds.
        unsafe { slot.put::<Worker, B, RB>(b) };
        if self.owner.advance(slot) {
            return self.join_pushed_slow::<A, B, RA, RB>(a, slot);
        }
        self.run_and_sync::<A, B, RA, RB>(a, slot)
    }

    /// The rest of a `join` whose push found the gate raised: the scheduler's slow push,
    /// then `a` and the sync; or, if the push went to a spare slot because the deque is
    /// full, `b` back out of it and both run here. Out of line, so that the fast path
    /// keeps no registers across the slow push's call.
    #[cold]
    #[inline(never)]
    fn join_pushed_slow<A, B, RA, RB>(&self, a: A, slot: &Slot) -> (RA, RB)
    where
        A: FnOnce(&Worker) -> RA + Send,
        B: FnOnce(&Worker) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        if self.owner.is_spare(slot) {
            // SAFETY: a spare slot is read by nobody but its owner (`Deque::head_index`),
            // so it still holds the `B` just put.
            let b = unsafe { slot.take::<B, RB>() };
            self.owner.unpush_spare(slot);
            return self.join_inline(a, b);
        }
        self.push_slow();
        self.run_and_sync::<A, B, RA, RB>(a, slot)
    }

    /// `join` with nowhere to push `b`: both run here, `a` first. The depth this adds
    /// to the stack is the recursion the caller wrote.
    fn join_inline<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Worker) -> RA,
        B: FnOnce(&Worker) -> RB,
    {
        let ra = a(self);
        (ra, b(self))
    }

    /// Runs `a` with `slot` pushed, then syncs the slot, also when `a` unwinds.
    #[inline(always)]
    fn run_and_sync<A, B, RA, RB>(&self, a: A, slot: &Slot) -> (RA, RB)
    where
        A: FnOnce(&Worker) -> RA + Send,
        B: FnOnce(&Worker) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let guard = SyncOnUnwind::<B, RB> {
            w: self,
            slot,
            _job: PhantomData,
        };
        let ra = a(self);
        mem::forget(guard);
        (ra, self.sync::<B, RB>(slot))
    }

    /// A push of `b` (which fits a slot) off the fast path. Gives `b` back if the deque
    /// is full; the caller syncs the slot in LIFO order with every other pushed slot.
    #[cold]
    #[inline(never)]
    pub(crate) fn push_task_slow<B, RB>(&self, b: B) -> Result<&Slot, B>
    where
        B: FnOnce(&Worker) -> RB + Send,
        RB: Send,
    {
        let Some(slot) = self.owner.next_slot() else {
            return Err(b);
        };
        // SAFETY: `slot` is the free slot at `head`, not yet visible to thieves, and the
        // caller checked `fits::<B, RB>()`.
        unsafe { slot.put::<Worker, B, RB>(b) };
        if self.owner.push() {
            self.push_slow();
        }
        Ok(slot)
    }

    /// Pops `slot`, the top of the deque, and runs or awaits its job (Lace SYNC).
    #[inline(always)]
    pub(crate) fn sync<B, RB>(&self, slot: &Slot) -> RB
    where
        B: FnOnce(&Worker) -> RB + Send,
        RB: Send,
    {
        if !self.owner.try_pop_private(slot) {
            match self.sync_gated::<B, RB>(slot) {
                None => {}
                Some(Ok(r)) => return r,
                Some(Err(p)) => panic::resume_unwind(p),
            }
        }
        // SAFETY: the slot was popped privately (`None` above), so it still holds the `B`
        // put by the push.
        let b = unsafe { slot.take::<B, RB>() };
        b(self)
    }

    /// `sync` with the pop gate down: pops `slot` (`None`, for the caller to run it) or
    /// awaits its thief and takes the outcome. Out of line, with the outcome returned
    /// through memory as `await_stolen` did: the fast path then keeps one shared return.
    #[cold]
    #[inline(never)]
    fn sync_gated<B, RB>(&self, slot: &Slot) -> Option<std::thread::Result<RB>> {
        if self.pop_gated(slot) {
            return None;
        }
        Some(self.await_stolen::<B, RB>(slot))
    }

    /// `join` for a `b` (or result) too large for a slot: the slot holds a small job
    /// that runs `b` from this frame and writes its result here.
    #[inline(never)]
    fn join_spilled<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Worker) -> RA + Send,
        B: FnOnce(&Worker) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let mut b = Some(b);
        let mut rb: Option<RB> = None;
        let frame = Spill {
            b: &mut b,
            rb: &mut rb,
        };
        let small = move |w: &Worker| {
            let frame = frame;
            // SAFETY: `join` does not return before this job has run or been dropped, so
            // the frame's `b` and `rb` are alive; only this job touches them meanwhile.
            unsafe {
                let b = (*frame.b).take().expect("a spilled job runs once");
                *frame.rb = Some(b(w));
            }
        };
        let (ra, ()) = self.join_direct(a, small);
        (ra, rb.expect("the spilled job has run"))
    }

    /// A push found the gate raised: the scheduler shares, answers or publishes.
    #[cold]
    #[inline(never)]
    pub(crate) fn push_slow(&self) {
        self.sched().push_slow(self);
    }

    #[cold]
    #[inline(never)]
    fn pop_slow(&self) -> Pop {
        self.sched().pop_slow(self)
    }

    /// Leapfrogs until the thief of `slot` is done, then takes the outcome.
    #[inline(never)]
    pub(crate) fn await_stolen<B, RB>(&self, slot: &Slot) -> std::thread::Result<RB> {
        self.await_done(slot);
        // SAFETY: `await_done` saw `DONE` with acquire ordering; the slot holds `B`/`RB`.
        unsafe { slot.take_outcome::<B, RB>() }
    }

    /// Waits for the thief of the top slot `slot`, working meanwhile, then pops it.
    pub(crate) fn await_done(&self, slot: &Slot) {
        self.sched().await_stolen(self, slot);
    }

    /// Works until the thief of `slot` has finished it: `attempt(thief)` is one try at
    /// other work, given the thief's index (the scheduler's way of leapfrogging); between
    /// failed tries the worker backs off.
    pub(crate) fn wait_for_thief(&self, slot: &Slot, mut attempt: impl FnMut(usize) -> bool) {
        let mut idle = 0u32;
        loop {
            debug_assert!(
                self.owner.top().is_some_and(|t| ptr::eq(t, slot)),
                "heist: a stolen slot is awaited on top of its deque"
            );
            let thief = slot.thief.load(Acquire);
            if thief == DONE {
                return;
            }
            let t = Stopwatch::start();
            let found = if thief == 0 {
                std::hint::spin_loop();
                false
            } else {
                // A broadcast may be what the thief waits for.
                self.run_mail() || attempt(Slot::thief_index(thief))
            };
            if found {
                stat!(self.counters(), leaps);
                idle = 0;
            } else {
                self.back_off(&mut idle, Some(Duration::from_micros(200)), || {
                    slot.thief.load(Acquire) == DONE
                });
                stat!(self.counters(), idle_ns, t.ns());
            }
        }
    }

    /// Pops the top slot, `top`; true if it was still private.
    #[inline(always)]
    pub(crate) fn try_pop_any(&self, top: &Slot) -> bool {
        self.owner.try_pop_private(top) || self.pop_gated(top)
    }

    /// A pop of `top` with the pop gate down: spawned tasks above `top` are run first
    /// (`crate::core::spawn`), then the scheduler's slow pop.
    #[cold]
    #[inline(never)]
    fn pop_gated(&self, top: &Slot) -> bool {
        crate::core::spawn::drain_above(self, top);
        self.owner.try_pop_private(top) || self.pop_slow() == Pop::Private
    }

    /// Pushes a slot that `write` fills with `job` (a spawned task); gives `job` back if
    /// the deque is full.
    #[inline(always)]
    pub(crate) fn push_written<T>(&self, job: T, write: impl FnOnce(&Slot, T)) -> Result<&Slot, T> {
        let Some(slot) = self.owner.fast_slot() else {
            return Err(job);
        };
        write(slot, job);
        if self.owner.advance(slot) {
            self.push_slow();
        }
        Ok(slot)
    }

    /// Pushes a mark: a claimed slot, with nothing to run, that a `Worker::scope` keeps
    /// below its body (see `crate::tasks::promise`). False if the deque holds a mark on top
    /// already and has no room for another.
    pub(crate) fn push_mark(&self) -> bool {
        let Some(slot) = self.owner.mark_slot() else {
            return false;
        };
        // SAFETY: `slot` is the free slot at `head`, not yet visible to thieves.
        unsafe { slot.claim() };
        if self.owner.push() {
            self.push_slow();
        }
        true
    }

    /// Runs `f`, a task taken from a queue or a steal, counting it as running: a worker
    /// that runs a task is not idle even when its deque and job list are empty.
    ///
    /// Spawned tasks that `f` leaves in the deque run (or are awaited) before this
    /// returns: the worker may have taken `f` up while it waits for the slot just below
    /// them (leapfrogging, a scope's drain), whose pop must find that slot on top.
    ///
    /// `f` must not unwind: such a task runs inside whatever this worker waits in (a
    /// scope, a leapfrogging `join`, another pool's `run`), whose frames tasks on other
    /// workers may borrow. Every task entry catches its panic and hands it on; should one
    /// still unwind, the process aborts here rather than unwind through those frames.
    pub(crate) fn run_taken<R>(&self, f: impl FnOnce() -> R) -> R {
        let depth = self.owner.depth();
        let _task = self.frames.enter(Frame::Task(depth));
        let guard = task::AbortOnUnwind;
        let r = f();
        if self.owner.depth() > depth {
            crate::core::spawn::drain_to(self, depth, task::drop_panic);
        }
        mem::forget(guard);
        r
    }

    /// What this worker is inside.
    pub(crate) fn frames(&self) -> &Frames {
        &self.frames
    }

    /// Which jobs from outside this worker may take up now (`Frames::may_take_roots`).
    pub(crate) fn roots(&self) -> Roots {
        self.frames.roots()
    }

    /// Handles waiting steal requests (relay; a no-op under Lace). See [`crate::poll`].
    #[inline]
    pub fn poll(&self) {
        if self.owner.gate_raised() {
            self.sched().poll(self);
        }
    }

    /// Works on other tasks until `done` holds.
    pub(crate) fn wait_until(&self, done: impl Fn() -> bool) {
        let mut idle = 0;
        while !done() {
            let t = Stopwatch::start();
            if self.find_work() {
                idle = 0;
            } else {
                self.back_off(&mut idle, Some(Duration::from_micros(500)), &done);
                stat!(self.counters(), idle_ns, t.ns());
            }
        }
    }

    /// Round `idle` (counted up here) of a back-off: spins, then yields, then sleeps
    /// (bounded by `timeout`, or until woken). `done` is what the caller waits for: the
    /// sleep's last look checks it too, so that its waker cannot be missed (PROTOCOLS.md,
    /// "Sleep and wake"). A worker that a waker woke starts its back-off over: the work
    /// it was woken for may be a moment from visible (a root that has not pushed yet),
    /// and sleeping again at the first empty look costs a second wake-up.
    fn back_off(&self, idle: &mut u32, timeout: Option<Duration>, done: impl Fn() -> bool) {
        *idle += 1;
        if self.glance(*idle) || self.registry.sources.serve(self) {
            return;
        }
        if *idle < SPIN_ROUNDS {
            for _ in 0..(1 << (*idle / 16).min(6)) {
                std::hint::spin_loop();
            }
        } else if self.yields_on(*idle) {
            std::thread::yield_now();
        } else {
            stat!(self.counters(), sleeps);
            let r = &self.registry;
            let me = &r.infos[self.index];
            let timeout = self.sched().sleep_timeout(self, timeout);
            // A thief watching an offer looks again once it has stood long enough.
            let timeout = match (timeout, self.offers.watch_left()) {
                (Some(t), Some(o)) => Some(t.min(o)),
                (t, o) => t.or(o),
            };
            self.sched().parking(self, true);
            let asleep = crate::core::trace::span(self, EventKind::Sleep, None, 0);
            let woken = r.sleep.sleep(self.index, self.roots(), timeout, || {
                self.sched().work_visible(self)
                    || done()
                    || me.has_mail.load(SeqCst)
                    || crate::core::detached::stop_if_closed(r)
                    || r.sources.wants(self.index)
                    || self.lifeline_look()
            });
            asleep.end();
            self.sched().parking(self, false);
            let hint = r.sleep.take_hint(self.index);
            crate::core::trace::mark(self, EventKind::Wake, hint, 0);
            if let Some(v) = hint {
                self.hint.set(Some(v));
            }
            if woken {
                *idle = 0;
            }
        }
    }

    /// Whether round `idle` of a back-off yields rather than sleeps: for `YIELD_ROUNDS`
    /// rounds, and then until `YIELD_FOR` has passed since the first.
    fn yields_on(&self, idle: u32) -> bool {
        if idle == SPIN_ROUNDS {
            self.yielding_since.set(Some(Instant::now()));
        }
        idle < SPIN_ROUNDS + YIELD_ROUNDS
            || self
                .yielding_since
                .get()
                .is_some_and(|t| t.elapsed() < YIELD_FOR)
    }

    /// An idle worker's early lifeline (PROTOCOLS.md, "Lifelines"): `GLANCE_AFTER` into
    /// its back-off, and then at each doubling of that time, it reads the deque words of
    /// a worker with private tasks and nothing shared; if they are the same as at the
    /// glance before, their owner has neither pushed, popped nor shared since, and is
    /// most likely in a long leaf, so a lifeline reaches the tasks. Without the glance a
    /// spinning worker would reach them only at its sleep's last look, `YIELD_FOR` later;
    /// with fine-grained tasks the words move, and no fence is spent. True if it reached
    /// work, or saw private work it could not reach this time.
    fn glance(&self, idle: u32) -> bool {
        if idle == 1 {
            self.idle_since.set(Some(Instant::now()));
            self.next_glance.set(GLANCE_AFTER);
            self.glance_seen.set(None);
            return false;
        }
        let due = self.next_glance.get();
        if self.idle_since.get().is_none_or(|t| t.elapsed() < due) {
            return false;
        }
        self.next_glance.set(due * 2);
        let r = &self.registry;
        if r.workers() == 1 || self.deep() || !crate::core::sync::heavy_fence_available() {
            return false;
        }
        let words = |v: usize| r.infos[v].deque.private_words().map(|(ts, h)| (v, ts, h));
        let seen = self.glance_seen.take();
        let now = seen
            .and_then(|(v, ..)| words(v))
            .or_else(|| self.others().find_map(words));
        let Some((v, ..)) = now.filter(|_| now == seen) else {
            self.glance_seen.set(now);
            return false;
        };
        // Reached, or not this time (its owner is in a slow path): search again.
        self.reach(v);
        true
    }

    /// A sleeper's last look for work whose owner may not come back to the runtime
    /// (PROTOCOLS.md, "Lifelines"): raises every other worker's push gate (the sign, so
    /// that its next push shares and wakes a sleeper), fences asymmetrically, and then
    /// reaches the private tasks of any owner whose push did not see the sign. True if
    /// it reached work, or saw private work it could not reach this time.
    fn lifeline_look(&self) -> bool {
        let r = &self.registry;
        if r.workers() == 1 || !crate::core::sync::heavy_fence_available() {
            return false;
        }
        self.others().for_each(|v| r.infos[v].deque.raise_limit());
        if !crate::core::sync::heavy_fence() {
            return false;
        }
        self.reach_private()
    }

    /// Runs a lifeline on every other worker whose deque shows private tasks and nothing
    /// shared, until one reaches work. True if one did, or if one saw tasks it could not
    /// reach: its owner is in a slow path, or another lifeline is under way, and the
    /// caller looks again rather than sleep past a task its owner may never share.
    fn reach_private(&self) -> bool {
        let r = &self.registry;
        let mut unreached = false;
        for v in self.others().filter(|&v| r.infos[v].deque.has_private()) {
            if self.reach(v) {
                return true;
            }
            unreached = true;
        }
        unreached
    }

    /// A lifeline to `v`'s private tasks; true if it reached some.
    fn reach(&self, v: usize) -> bool {
        let reached = self.sched().lifeline(self, v);
        if reached {
            stat!(self.counters(), lifelines);
            crate::core::trace::mark(self, EventKind::Lifeline, Some(v), 0);
            self.hint.set(Some(v));
        }
        reached
    }

    /// The other workers, from a random one on.
    fn others(&self) -> impl Iterator<Item = usize> {
        let n = self.registry.workers();
        let me = self.index;
        let start = self.next_random() as usize % n;
        (0..n)
            .map(move |i| (start + i) % n)
            .filter(move |&v| v != me)
    }

    fn run_loop(&self) {
        let mut idle = 0;
        while !self.registry.terminate.load(Relaxed) {
            let t = Stopwatch::start();
            if self.find_work() {
                idle = 0;
                continue;
            }
            let r = &self.registry;
            let in_flight = || r.in_flight.load(Relaxed) > 0 || r.sched.barrier_pending();
            let busy = in_flight();
            let timeout = busy.then(|| Duration::from_millis(2));
            // Asleep without a timeout, only work coming in flight ends the sleep.
            self.back_off(&mut idle, timeout, || !busy && in_flight());
            // Time asleep with nothing in flight is not counted: the pool is simply idle.
            if busy {
                stat!(self.counters(), idle_ns, t.ns());
            }
        }
    }

    /// Runs one job from this worker's mailbox or own list, the injector, or another
    /// worker.
    pub(crate) fn find_work(&self) -> bool {
        // Relay: a request that came while this worker ran heap jobs (which neither push
        // nor pop) is answered before the next one, not once the list is empty.
        self.poll();
        if self.run_mail() || crate::core::spawn::help_own(self) {
            return true;
        }
        let r = &self.registry;
        if let Some(job) = r
            .take_newest_job(self.index)
            .or_else(|| self.sched().take_injected(self))
        {
            // SAFETY: every queued `JobRef` is taken exactly once.
            self.run_taken(|| unsafe { job.execute(self) });
            return true;
        }
        if r.sources.help(self) {
            return true;
        }
        let victim = self.hint.take().or_else(|| self.random_victim());
        if self.sched().steal(self, victim) {
            stat!(self.counters(), steals);
            // A hint: there may be more where this came from.
            r.sleep.wake_one();
            return true;
        }
        stat!(self.counters(), failed_steals);
        victim.is_some_and(|v| crate::core::offer::look(self, v))
    }

    /// Runs a job posted to this worker alone (`broadcast`), if one waits.
    pub(crate) fn run_mail(&self) -> bool {
        let Some(job) = self.registry.take_mail(self.index) else {
            return false;
        };
        // SAFETY: every posted `JobRef` is taken exactly once.
        self.run_taken(|| unsafe { job.execute(self) });
        true
    }

    /// A victim picked at random among the other workers; `None` if there are none.
    pub(crate) fn random_victim(&self) -> Option<usize> {
        let n = self.registry.workers();
        if n == 1 {
            return None;
        }
        let mut v = self.next_random() as usize % (n - 1);
        if v >= self.index {
            v += 1;
        }
        Some(v)
    }

    pub(crate) fn next_random(&self) -> u64 {
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        x
    }

    /// Its own side of the loops' standing offers.
    pub(crate) fn offers(&self) -> &crate::core::offer::Local {
        &self.offers
    }

    /// Its offer slot, where the loops it runs stand their offers.
    pub(crate) fn offer_slot(&self) -> &crate::core::offer::OfferSlot {
        &self.registry.infos[self.index].offer
    }

    /// Its trace buffer.
    #[cfg(feature = "trace")]
    pub(crate) fn trace_log(&self) -> &crate::core::trace::Log {
        &self.trace
    }

    pub(crate) fn counters(&self) -> &crate::core::stats::Counters {
        &self.registry.infos[self.index].counters
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// This worker's counts of detached tasks made and done (`spawn::Counts`).
    #[inline(always)]
    pub(crate) fn spawn_counts(&self) -> &[AtomicU64; 2] {
        // SAFETY: a pointer into `self.registry`, which lives as long as `self`.
        unsafe { &*self.spawn_counts }
    }

    pub(crate) fn owner(&self) -> &Owner<InWorkerSeat> {
        &self.owner
    }

    /// The scheduler of this worker's pool.
    #[inline]
    pub(crate) fn sched(&self) -> &dyn Schedule {
        &*self.registry.sched
    }
}

/// Pointers into a `join_spilled` frame.
struct Spill<B, RB> {
    b: *mut Option<B>,
    rb: *mut Option<RB>,
}

// SAFETY: the pointed-to `B` and `RB` are `Send`, and the frame hands them to exactly one
// job, which is the only user until `join` returns.
unsafe impl<B: Send, RB: Send> Send for Spill<B, RB> {}

/// Syncs the pushed task if `a` unwinds, so the deque stays consistent and a thief never
/// outlives the frame its task borrows from.
struct SyncOnUnwind<'w, B: FnOnce(&Worker) -> RB, RB> {
    w: &'w Worker,
    slot: &'w Slot,
    _job: PhantomData<fn(B) -> RB>,
}

impl<B: FnOnce(&Worker) -> RB, RB> Drop for SyncOnUnwind<'_, B, RB> {
    // Inlined into the landing pad so that `w` and `slot` stay in registers: a
    // `drop_in_place` call would need the guard spilled to the stack on every join.
    #[inline(always)]
    fn drop(&mut self) {
        sync_unwinding::<B, RB>(self.w, self.slot);
    }
}

/// The unwinding half of `SyncOnUnwind`, out of line. As in rayon, `b` still runs when
/// `a` has panicked: both sides of a join finish before its panic goes on. What it
/// leaves (its outcome, or the thief's) is dropped under `catch_unwind`: `a`'s panic is
/// already unwinding.
#[cold]
#[inline(never)]
fn sync_unwinding<B, RB>(w: &Worker, slot: &Slot)
where
    B: FnOnce(&Worker) -> RB,
{
    let dropped = if w.try_pop_any(slot) {
        // SAFETY: popped privately, so the slot still holds the `B` put by `join`.
        let b = unsafe { slot.take::<B, RB>() };
        match panic::catch_unwind(panic::AssertUnwindSafe(|| b(w))) {
            Ok(rb) => task::drop_caught(rb),
            Err(p) => Some(p),
        }
    } else {
        match w.await_stolen::<B, RB>(slot) {
            Ok(rb) => task::drop_caught(rb),
            Err(p) => Some(p),
        }
    };
    dropped.into_iter().for_each(task::drop_panic);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{colour_stack, ALIAS_DEPTH, COLOUR_TRIES};

    /// Wherever the words lie, `f` runs where their nearest aliases below the stack
    /// pointer are `ALIAS_DEPTH` or more away and do not wrap around.
    #[test]
    fn colour_stack_puts_the_aliases_of_the_words_deep_enough() {
        for lo in (0x10_000..0x11_000usize).step_by(40) {
            let hi = lo + 0x130;
            colour_stack(lo, hi, COLOUR_TRIES, &mut || {
                let x = 0u8;
                let sp = std::hint::black_box(&x) as *const u8 as usize;
                let near = sp.wrapping_sub(hi) & 0xfff;
                let far = sp.wrapping_sub(lo) & 0xfff;
                assert!(
                    near >= ALIAS_DEPTH - 256 && far >= near,
                    "{lo:#x}: {near} {far}"
                );
            });
        }
    }
}
