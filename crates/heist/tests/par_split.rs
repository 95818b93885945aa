//! Every indexed source and adapter, split at every position: both pieces have the right
//! lengths, and their items (forwards and backwards) are the sequential ones.

use heist::iter::plumbing::{Kernel, Producer, ProducerCallback, UnindexedProducer};
use heist::prelude::*;
use std::collections::VecDeque;
use std::fmt::Debug;

/// Splits the producer at `at`, then each piece once more at every position.
struct Check<'e, V, G> {
    at: usize,
    expected: &'e [V],
    view: G,
}

impl<T, V: PartialEq + Debug, G: Fn(T) -> V> ProducerCallback<T> for Check<'_, V, G> {
    type Output = ();
    fn callback<P: Producer<Item = T>>(self, p: P) {
        let n = self.expected.len();
        assert_eq!(p.len(), n, "length before the split");
        let (l, r) = p.split_at(self.at);
        assert_eq!(
            (l.len(), r.len()),
            (self.at, n - self.at),
            "split at {}",
            self.at
        );
        let got: Vec<V> = l.into_iter().chain(r.into_iter()).map(&self.view).collect();
        assert_eq!(got, self.expected, "items after a split at {}", self.at);
    }
}

/// Like `Check`, reading the right piece backwards and splitting it again.
struct CheckBack<'e, V, G> {
    at: usize,
    again: usize,
    expected: &'e [V],
    view: G,
}

impl<T, V: PartialEq + Debug + Clone, G: Fn(T) -> V> ProducerCallback<T> for CheckBack<'_, V, G> {
    type Output = ();
    fn callback<P: Producer<Item = T>>(self, p: P) {
        let (_, r) = p.split_at(self.at);
        let (a, b) = r.split_at(self.again);
        let it = b.into_iter();
        assert_eq!(it.len(), self.expected.len() - self.at - self.again);
        let mut back: Vec<V> = it.rev().map(&self.view).collect();
        back.reverse();
        let mut got: Vec<V> = a.into_iter().map(&self.view).collect();
        got.extend(back);
        assert_eq!(
            got,
            &self.expected[self.at..],
            "split at {} then {}",
            self.at,
            self.again
        );
    }
}

/// Splits the producer at `at`, then folds each piece in blocks of `block` items through
/// `fold_block`, as the loop driver does.
struct CheckBlocks<'e, V, G> {
    at: usize,
    block: usize,
    expected: &'e [V],
    view: G,
}

/// A kernel that gathers the items.
struct Gather;

impl<T: Send> Kernel<T> for Gather {
    type Acc = Vec<T>;
    type Output = Vec<T>;
    fn start(&self) -> Vec<T> {
        Vec::new()
    }
    fn fold<I: Iterator<Item = T>>(&self, mut acc: Vec<T>, items: I) -> Vec<T> {
        acc.extend(items);
        acc
    }
    fn finish(&self, acc: Vec<T>) -> Vec<T> {
        acc
    }
    fn combine(&self, mut l: Vec<T>, r: Vec<T>) -> Vec<T> {
        l.extend(r);
        l
    }
}

/// Folds all of `p` in blocks of `block` items.
pub fn fold_in_blocks<P: UnindexedProducer<Item: Send>>(mut p: P, block: usize) -> Vec<P::Item> {
    let mut acc = Vec::new();
    while p.len() > 0 {
        let n = block.min(p.len());
        (acc, p) = p.fold_block(n, &Gather, acc);
    }
    acc
}

impl<T: Send, V: PartialEq + Debug, G: Fn(T) -> V> ProducerCallback<T> for CheckBlocks<'_, V, G> {
    type Output = ();
    fn callback<P: Producer<Item = T>>(self, p: P) {
        let (l, r) = p.split_at(self.at);
        let mut got = fold_in_blocks(l, self.block);
        got.extend(fold_in_blocks(r, self.block));
        let got: Vec<V> = got.into_iter().map(&self.view).collect();
        assert_eq!(
            got, self.expected,
            "blocks of {} after a split at {}",
            self.block, self.at
        );
    }
}

