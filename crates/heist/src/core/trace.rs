//! Traces: what each worker did over time, for a picture of a run (Chrome's trace-event
//! format, which `heist-bench run --trace` writes). Recorded only with the `trace` cargo
//! feature; without it every hook in this module is empty and inlined away, as `stat!` is
//! for the counters, and [`Pool::take_trace`](crate::Pool::take_trace) returns no events.
//!
//! Each worker records into a buffer of its own, kept in its `Worker` and touched by its
//! thread alone: a hook is a clock read and a `Vec` push, with no atomic and no lock.
//! [`Pool::take_trace`](crate::Pool::take_trace) drains the buffers by running a
//! broadcast on every worker. Timestamps are nanoseconds since the first traced worker
//! of the process started (one epoch for every pool, so that traces of several pools
//! line up).
//!
//! # What is recorded
//!
//! Spans ([`Shape::Span`]), each recorded when it ends:
//!
//! - tasks ([`EventKind::is_task`]), one span per task run, on the worker that runs it:
//!   [`Join`](EventKind::Join) (the second branch of a [`Worker::join`], whether its
//!   owner pops it or a thief takes it), [`Promise`](EventKind::Promise),
//!   [`Spawn`](EventKind::Spawn) (a scope task), [`Detached`](EventKind::Detached), and
//!   [`Root`](EventKind::Root) (the closure of [`Pool::run`](crate::Pool::run) called off
//!   the pool). The first branch of a join is a plain call inside its parent's span. The
//!   runtime's own joins that only carry other tasks (relay's hand-out batches, batches
//!   of spawned tasks) are not tasks: the tasks they carry are. Broadcasts are not
//!   traced (draining a trace is one);
//! - [`Piece`](EventKind::Piece): a part of a parallel loop that one worker folds;
//! - [`Sleep`](EventKind::Sleep), [`Team`](EventKind::Team) (forming a team as its
//!   coordinator), [`TeamMember`](EventKind::TeamMember) (serving another's team),
//!   [`ReduceHelp`](EventKind::ReduceHelp) (working on a task reduction one joined).
//!
//! Instants ([`Shape::Instant`]): [`Steal`](EventKind::Steal), [`Share`](EventKind::Share)
//! (Lace: the owner made tasks stealable for a thief's split request or a sleeper),
//! [`Answer`](EventKind::Answer) (relay: the owner answered a steal request with tasks),
//! [`Wake`](EventKind::Wake) (a sleeper woke), [`Lifeline`](EventKind::Lifeline).
//!
//! Counters ([`Shape::Counter`]): [`Depth`](EventKind::Depth), the recording worker's
//! deque depth, sampled when it shares, answers or steals (not at every push).

use crate::core::worker::Worker;
use std::marker::PhantomData;

/// Whether heist was built with the `trace` feature, so that
/// [`Pool::take_trace`](crate::Pool::take_trace) returns events.
pub const ENABLED: bool = cfg!(feature = "trace");

/// What an [`Event`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(u8)]
pub enum EventKind {
    /// Task: the second branch of a join.
    Join,
    /// Task: a promise (`Worker::promises`).
    Promise,
    /// Task: a scope task.
    Spawn,
    /// Task: a detached task.
    Detached,
    /// Task: a root of `Pool::run`, called from outside the pool.
    Root,
    /// Span: a part of a parallel loop folded by one worker; `value` is its length.
    Piece,
    /// Span: asleep for lack of work.
    Sleep,
    /// Span: forming a team as its coordinator; `value` is the team's size.
    Team,
    /// Span: serving the team of coordinator `peer`.
    TeamMember,
    /// Span: working on a task reduction that this worker joined while idle.
    ReduceHelp,
    /// Instant: a steal (or a relay hand-out received) from `peer`, the victim.
    Steal,
    /// Instant: Lace's owner made tasks stealable (a thief's split request answered, or a
    /// sleeper's sign).
    Share,
    /// Instant: relay's owner answered the steal request of `peer` with `value` tasks.
    Answer,
    /// Instant: this worker woke from a sleep; `peer` is the worker that woke it to
    /// share, if it said so.
    Wake,
    /// Instant: this worker's lifeline reached the private tasks of `peer`.
    Lifeline,
    /// Counter: this worker's deque depth, `value`.
    Depth,
}

/// How an [`EventKind`] is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// It lasts `dur_ns`.
    Span,
    /// It happens at one moment.
    Instant,
    /// It samples a value.
    Counter,
}

impl EventKind {
    /// The kind's name, as a trace viewer shows it.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Join => "join",
            EventKind::Promise => "promise",
            EventKind::Spawn => "spawn",
            EventKind::Detached => "detached",
            EventKind::Root => "root",
            EventKind::Piece => "loop piece",
            EventKind::Sleep => "sleep",
            EventKind::Team => "team formation",
            EventKind::TeamMember => "team member",
            EventKind::ReduceHelp => "reduction help",
            EventKind::Steal => "steal",
            EventKind::Share => "split request answered",
            EventKind::Answer => "steal request answered",
            EventKind::Wake => "wake-up",
            EventKind::Lifeline => "lifeline",
            EventKind::Depth => "deque depth",
        }
    }

    /// Whether it is the run of one task (see the module docs for what counts).
    pub fn is_task(self) -> bool {
        matches!(
            self,
            EventKind::Join
                | EventKind::Promise
                | EventKind::Spawn
                | EventKind::Detached
                | EventKind::Root
        )
    }

    /// How it is drawn.
    pub fn shape(self) -> Shape {
        match self {
            EventKind::Steal
            | EventKind::Share
            | EventKind::Answer
            | EventKind::Wake
            | EventKind::Lifeline => Shape::Instant,
            EventKind::Depth => Shape::Counter,
            _ => Shape::Span,
        }
    }
}

