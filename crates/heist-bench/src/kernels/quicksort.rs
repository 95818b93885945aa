//! quicksort: in-place parallel quicksort of `u64`s, median-of-three pivot, insertion
//! sort for at most 100 elements (BENCHMARKS.md "Fork-join, recursive"; Prell's thesis §2.8
//! Quicksort).
//!
//! The partition is sequential; the two sides are then sorted in parallel with `join`.
//! The input is a fixed-seed pseudo-random array, restored by `reset`; the result must be
//! equal to a sorted copy made once at setup with `sort_unstable` (sorted and the same
//! multiset). The input generator, the partition, the insertion sort and the check are
//! shared with [`super::cilksort`].

use crate::bench::{parse_size, whole, Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::peers::ffi;
use crate::runtime::{Runtime, RuntimeKind, Task};

/// Sub-arrays of at most this many elements are insertion-sorted.
const INSERTION: usize = 100;
/// Seed of the input generator.
const SEED: u64 = 0x7175_6963_6b73;

/// The quicksort kernel of the catalogue.
pub struct Quicksort;

impl Bench for Quicksort {
    fn name(&self) -> &'static str {
        "quicksort"
    }

    fn about(&self) -> &'static str {
        "in-place parallel quicksort, median of three, insertion sort <= 100"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "10^4",
            small: "10^6",
            quick: "10^7",
            full: "10^8",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        !kind.opt_in() || crate::peers::supports(kind, false)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = parse_len("quicksort", size)?;
        Ok(Box::new(QuicksortInstance::new(n)))
    }
}

/// Parses an element count: `"10000000"`, `"10_000_000"`, `"10^7"` or `"1e7"`.
pub fn parse_len(kernel: &str, size: &str) -> Result<usize, String> {
    let [n] = parse_size(kernel, size, [("n", None)])?;
    Ok(whole(kernel, "n", n, 0, 1 << 40)? as usize)
}

/// splitmix64: the input generator.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Fills `v` with pseudo-random `u64`s determined by `seed`.
pub fn fill_random(v: &mut [u64], seed: u64) {
    let mut state = seed;
    v.iter_mut().for_each(|x| *x = splitmix64(&mut state));
}

/// `v` sorted with the standard library: the reference for [`check_sorted`].
pub fn sorted_copy(v: &[u64]) -> Vec<u64> {
    let mut s = v.to_vec();
    s.sort_unstable();
    s
}

/// Checks that `got` equals `expected` (the sorted input); the error says whether `got` is
/// out of order or sorted but not a permutation of the input.
pub fn check_sorted(got: &[u64], expected: &[u64]) -> Result<(), String> {
    if got.len() != expected.len() {
        return Err(format!(
            "{} elements, expected {}",
            got.len(),
            expected.len()
        ));
    }
    let Some(i) = got.iter().zip(expected).position(|(g, e)| g != e) else {
        return Ok(());
    };
    match got.windows(2).position(|w| w[0] > w[1]) {
        Some(j) => Err(format!(
            "not sorted: a[{j}] = {} > a[{}] = {}",
            got[j],
            j + 1,
            got[j + 1]
        )),
        None => Err(format!(
            "sorted but not a permutation of the input: a[{i}] = {}, expected {}",
            got[i], expected[i]
        )),
    }
}

