//! One fork-join interface over every runtime, so that each kernel is written once and
//! its sequential elision is the same code with `join` turned into two calls.

use std::ptr::NonNull;

/// A fork-join context: the one operation every recursive kernel needs.
pub trait Fork: Sized {
    /// Runs `a` and `b`, potentially in parallel, and returns both results.
    fn join<A, B, RA, RB>(&mut self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&mut Self) -> RA + Send,
        B: FnOnce(&mut Self) -> RB + Send,
        RA: Send,
        RB: Send;
}

/// The sequential elision: `join(a, b)` is `(a(), b())`.
pub struct Seq;

impl Fork for Seq {
    #[inline(always)]
    fn join<A, B, RA, RB>(&mut self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&mut Self) -> RA + Send,
        B: FnOnce(&mut Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let ra = a(self);
        (ra, b(self))
    }
}

/// rayon's `join` (the pool is whichever one `install` entered).
pub struct Rayon;

impl Fork for Rayon {
    #[inline]
    fn join<A, B, RA, RB>(&mut self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&mut Self) -> RA + Send,
        B: FnOnce(&mut Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(|| a(&mut Rayon), || b(&mut Rayon))
    }
}

/// heist's explicit-context `Worker::join`.
///
/// Holds the worker by pointer because `Fork` closures take `&mut Self` while heist hands
/// each side a `&Worker` of its own (higher-ranked) lifetime.
pub struct Heist(NonNull<heist::Worker>);

impl Heist {
    /// Wraps the worker that runs the current task.
    pub fn new(w: &heist::Worker) -> Self {
        Heist(NonNull::from(w))
    }
}

impl Fork for Heist {
    #[inline]
    fn join<A, B, RA, RB>(&mut self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&mut Self) -> RA + Send,
        B: FnOnce(&mut Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        // SAFETY: a `Heist` is only made by `Heist::new` from a `&Worker` that is valid for
        // the whole call it was made in, and it is neither `Send` nor `Clone`, so it cannot
        // leave that call or that thread.
        let w = unsafe { self.0.as_ref() };
        w.join(|w| a(&mut Heist::new(w)), |w| b(&mut Heist::new(w)))
    }
}

/// chili's `Scope::join`, held by pointer for the same reason as [`Heist`].
pub struct Chili(NonNull<chili::Scope<'static>>);

impl Chili {
    /// Wraps the scope that runs the current task.
    pub fn new(s: &mut chili::Scope<'_>) -> Self {
        Chili(NonNull::from(s).cast())
    }
}

impl Fork for Chili {
    #[inline]
    fn join<A, B, RA, RB>(&mut self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&mut Self) -> RA + Send,
        B: FnOnce(&mut Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        // SAFETY: made by `Chili::new` from a `&mut Scope` that outlives the call it was made
        // in; `Chili` is neither `Send` nor `Clone`, so it stays inside that call. The
        // lifetime parameter is erased only to name the type; it is never extended in use.
        let s = unsafe { self.0.as_mut() };
        s.join(|s| a(&mut Chili::new(s)), |s| b(&mut Chili::new(s)))
    }
}
