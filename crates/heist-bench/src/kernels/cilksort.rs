//! cilksort: MIT Cilk's 4-way recursive merge sort with a parallel merge, on `u64`s
//! (BENCHMARKS.md "Fork-join, recursive"; Prell's thesis §2.8 Cilksort, after the MIT Cilk
//! `cilksort.cilk`).
//!
//! The array is cut into four quarters, sorted in parallel; quarters 1+2 and 3+4 are
//! merged in parallel into a temporary buffer, and the two halves merged back. A merge
//! splits the larger input at its middle element, finds that element's place in the
//! smaller input by binary search, and merges the two lower and the two upper parts in
//! parallel. Cut-offs, as in the catalogue: a sequential median-of-three quicksort for
//! at most 1024 elements (insertion sort for at most 20), and a sequential merge when the
//! smaller input has at most 1024 elements (Cilk's merge cut-off; the catalogue gives only
//! the sort ones, so the merge uses the same size as the quicksort cut-off).
//!
//! Inputs and the check are those of [`super::quicksort`]: a fixed-seed pseudo-random
//! array restored by `reset`, compared with a sorted copy made once at setup.

use super::quicksort::{
    check_sorted, fill_random, insertion_sort, parse_len, partition, sorted_copy,
};
use crate::bench::{Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::runtime::{Runtime, Task};

/// Sub-arrays of at most this many elements are sorted by the sequential quicksort.
const QUICK: usize = 1024;
/// The sequential quicksort insertion-sorts at most this many elements.
const INSERTION: usize = 20;
/// A merge whose smaller input has at most this many elements is sequential.
const MERGE: usize = 1024;
/// Seed of the input generator.
const SEED: u64 = 0x6369_6c6b_736f;

/// The cilksort kernel of the catalogue.
pub struct Cilksort;

impl Bench for Cilksort {
    fn name(&self) -> &'static str {
        "cilksort"
    }

    fn about(&self) -> &'static str {
        "Cilk 4-way merge sort with parallel merge (quicksort <= 1024, insertion <= 20)"
    }

    fn sizes(&self) -> Sizes {
        super::quicksort::Quicksort.sizes()
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = parse_len("cilksort", size)?;
        Ok(Box::new(CilksortInstance::new(n)))
    }
}

/// Cilk's `seqquick`: median-of-three quicksort, recursing on the smaller side and
/// looping on the larger, insertion sort for at most [`INSERTION`] elements.
pub fn seqquick(mut v: &mut [u64]) {
    while v.len() > INSERTION {
        let p = partition(v);
        let (lo, hi) = v.split_at_mut(p);
        let hi = &mut hi[1..];
        if lo.len() < hi.len() {
            seqquick(lo);
            v = hi;
        } else {
            seqquick(hi);
            v = lo;
        }
    }
    insertion_sort(v);
}

/// Merges the sorted `a` and `b` into `dest` sequentially.
pub fn seqmerge(a: &[u64], b: &[u64], dest: &mut [u64]) {
    let (mut i, mut j) = (0, 0);
    let mut out = dest.iter_mut();
    while i < a.len() && j < b.len() {
        let next = out.next().expect("dest fits a and b");
        if b[j] < a[i] {
            *next = b[j];
            j += 1;
        } else {
            *next = a[i];
            i += 1;
        }
    }
    let rest = out.into_slice();
    let (ra, rb) = rest.split_at_mut(a.len() - i);
    ra.copy_from_slice(&a[i..]);
    rb.copy_from_slice(&b[j..]);
}

