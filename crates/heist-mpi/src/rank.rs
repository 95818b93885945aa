//! The rank loop: what a rank does between rounds (thesis Fig. 3.2 at the level of a
//! node). With tasks, it answers waiting thieves and runs a round; without, it asks a
//! random rank for work, forwards the requests that reach it, and takes part in the
//! termination waves (four-counter method, PROTOCOLS.md "Reductions across ranks").

use crate::manager::{Manager, CTRL_RECEIVED, CTRL_SENT, TASKS_RECEIVED, TASKS_SENT};
use crate::node::{lock, task, Fns, Item, Shared};
use crate::raw::{Snooze, WAVE};
use crate::{panic_message, wire, ErrorKind, Split};
use heist::Worker;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

/// Where a rank is in the protocol.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Tasks may exist somewhere: work, steal, forward.
    Work,
    /// No task exists and none is in flight; control messages still may be: route
    /// requests home until the waves show none left.
    Quiesce,
}

/// The thesis's adaptive steal-one / steal-half switch (§5.1.2), on the thief's side:
/// every 25 successful steals, compare the tasks run since with the steals.
struct Adaptive {
    one: bool,
    steals: u32,
    checkpoint: u64,
}

impl Adaptive {
    const INTERVAL: u32 = 25;

    fn mode(&mut self, split: Split, tasks_run: u64) -> bool {
        match split {
            Split::Half => false,
            Split::One => true,
            Split::Adaptive => {
                if self.steals >= Self::INTERVAL {
                    let ratio = (tasks_run - self.checkpoint) / u64::from(self.steals);
                    if !self.one && ratio < 2 {
                        self.one = true;
                    } else if self.one && ratio <= 1 {
                        self.one = false;
                    }
                    self.steals = 0;
                    self.checkpoint = tasks_run;
                }
                self.one
            }
        }
    }
}

