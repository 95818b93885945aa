//! Load-aware victim choice ("Blaze-Tasks", §4.3): sample a few victims' published loads,
//! try the richest first, each up to an attempt budget that grows with its load relative
//! to the sampled average and shrinks with its distance (tiers: same core, same socket,
//! other socket; a no-op on one socket). Loads are published only when work changes
//! hands (see [`super::lane`]); a thief that sees none asks a sampled worker directly.

use super::lane::{Lane, Owner};

/// Attempt budgets per distance tier (same core, same socket, other socket), Blaze's
/// POWER9 values; budgets are scaled by `TIER_BUDGET[tier] / TIER_BUDGET[SAME_SOCKET]`.
const TIER_BUDGET: [u32; 3] = [6, 4, 2];
const SAME_SOCKET: usize = 1;
/// Victims whose load is sampled per steal round (Blaze's 4-sample probe).
const SAMPLES: usize = 4;

/// The distance tier between workers `a` and `b`: one socket here, so always
/// `SAME_SOCKET`; a multi-socket topology would return 0 or 2 where it applies.
fn tier(_a: usize, _b: usize) -> usize {
    SAME_SOCKET
}

/// Blaze's attempt budget on a victim with `load` queued tasks when the sampled victims
/// hold `avg` on average: none on an empty victim, one below a quarter of the average,
/// eight at or above it, four between.
fn budget(load: usize, avg: usize, tier: usize) -> u32 {
    let base = match load {
        0 => 0,
        l if l * 4 < avg => 1,
        l if l >= avg => 8,
        _ => 4,
    };
    (base * TIER_BUDGET[tier]).div_ceil(TIER_BUDGET[SAME_SOCKET])
}

/// The outcome of a steal round.
pub(super) enum Steal {
    Taken,
    /// Loads were seen, but no task was had within the budgets.
    Failed,
    /// Every sampled victim looked empty.
    NoneSeen,
}

/// One steal round of worker `me` (whose lane `owner` holds) over `lanes`: sampled
/// victims, richest first, each tried up to its budget. `random` picks the samples.
pub(super) fn steal<T>(lanes: &[Lane<T>], me: usize, random: u64, owner: &Owner<'_, T>) -> Steal {
    let n = lanes.len();
    if n == 1 {
        return Steal::NoneSeen;
    }
    let mut picks = [(0usize, 0usize); SAMPLES];
    let k = (n - 1).min(SAMPLES);
    for (i, p) in picks.iter_mut().take(k).enumerate() {
        // All others when there are few; else `SAMPLES` consecutive from a random start.
        let mut v = if k == n - 1 {
            i
        } else {
            (random as usize + i) % (n - 1)
        };
        if v >= me {
            v += 1;
        }
        *p = (lanes[v].load(), v);
    }
    let picks = &mut picks[..k];
    picks.sort_unstable_by_key(|p| std::cmp::Reverse(p.0));
    let total = picks.iter().map(|p| p.0).sum::<usize>();
    if total == 0 {
        // Loads are published only when work moves: ask a sampled worker that takes
        // part, so that it hands out work (and publishes its load) if it has any.
        if let Some(&(_, v)) = picks.iter().find(|p| lanes[p.1].active()) {
            lanes[v].ask();
        }
        return Steal::NoneSeen;
    }
    let avg = total / k;
    for &(load, v) in picks.iter() {
        let victim = &lanes[v];
        for attempt in 0..budget(load, avg, tier(me, v)) {
            if owner.take_from(victim) {
                return Steal::Taken;
            }
            victim.ask();
            for _ in 0..(16u32 << attempt.min(6)) {
                std::hint::spin_loop();
            }
        }
    }
    Steal::Failed
}
