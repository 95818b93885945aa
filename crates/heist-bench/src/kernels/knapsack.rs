//! knapsack: 0/1 knapsack by branch and bound (BOTS knapsack, Blaze-Tasks §5): items
//! sorted by value per weight, a node either takes the next item (if it fits) or skips
//! it, and a subtree is cut when its bound, the value so far plus the remaining capacity
//! times the best remaining ratio, cannot beat the best value found so far (one shared
//! atomic). A task pushes the skip branch and goes on with the take branch. The instance
//! is seeded; the result is checked against dynamic programming over the capacity.

use crate::bench::{Bench, Instance, Sizes};
use crate::fork::Fork;
use crate::reduction::{self, Checked, Reduce};
use crate::runtime::RuntimeKind;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The knapsack kernel of the catalogue.
pub struct Knapsack;

impl Bench for Knapsack {
    fn name(&self) -> &'static str {
        "knapsack"
    }

    fn about(&self) -> &'static str {
        "0/1 knapsack branch and bound on a seeded instance (BOTS), shared best bound"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "30",
            small: "45",
            quick: "57",
            full: "60",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        reduction::supports(kind, false)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let n = crate::bench::count("knapsack", size, "items", 1, 1000)? as usize;
        let (run, expected) = KnapsackRun::seeded(n);
        Ok(Checked::boxed(run, expected))
    }
}

/// An item: weight and value.
#[derive(Clone, Copy, Debug)]
struct Item {
    weight: u64,
    value: u64,
}

/// A task: the next item, the capacity left and the value so far.
pub type Task = (usize, u64, u64);

/// A seeded instance (heist-mpi's driver solves the same ones).
pub struct Problem {
    /// By value per weight, best first.
    items: Vec<Item>,
    /// What the knapsack holds.
    pub capacity: u64,
}

impl Problem {
    /// `n` items with weights in 1..=1000 and values of weight + 100 (Pisinger's strongly
    /// correlated instances, on which the bound is weak); capacity half the total weight.
    pub fn seeded(n: usize) -> Problem {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ n as u64;
        let mut next = move |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let mut items: Vec<Item> = (0..n)
            .map(|_| {
                let weight = 1 + next(1000);
                Item {
                    weight,
                    value: weight + 100,
                }
            })
            .collect();
        // Ratio order, compared exactly: v1/w1 > v2/w2 ⇔ v1·w2 > v2·w1.
        items.sort_by(|a, b| (b.value * a.weight).cmp(&(a.value * b.weight)));
        let capacity = items.iter().map(|i| i.weight).sum::<u64>() / 2;
        Problem { items, capacity }
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The first task: no item decided, the whole capacity left.
    pub fn root(&self) -> Task {
        (0, self.capacity, 0)
    }

    /// The best value by dynamic programming over capacities.
    pub fn best_by_dp(&self) -> u64 {
        let mut best = vec![0u64; self.capacity as usize + 1];
        for it in &self.items {
            let w = it.weight as usize;
            for c in (w..best.len()).rev() {
                best[c] = best[c].max(best[c - w] + it.value);
            }
        }
        best[self.capacity as usize]
    }

    /// Whether the subtree at item `i` with `cap` left and `value` so far may beat the
    /// best value found so far (`beats(bound)` says whether `bound` does); at a leaf,
    /// hands `value` to `leaf`, which records it.
    #[inline]
    pub fn worth(
        &self,
        i: usize,
        cap: u64,
        value: u64,
        beats: impl Fn(u64) -> bool,
        leaf: impl Fn(u64),
    ) -> bool {
        let Some(it) = self.items.get(i) else {
            leaf(value);
            return false;
        };
        let bound = value + (cap * it.value).div_ceil(it.weight);
        beats(bound)
    }

    /// The task body: pushes the skip branch and goes on with the take branch while the
    /// subtree may beat the best (see [`Problem::worth`]); returns the value reached.
    #[inline]
    pub fn expand(
        &self,
        (mut i, mut cap, mut value): Task,
        beats: impl Fn(u64) -> bool,
        leaf: impl Fn(u64),
        push: &mut impl FnMut(Task),
    ) -> u64 {
        while self.worth(i, cap, value, &beats, &leaf) {
            let it = self.items[i];
            if it.weight <= cap {
                push((i + 1, cap, value));
                cap -= it.weight;
                value += it.value;
            }
            i += 1;
        }
        value
    }
}

/// A run: the instance and the best value found so far, the bound every task reads.
struct KnapsackRun {
    problem: Problem,
    best: AtomicU64,
}

impl KnapsackRun {
    /// The run of [`Problem::seeded`]`(n)`, and its best value by dynamic programming.
    fn seeded(n: usize) -> (Self, u64) {
        let problem = Problem::seeded(n);
        let expected = problem.best_by_dp();
        let run = KnapsackRun {
            problem,
            best: AtomicU64::new(0),
        };
        (run, expected)
    }

    /// Whether a bound beats the best value so far.
    #[inline]
    fn beats(&self, bound: u64) -> bool {
        bound > self.best.load(Relaxed)
    }

    /// Records a leaf's value.
    #[inline]
    fn leaf(&self, value: u64) {
        self.best.fetch_max(value, Relaxed);
    }

    fn search<F: Fork>(&self, f: F, i: usize, cap: u64, value: u64) -> u64 {
        let p = &self.problem;
        if !p.worth(i, cap, value, |b| self.beats(b), |v| self.leaf(v)) {
            return value;
        }
        let it = p.items[i];
        if it.weight > cap {
            return self.search(f, i + 1, cap, value);
        }
        let (a, b) = f.join(
            move |f| self.search(f, i + 1, cap - it.weight, value + it.value),
            move |f| self.search(f, i + 1, cap, value),
        );
        a.max(b)
    }
}

impl Reduce for KnapsackRun {
    type Task = Task;
    type Out = u64;

    fn root(&self) -> Task {
        self.problem.root()
    }

    fn identity(&self) -> u64 {
        0
    }

    fn op(&self, a: u64, b: u64) -> u64 {
        a.max(b)
    }

    fn expand(&self, t: Task, push: &mut impl FnMut(Task)) -> u64 {
        self.problem
            .expand(t, |b| self.beats(b), |v| self.leaf(v), push)
    }

    fn join<F: Fork>(&self, f: F) -> u64 {
        self.search(f, 0, self.problem.capacity, 0)
    }

    fn reset(&self) {
        self.best.store(0, Relaxed);
    }

    fn describe(&self) -> String {
        format!("knapsack of {} items: best value", self.problem.len())
    }
}
