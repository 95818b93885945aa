//! One fork-join interface over every runtime, so that each kernel is written once and
//! its sequential elision is the same code with `join` turned into two calls.

use std::ptr::NonNull;

/// A fork-join context: the one operation every recursive kernel needs.
///
/// Contexts are passed by value (they are one pointer or nothing), so that a kernel's
/// recursion passes no pointer to its own stack frame and the compiler can optimise the
/// sequential elision and the parallel versions alike.
pub trait Fork: Copy {
    /// Runs `a` and `b`, potentially in parallel, and returns both results.
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(Self) -> RA + Send,
        B: FnOnce(Self) -> RB + Send,
        RA: Send,
        RB: Send;
}

/// The sequential elision: `join(a, b)` is `(a(), b())`.
#[derive(Clone, Copy)]
pub struct Seq;

impl Fork for Seq {
    #[inline(always)]
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(Self) -> RA + Send,
        B: FnOnce(Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let ra = a(self);
        (ra, b(self))
    }
}

/// rayon's `join` (the pool is whichever one `install` entered).
#[derive(Clone, Copy)]
pub struct Rayon;

impl Fork for Rayon {
    #[inline]
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(Self) -> RA + Send,
        B: FnOnce(Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(|| a(Rayon), || b(Rayon))
    }
}

/// heist's explicit-context `Worker::join`.
///
/// Holds the worker by pointer because heist hands each side of a join a `&Worker` of its
/// own (higher-ranked) lifetime, which a `Fork` type cannot name. It is neither `Send` nor
/// `Sync`, so a copy can never leave the thread, and since closures and results of `join`
/// must be `Send`, it cannot be carried out of the task it was made in either.
#[derive(Clone, Copy)]
pub struct Heist(NonNull<heist::Worker>);

impl Heist {
    /// Wraps the worker that runs the current task.
    pub fn new(w: &heist::Worker) -> Self {
        Heist(NonNull::from(w))
    }
}

impl Fork for Heist {
    #[inline]
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(Self) -> RA + Send,
        B: FnOnce(Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        // SAFETY: a `Heist` is only made by `Heist::new` from a `&Worker` that is valid for
        // the whole task it was made in, and (see the type's docs) it cannot leave that task.
        let w = unsafe { self.0.as_ref() };
        w.join(|w| a(Heist::new(w)), |w| b(Heist::new(w)))
    }
}

/// chili's `Scope::join`, held by pointer for the same reason as [`Heist`].
#[derive(Clone, Copy)]
pub struct Chili(NonNull<chili::Scope<'static>>);

impl Chili {
    /// Wraps the scope that runs the current task.
    pub fn new(s: &mut chili::Scope<'_>) -> Self {
        Chili(NonNull::from(s).cast())
    }
}

impl Fork for Chili {
    #[inline]
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(Self) -> RA + Send,
        B: FnOnce(Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        // SAFETY: made by `Chili::new` from a `&mut Scope` that outlives the task it was made
        // in; like `Heist` it cannot leave that task or thread, and a task uses one copy at
        // a time, so the `&mut` is never aliased while in use. The lifetime parameter is
        // erased only to name the type; it is never extended in use.
        let mut p = self.0;
        let s = unsafe { p.as_mut() };
        s.join(|s| a(Chili::new(s)), |s| b(Chili::new(s)))
    }
}
