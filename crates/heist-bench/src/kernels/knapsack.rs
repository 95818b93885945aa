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

struct KnapsackRun {
    /// By value per weight, best first.
    items: Vec<Item>,
    capacity: u64,
    best: AtomicU64,
}

impl KnapsackRun {
    /// `n` items with weights in 1..=1000 and values of weight + 100 (Pisinger's strongly
    /// correlated instances, on which the bound is weak); capacity half the total weight.
    /// Also returns the best value, by dynamic programming.
    fn seeded(n: usize) -> (Self, u64) {
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
        let expected = best_by_dp(&items, capacity);
        let run = KnapsackRun {
            items,
            capacity,
            best: AtomicU64::new(0),
        };
        (run, expected)
    }

    /// Whether the subtree at item `i` with `cap` left and `value` so far may beat the
    /// best value; at a leaf, records `value`.
    #[inline]
    fn worth(&self, i: usize, cap: u64, value: u64) -> bool {
        let Some(it) = self.items.get(i) else {
            self.best.fetch_max(value, Relaxed);
            return false;
        };
        let bound = value + (cap * it.value).div_ceil(it.weight);
        bound > self.best.load(Relaxed)
    }

    fn search<F: Fork>(&self, f: F, i: usize, cap: u64, value: u64) -> u64 {
        if !self.worth(i, cap, value) {
            return value;
        }
        let it = self.items[i];
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

/// The best value by dynamic programming over capacities.
fn best_by_dp(items: &[Item], capacity: u64) -> u64 {
    let mut best = vec![0u64; capacity as usize + 1];
    for it in items {
        let w = it.weight as usize;
        for c in (w..best.len()).rev() {
            best[c] = best[c].max(best[c - w] + it.value);
        }
    }
    best[capacity as usize]
}

impl Reduce for KnapsackRun {
    /// The next item, the capacity left and the value so far.
    type Task = (usize, u64, u64);
    type Out = u64;

    fn root(&self) -> (usize, u64, u64) {
        (0, self.capacity, 0)
    }

    fn identity(&self) -> u64 {
        0
    }

    fn op(&self, a: u64, b: u64) -> u64 {
        a.max(b)
    }

    fn expand(
        &self,
        (mut i, mut cap, mut value): (usize, u64, u64),
        push: &mut impl FnMut((usize, u64, u64)),
    ) -> u64 {
        while self.worth(i, cap, value) {
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

    fn join<F: Fork>(&self, f: F) -> u64 {
        self.search(f, 0, self.capacity, 0)
    }

    fn reset(&self) {
        self.best.store(0, Relaxed);
    }

    fn describe(&self) -> String {
        format!("knapsack of {} items: best value", self.items.len())
    }
}
