//! The kernels of the consumers (`sum`, `reduce`, `find_any`, `collect`, ...): what each
//! piece of a loop folds, and how finished pieces combine in index order (the kernel
//! objects of On Lock-Free Work-stealing Iterators for Parallel Data Structures, §3).

use crate::par::collect::from_iter::ParallelExtend;
use crate::par::engine::driver::Kernel;
use crate::par::iter::either::Either;
use crate::par::iter::try_op::Try;
use std::cmp::Ordering;
use std::iter::{Product, Sum};
use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Runs `op` on every item.
pub(crate) struct ForEach<F>(pub(crate) F);

impl<T, F: Fn(T) + Sync> Kernel<T> for ForEach<F> {
    type Acc = ();
    type Output = ();
    fn start(&self) {}
    fn fold<I: Iterator<Item = T>>(&self, (): (), items: I) {
        items.for_each(&self.0);
    }
    fn finish(&self, (): ()) {}
    fn combine(&self, (): (), (): ()) {}
}

/// `sum` and `product`: a block is totalled by the iterator's own loop.
macro_rules! total_kernel {
    ($name:ident, $tr:ident, $m:ident) => {
        pub(crate) struct $name<S>(pub(crate) PhantomData<fn() -> S>);

        impl<T, S: Send + $tr<T> + $tr<S>> Kernel<T> for $name<S> {
            type Acc = S;
            type Output = S;
            fn start(&self) -> S {
                std::iter::empty::<S>().$m()
            }
            fn fold<I: Iterator<Item = T>>(&self, acc: S, items: I) -> S {
                let block: S = items.$m();
                [acc, block].into_iter().$m()
            }
            fn finish(&self, acc: S) -> S {
                acc
            }
            fn combine(&self, left: S, right: S) -> S {
                [left, right].into_iter().$m()
            }
        }
    };
}

total_kernel!(SumOf, Sum, sum);
total_kernel!(ProductOf, Product, product);

/// `reduce`: each piece folds from `identity()`.
pub(crate) struct Reduce<ID, OP> {
    pub(crate) identity: ID,
    pub(crate) op: OP,
}

impl<T: Send, ID, OP> Kernel<T> for Reduce<ID, OP>
where
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> T + Sync,
{
    type Acc = T;
    type Output = T;
    fn start(&self) -> T {
        (self.identity)()
    }
    fn fold<I: Iterator<Item = T>>(&self, acc: T, items: I) -> T {
        items.fold(acc, &self.op)
    }
    fn finish(&self, acc: T) -> T {
        acc
    }
    fn combine(&self, left: T, right: T) -> T {
        (self.op)(left, right)
    }
}

/// `reduce_with`, `min`, `max` and their `_by` forms: `None` for an empty piece.
pub(crate) struct ReduceWith<OP>(pub(crate) OP);

impl<T: Send, OP: Fn(T, T) -> T + Sync> Kernel<T> for ReduceWith<OP> {
    type Acc = Option<T>;
    type Output = Option<T>;
    fn start(&self) -> Option<T> {
        None
    }
    fn fold<I: Iterator<Item = T>>(&self, acc: Option<T>, items: I) -> Option<T> {
        let mut items = items;
        let first = acc.or_else(|| items.next())?;
        Some(items.fold(first, &self.0))
    }
    fn finish(&self, acc: Option<T>) -> Option<T> {
        acc
    }
    fn combine(&self, left: Option<T>, right: Option<T>) -> Option<T> {
        match (left, right) {
            (Some(l), Some(r)) => Some((self.0)(l, r)),
            (l, r) => l.or(r),
        }
    }
}

/// The smaller of two, the left one when equal (as `Iterator::min_by`).
pub(crate) fn min_of<T>(cmp: impl Fn(&T, &T) -> Ordering) -> impl Fn(T, T) -> T {
    move |a, b| {
        if cmp(&a, &b) == Ordering::Greater {
            b
        } else {
            a
        }
    }
}

/// The larger of two, the right one when equal (as `Iterator::max_by`).
pub(crate) fn max_of<T>(cmp: impl Fn(&T, &T) -> Ordering) -> impl Fn(T, T) -> T {
    move |a, b| {
        if cmp(&a, &b) == Ordering::Greater {
            a
        } else {
            b
        }
    }
}

