//! The pool's side of teams and task reductions: the work sources every pool registers
//! with its registry (`core/source.rs`), and their entry points from any thread.

use super::Pool;
use crate::core::source::Source;
use crate::reduce::{Board, ReduceCtx};
use crate::team::{Team, TeamError, Teams};

/// The work sources of a pool of `workers`, in the order its workers ask them: teams
/// forming, then reductions to help.
pub(super) fn sources(workers: usize) -> Vec<Box<dyn Source>> {
    vec![Box::new(Teams::new(workers)), Box::new(Board::new())]
}

impl Pool {
    /// [`Worker::team`](crate::Worker::team) on this pool, from any thread.
    ///
    /// ```
    /// let pool = heist::Pool::builder().workers(3).build().unwrap();
    /// let mut data = vec![0u32; 3];
    /// let cells: Vec<std::sync::atomic::AtomicU32> =
    ///     (0..3).map(|_| Default::default()).collect();
    /// let sizes = pool.team(3, |t| {
    ///     cells[t.rank()].store(t.rank() as u32 * 10, std::sync::atomic::Ordering::Relaxed);
    ///     t.barrier();
    ///     t.size()
    /// });
    /// assert_eq!(sizes, [3, 3, 3]);
    /// for (d, c) in data.iter_mut().zip(&cells) {
    ///     *d = c.load(std::sync::atomic::Ordering::Relaxed);
    /// }
    /// assert_eq!(data, [0, 10, 20]);
    /// ```
    ///
    /// # Panics
    /// As [`Worker::team`](crate::Worker::team).
    pub fn team<F, R>(&self, r: usize, body: F) -> Vec<R>
    where
        F: Fn(&Team<'_>) -> R + Sync,
        R: Send,
    {
        self.run(|w| w.team(r, &body))
    }

    /// [`Worker::try_team`](crate::Worker::try_team) on this pool, from any thread.
    pub fn try_team<F, R>(&self, r: usize, body: F) -> Result<Vec<R>, TeamError>
    where
        F: Fn(&Team<'_>) -> R + Sync,
        R: Send,
    {
        self.run(|w| w.try_team(r, &body))
    }
}

impl Pool {
    /// [`Worker::reduce_tasks`](crate::Worker::reduce_tasks) on this pool, from any thread.
    ///
    /// ```
    /// let pool = heist::Pool::builder().workers(3).build().unwrap();
    /// let v: Vec<u64> = (1..=1000).collect();
    /// let sum = pool.reduce_tasks(&v[..], || 0u64, |a, b| a + b, |ctx, s| {
    ///     if s.len() > 64 {
    ///         let (l, r) = s.split_at(s.len() / 2);
    ///         ctx.push(l);
    ///         ctx.push(r);
    ///         0
    ///     } else {
    ///         s.iter().sum()
    ///     }
    /// });
    /// assert_eq!(sum, 500_500);
    /// ```
    pub fn reduce_tasks<T, R, I, O, F>(&self, root: T, identity: I, op: O, f: F) -> R
    where
        T: Send,
        R: Send,
        I: Fn() -> R + Sync,
        O: Fn(R, R) -> R + Sync,
        F: Fn(&ReduceCtx<'_, T>, T) -> R + Sync,
    {
        let (identity, op, f) = (&identity, &op, &f);
        self.run(move |w| w.reduce_tasks(root, identity, op, f))
    }
}