/// Checks `make()` split everywhere against `expected`, items seen through `view`.
fn check<I, V, G>(name: &str, make: impl Fn() -> I, expected: &[V], view: G)
where
    I: IndexedParallelIterator,
    V: PartialEq + Debug + Clone,
    G: Fn(I::Item) -> V + Copy,
{
    assert_eq!(make().len(), expected.len(), "{name}: len");
    for at in 0..=expected.len() {
        make().with_producer(Check { at, expected, view });
        for block in [1, 3, expected.len().max(1)] {
            make().with_producer(CheckBlocks {
                at,
                block,
                expected,
                view,
            });
        }
        for again in 0..=expected.len() - at {
            make().with_producer(CheckBack {
                at,
                again,
                expected,
                view,
            });
        }
    }
}

fn seq<T: Clone>(v: impl IntoIterator<Item = T>) -> Vec<T> {
    v.into_iter().collect()
}

#[test]
fn integer_ranges() {
    check("u64", || (3u64..20).into_par_iter(), &seq(3u64..20), |x| x);
    check("i64", || (-9i64..9).into_par_iter(), &seq(-9i64..9), |x| x);
    check(
        "u8",
        || (250u8..=255).into_par_iter(),
        &seq(250u8..=255),
        |x| x,
    );
    check(
        "i8",
        || (-128i8..-120).into_par_iter(),
        &seq(-128i8..-120),
        |x| x,
    );
    check(
        "i32 incl",
        || (-3i32..=3).into_par_iter(),
        &seq(-3i32..=3),
        |x| x,
    );
    check(
        "usize empty",
        || (5usize..5).into_par_iter(),
        &seq(5usize..5),
        |x| x,
    );
    check("u16", || (0u16..17).into_par_iter(), &seq(0u16..17), |x| x);
    check(
        "isize",
        || (-4isize..4).into_par_iter(),
        &seq(-4isize..4),
        |x| x,
    );
    check("u32", || (7u32..9).into_par_iter(), &seq(7u32..9), |x| x);
    check(
        "i16",
        || (i16::MAX - 3..=i16::MAX).into_par_iter(),
        &seq(i16::MAX - 3..=i16::MAX),
        |x| x,
    );
}

#[test]
fn slices_vecs_arrays() {
    let v: Vec<u32> = (0..17).map(|x| x * x).collect();
    check("slice", || v.par_iter(), &v, |x| *x);
    check("vec into", || v.clone().into_par_iter(), &v, |x| x);
    let strings: Vec<String> = (0..13).map(|i| format!("s{i}")).collect();
    check(
        "vec of String into",
        || strings.clone().into_par_iter(),
        &strings,
        |x| x,
    );
    check(
        "array",
        || [1, 2, 3, 4, 5].into_par_iter(),
        &[1, 2, 3, 4, 5],
        |x| x,
    );
    check(
        "array ref",
        || (&[1, 2, 3]).into_par_iter(),
        &[1, 2, 3],
        |x| *x,
    );
    let mut m = v.clone();
    let expect = v.clone();
    for at in 0..=v.len() {
        m.par_iter_mut().with_producer(Check {
            at,
            expected: &expect,
            view: |x: &mut u32| *x,
        });
    }
}

#[test]
fn options_and_deques() {
    check("some", || Some(7).into_par_iter(), &[7], |x| x);
    check("none", || None::<i32>.into_par_iter(), &[], |x| x);
    check("&some", || (&Some(7)).into_par_iter(), &[7], |x| *x);
    let mut d: VecDeque<i32> = (0..6).collect();
    d.push_front(-1);
    d.push_front(-2);
    let expect: Vec<i32> = d.iter().copied().collect();
    // The deque wraps around, so a split can fall in either of its two slices.
    let (front, back) = d.as_slices();
    assert!(!front.is_empty() && !back.is_empty(), "{front:?} {back:?}");
    check("deque", || d.par_iter(), &expect, |x| *x);
    check("deque into", || d.clone().into_par_iter(), &expect, |x| x);
}