/// `try_reduce` and `try_for_each`: the first failure ends the loop.
pub(crate) struct TryReduce<R: Try, ID, OP> {
    pub(crate) identity: ID,
    pub(crate) op: OP,
    pub(crate) failed: AtomicBool,
    pub(crate) _r: PhantomData<fn() -> R>,
}

impl<R: Try, ID, OP> TryReduce<R, ID, OP> {
    pub(crate) fn new(identity: ID, op: OP) -> Self {
        TryReduce {
            identity,
            op,
            failed: AtomicBool::new(false),
            _r: PhantomData,
        }
    }
}

impl<R, ID, OP> Kernel<R> for TryReduce<R, ID, OP>
where
    R: Try + Send,
    ID: Fn() -> R::Output + Sync,
    OP: Fn(R::Output, R::Output) -> R + Sync,
{
    type Acc = ControlFlow<R::Residual, R::Output>;
    type Output = R;
    fn start(&self) -> Self::Acc {
        ControlFlow::Continue((self.identity)())
    }
    fn fold<I: Iterator<Item = R>>(&self, acc: Self::Acc, mut items: I) -> Self::Acc {
        let ControlFlow::Continue(acc) = acc else {
            return acc;
        };
        let out = items.try_fold(acc, |a, x| {
            let x = x.branch()?;
            (self.op)(a, x).branch()
        });
        if out.is_break() {
            self.failed.store(true, Relaxed);
        }
        out
    }
    fn finish(&self, acc: Self::Acc) -> R {
        match acc {
            ControlFlow::Continue(t) => R::from_output(t),
            ControlFlow::Break(r) => R::from_residual(r),
        }
    }
    fn combine(&self, left: R, right: R) -> R {
        match (left.branch(), right.branch()) {
            (ControlFlow::Continue(l), ControlFlow::Continue(r)) => (self.op)(l, r),
            (ControlFlow::Break(r), _) | (_, ControlFlow::Break(r)) => R::from_residual(r),
        }
    }
    fn done(&self) -> bool {
        self.failed.load(Relaxed)
    }
    const SEARCH: bool = true;
}

/// `find_any`, `any`, `all`: any piece's find ends the loop.
pub(crate) struct FindAny<P> {
    pub(crate) pred: P,
    pub(crate) found: AtomicBool,
}

impl<P> FindAny<P> {
    pub(crate) fn new(pred: P) -> Self {
        FindAny {
            pred,
            found: AtomicBool::new(false),
        }
    }
}

impl<T: Send, P: Fn(&T) -> bool + Sync> Kernel<T> for FindAny<P> {
    type Acc = Option<T>;
    type Output = Option<T>;
    fn start(&self) -> Option<T> {
        None
    }
    fn fold<I: Iterator<Item = T>>(&self, acc: Option<T>, mut items: I) -> Option<T> {
        if acc.is_some() {
            return acc;
        }
        let found = items.find(&self.pred);
        if found.is_some() {
            self.found.store(true, Relaxed);
        }
        found
    }
    fn finish(&self, acc: Option<T>) -> Option<T> {
        acc
    }
    fn combine(&self, left: Option<T>, right: Option<T>) -> Option<T> {
        left.or(right)
    }
    fn done(&self) -> bool {
        self.found.load(Relaxed)
    }
    const SEARCH: bool = true;
    fn full(&self, acc: &Option<T>) -> bool {
        acc.is_some()
    }
    fn output_full(&self, out: &Option<T>) -> bool {
        out.is_some()
    }
}

/// `find_first` and `find_last`: a piece folded from its start stops at its first find;
/// `find_last`'s pieces are folded from their end where they can be, and stop at their
/// last find. Pieces combine by index.
pub(crate) struct FindEnd<P, const LAST: bool>(pub(crate) P);

