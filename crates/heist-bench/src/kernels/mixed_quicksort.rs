//! mixed-quicksort: the mixed-mode parallel quicksort of "Work-stealing for mixed-mode
//! parallelism by deterministic team-building" (§5, Alg. 11) on 4-byte integers.
//!
//! A piece of m elements is partitioned by a team of q workers, q the largest power of two
//! that leaves every member at least `MIN_BLOCKS` blocks of `BLOCK` elements, at most the
//! workers the piece has: the pool for the whole array, and half of its team for each
//! side of a team-partitioned piece (the sides are sorted at the same time, so a team as
//! large as the parent's for each would make them wait for each other's members; on two
//! workers only the top partition is a team's, and then each worker has a side). The
//! members take blocks from both ends (two atomic counters) and neutralise
//! pairs of blocks, as Tsigas and Zhang do; then rank 0 moves the at most q unfinished
//! blocks next to the boundary, partitions that zone and the tail alone, and places the
//! pivot. The two sides are sorted in parallel with `join`; a piece for which q = 1 is
//! partitioned sequentially, and pieces below `CUTOFF` go to `sort_unstable`.
//!
//! Runtimes (the names in brackets):
//! - `seq` [seq]: `sort_unstable`;
//! - `heist-join` [fork]: the same quicksort with q = 1 throughout (sequential
//!   partition), on heist's default scheduler;
//! - `heist-lace`, `heist-relay` [mmpar]: team partitions on each scheduler;
//! - `rayon`: rayon's `par_sort_unstable`.
//!
//! Inputs (Helman, Bader and JáJá's, with `SEGMENTS` segments): `random`, `gauss` (mean
//! of four randoms), `buckets`, `staggered`. The size is `input:n`. The result must equal
//! a copy sorted once at setup with `sort_unstable`.

use crate::bench::{Bench, Instance, Sizes};
use crate::fork::{self, Fork};
use crate::runtime::{Runtime, RuntimeKind};
use rayon::slice::ParallelSliceMut;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// Elements per partition block (the paper's 4096 four-byte integers).
const BLOCK: usize = 4096;
/// Blocks every member of a partitioning team gets at least (the paper's §5 text).
const MIN_BLOCKS: usize = 128;
/// Pieces below this go to `sort_unstable`.
const CUTOFF: usize = 512;
/// Segments of the bucket and staggered inputs.
const SEGMENTS: u64 = 64;
/// The largest value: 2^31 − 1, as `random()` gives.
const MAX: u64 = (1 << 31) - 1;

/// The mixed-quicksort kernel of the catalogue.
pub struct MixedQuicksort;

impl Bench for MixedQuicksort {
    fn name(&self) -> &'static str {
        "mixed-quicksort"
    }

    fn about(&self) -> &'static str {
        "quicksort whose partitions run on teams of workers (Wimmer-Traff)"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "random:65535",
            small: "random:2097151",
            quick: "random:8388607",
            full: "random:33554431",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        matches!(
            kind,
            RuntimeKind::Seq
                | RuntimeKind::HeistJoin
                | RuntimeKind::HeistLace
                | RuntimeKind::HeistRelay
                | RuntimeKind::Rayon
        )
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let (input, n) = size
            .split_once(':')
            .ok_or_else(|| format!("mixed-quicksort: size `{size}` is not input:n"))?;
        let n = crate::bench::count("mixed-quicksort", n, "n", 0, 1 << 40)? as usize;
        let input = generate(input.trim(), n)?;
        let mut sorted = input.clone();
        sorted.sort_unstable();
        Ok(Box::new(SortRun {
            data: input.clone(),
            input,
            sorted,
        }))
    }
}

