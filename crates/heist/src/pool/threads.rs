//! Worker threads under rayon's names: the `ThreadBuilder` a custom spawn handler
//! receives and the spawn handlers themselves, next to the pool that starts its threads
//! through them. The start and exit handlers a worker runs around its scheduling loop are
//! the core's (`core/lifecycle.rs`).

pub(crate) use crate::core::lifecycle::{Handler, Lifecycle};
use crate::core::worker;
use std::fmt;
use std::io;

/// A worker thread not yet started, handed to a spawn handler (rayon's `ThreadBuilder`;
/// see [`ThreadPoolBuilder::spawn_handler`](crate::ThreadPoolBuilder::spawn_handler)).
pub struct ThreadBuilder {
    index: usize,
    name: Option<String>,
    stack_size: Option<usize>,
    body: Box<dyn FnOnce() + Send>,
}

impl ThreadBuilder {
    pub(crate) fn new(
        index: usize,
        name: Option<String>,
        stack_size: Option<usize>,
        body: Box<dyn FnOnce() + Send>,
    ) -> ThreadBuilder {
        ThreadBuilder {
            index,
            name,
            stack_size,
            body,
        }
    }

    /// The index of this thread in its pool, `0..num_threads`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The name [`ThreadPoolBuilder::thread_name`](crate::ThreadPoolBuilder::thread_name)
    /// gave this thread, if it was set.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The stack size set with
    /// [`ThreadPoolBuilder::stack_size`](crate::ThreadPoolBuilder::stack_size), if any.
    pub fn stack_size(&self) -> Option<usize> {
        self.stack_size
    }

    /// Runs the worker on the calling thread; returns once the pool has been dropped and
    /// the worker has stopped.
    ///
    /// # Panics
    /// If the calling thread is a worker already (of any heist pool), as rayon does.
    pub fn run(self) {
        let inside = worker::with_current(|w| w.is_some());
        assert!(
            !inside,
            "heist: ThreadBuilder::run on a thread that is already a pool's worker"
        );
        (self.body)()
    }
}

impl fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.index)
            .field("name", &self.name)
            .field("stack_size", &self.stack_size)
            .finish_non_exhaustive()
    }
}

mod sealed {
    pub trait Sealed {}
}

/// How a [`ThreadPoolBuilder`](crate::ThreadPoolBuilder) starts its threads: its type
/// parameter, [`DefaultSpawn`] or a custom handler set with
/// [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler). Sealed, as in rayon.
pub trait ThreadSpawn: sealed::Sealed {
    /// The custom handler, if any.
    #[doc(hidden)]
    fn handler(&mut self) -> Option<&mut dyn FnMut(ThreadBuilder) -> io::Result<()>>;
}

/// Starts each worker on a `std::thread` of its own (the default).
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultSpawn;

impl sealed::Sealed for DefaultSpawn {}

impl ThreadSpawn for DefaultSpawn {
    fn handler(&mut self) -> Option<&mut dyn FnMut(ThreadBuilder) -> io::Result<()>> {
        None
    }
}

/// Starts each worker through the user's handler.
pub struct CustomSpawn<F>(pub(crate) F);

impl<F> fmt::Debug for CustomSpawn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CustomSpawn")
    }
}

impl<F> sealed::Sealed for CustomSpawn<F> {}

impl<F> ThreadSpawn for CustomSpawn<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    fn handler(&mut self) -> Option<&mut dyn FnMut(ThreadBuilder) -> io::Result<()>> {
        Some(&mut self.0)
    }
}

/// How `PoolBuilder` starts the threads of one pool: the start and exit handlers its
/// workers run, and the spawn handler, if any.
#[derive(Default)]
pub(crate) struct Threads<'a> {
    pub(crate) lifecycle: Lifecycle,
    pub(crate) spawn: Option<&'a mut dyn FnMut(ThreadBuilder) -> io::Result<()>>,
}