impl<T: Send, P: Fn(&T) -> bool + Sync, const LAST: bool> Kernel<T> for FindEnd<P, LAST> {
    type Acc = Option<T>;
    type Output = Option<T>;
    fn start(&self) -> Option<T> {
        None
    }
    fn fold<I: Iterator<Item = T>>(&self, acc: Option<T>, mut items: I) -> Option<T> {
        if LAST {
            items.filter(|x| (self.0)(x)).last().or(acc)
        } else if acc.is_some() {
            acc
        } else {
            items.find(&self.0)
        }
    }
    fn finish(&self, acc: Option<T>) -> Option<T> {
        acc
    }
    fn combine(&self, left: Option<T>, right: Option<T>) -> Option<T> {
        if LAST {
            right.or(left)
        } else {
            left.or(right)
        }
    }
    const FROM_BACK: bool = LAST;
    const SEARCH: bool = true;
    fn full(&self, acc: &Option<T>) -> bool {
        !LAST && acc.is_some()
    }
    fn output_full(&self, out: &Option<T>) -> bool {
        out.is_some()
    }
}

/// `count`.
pub(crate) struct Count;

impl<T> Kernel<T> for Count {
    type Acc = usize;
    type Output = usize;
    fn start(&self) -> usize {
        0
    }
    fn fold<I: Iterator<Item = T>>(&self, acc: usize, items: I) -> usize {
        acc + items.count()
    }
    fn finish(&self, acc: usize) -> usize {
        acc
    }
    fn combine(&self, left: usize, right: usize) -> usize {
        left + right
    }
}

/// `collect` and friends: each piece fills a `Vec`; pieces are kept in index order and
/// joined once at the end.
pub(crate) struct VecList;

/// The pieces of a collect, in index order.
pub(crate) type Pieces<T> = Vec<Vec<T>>;

impl<T: Send> Kernel<T> for VecList {
    type Acc = Vec<T>;
    type Output = Pieces<T>;
    fn start(&self) -> Vec<T> {
        Vec::new()
    }
    fn fold<I: Iterator<Item = T>>(&self, mut acc: Vec<T>, items: I) -> Vec<T> {
        acc.extend(items);
        acc
    }
    fn finish(&self, acc: Vec<T>) -> Pieces<T> {
        if acc.is_empty() {
            Vec::new()
        } else {
            vec![acc]
        }
    }
    fn combine(&self, mut left: Pieces<T>, mut right: Pieces<T>) -> Pieces<T> {
        // Short pieces (a nested loop's, in a `flat_map`) join their left neighbour, so
        // that many small nested loops do not leave as many small `Vec`s.
        if let ([.., l], [r]) = (&mut left[..], &mut right[..]) {
            if r.len() <= SHORT_PIECE {
                l.append(r);
                return left;
            }
        }
        if left.is_empty() {
            return right;
        }
        left.extend(right);
        left
    }
}

/// A piece of a collect this short is copied into its left neighbour.
const SHORT_PIECE: usize = 256;

/// Joins the pieces of a collect into one `Vec`.
pub(crate) fn concat<T>(pieces: Pieces<T>) -> Vec<T> {
    let total: usize = pieces.iter().map(Vec::len).sum();
    let mut pieces = pieces.into_iter();
    let mut out = pieces.next().unwrap_or_default();
    out.reserve(total - out.len());
    pieces.for_each(|mut p| out.append(&mut p));
    out
}

/// `unzip`, `partition` and `partition_map`: each piece fills a `Vec` per side; the
/// pieces of each side are kept in index order.
pub(crate) struct Sides;

impl<L: Send, R: Send> Kernel<Either<L, R>> for Sides {
    type Acc = (Vec<L>, Vec<R>);
    type Output = (Pieces<L>, Pieces<R>);
    fn start(&self) -> Self::Acc {
        (Vec::new(), Vec::new())
    }
    fn fold<I: Iterator<Item = Either<L, R>>>(
        &self,
        (mut l, mut r): Self::Acc,
        items: I,
    ) -> Self::Acc {
        items.for_each(|x| match x {
            Either::Left(x) => l.push(x),
            Either::Right(x) => r.push(x),
        });
        (l, r)
    }
    fn finish(&self, (l, r): Self::Acc) -> Self::Output {
        (VecList.finish(l), VecList.finish(r))
    }
    fn combine(&self, (l1, r1): Self::Output, (l2, r2): Self::Output) -> Self::Output {
        (VecList.combine(l1, l2), VecList.combine(r1, r2))
    }
}

/// `unzip`: each piece fills a `Vec` per half of the pairs.
pub(crate) struct Halves;

