//! What a worker is inside: a stack of frames, one per task it took up and per wait it
//! sits in, pushed and popped by guards so that an entry ends with its scope, also on
//! unwind. The rules that keep roots and barriers from waiting for their own callers
//! (PROTOCOLS.md, "Roots and barriers") are questions to this stack.
//!
//! A worker takes tasks up inside other tasks' waits (leapfrogging, scope and barrier
//! waits, another pool's `run`), so a task may run above a wait that depends on it. The
//! rules look at what lies between the top and the innermost frame of some kind: a
//! `Task` frame in between means the worker is busy with something nested inside it.
//! `join` pushes no frame: its second half runs inline or on a thief, never inside a wait
//! of its own worker that it could block.
//!
//! Spawned tasks sit in the deque like join branches (`crate::spawn`); frames that drain
//! them record the deque's depth where they began (`Task`, `Slot`, `Scope`).
//!
//! The barrier rule follows the task barrier of "Embracing Explicit Communication in
//! Work-Stealing Runtime Systems" (Prell, §4.2), which allows barriers in the root task
//! only; heist also allows them inside tasks, where they wait for what can end first.

use std::cell::UnsafeCell;

/// One thing a worker is inside. The depths are of the worker's deque when the frame
/// began: spawned tasks pushed above them belong to the frame (`crate::spawn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A task this worker took up from a queue, a steal, a team or a reduction.
    Task(u32),
    /// A root of `Pool::run` (inside the `Task` that runs it).
    Root,
    /// A detached task (inside the `Task` that runs it).
    Detached,
    /// A wait for a `run` of another pool, or for a broadcast: a root of this pool may
    /// run above it, since what the wait is for may need one first.
    OtherPool,
    /// A wait in a barrier that termination detection answers: the tasks below it count
    /// as idle.
    Barrier,
    /// A slot's task (stolen, handed out, or popped by this worker): what it leaves in
    /// the deque is drained before it counts as finished (`crate::spawn::run_draining`).
    Slot(u32),
    /// A `Worker::scope`: its tasks lie from this depth, above its mark; its end drains
    /// the deque down to the mark.
    Scope(u32),
    /// A drain (`crate::spawn::drain_to`) runs the spawned slot it just popped: what the
    /// task leaves above that slot's depth, the drain runs next.
    Drain,
}

impl Frame {
    fn is_task(self) -> bool {
        matches!(self, Frame::Task(_))
    }
}

/// Which jobs submitted from outside a worker may take up now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Roots {
    /// Roots of `Pool::run` as well as other jobs.
    Included,
    /// Only jobs that are not roots.
    Excluded,
}

/// How a barrier called on this worker waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarrierWait {
    /// Inside a detached task's own body: it would wait for that task itself.
    ForItself,
    /// At the root of `Pool::run` at the bottom of the worker, with none of its own tasks
    /// out: it may wait for every detached task, by whatever means the scheduler has.
    AtRoot,
    /// Inside other tasks: until only the given number of detached tasks are left, those
    /// this worker runs inside of, which cannot end first.
    Nested(usize),
}

impl BarrierWait {
    /// How many unfinished detached tasks the wait accepts.
    pub(crate) fn detached_left(self) -> usize {
        match self {
            BarrierWait::Nested(n) => n,
            BarrierWait::ForItself | BarrierWait::AtRoot => 0,
        }
    }
}

/// A worker's frame stack. Only its own thread touches it.
pub(crate) struct Frames {
    stack: UnsafeCell<Vec<Frame>>,
}

/// Pops its frame when dropped.
#[must_use = "the frame is popped when this guard drops"]
pub(crate) struct Entered<'a> {
    frames: &'a Frames,
    #[cfg(debug_assertions)]
    frame: Frame,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        let _top = self.frames.pop();
        #[cfg(debug_assertions)]
        assert_eq!(_top, Some(self.frame), "heist: frames pop in stack order");
    }
}

impl Frames {
    /// Deep enough that a worker's usual nesting never reallocates.
    const RESERVE: usize = 32;

    pub(crate) fn new() -> Frames {
        Frames {
            stack: UnsafeCell::new(Vec::with_capacity(Self::RESERVE)),
        }
    }

