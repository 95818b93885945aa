//! One fork-join interface over every runtime, so that each kernel is written once and
//! its sequential elision is the same code with `join` turned into two calls.
//!
//! Kernels see [`Fork`]; its one implementation, [`On`], is generic over the runtime:
//! a runtime supplies only its context type and its join ([`Joins`]: the elision, rayon,
//! heist's `Worker::join`, chili's `Scope::join`).

use std::marker::PhantomData;
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

/// A runtime's join on its own context, which is what [`On`] needs of a runtime.
///
/// # Safety
/// `join` may rely on `cx` being a context the runtime handed out for the task that
/// runs it (`On` holds no other); it must call `a` and `b` once each, with contexts of
/// the tasks that run them.
pub unsafe trait Joins: 'static {
    /// What a task holds to reach the runtime: nothing, or a pointer to its worker.
    type Cx: Copy;

    /// Runs `a` and `b`, potentially in parallel, each with its task's context.
    ///
    /// # Safety
    /// `cx` is the context of the calling task (see the trait).
    unsafe fn join<A, B, RA, RB>(cx: Self::Cx, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(Self::Cx) -> RA + Send,
        B: FnOnce(Self::Cx) -> RB + Send,
        RA: Send,
        RB: Send;
}

/// The fork-join context of runtime `J` inside one task.
///
/// Neither `Send` nor `Sync` (it may hold a pointer to the running worker), so a copy can
/// never leave the thread; and since closures and results of `join` must be `Send`, it
/// cannot be carried out of the task it was made in either. It is made only from a
/// context the runtime hands out ([`heist`], [`chili`], [`SEQ`], [`RAYON`], and inside
/// [`Fork::join`]).
pub struct On<J: Joins> {
    cx: J::Cx,
    _task: PhantomData<*const ()>,
}

impl<J: Joins> Clone for On<J> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<J: Joins> Copy for On<J> {}

impl<J: Joins> On<J> {
    #[inline(always)]
    fn new(cx: J::Cx) -> Self {
        On {
            cx,
            _task: PhantomData,
        }
    }
}

impl<J: Joins> Fork for On<J> {
    #[inline(always)]
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(Self) -> RA + Send,
        B: FnOnce(Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        // SAFETY: an `On` holds only a context its runtime handed to the task it is used
        // in (see the type's docs), which is `join`'s contract.
        unsafe { J::join(self.cx, |cx| a(On::new(cx)), |cx| b(On::new(cx))) }
    }
}

/// The sequential elision: `join(a, b)` is `(a(), b())`.
pub enum Seq {}

// SAFETY: calls `a`, then `b`, on the calling task; its context is nothing.
unsafe impl Joins for Seq {
    type Cx = ();

    #[inline(always)]
    unsafe fn join<A, B, RA, RB>(cx: (), a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(()) -> RA + Send,
        B: FnOnce(()) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let ra = a(cx);
        (ra, b(cx))
    }
}

/// The elision's context.
pub const SEQ: On<Seq> = On {
    cx: (),
    _task: PhantomData,
};

/// rayon's `join` (the pool is whichever one `install` entered).
pub enum Rayon {}

// SAFETY: rayon's join runs each side once; its context is nothing.
unsafe impl Joins for Rayon {
    type Cx = ();

    #[inline]
    unsafe fn join<A, B, RA, RB>(_: (), a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(()) -> RA + Send,
        B: FnOnce(()) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(|| a(()), || b(()))
    }
}

/// rayon's context.
pub const RAYON: On<Rayon> = On {
    cx: (),
    _task: PhantomData,
};

/// heist's explicit-context `Worker::join`.
///
/// The context is the worker by pointer, because heist hands each side of a join a
/// `&Worker` of its own (higher-ranked) lifetime, which a `Fork` type cannot name.
pub enum Heist {}

// SAFETY: heist's join runs each side once, giving each the `&Worker` that runs it.
unsafe impl Joins for Heist {
    type Cx = NonNull<heist::Worker>;

    #[inline]
    unsafe fn join<A, B, RA, RB>(w: Self::Cx, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(Self::Cx) -> RA + Send,
        B: FnOnce(Self::Cx) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        // SAFETY: by the contract `w` came from the `&Worker` heist handed the calling
        // task, which is valid for the whole task.
        let w = unsafe { w.as_ref() };
        w.join(|w| a(NonNull::from(w)), |w| b(NonNull::from(w)))
    }
}

/// The context of the heist task that `w` runs.
pub fn heist(w: &heist::Worker) -> On<Heist> {
    On::new(NonNull::from(w))
}

/// chili's `Scope::join`, its scope held by pointer for the same reason as [`Heist`].
pub enum Chili {}

// SAFETY: chili's join runs each side once, giving each the scope that runs it.
unsafe impl Joins for Chili {
    type Cx = NonNull<chili::Scope<'static>>;

    #[inline]
    unsafe fn join<A, B, RA, RB>(s: Self::Cx, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(Self::Cx) -> RA + Send,
        B: FnOnce(Self::Cx) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        // SAFETY: by the contract `s` came from the `&mut Scope` chili handed the calling
        // task, which outlives it; a task uses one copy at a time, so the `&mut` is never
        // aliased while in use. The lifetime is erased only to name the type; it is never
        // extended in use.
        let mut p = s;
        let s = unsafe { p.as_mut() };
        s.join(
            |s| a(NonNull::from(s).cast()),
            |s| b(NonNull::from(s).cast()),
        )
    }
}

/// The context of the chili task that runs with scope `s`.
pub fn chili(s: &mut chili::Scope<'_>) -> On<Chili> {
    On::new(NonNull::from(s).cast())
}