/// `n` values of the named input.
fn generate(input: &str, n: usize) -> Result<Vec<u32>, String> {
    let mut seed = 0x6d69_7865_645f_7173u64;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 33) & MAX
    };
    let seg = (n as u64).div_ceil(SEGMENTS).max(1);
    let span = MAX / SEGMENTS;
    let value = |i: usize, r: u64| -> Option<u64> {
        let i = i as u64;
        Some(match input {
            "random" => r,
            "gauss" => r, // replaced below by the mean of four
            "buckets" => {
                let chunk = (i % seg) * SEGMENTS / seg;
                chunk * span + r % span
            }
            "staggered" => {
                let s = i / seg;
                let base = if s < SEGMENTS / 2 {
                    2 * s + 1
                } else {
                    2 * s - SEGMENTS
                };
                base * span + r % span
            }
            _ => return None,
        })
    };
    (0..n)
        .map(|i| {
            let r = if input == "gauss" {
                (random() + random() + random() + random()) / 4
            } else {
                random()
            };
            value(i, r).map(|v| v as u32)
        })
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(|| {
            format!("mixed-quicksort: unknown input `{input}` (random, gauss, buckets, staggered)")
        })
}

struct SortRun {
    input: Vec<u32>,
    data: Vec<u32>,
    sorted: Vec<u32>,
}

impl Instance for SortRun {
    fn reset(&mut self) {
        self.data.copy_from_slice(&self.input);
    }

    fn run(&mut self, rt: &Runtime) {
        let data = &mut self.data[..];
        match rt.kind() {
            RuntimeKind::Seq => data.sort_unstable(),
            RuntimeKind::Rayon => {
                let pool = rt.rayon_pool().expect("rayon has a pool");
                pool.install(|| data.par_sort_unstable());
            }
            RuntimeKind::HeistJoin => {
                let pool = rt.heist_pool().expect("heist has a pool");
                pool.run(|w| fork_sort(fork::heist(w), data));
            }
            _ => {
                let pool = rt.heist_pool().expect("heist has a pool");
                pool.run(|w| mm_sort(w, data, w.workers()));
            }
        }
    }

    fn verify(&self) -> Result<(), String> {
        match self.data.iter().zip(&self.sorted).position(|(a, b)| a != b) {
            None => Ok(()),
            Some(i) => Err(format!(
                "mixed-quicksort: element {i} is {}, expected {}",
                self.data[i], self.sorted[i]
            )),
        }
    }
}

/// Moves a median-of-three pivot to the end and returns its value.
fn pivot_to_end(a: &mut [u32]) -> u32 {
    let n = a.len();
    let (i, j, k) = (0, n / 2, n - 1);
    let m = if (a[i] <= a[j]) == (a[j] <= a[k]) {
        j
    } else if (a[j] <= a[i]) == (a[i] <= a[k]) {
        i
    } else {
        k
    };
    a.swap(m, n - 1);
    a[n - 1]
}

/// Branch-free cyclic Lomuto partition of `a` around `v` (the scheme of std's own
/// `sort_unstable`): returns how many are ≤ `v`, which now come first. A hole moves
/// right behind the scan (it is always just behind it); each step fills it with the
/// first element above `v` and puts the scanned element at the boundary, two moves and
/// no swap or branch per element. Four steps a round share the loop's own cost.
fn partition_by(a: &mut [u32], v: u32) -> usize {
    let n = a.len();
    if n == 0 {
        return 0;
    }
    let p = a.as_mut_ptr();
    // SAFETY: every index is below `n`: `lt < right < n` in each step (`lt` grows by at
    // most one per element scanned, from 0 with `right` from 1), and `lt <= n - 1`
    // after them. `u32` is `Copy`, so reading and overwriting elements leaves nothing
    // to drop.
    unsafe {
        let first = *p;
        let mut lt = 0;
        let mut step = |right: usize| {
            let x = *p.add(right);
            *p.add(right - 1) = *p.add(lt);
            *p.add(lt) = x;
            lt += usize::from(x <= v);
        };
        let mut right = 1;
        while right + 4 <= n {
            step(right);
            step(right + 1);
            step(right + 2);
            step(right + 3);
            right += 4;
        }
        while right < n {
            step(right);
            right += 1;
        }
        *p.add(n - 1) = *p.add(lt);
        *p.add(lt) = first;
        lt + usize::from(first <= v)
    }
}