    /// Pushes `frame` until the guard drops.
    pub(crate) fn enter(&self, frame: Frame) -> Entered<'_> {
        // SAFETY: `Frames` is not `Sync`, so only this thread is here, and no reference
        // into the vector outlives any method of this type.
        unsafe { (*self.stack.get()).push(frame) };
        Entered {
            frames: self,
            #[cfg(debug_assertions)]
            frame,
        }
    }

    fn pop(&self) -> Option<Frame> {
        // SAFETY: as in `enter`.
        unsafe { (*self.stack.get()).pop() }
    }

    fn with<R>(&self, f: impl FnOnce(&[Frame]) -> R) -> R {
        // SAFETY: as in `enter`; `f` is one of this module's rules, which neither enter
        // nor pop frames.
        f(unsafe { &*self.stack.get() })
    }

    /// The innermost frame that is a `Task` or satisfies `kind`.
    fn innermost(&self, kind: impl Fn(Frame) -> bool) -> Option<Frame> {
        self.with(|s| s.iter().rev().copied().find(|&f| f.is_task() || kind(f)))
    }

    /// Whether this worker may take up a root of `Pool::run` now: at the bottom of its
    /// stack, or right inside a wait for another pool (a root taken up inside any other
    /// wait could wait, in a barrier, for the very task that wait is for).
    pub(crate) fn may_take_roots(&self) -> bool {
        !self
            .innermost(|f| f == Frame::OtherPool)
            .is_some_and(Frame::is_task)
    }

    /// `may_take_roots` as the injector's filter.
    pub(crate) fn roots(&self) -> Roots {
        if self.may_take_roots() {
            Roots::Included
        } else {
            Roots::Excluded
        }
    }

    /// Whether this worker sits right inside a wait for another pool.
    pub(crate) fn waits_for_other_pool(&self) -> bool {
        self.innermost(|f| f == Frame::OtherPool) == Some(Frame::OtherPool)
    }

    /// Whether this worker is idle as far as its frames go: it runs no task, or only
    /// tasks below a barrier wait (relay's termination detection counts those idle).
    pub(crate) fn idle(&self) -> bool {
        !self
            .innermost(|f| f == Frame::Barrier)
            .is_some_and(Frame::is_task)
    }

    /// Whether this worker runs a root of `Pool::run` in the only task it took up, so
    /// that nothing it took up waits for anything above.
    pub(crate) fn at_root(&self) -> bool {
        self.with(|s| {
            let mut tasks = s.iter().filter(|f| f.is_task());
            let first = s.iter().position(|f| f.is_task());
            tasks.next().is_some()
                && tasks.next().is_none()
                && first.is_some_and(|i| s[i..].contains(&Frame::Root))
        })
    }

    /// How many detached tasks this worker runs inside of, at any depth.
    pub(crate) fn detached_depth(&self) -> usize {
        self.with(|s| s.iter().filter(|&&f| f == Frame::Detached).count())
    }

    /// Whether the code running now is a detached task's own body (or runs inline in it).
    pub(crate) fn in_detached_body(&self) -> bool {
        self.innermost(|f| f == Frame::Detached) == Some(Frame::Detached)
    }

    /// How a barrier called now waits, given how many tasks this worker's deque holds
    /// (its own tasks out: others could be running them).
    pub(crate) fn barrier_wait(&self, deque_depth: u32) -> BarrierWait {
        if self.in_detached_body() {
            BarrierWait::ForItself
        } else if deque_depth == 0 && self.at_root() {
            BarrierWait::AtRoot
        } else {
            BarrierWait::Nested(self.detached_depth())
        }
    }

    /// Whether the innermost task this worker runs is a slot's, which drains what it
    /// leaves before it finishes; false in a heap job (a root, a job from outside) or a
    /// team's or reduction's task.
    pub(crate) fn in_slot(&self) -> bool {
        matches!(
            self.innermost(|f| matches!(f, Frame::Slot(_))),
            Some(Frame::Slot(_))
        )
    }

    /// Whether the innermost frame is a `Drain`: a spawned task starts right inside it.
    pub(crate) fn in_drain(&self) -> bool {
        self.with(|s| s.last() == Some(&Frame::Drain))
    }

    /// The depth where the innermost frame that drains began (a slot run, a task taken
    /// up, a scope): spawned tasks pushed above it are found by its drain.
    pub(crate) fn drain_depth(&self) -> u32 {
        self.with(|s| {
            s.iter().rev().find_map(|f| match *f {
                Frame::Task(d) | Frame::Slot(d) | Frame::Scope(d) => Some(d),
                _ => None,
            })
        })
        .unwrap_or(0)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{BarrierWait, Frame, Frames, Roots};
    use std::panic::{self, AssertUnwindSafe};

    fn depth(f: &Frames) -> usize {
        f.with(<[Frame]>::len)
    }

    #[test]
    fn roots_run_at_the_bottom_or_right_inside_a_wait_for_another_pool() {
        let f = Frames::new();
        assert!(f.may_take_roots() && !f.waits_for_other_pool());
        assert_eq!(f.roots(), Roots::Included);
        let _t = f.enter(Frame::Task(0));
        assert!(!f.may_take_roots());
        assert_eq!(f.roots(), Roots::Excluded);
        {
            let _w = f.enter(Frame::OtherPool);
            assert!(f.may_take_roots() && f.waits_for_other_pool());
            let _t2 = f.enter(Frame::Task(0));
            let _r = f.enter(Frame::Root);
            assert!(!f.may_take_roots() && !f.waits_for_other_pool());
        }
        assert!(!f.may_take_roots());
    }

    #[test]
    fn only_the_root_in_the_bottom_task_is_at_root() {
        let f = Frames::new();
        assert!(!f.at_root());
        let _t = f.enter(Frame::Task(0));
        assert!(!f.at_root(), "a task that is no root");
        let _r = f.enter(Frame::Root);
        assert!(f.at_root());
        {
            let _s = f.enter(Frame::Scope(0));
            assert!(f.at_root(), "a scope changes nothing");
        }
        let _w = f.enter(Frame::OtherPool);
        let _t2 = f.enter(Frame::Task(0));
        let _r2 = f.enter(Frame::Root);
        assert!(!f.at_root(), "a root taken up inside another pool's wait");
    }

    #[test]
    fn tasks_below_a_barrier_wait_count_as_idle() {
        let f = Frames::new();
        assert!(f.idle());
        let _t = f.enter(Frame::Task(0));
        assert!(!f.idle());
        let _b = f.enter(Frame::Barrier);
        assert!(f.idle());
        let _t2 = f.enter(Frame::Task(0));
        assert!(!f.idle());
    }

    #[test]
    fn a_barrier_waits_for_itself_only_in_a_detached_body() {
        let f = Frames::new();
        let _t = f.enter(Frame::Task(0));
        let _r = f.enter(Frame::Root);
        assert_eq!(f.barrier_wait(0), BarrierWait::AtRoot);
        assert_eq!(f.barrier_wait(1), BarrierWait::Nested(0));
        let _t2 = f.enter(Frame::Task(0));
        let _d = f.enter(Frame::Detached);
        assert_eq!(f.barrier_wait(0), BarrierWait::ForItself);
        let _t3 = f.enter(Frame::Task(0));
        assert_eq!(f.barrier_wait(0), BarrierWait::Nested(1));
        assert_eq!(f.barrier_wait(0).detached_left(), 1);
        let _d2 = f.enter(Frame::Detached);
        let _t4 = f.enter(Frame::Task(0));
        assert_eq!(f.barrier_wait(0), BarrierWait::Nested(2));
    }

    #[test]
    fn slot_runs_and_drain_depths_are_the_innermost_ones() {
        let f = Frames::new();
        assert!(!f.in_slot());
        assert_eq!(f.drain_depth(), 0);
        let _t = f.enter(Frame::Task(1));
        assert!(!f.in_slot(), "a heap job drains nothing");
        assert_eq!(f.drain_depth(), 1);
        let _s = f.enter(Frame::Slot(3));
        assert!(f.in_slot());
        let _c = f.enter(Frame::Scope(5));
        assert!(f.in_slot(), "a scope inside a slot run");
        assert_eq!(f.drain_depth(), 5);
        let _t2 = f.enter(Frame::Task(7));
        assert!(!f.in_slot(), "a task taken up inside the scope's wait");
        assert_eq!(f.drain_depth(), 7);
    }

    #[test]
    fn frames_are_popped_on_unwind() {
        let f = Frames::new();
        let _t = f.enter(Frame::Task(0));
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            let _d = f.enter(Frame::Detached);
            let _t2 = f.enter(Frame::Task(0));
            panic!("unwinds through two frames");
        }));
        assert!(r.is_err());
        assert_eq!(depth(&f), 1);
        assert_eq!(f.detached_depth(), 0);
    }
}