/// Runs this rank's part of the reduction on worker `w`; returns its accumulated value
/// (`None` when it ran no round).
pub(crate) fn run<T, R, I, O, F>(
    w: &Worker,
    sh: &Shared<T>,
    root: Option<T>,
    fns: &Fns<I, O, F>,
    split: Split,
) -> Option<R>
where
    T: Serialize + DeserializeOwned + Send,
    R: Send,
    I: Fn() -> R + Sync,
    O: Fn(R, R) -> R + Sync,
    F: Fn(&crate::Ctx<'_, T>, T) -> R + Sync,
{
    let mut stash: Vec<(u32, T)> = root.into_iter().map(|t| (0, t)).collect();
    let mut acc: Option<R> = None;
    let mut phase = Phase::Work;
    let mut prev: Option<[u64; WAVE]> = None;
    let mut snooze = Snooze::default();
    let mut idle_from: Option<Instant> = None;
    let mut adaptive = Adaptive {
        one: false,
        steals: 0,
        checkpoint: 0,
    };
    loop {
        let mut m = lock(&sh.manager);
        let seen = m.stats.messages_received;
        m.receive_all(&sh.bound);
        take_in(&mut m, &mut stash, &sh.bound, &mut adaptive);
        if m.failed() {
            drop_all(&mut stash);
        }
        serve(&mut m, &mut stash, sh.bound.load(Relaxed));
        m.maintain(sh.bound.load(Relaxed));
        if !stash.is_empty() {
            if let Some(t) = idle_from.take() {
                m.stats.idle_s += t.elapsed().as_secs_f64();
            }
            m.stats.rounds += 1;
            drop(m);
            round(w, sh, fns, &mut stash, &mut acc);
            continue;
        }
        idle_from.get_or_insert_with(Instant::now);
        // Idle with nothing queued: passive (a task batch is the only thing that makes
        // work, and none is waiting to be decoded).
        while let Some(sums) = m.wave_step(true) {
            match phase {
                Phase::Work => {
                    if prev.is_some_and(|p| p[TASKS_RECEIVED] == sums[TASKS_SENT]) {
                        phase = Phase::Quiesce;
                        m.finished = true;
                        prev = None;
                    } else {
                        prev = Some(sums);
                    }
                }
                Phase::Quiesce => {
                    if prev.is_some_and(|p| p[CTRL_RECEIVED] == sums[CTRL_SENT]) {
                        if let Some(t) = idle_from.take() {
                            m.stats.idle_s += t.elapsed().as_secs_f64();
                        }
                        return acc;
                    }
                    prev = Some(sums);
                }
            }
        }
        if phase == Phase::Work {
            let one = adaptive.mode(split, m.stats.tasks_run);
            m.ask(one);
        }
        let quiet = m.stats.messages_received == seen;
        drop(m);
        if quiet {
            snooze.snooze();
        } else {
            snooze.reset();
        }
    }
}

/// Decodes the task batches that arrived into `stash` (received tasks are the oldest
/// this rank has: depth 0).
fn take_in<T: DeserializeOwned>(
    m: &mut Manager,
    stash: &mut Vec<(u32, T)>,
    bound: &std::sync::atomic::AtomicI64,
    adaptive: &mut Adaptive,
) {
    for bytes in std::mem::take(&mut m.inbox) {
        if m.failed() {
            continue;
        }
        let decoded = panic::catch_unwind(AssertUnwindSafe(|| wire::decode_tasks::<T>(&bytes)));
        match decoded {
            Ok(Ok((b, tasks))) => {
                bound.fetch_max(b, Relaxed);
                m.stats.tasks_received += tasks.len() as u64;
                adaptive.steals += 1;
                stash.extend(tasks.into_iter().map(|t| (0, t)));
            }
            Ok(Err(e)) => m.fail(ErrorKind::Codec, e),
            Err(p) => m.fail(
                ErrorKind::Panic,
                format!("decoding tasks panicked: {}", panic_message(&*p)),
            ),
        }
    }
}

/// Answers the waiting requests from `stash` while it holds at least two tasks (the
/// rank keeps at least one), and routes the rest.
fn serve<T: Serialize>(m: &mut Manager, stash: &mut Vec<(u32, T)>, bound: i64) {
    for r in std::mem::take(&mut m.requests) {
        if m.finished || m.failed() || stash.len() < 2 {
            m.route(r);
            continue;
        }
        let give = split_off(stash, r.one);
        let encoded = panic::catch_unwind(AssertUnwindSafe(|| wire::encode_tasks(bound, &give)));
        match encoded {
            Ok(Ok(bytes)) => {
                m.stats.requests_answered += 1;
                m.stats.tasks_sent += give.len() as u64;
                m.stats.batches_sent += 1;
                m.stats.task_bytes_sent += bytes.len() as u64;
                m.send(r.thief as i32, wire::TAG_TASKS, bytes);
                drop_all_plain(give);
            }
            Ok(Err(e)) => {
                m.fail(ErrorKind::Codec, e);
                m.route(r);
                drop_all_plain(give);
            }
            Err(p) => {
                m.fail(
                    ErrorKind::Panic,
                    format!("encoding tasks panicked: {}", panic_message(&*p)),
                );
                m.route(r);
                drop_all_plain(give);
            }
        }
    }
}

/// Takes a thief's share out of `stash`: the oldest task (steal-one), or every other
/// task in age order starting with the oldest, at most half (steal-half). In a tree
/// search the old tasks are the big ones; alternating gives the thief about half of each
/// level's work instead of every big task.
pub fn split_off<D: Ord + Copy, T>(stash: &mut Vec<(D, T)>, one: bool) -> Vec<T> {
    stash.sort_by_key(|e| e.0);
    let n = stash.len();
    if one {
        return vec![stash.remove(0).1];
    }
    let mut give = Vec::with_capacity(n / 2);
    let mut keep = Vec::with_capacity(n - n / 2);
    for (i, e) in stash.drain(..).enumerate() {
        if i % 2 == 0 && give.len() < n / 2 {
            give.push(e.1);
        } else {
            keep.push(e);
        }
    }
    *stash = keep;
    give
}

/// Runs a round with the tasks of `stash`; leaves in `stash` what a drain set aside.
fn round<T, R, I, O, F>(
    w: &Worker,
    sh: &Shared<T>,
    fns: &Fns<I, O, F>,
    stash: &mut Vec<(u32, T)>,
    acc: &mut Option<R>,
) where
    T: Send,
    R: Send,
    I: Fn() -> R + Sync,
    O: Fn(R, R) -> R + Sync,
    F: Fn(&crate::Ctx<'_, T>, T) -> R + Sync,
{
    let tasks = std::mem::take(stash);
    sh.begin_round(tasks.len());
    let ran = panic::catch_unwind(AssertUnwindSafe(|| {
        let r = w.reduce_tasks(
            Item::Batch(tasks),
            || (fns.identity)(),
            |a, b| (fns.op)(a, b),
            |ctx, item| task(sh, fns, ctx, item),
        );
        *acc = Some(match acc.take() {
            Some(a) => (fns.op)(a, r),
            None => r,
        });
    }));
    let drained = std::mem::take(&mut *lock(&sh.drained));
    let mut m = lock(&sh.manager);
    m.stats.tasks_run += sh.tasks_run();
    if sh.drain.load(Relaxed) {
        m.stats.drains += 1;
    }
    match ran {
        Ok(()) => *stash = drained,
        Err(p) => {
            let msg = panic_message(&*p);
            crate::drop_quietly(p);
            m.fail(ErrorKind::Panic, msg);
            drop_all_plain(drained);
        }
    }
}

/// Drops every task of `v`, each once, a panicking drop swallowed.
fn drop_all_plain<X>(v: Vec<X>) {
    for x in v {
        crate::drop_quietly(x);
    }
}

fn drop_all<T>(stash: &mut Vec<(u32, T)>) {
    drop_all_plain(std::mem::take(stash));
}