/// Insertion sort.
pub fn insertion_sort(v: &mut [u64]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Orders `v[0] ≤ v[mid] ≤ v[last]` (median of three in the middle).
fn median_of_three(v: &mut [u64]) {
    let (mid, last) = (v.len() / 2, v.len() - 1);
    if v[mid] < v[0] {
        v.swap(mid, 0);
    }
    if v[last] < v[0] {
        v.swap(last, 0);
    }
    if v[last] < v[mid] {
        v.swap(last, mid);
    }
}

/// Partitions `v` (at least 3 elements) around the median of its first, middle and last
/// elements; returns the pivot's final index `p`: `v[..p] ≤ v[p] ≤ v[p+1..]`.
pub fn partition(v: &mut [u64]) -> usize {
    let n = v.len();
    assert!(n >= 3, "partition needs 3 elements");
    median_of_three(v);
    v.swap(n / 2, n - 2);
    let pivot = v[n - 2];
    // v[0] ≤ pivot and v[n-2] = pivot stop the two scans.
    let (mut i, mut j) = (0, n - 2);
    loop {
        i += 1;
        while v[i] < pivot {
            i += 1;
        }
        j -= 1;
        while pivot < v[j] {
            j -= 1;
        }
        if i >= j {
            break;
        }
        v.swap(i, j);
    }
    v.swap(i, n - 2);
    i
}

/// Sorts `v` in place: partition, then both sides in parallel.
pub fn quicksort<F: Fork>(f: F, v: &mut [u64]) {
    if v.len() <= INSERTION {
        insertion_sort(v);
        return;
    }
    let p = partition(v);
    let (lo, hi) = v.split_at_mut(p);
    f.join(|f| quicksort(f, lo), |f| quicksort(f, &mut hi[1..]));
}

/// The sequential parts of [`quicksort`], for the C++ peers.
const SORT_FFI: ffi::Sort = ffi::Sort {
    cutoff: INSERTION,
    partition: partition_ffi,
    insertion: insertion_ffi,
};

/// [`partition`] of the `n` elements at `v`.
///
/// # Safety
/// `v..v+n` is a slice no one else uses during the call.
unsafe extern "C" fn partition_ffi(v: *mut u64, n: usize) -> usize {
    // SAFETY: by the contract.
    partition(unsafe { std::slice::from_raw_parts_mut(v, n) })
}

/// [`insertion_sort`] of the `n` elements at `v`.
///
/// # Safety
/// As for [`partition_ffi`].
unsafe extern "C" fn insertion_ffi(v: *mut u64, n: usize) {
    // SAFETY: by the contract.
    insertion_sort(unsafe { std::slice::from_raw_parts_mut(v, n) })
}

struct QuicksortTask<'a>(&'a mut [u64]);

impl Task for QuicksortTask<'_> {
    type Output = ();
    fn call<F: Fork>(self, f: F) {
        quicksort(f, self.0);
    }
}

/// One quicksort run: the array and its sorted reference.
struct QuicksortInstance {
    data: Vec<u64>,
    sorted: Vec<u64>,
}

impl QuicksortInstance {
    fn new(n: usize) -> Self {
        let mut data = vec![0; n];
        fill_random(&mut data, SEED);
        let sorted = sorted_copy(&data);
        QuicksortInstance { data, sorted }
    }
}

impl Instance for QuicksortInstance {
    fn reset(&mut self) {
        fill_random(&mut self.data, SEED);
    }

    fn run(&mut self, rt: &Runtime) {
        match rt.peer() {
            // SAFETY: `partition` returns the pivot's index, inside the slice, and both
            // functions work within the slice they are given.
            Some(p) => unsafe { p.quicksort(&mut self.data, &SORT_FFI) },
            None => rt.exec(QuicksortTask(&mut self.data)),
        }
    }

    fn verify(&self) -> Result<(), String> {
        check_sorted(&self.data, &self.sorted).map_err(|e| format!("quicksort: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check_catches;

    #[test]
    fn sorts_small_and_duplicate_heavy_inputs() {
        let rt = Runtime::new(RuntimeKind::Seq, 1).unwrap();
        for n in [0, 1, 2, 3, 101, 1000] {
            let mut inst = QuicksortInstance::new(n);
            inst.run(&rt);
            assert_eq!(inst.verify(), Ok(()), "n = {n}");
        }
        let mut v: Vec<u64> = (0..5000).map(|i| (i * 7919) % 3).collect();
        let expected = sorted_copy(&v);
        rt.exec(QuicksortTask(&mut v));
        assert_eq!(check_sorted(&v, &expected), Ok(()));
    }

    #[test]
    fn corrupted_results_fail_verify() {
        let mut inst = QuicksortInstance::new(10_000);
        let swapped = |i: &mut QuicksortInstance| {
            i.data.swap(10, 5000);
            assert!(i.verify().unwrap_err().contains("not sorted"));
        };
        let replaced = |i: &mut QuicksortInstance| {
            i.data[5000] = i.data[5001]; // sorted, but an element was replaced
            assert!(i.verify().unwrap_err().contains("permutation"));
        };
        check_catches(RuntimeKind::Seq, &mut inst, &[&swapped, &replaced]);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_len("quicksort", "10^7"), Ok(10_000_000));
        assert_eq!(parse_len("quicksort", "1e4"), Ok(10_000));
        assert_eq!(parse_len("quicksort", "2E3"), Ok(2_000));
        assert_eq!(parse_len("quicksort", "1_000_000"), Ok(1_000_000));
        assert!(parse_len("quicksort", "10^").is_err());
        assert!(parse_len("quicksort", "x").is_err());
        assert!(parse_len("quicksort", "10^40").is_err());
    }
}