/// Partitions `a` sequentially around a median-of-three pivot; returns its final index.
fn partition_seq(a: &mut [u32]) -> usize {
    let n = a.len();
    let v = pivot_to_end(a);
    let k = partition_by(&mut a[..n - 1], v);
    a.swap(k, n - 1);
    k
}

/// The fork quicksort: sequential partitions, sides joined.
fn fork_sort<F: Fork>(f: F, a: &mut [u32]) {
    if a.len() < CUTOFF {
        a.sort_unstable();
        return;
    }
    let k = partition_seq(a);
    let (l, r) = a.split_at_mut(k);
    f.join(move |f| fork_sort(f, l), move |f| fork_sort(f, &mut r[1..]));
}

/// The team size for a piece of `m` elements on `p` workers.
fn best_team(m: usize, p: usize) -> usize {
    let mut q = 1;
    while q * 2 <= p && m / (BLOCK * q * 2) >= MIN_BLOCKS {
        q *= 2;
    }
    q
}

/// The mixed-mode quicksort: team partitions while pieces are large enough and have at
/// least two of the `budget` workers.
fn mm_sort(w: &heist::Worker, a: &mut [u32], budget: usize) {
    let q = best_team(a.len(), budget);
    if q == 1 {
        return fork_sort(fork::heist(w), a);
    }
    let k = team_partition(w, a, q);
    let (l, r) = a.split_at_mut(k);
    let half = q / 2;
    w.join(|w| mm_sort(w, l, half), |w| mm_sort(w, &mut r[1..], half));
}

/// The array a team partitions, shared by its members.
struct Shared {
    ptr: *mut u32,
    /// Whole blocks (the tail after them is left to rank 0).
    blocks: usize,
    v: u32,
    /// Claims made (successful or not): at most `blocks` succeed.
    taken: AtomicUsize,
    left: AtomicUsize,
    right: AtomicUsize,
    /// Blocks left unfinished: (from the left?, block index).
    unfinished: Mutex<Vec<(bool, usize)>>,
}

// SAFETY: members touch only the blocks they claimed (each claimed once through the
// counters) until the barrier, after which rank 0 alone touches the array.
unsafe impl Sync for Shared {}

impl Shared {
    /// Claims the next block from the left (or right) end.
    fn claim(&self, from_left: bool) -> Option<usize> {
        if self.taken.fetch_add(1, Relaxed) >= self.blocks {
            return None;
        }
        Some(if from_left {
            self.left.fetch_add(1, Relaxed)
        } else {
            self.blocks - 1 - self.right.fetch_add(1, Relaxed)
        })
    }

    /// Block `b` as a slice.
    ///
    /// # Safety
    /// The caller claimed `b` (or is rank 0 after the barrier) and holds no other
    /// reference to it.
    #[allow(clippy::mut_from_ref)]
    unsafe fn block(&self, b: usize) -> &mut [u32] {
        // SAFETY: `b < blocks`, inside the array; exclusive by the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(b * BLOCK), BLOCK) }
    }

    /// One member's neutralisation: pairs of left and right blocks until none is free.
    /// A block is scanned once, without branches, for the offsets of its misplaced
    /// elements (above the pivot on the left, not above it on the right); pairs of
    /// misplaced elements are then swapped, as in BlockQuicksort.
    fn neutralise(&self) {
        let mut l = Side::new(true);
        let mut r = Side::new(false);
        loop {
            if !l.ready(self) || !r.ready(self) {
                break;
            }
            let m = l.left().min(r.left());
            // SAFETY: both blocks were claimed by this member, and they differ.
            let (x, y) = unsafe { (self.block(l.block), self.block(r.block)) };
            for k in 0..m {
                let (i, j) = (l.offsets[l.pos + k] as usize, r.offsets[r.pos + k] as usize);
                std::mem::swap(&mut x[i], &mut y[j]);
            }
            l.pos += m;
            r.pos += m;
        }
        let mut u = self.unfinished.lock().unwrap_or_else(|e| e.into_inner());
        u.extend(l.unfinished().map(|b| (true, b)));
        u.extend(r.unfinished().map(|b| (false, b)));
    }
}