/// Merges the sorted `a` and `b` into `dest` (of their total length), in parallel.
pub fn cilkmerge<F: Fork>(f: F, a: &[u64], b: &[u64], dest: &mut [u64]) {
    let (a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
    if b.len() <= MERGE {
        seqmerge(a, b, dest);
        return;
    }
    let s1 = a.len() / 2;
    let pivot = a[s1];
    let s2 = b.partition_point(|&x| x < pivot);
    let (low, rest) = dest.split_at_mut(s1 + s2);
    let (mid, high) = rest.split_first_mut().expect("pivot slot");
    *mid = pivot;
    f.join(
        |f| cilkmerge(f, &a[..s1], &b[..s2], low),
        |f| cilkmerge(f, &a[s1 + 1..], &b[s2..], high),
    );
}

/// Splits `v` into four quarters (the last takes the remainder).
fn quarters(v: &mut [u64]) -> [&mut [u64]; 4] {
    let q = v.len() / 4;
    let (a, rest) = v.split_at_mut(q);
    let (b, rest) = rest.split_at_mut(q);
    let (c, d) = rest.split_at_mut(q);
    [a, b, c, d]
}

/// Sorts `v` using `tmp` (of the same length) as the merge buffer.
pub fn cilksort<F: Fork>(f: F, v: &mut [u64], tmp: &mut [u64]) {
    if v.len() <= QUICK {
        seqquick(v);
        return;
    }
    let half = v.len() / 4 * 2;
    {
        let [va, vb, vc, vd] = quarters(v);
        let [ta, tb, tc, td] = quarters(tmp);
        f.join(
            |f| f.join(|f| cilksort(f, va, ta), |f| cilksort(f, vb, tb)),
            |f| f.join(|f| cilksort(f, vc, tc), |f| cilksort(f, vd, td)),
        );
        let (tab, tcd) = tmp.split_at_mut(half);
        f.join(|f| cilkmerge(f, va, vb, tab), |f| cilkmerge(f, vc, vd, tcd));
    }
    let (tab, tcd) = tmp.split_at(half);
    cilkmerge(f, tab, tcd, v);
}

struct CilksortTask<'a> {
    data: &'a mut [u64],
    tmp: &'a mut [u64],
}

impl Task for CilksortTask<'_> {
    type Output = ();
    fn call<F: Fork>(self, f: F) {
        cilksort(f, self.data, self.tmp);
    }
}

/// One cilksort run: the array, the merge buffer and the sorted reference.
struct CilksortInstance {
    data: Vec<u64>,
    tmp: Vec<u64>,
    sorted: Vec<u64>,
}

impl CilksortInstance {
    fn new(n: usize) -> Self {
        let mut data = vec![0; n];
        fill_random(&mut data, SEED);
        let sorted = sorted_copy(&data);
        CilksortInstance {
            data,
            tmp: vec![0; n],
            sorted,
        }
    }
}

impl Instance for CilksortInstance {
    fn reset(&mut self) {
        fill_random(&mut self.data, SEED);
    }

    fn run(&mut self, rt: &Runtime) {
        rt.exec(CilksortTask {
            data: &mut self.data,
            tmp: &mut self.tmp,
        });
    }

    fn verify(&self) -> Result<(), String> {
        check_sorted(&self.data, &self.sorted).map_err(|e| format!("cilksort: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check_catches;
    use crate::fork::SEQ;
    use crate::runtime::RuntimeKind;

    #[test]
    fn sorts_sizes_around_the_cut_offs() {
        let rt = Runtime::new(RuntimeKind::Seq, 1).unwrap();
        for n in [0, 1, 5, 21, 1024, 1025, 4099, 50_000] {
            let mut inst = CilksortInstance::new(n);
            inst.run(&rt);
            assert_eq!(inst.verify(), Ok(()), "n = {n}");
        }
    }

    #[test]
    fn parallel_merge_of_uneven_inputs() {
        let a: Vec<u64> = (0..9000).map(|i| i * 3).collect();
        let b: Vec<u64> = (0..2500).map(|i| i * 5 + 1).collect();
        let mut expected = [a.clone(), b.clone()].concat();
        expected.sort_unstable();
        let mut dest = vec![0; a.len() + b.len()];
        cilkmerge(SEQ, &b, &a, &mut dest);
        assert_eq!(dest, expected);
    }

    #[test]
    fn corrupted_results_fail_verify() {
        let mut inst = CilksortInstance::new(10_000);
        let swapped = |i: &mut CilksortInstance| i.data.swap(0, 9999);
        let replaced = |i: &mut CilksortInstance| i.data[7] = i.data[8];
        check_catches(RuntimeKind::Seq, &mut inst, &[&swapped, &replaced]);
    }
}
