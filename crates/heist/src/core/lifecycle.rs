//! The start and exit handlers a worker runs around its scheduling loop (rayon's
//! `start_handler` and `exit_handler`), kept in the registry: the worker's thread runs
//! them (`worker::main`); the pool's builders set them (`pool/threads.rs`).

use crate::core::registry::Registry;
use crate::core::task::Panic;
use std::panic::{self, AssertUnwindSafe};

/// What a start or exit handler is.
pub(crate) type Handler = Box<dyn Fn(usize) + Send + Sync>;

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