/// A member's current block on one side and its misplaced elements not yet swapped.
struct Side {
    from_left: bool,
    /// The block, valid while `claimed`.
    block: usize,
    claimed: bool,
    offsets: Box<[u16; BLOCK]>,
    pos: usize,
    len: usize,
}

impl Side {
    fn new(from_left: bool) -> Side {
        Side {
            from_left,
            block: 0,
            claimed: false,
            offsets: Box::new([0; BLOCK]),
            pos: 0,
            len: 0,
        }
    }

    fn left(&self) -> usize {
        self.len - self.pos
    }

    /// Whether a block with misplaced elements left is at hand, claiming and scanning
    /// blocks as needed (a block with none is done at once).
    fn ready(&mut self, s: &Shared) -> bool {
        while !self.claimed || self.left() == 0 {
            let Some(b) = s.claim(self.from_left) else {
                self.claimed = self.claimed && self.left() > 0;
                return false;
            };
            self.block = b;
            self.claimed = true;
            // SAFETY: claimed just now by this member; only read here.
            let x = unsafe { s.block(b) };
            self.len = if self.from_left {
                scan::<true>(x, s.v, &mut self.offsets)
            } else {
                scan::<false>(x, s.v, &mut self.offsets)
            };
            self.pos = 0;
        }
        true
    }

    /// The block left with misplaced elements, if any.
    fn unfinished(&self) -> Option<usize> {
        (self.claimed && self.left() > 0).then_some(self.block)
    }
}

/// Writes the offsets of the misplaced elements of block `x` (above `v` on the left
/// side, not above it on the right) to `offsets`, without branches, four a round;
/// returns how many there are.
fn scan<const LEFT: bool>(x: &[u32], v: u32, offsets: &mut [u16; BLOCK]) -> usize {
    assert_eq!(x.len(), BLOCK);
    let mut n = 0;
    for (c, four) in x.chunks_exact(4).enumerate() {
        for (k, &e) in four.iter().enumerate() {
            // SAFETY: `n` counts some of the elements before this one, whose offset
            // `4c + k` is below `BLOCK`.
            unsafe { *offsets.get_unchecked_mut(n) = (4 * c + k) as u16 };
            n += usize::from(if LEFT { e > v } else { e <= v });
        }
    }
    n
}

/// Partitions `a` on a team of `q` workers; returns the pivot's final index.
fn team_partition(w: &heist::Worker, a: &mut [u32], q: usize) -> usize {
    let n = a.len();
    let v = pivot_to_end(a);
    let body = n - 1;
    let shared = Shared {
        ptr: a.as_mut_ptr(),
        blocks: body / BLOCK,
        v,
        taken: AtomicUsize::new(0),
        left: AtomicUsize::new(0),
        right: AtomicUsize::new(0),
        unfinished: Mutex::new(Vec::new()),
    };
    // `team` returns once every member left, so rank 0 then has the array alone.
    w.team(q, |_| shared.neutralise());
    let k = finish(&shared, a, body);
    a.swap(k, n - 1);
    k
}

/// Rank 0's part after the team: gathers the unfinished blocks at the boundary,
/// partitions that zone and the tail; returns where the elements above the pivot start.
fn finish(s: &Shared, a: &mut [u32], body: usize) -> usize {
    let lc = s.left.load(Relaxed);
    let u = std::mem::take(&mut *s.unfinished.lock().unwrap_or_else(|e| e.into_inner()));
    let ul: Vec<usize> = u.iter().filter(|x| x.0).map(|x| x.1).collect();
    let ur: Vec<usize> = u.iter().filter(|x| !x.0).map(|x| x.1).collect();
    gather(a, &ul, lc - ul.len()..lc);
    gather(a, &ur, lc..lc + ur.len());
    let (lo, hi) = ((lc - ul.len()) * BLOCK, (lc + ur.len()) * BLOCK);
    let mut k = lo + partition_by(&mut a[lo..hi], s.v);
    for i in s.blocks * BLOCK..body {
        if a[i] <= s.v {
            a.swap(i, k);
            k += 1;
        }
    }
    k
}

