//! Worker threads: how a pool starts them (on `std::thread`, or through rayon's spawn
//! handler and its `ThreadBuilder`), the start and exit handlers each runs around its
//! scheduling loop (rayon's `start_handler` and `exit_handler`), and how a pool that
//! fails part-way stops and joins them.

use crate::core::registry::Registry;
use crate::core::task::Panic;
use crate::core::worker;
use std::fmt;
use std::io;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use std::thread::JoinHandle;

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

/// What a start or exit handler is.
pub(crate) type Handler = Box<dyn Fn(usize) + Send + Sync>;

/// The start and exit handlers of a pool's workers (rayon's `start_handler` and
/// `exit_handler`), shared by its threads.
#[derive(Default)]
pub(crate) struct Lifecycle {
    pub(crate) start: Option<Handler>,
    pub(crate) exit: Option<Handler>,
}

impl Lifecycle {
    /// Whether no handler is set: then nothing of the user's runs on a worker's thread
    /// after its last task (but the destructors of thread-locals its tasks set).
    pub(crate) fn is_empty(&self) -> bool {
        self.start.is_none() && self.exit.is_none()
    }

    /// Runs worker `index`'s scheduling loop `run_loop` between its start and exit
    /// handlers. Called on the worker's thread, with the worker current (`worker::main`),
    /// so that the handlers see `current_thread_index() == Some(index)`.
    fn around(&self, registry: &Registry, index: usize, run_loop: &mut dyn FnMut()) {
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
    mem::forget(p);
    eprintln!("heist: {why}; aborting (as rayon does)");
    std::process::abort()
}

/// How a pool starts the threads of its workers.
pub(crate) struct Spawner<'a> {
    /// rayon's spawn handler, if one is set.
    pub(crate) handler: Option<&'a mut dyn FnMut(ThreadBuilder) -> io::Result<()>>,
    pub(crate) name: Option<&'a mut (dyn FnMut(usize) -> String + 'static)>,
    pub(crate) stack_size: Option<usize>,
    /// Pin worker `i` to the `i`-th allowed CPU (`PoolBuilder::pin_workers`).
    pub(crate) pin: bool,
    pub(crate) lifecycle: Arc<Lifecycle>,
}

impl Spawner<'_> {
    /// Starts the thread of worker `i` of `registry`: a `std::thread` named `name(i)`
    /// (default `heist-i`), or whatever the spawn handler makes of it, which leaves no
    /// handle to join.
    pub(crate) fn start(
        &mut self,
        registry: &Arc<Registry>,
        i: usize,
    ) -> io::Result<Option<JoinHandle<()>>> {
        let name = self.name.as_mut().map(|f| f(i));
        let (r, pin, lifecycle) = (Arc::clone(registry), self.pin, Arc::clone(&self.lifecycle));
        let body = move || {
            if pin {
                crate::core::affinity::pin_nth(i);
            }
            worker::main(r, i, |r, run_loop| lifecycle.around(r, i, run_loop))
        };
        if let Some(h) = self.handler.as_mut() {
            return h(ThreadBuilder::new(i, name, self.stack_size, Box::new(body))).map(|()| None);
        }
        let mut b = std::thread::Builder::new().name(name.unwrap_or_else(|| format!("heist-{i}")));
        if let Some(s) = self.stack_size {
            b = b.stack_size(s);
        }
        b.spawn(body).map(Some)
    }
}

/// The workers a pool's `build` has started; stopped if it returns early or unwinds.
pub(crate) struct Started<'a> {
    pub(crate) registry: &'a Registry,
    pub(crate) threads: Vec<JoinHandle<()>>,
}

impl Started<'_> {
    /// `build` has succeeded: the threads are the pool's.
    pub(crate) fn keep(mut self) -> Vec<JoinHandle<()>> {
        let threads = mem::take(&mut self.threads);
        mem::forget(self);
        threads
    }
}

impl Drop for Started<'_> {
    fn drop(&mut self) {
        self.registry.terminate.store(true, SeqCst);
        self.registry.sleep.wake_all();
        join(mem::take(&mut self.threads));
    }
}

/// Waits for stopped workers' threads to end.
pub(crate) fn join(threads: Vec<JoinHandle<()>>) {
    for t in threads {
        let _ = t.join();
    }
}
