//! Worker threads under rayon's names: the `ThreadBuilder` a custom spawn handler
//! receives, the spawn handlers themselves, and the start and exit handlers a worker runs
//! around its scheduling loop.

use crate::core::task::Panic;
use crate::core::worker;
use crate::pool::Registry;
use std::fmt;
use std::io;
use std::panic::{self, AssertUnwindSafe};

/// What a start or exit handler is.
pub(crate) type Handler = Box<dyn Fn(usize) + Send + Sync>;

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

/// The start and exit handlers of a pool's workers (rayon's `start_handler` and
/// `exit_handler`), kept in the registry.
#[derive(Default)]
pub(crate) struct Lifecycle {
    pub(crate) start: Option<Handler>,
    pub(crate) exit: Option<Handler>,
}

impl Lifecycle {
    /// Runs worker `index`'s scheduling loop `run_loop` between its start and exit
    /// handlers. Called on the worker's thread, with the worker current, so that the
    /// handlers see `current_thread_index() == Some(index)`.
    pub(crate) fn around(&self, registry: &Registry, index: usize, run_loop: impl FnOnce()) {
        call(&self.start, registry, index, "start_handler");
        run_loop();
        call(&self.exit, registry, index, "exit_handler");
    }
}

/// Calls `handler` for worker `index`; a panic in it goes to the pool's panic handler, and
/// with no handler (or one that panics in turn) the process aborts, as in rayon.
fn call(handler: &Option<Handler>, registry: &Registry, index: usize, what: &str) {
    let Some(h) = handler else { return };
    let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| h(index))) else {
        return;
    };
    if let Some(ph) = &registry.detached.handler {
        match panic::catch_unwind(AssertUnwindSafe(|| ph(p))) {
            Ok(()) => return,
            Err(q) => abort(
                q,
                &format!("the panic handler panicked on a {what}'s panic"),
            ),
        }
    }
    abort(p, &format!("a {what} panicked and no panic_handler is set"));
}

fn abort(p: Panic, why: &str) -> ! {
    // Its drop could unwind; nobody receives it.
    std::mem::forget(p);
    eprintln!("heist: {why}; aborting (as rayon does)");
    std::process::abort()
}