/// Swaps the blocks `from` into the block positions `to`, leaving those already there.
fn gather(a: &mut [u32], from: &[usize], to: std::ops::Range<usize>) {
    let stray = from.iter().filter(|b| !to.contains(b));
    let free = to.clone().filter(|b| !from.contains(b));
    for (&b, t) in stray.zip(free) {
        let (x, y) = (b.min(t), b.max(t));
        let (head, tail) = a.split_at_mut(y * BLOCK);
        head[x * BLOCK..(x + 1) * BLOCK].swap_with_slice(&mut tail[..BLOCK]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_generate_and_sizes_parse() {
        for input in ["random", "gauss", "buckets", "staggered"] {
            let v = generate(input, 10_000).unwrap();
            assert!(v.iter().all(|&x| u64::from(x) <= MAX), "{input}");
        }
        assert!(generate("zipf", 10).is_err());
        assert!(MixedQuicksort.instance("random").is_err());
        assert!(MixedQuicksort.instance("random:x").is_err());
    }

    #[test]
    fn partitions_put_what_is_not_above_the_pivot_first() {
        let mut seed = 7u64;
        for n in [0, 1, 2, 3, 5, 64, 1000] {
            for v in [0, 3, 7, 9, 11] {
                let a: Vec<u32> = (0..n)
                    .map(|_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                        (seed >> 60) as u32
                    })
                    .collect();
                let mut b = a.clone();
                let k = partition_by(&mut b, v);
                assert_eq!(k, a.iter().filter(|&&x| x <= v).count(), "n {n} v {v}");
                assert!(b[..k].iter().all(|&x| x <= v) && b[k..].iter().all(|&x| x > v));
                let (mut a, mut b) = (a, b);
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(a, b, "not a permutation");
            }
        }
    }

    #[test]
    fn team_sizes_leave_each_member_enough_blocks() {
        assert_eq!(best_team(1 << 20, 2), 2);
        assert_eq!(best_team((1 << 20) - 1, 2), 1);
        assert_eq!(best_team(1 << 25, 64), 64);
        assert_eq!(best_team(1 << 25, 3), 2);
    }

    #[test]
    fn team_partitions_split_every_input_at_the_pivot() {
        let pool = heist::Pool::builder().workers(3).build().unwrap();
        for input in ["random", "gauss", "buckets", "staggered"] {
            // 48 blocks and a tail; one partition only, to stay quick in debug builds.
            let mut v = generate(input, 200_077).unwrap();
            let mut before = v.clone();
            let k = pool.run(|w| team_partition(w, &mut v, 2));
            let p = v[k];
            assert!(v[..k].iter().all(|&x| x <= p), "{input}: left of the pivot");
            assert!(
                v[k + 1..].iter().all(|&x| x > p),
                "{input}: right of the pivot"
            );
            before.sort_unstable();
            v.sort_unstable();
            assert!(v == before, "{input}: not a permutation");
        }
    }

    #[test]
    fn mixed_sorts_with_teams_nested_in_teams_sort() {
        // A team of four at the top, and teams of two for its sides where they are large
        // enough.
        let n = (1 << 21) + 4097;
        let pool = heist::Pool::builder().workers(4).build().unwrap();
        let mut v = generate("random", n).unwrap();
        let mut expected = v.clone();
        expected.sort_unstable();
        pool.run(|w| mm_sort(w, &mut v, w.workers()));
        assert!(v == expected);
    }
}