#[test]
fn chunks_and_windows() {
    let v: Vec<u8> = (0..23).collect();
    for size in [1, 2, 3, 5, 23, 30] {
        let chunks: Vec<Vec<u8>> = v.chunks(size).map(<[u8]>::to_vec).collect();
        check("chunks", || v.par_chunks(size), &chunks, <[u8]>::to_vec);
        let exact: Vec<Vec<u8>> = v.chunks_exact(size).map(<[u8]>::to_vec).collect();
        check(
            "chunks_exact",
            || v.par_chunks_exact(size),
            &exact,
            <[u8]>::to_vec,
        );
        let rchunks: Vec<Vec<u8>> = v.rchunks(size).map(<[u8]>::to_vec).collect();
        check("rchunks", || v.par_rchunks(size), &rchunks, <[u8]>::to_vec);
        let rexact: Vec<Vec<u8>> = v.rchunks_exact(size).map(<[u8]>::to_vec).collect();
        check(
            "rchunks_exact",
            || v.par_rchunks_exact(size),
            &rexact,
            <[u8]>::to_vec,
        );
        let mut m = v.clone();
        for at in 0..=rchunks.len() {
            m.par_rchunks_mut(size).with_producer(Check {
                at,
                expected: &rchunks,
                view: |c: &mut [u8]| c.to_vec(),
            });
            m.par_rchunks_exact_mut(size).with_producer(Check {
                at: at.min(rexact.len()),
                expected: &rexact,
                view: |c: &mut [u8]| c.to_vec(),
            });
        }
        let windows: Vec<Vec<u8>> = v.windows(size).map(<[u8]>::to_vec).collect();
        check("windows", || v.par_windows(size), &windows, <[u8]>::to_vec);
        let mut m = v.clone();
        for at in 0..=chunks.len() {
            m.par_chunks_mut(size).with_producer(Check {
                at,
                expected: &chunks,
                view: |c: &mut [u8]| c.to_vec(),
            });
        }
        let mut m = v.clone();
        for at in 0..=exact.len() {
            m.par_chunks_exact_mut(size).with_producer(Check {
                at,
                expected: &exact,
                view: |c: &mut [u8]| c.to_vec(),
            });
        }
    }
}

