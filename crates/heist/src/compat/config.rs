//! rayon-core's deprecated `Configuration`, `initialize` and `ThreadPool::new`, kept by
//! rayon for old programs: a `Configuration` is a [`ThreadPoolBuilder`] whose errors are
//! boxed.
#![allow(deprecated)]

use super::{ThreadPool, ThreadPoolBuilder};
use crate::pool::Pool;
use std::any::Any;
use std::error::Error;
use std::fmt;

/// A pool's configuration (rayon's deprecated `Configuration`). Use
/// [`ThreadPoolBuilder`] instead.
#[deprecated(note = "Use `ThreadPoolBuilder`")]
#[derive(Default)]
pub struct Configuration {
    builder: ThreadPoolBuilder,
}

impl fmt::Debug for Configuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.builder.fmt(f)
    }
}

impl Configuration {
    /// A configuration with the defaults.
    pub fn new() -> Configuration {
        Configuration::default()
    }

    /// Deprecated in favor of [`ThreadPoolBuilder::build`].
    pub fn build(self) -> Result<ThreadPool, Box<dyn Error + 'static>> {
        self.builder.build().map_err(Box::from)
    }

    /// Deprecated in favor of [`ThreadPoolBuilder::thread_name`].
    pub fn thread_name<F>(self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.with(|b| b.thread_name(closure))
    }

    /// Deprecated in favor of [`ThreadPoolBuilder::num_threads`].
    pub fn num_threads(self, num_threads: usize) -> Configuration {
        self.with(|b| b.num_threads(num_threads))
    }

    /// Deprecated in favor of [`ThreadPoolBuilder::panic_handler`].
    pub fn panic_handler<H>(self, panic_handler: H) -> Configuration
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.with(|b| b.panic_handler(panic_handler))
    }

    /// Deprecated in favor of [`ThreadPoolBuilder::stack_size`].
    pub fn stack_size(self, stack_size: usize) -> Self {
        self.with(|b| b.stack_size(stack_size))
    }

    /// Deprecated in favor of [`ThreadPoolBuilder::breadth_first`].
    pub fn breadth_first(self) -> Self {
        self.with(ThreadPoolBuilder::breadth_first)
    }

    /// Deprecated in favor of [`ThreadPoolBuilder::start_handler`].
    pub fn start_handler<H>(self, start_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.with(|b| b.start_handler(start_handler))
    }

    /// Deprecated in favor of [`ThreadPoolBuilder::exit_handler`].
    pub fn exit_handler<H>(self, exit_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.with(|b| b.exit_handler(exit_handler))
    }

    fn with(self, f: impl FnOnce(ThreadPoolBuilder) -> ThreadPoolBuilder) -> Configuration {
        Configuration {
            builder: f(self.builder),
        }
    }
}

impl Pool {
    /// rayon's deprecated `ThreadPool::new`. Deprecated in favor of
    /// [`ThreadPoolBuilder::build`].
    #[deprecated(note = "Use `ThreadPoolBuilder::build`")]
    pub fn new(configuration: Configuration) -> Result<ThreadPool, Box<dyn Error>> {
        configuration.build()
    }
}

/// Deprecated in favor of [`ThreadPoolBuilder::build_global`].
#[deprecated(note = "use `ThreadPoolBuilder::build_global`")]
pub fn initialize(config: Configuration) -> Result<(), Box<dyn Error>> {
    config.builder.build_global().map_err(Box::from)
}