impl<A: Send, B: Send> Kernel<(A, B)> for Halves {
    type Acc = (Vec<A>, Vec<B>);
    type Output = (Pieces<A>, Pieces<B>);
    fn start(&self) -> Self::Acc {
        (Vec::new(), Vec::new())
    }
    fn fold<I: Iterator<Item = (A, B)>>(&self, (mut a, mut b): Self::Acc, items: I) -> Self::Acc {
        items.for_each(|(x, y)| {
            a.push(x);
            b.push(y);
        });
        (a, b)
    }
    fn finish(&self, (a, b): Self::Acc) -> Self::Output {
        (VecList.finish(a), VecList.finish(b))
    }
    fn combine(&self, (a1, b1): Self::Output, (a2, b2): Self::Output) -> Self::Output {
        (VecList.combine(a1, a2), VecList.combine(b1, b2))
    }
}

/// `try_reduce_with`: `None` for an empty piece; the first failure ends the loop.
pub(crate) struct TryReduceWith<R, OP> {
    pub(crate) op: OP,
    pub(crate) failed: AtomicBool,
    pub(crate) _r: PhantomData<fn() -> R>,
}

impl<R, OP> Kernel<R> for TryReduceWith<R, OP>
where
    R: Try + Send,
    OP: Fn(R::Output, R::Output) -> R + Sync,
{
    type Acc = Option<ControlFlow<R::Residual, R::Output>>;
    type Output = Option<R>;
    fn start(&self) -> Self::Acc {
        None
    }
    fn fold<I: Iterator<Item = R>>(&self, acc: Self::Acc, mut items: I) -> Self::Acc {
        let first = match acc {
            Some(ControlFlow::Continue(a)) => a,
            Some(stop) => return Some(stop),
            None => match items.next()?.branch() {
                ControlFlow::Continue(a) => a,
                stop => return self.fail(stop),
            },
        };
        let out = items.try_fold(first, |a, x| (self.op)(a, x.branch()?).branch());
        if out.is_break() {
            return self.fail(out);
        }
        Some(out)
    }
    fn finish(&self, acc: Self::Acc) -> Option<R> {
        Some(match acc? {
            ControlFlow::Continue(t) => R::from_output(t),
            ControlFlow::Break(r) => R::from_residual(r),
        })
    }
    fn combine(&self, left: Option<R>, right: Option<R>) -> Option<R> {
        let (l, r) = match (left, right) {
            (Some(l), Some(r)) => (l, r),
            (l, r) => return l.or(r),
        };
        Some(match (l.branch(), r.branch()) {
            (ControlFlow::Continue(l), ControlFlow::Continue(r)) => (self.op)(l, r),
            (ControlFlow::Break(r), _) | (_, ControlFlow::Break(r)) => R::from_residual(r),
        })
    }
    fn done(&self) -> bool {
        self.failed.load(Relaxed)
    }
    const SEARCH: bool = true;
}

impl<R: Try, OP> TryReduceWith<R, OP> {
    fn fail<T>(&self, stop: ControlFlow<R::Residual, T>) -> Option<ControlFlow<R::Residual, T>> {
        self.failed.store(true, Relaxed);
        Some(stop)
    }
}

/// Extends two collections with the two sides of a loop's pieces.
pub(crate) fn extend_both<A, B, L, R>((l, r): (Pieces<L>, Pieces<R>)) -> (A, B)
where
    A: Default + ParallelExtend<L>,
    B: Default + ParallelExtend<R>,
    L: Send,
    R: Send,
{
    let (mut a, mut b) = (A::default(), B::default());
    a.par_extend(concat(l));
    b.par_extend(concat(r));
    (a, b)
}

/// Folds the next `n` items of `items` into `acc`. A kernel may stop early; the rest of
/// the `n` is passed over, so that a block ends where the driver counted it to.
pub(crate) fn fold_exactly<I, K>(items: &mut I, n: usize, kernel: &K, acc: K::Acc) -> K::Acc
where
    I: Iterator,
    K: Kernel<I::Item>,
{
    let mut block = items.by_ref().take(n);
    let acc = kernel.fold(acc, &mut block);
    block.for_each(drop);
    acc
}