#[test]
fn indexed_adapters() {
    let v: Vec<i32> = (0..14).collect();
    let e: Vec<(usize, i32)> = v.iter().copied().enumerate().collect();
    check("enumerate", || v.par_iter().copied().enumerate(), &e, |x| x);
    let z: Vec<(i32, u8)> = v
        .iter()
        .copied()
        .zip(b"abcdefghij".iter().copied())
        .collect();
    check(
        "zip",
        || v.par_iter().copied().zip(b"abcdefghij".par_iter().copied()),
        &z,
        |x| x,
    );
    let r: Vec<i32> = v.iter().rev().copied().collect();
    check("rev", || v.par_iter().copied().rev(), &r, |x| x);
    for step in [1, 2, 3, 5, 20] {
        let s: Vec<i32> = v.iter().copied().step_by(step).collect();
        check("step_by", || v.par_iter().copied().step_by(step), &s, |x| x);
    }
    let c: Vec<i32> = v.iter().chain(&[100, 101, 102]).copied().collect();
    check(
        "chain",
        || v.par_iter().chain(&[100, 101, 102]).copied(),
        &c,
        |x| x,
    );
    check(
        "take",
        || v.par_iter().take(9).map(|x| x * 2),
        &seq(v.iter().take(9).map(|x| x * 2)),
        |x| x,
    );
    check(
        "skip",
        || v.par_iter().skip(4).cloned(),
        &seq(v.iter().skip(4).cloned()),
        |x| x,
    );
    check("skip all", || v.par_iter().skip(40).cloned(), &[], |x| x);
    let inspected = std::sync::atomic::AtomicUsize::new(0);
    check(
        "inspect",
        || {
            v.par_iter().inspect(|_| {
                inspected.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            })
        },
        &seq(v.iter()),
        |x| x,
    );
    assert!(inspected.into_inner() > 0);
    check(
        "min_len",
        || v.par_iter().with_min_len(4),
        &seq(v.iter()),
        |x| x,
    );
    check(
        "max_len",
        || v.par_iter().with_max_len(2),
        &seq(v.iter()),
        |x| x,
    );
    check(
        "panic_fuse",
        || v.par_iter().panic_fuse(),
        &seq(v.iter()),
        |x| x,
    );
    let doubled = seq(v.iter().map(|x| x * 2));
    check(
        "map_init",
        || v.par_iter().map_init(|| 2, |s, x| x * *s),
        &doubled,
        |x| x,
    );
    check(
        "map_with",
        || v.par_iter().map_with(2, |s, x| x * *s),
        &doubled,
        |x| x,
    );
    let numbered: Vec<(usize, i32)> = doubled.iter().copied().enumerate().collect();
    check(
        "map_init enumerate min_len",
        || {
            v.par_iter()
                .map_init(Vec::new, |seen: &mut Vec<i32>, x| {
                    seen.push(*x);
                    x * 2
                })
                .with_min_len(2)
                .enumerate()
        },
        &numbered,
        |x| x,
    );
    let w: Vec<i32> = (100..105).collect();
    // `a` and `b` in turn; the turn of one that has run out ends `shortest`, and is
    // passed over otherwise.
    let turns = |a: &[i32], b: &[i32], shortest: bool| {
        let (mut out, mut a, mut b) = (Vec::new(), a.iter(), b.iter());
        let mut a_turn = true;
        loop {
            let next = if a_turn { a.next() } else { b.next() };
            match next {
                Some(&x) => out.push(x),
                None if shortest => break,
                None if a.len() + b.len() == 0 => break,
                None => {}
            }
            a_turn = !a_turn;
        }
        out
    };
    check(
        "interleave",
        || v.par_iter().copied().interleave(w.par_iter().copied()),
        &turns(&v, &w, false),
        |x| x,
    );
    check(
        "interleave shorter first",
        || w.par_iter().copied().interleave(v.par_iter().copied()),
        &turns(&w, &v, false),
        |x| x,
    );
    check(
        "interleave_shortest",
        || {
            v.par_iter()
                .copied()
                .interleave_shortest(w.par_iter().copied())
        },
        &turns(&v, &w, true),
        |x| x,
    );
    check(
        "interleave_shortest shorter first",
        || {
            w.par_iter()
                .copied()
                .interleave_shortest(v.par_iter().copied())
        },
        &turns(&w, &v, true),
        |x| x,
    );
    check(
        "zip_eq",
        || v.par_iter().copied().zip_eq(v.par_iter().rev()),
        &seq(v.iter().copied().zip(v.iter().rev())),
        |x| x,
    );
    for size in [1, 3, 14, 20] {
        let folded: Vec<i32> = v
            .chunks(size)
            .map(|c| c.iter().fold(1, |a, x| a * 3 + x))
            .collect();
        check(
            "fold_chunks",
            || v.par_iter().fold_chunks(size, || 1, |a, x| a * 3 + x),
            &folded,
            |x| x,
        );
        let gathered: Vec<Vec<i32>> = v.chunks(size).map(<[i32]>::to_vec).collect();
        check(
            "chunks",
            || v.par_iter().copied().chunks(size),
            &gathered,
            |x| x,
        );
    }
    let rz: Vec<(usize, i32)> = v
        .iter()
        .copied()
        .rev()
        .enumerate()
        .skip(2)
        .step_by(3)
        .collect();
    check(
        "rev enumerate skip step_by",
        || v.par_iter().copied().rev().enumerate().skip(2).step_by(3),
        &rz,
        |x| x,
    );
}