/// One recorded event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// When (a span: when it began), in nanoseconds since the trace epoch.
    pub at_ns: u64,
    /// A span's length in nanoseconds; 0 for instants and counters.
    pub dur_ns: u64,
    /// The other worker it concerns (see [`EventKind`]), by index.
    pub peer: Option<u32>,
    /// The number it carries (see [`EventKind`]), or 0; at most `u32::MAX`.
    pub value: u32,
}

/// The events of a pool's workers since the last [`Pool::take_trace`](crate::Pool::take_trace).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Each worker's events by worker index, in the order they were recorded (a span
    /// when it ended, so an enclosing span comes after the spans inside it).
    pub workers: Vec<Vec<Event>>,
}

#[cfg(feature = "trace")]
fn saturate(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// A worker's buffer.
#[cfg(feature = "trace")]
pub(crate) struct Log {
    epoch: std::time::Instant,
    events: std::cell::UnsafeCell<Vec<Event>>,
}

#[cfg(feature = "trace")]
impl Log {
    pub(crate) fn new() -> Log {
        static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        Log {
            epoch: *EPOCH.get_or_init(std::time::Instant::now),
            events: Default::default(),
        }
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn push(&self, e: Event) {
        // SAFETY: a `Log` lives in its `Worker`, which is neither `Send` nor `Sync`, so
        // only the worker's thread gets here; `push` and `take` run no other code while
        // they hold the reference, so it is the only one.
        unsafe { (*self.events.get()).push(e) }
    }

    pub(crate) fn take(&self) -> Vec<Event> {
        // SAFETY: as for `push`.
        std::mem::take(unsafe { &mut *self.events.get() })
    }
}

/// An open span: recorded when dropped (also when its task unwinds). Without the `trace`
/// feature it is empty and has no drop.
pub(crate) struct Span<'w> {
    #[cfg(feature = "trace")]
    w: &'w Worker,
    #[cfg(feature = "trace")]
    kind: EventKind,
    #[cfg(feature = "trace")]
    at: u64,
    #[cfg(feature = "trace")]
    peer: Option<u32>,
    #[cfg(feature = "trace")]
    value: u32,
    _w: PhantomData<&'w ()>,
}

impl Span<'_> {
    /// Ends the span here, rather than where it goes out of scope.
    #[inline(always)]
    pub(crate) fn end(self) {}
}

#[cfg(feature = "trace")]
impl Drop for Span<'_> {
    fn drop(&mut self) {
        let log = self.w.trace_log();
        let dur_ns = log.now().saturating_sub(self.at);
        log.push(Event {
            kind: self.kind,
            at_ns: self.at,
            dur_ns,
            peer: self.peer,
            value: self.value,
        });
    }
}

/// Opens a span of `kind` on `w`, with `peer` and `value` (see [`EventKind`]).
#[inline(always)]
pub(crate) fn span(w: &Worker, kind: EventKind, peer: Option<usize>, value: usize) -> Span<'_> {
    #[cfg(feature = "trace")]
    return Span {
        w,
        kind,
        at: w.trace_log().now(),
        peer: peer.map(|p| p as u32),
        value: saturate(value),
        _w: PhantomData,
    };
    #[cfg(not(feature = "trace"))]
    {
        let _ = (w, kind, peer, value);
        Span { _w: PhantomData }
    }
}

/// Records an instant or a counter sample of `kind` on `w`.
#[inline(always)]
pub(crate) fn mark(w: &Worker, kind: EventKind, peer: Option<usize>, value: usize) {
    #[cfg(feature = "trace")]
    {
        let log = w.trace_log();
        log.push(Event {
            kind,
            at_ns: log.now(),
            dur_ns: 0,
            peer: peer.map(|p| p as u32),
            value: saturate(value),
        });
    }
    #[cfg(not(feature = "trace"))]
    let _ = (w, kind, peer, value);
}

/// Records `kind` (a steal, a share, an answer) with `peer`, then `w`'s deque depth.
#[inline(always)]
pub(crate) fn with_depth(w: &Worker, kind: EventKind, peer: Option<usize>, value: usize) {
    mark(w, kind, peer, value);
    #[cfg(feature = "trace")]
    mark(w, EventKind::Depth, None, w.owner().depth() as usize);
}

/// `job` (the second branch of a join, or a promise) made a task of `kind` in the trace:
/// the span is recorded on whichever worker runs it. The wrapper has `job`'s size and
/// alignment, so the job is stored the same way.
#[cfg(feature = "trace")]
#[inline(always)]
pub(crate) fn task<const KIND: u8, B, R>(job: B) -> impl FnOnce(&Worker) -> R + Send
where
    B: FnOnce(&Worker) -> R + Send,
{
    move |w: &Worker| {
        let _t = span(w, KINDS[KIND as usize], None, 0);
        job(w)
    }
}

/// `EventKind`s by their `u8`, for `task`'s parameter.
#[cfg(feature = "trace")]
const KINDS: [EventKind; 2] = [EventKind::Join, EventKind::Promise];
