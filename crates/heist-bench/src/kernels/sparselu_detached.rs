//! sparselu-detached: [`super::sparselu`] written as the thesis writes LU, with detached
//! tasks and a task barrier after each phase (BENCHMARKS.md "Fork-join, recursive";
//! Prell's thesis §2.8 LU, Table 2.1 "two task barriers per iteration", and §4.1–4.2 task
//! barriers, after the BOTS OpenMP `sparselu`, single-producer version).
//!
//! The root task is the single producer. For each `kk` it factors the diagonal block
//! with `lu0`, spawns a detached `fwd` task for every block right of it and a `bdiv`
//! task for every block below it, waits at the barrier, then allocates each fill-in
//! block and spawns a `bmod` task for every `(ii, jj)` whose row and column partners
//! exist, and waits at the barrier again. Detached tasks and barriers are heist's own
//! constructs, so the kernel runs on `seq` (spawn = call, barrier = nothing), `heist-lace`
//! and `heist-relay` only.
//!
//! Detached tasks are `'static`, so the matrix is shared through an [`Arc`] whose blocks
//! sit in [`UnsafeCell`]s; the tasks of a phase write disjoint blocks and read only
//! blocks that nobody writes in that phase (see [`Shared`]). Each block element sees the
//! same operations in the same order as in the sequential `sparselu`, whose result,
//! computed once at setup, is the reference (same structure, values within 1e-9).

use super::sparselu::{self, bdiv, bmod, compare, fwd, lu0, Block, Matrix};
use crate::bench::{verify, Bench, Instance, Sizes};
use crate::fork::SEQ;
use crate::runtime::{Runtime, RuntimeKind};
use crate::spawn::{self, exec_heist_only, Detach, SeqDetach};
use std::cell::UnsafeCell;
use std::sync::Arc;

/// The sparselu-detached kernel of the catalogue.
pub struct SparseLuDetached;

impl Bench for SparseLuDetached {
    fn name(&self) -> &'static str {
        "sparselu-detached"
    }

    fn about(&self) -> &'static str {
        "sparselu with detached fwd/bdiv/bmod tasks and a barrier per phase (size \"NB,BS\")"
    }

    fn sizes(&self) -> Sizes {
        sparselu::SparseLu.sizes()
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        spawn::heist_only(kind)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let (nb, bs) = sparselu::parse_nb_bs(size)?;
        Ok(Box::new(SparseLuDetachedInstance::new(nb, bs)))
    }
}

/// A [`Matrix`] shared by the producer and its detached tasks.
///
/// Access discipline, which every `unsafe` accessor call below relies on: between two
/// barriers, (1) each block written in the phase (the `fwd`/`bdiv` targets, or the
/// `bmod` target `(ii, jj)`) is touched by the producer only until it spawns the one
/// task that writes it, and then only by that task; (2) every other block accessed in
/// the phase (the diagonal block, or the `bmod` operands `(ii, kk)` and `(kk, jj)`) is
/// only read, by anyone; (3) outside phases (after a barrier, before the next spawn) no
/// task runs, and the producer alone may do anything.
pub struct Shared {
    nb: usize,
    bs: usize,
    blocks: Box<[UnsafeCell<Option<Block>>]>,
}

// SAFETY: the blocks are only reached through the accessors below, whose callers follow
// the discipline of the type's docs, so no block is written while anyone else reads or
// writes it; the data itself (`f64`s in boxes) is `Send`.
unsafe impl Sync for Shared {}

impl Shared {
    /// Shares `m`.
    pub fn new(m: Matrix) -> Shared {
        Shared {
            nb: m.nb,
            bs: m.bs,
            blocks: m.blocks.into_iter().map(UnsafeCell::new).collect(),
        }
    }

    /// The matrix back, once no task holds it.
    pub fn into_matrix(self) -> Matrix {
        Matrix {
            nb: self.nb,
            bs: self.bs,
            blocks: self
                .blocks
                .into_vec()
                .into_iter()
                .map(UnsafeCell::into_inner)
                .collect(),
        }
    }

    fn cell(&self, ii: usize, jj: usize) -> &UnsafeCell<Option<Block>> {
        &self.blocks[ii * self.nb + jj]
    }

    /// Whether block `(ii, jj)` is allocated.
    ///
    /// # Safety
    /// Nobody may be writing the block's slot (allocating it) meanwhile.
    unsafe fn exists(&self, ii: usize, jj: usize) -> bool {
        // SAFETY: the caller's contract; only the slot is read, not the block's values.
        unsafe { (*self.cell(ii, jj).get()).is_some() }
    }

    /// Block `(ii, jj)`, to read.
    ///
    /// # Safety
    /// Nobody may write block `(ii, jj)` while the result lives.
    unsafe fn block(&self, ii: usize, jj: usize) -> &[f64] {
        // SAFETY: the caller's contract.
        unsafe { (*self.cell(ii, jj).get()).as_deref() }.expect("block is allocated")
    }

    /// Block `(ii, jj)`, to write, allocated (zeroed) first if it is not.
    ///
    /// # Safety
    /// Nobody else may read or write block `(ii, jj)` while the result lives.
    #[allow(clippy::mut_from_ref)] // the exclusivity is the caller's contract
    unsafe fn block_mut(&self, ii: usize, jj: usize) -> &mut [f64] {
        let bs = self.bs;
        // SAFETY: the caller's contract.
        let slot = unsafe { &mut *self.cell(ii, jj).get() };
        slot.get_or_insert_with(|| vec![0.0; bs * bs].into_boxed_slice())
    }
}

/// Factors the shared matrix in place, spawning its tasks through `d`.
pub fn sparselu_detached<D: Detach>(d: &D, m: &Arc<Shared>) {
    let (nb, bs) = (m.nb, m.bs);
    for kk in 0..nb {
        // SAFETY: outside phases (rule 3): every task has finished at the last barrier.
        lu0(unsafe { m.block_mut(kk, kk) }, bs);
        for jj in kk + 1..nb {
            // SAFETY: rule 1: block (kk, jj) is this phase's `fwd` target, not yet spawned.
            if unsafe { m.exists(kk, jj) } {
                let m = Arc::clone(m);
                d.spawn(move |_| {
                    // SAFETY: rule 2 for the diagonal block, rule 1 for (kk, jj), which
                    // only this task writes.
                    unsafe { fwd(m.block(kk, kk), m.block_mut(kk, jj), bs) }
                });
            }
        }
        for ii in kk + 1..nb {
            // SAFETY: rule 1: block (ii, kk) is this phase's `bdiv` target, not yet spawned.
            if unsafe { m.exists(ii, kk) } {
                let m = Arc::clone(m);
                d.spawn(move |_| {
                    // SAFETY: as for `fwd`, with (ii, kk) the block only this task writes.
                    unsafe { bdiv(m.block(kk, kk), m.block_mut(ii, kk), bs) }
                });
            }
        }
        d.barrier();
        for ii in kk + 1..nb {
            // SAFETY: rule 2: column kk below the diagonal is only read in this phase.
            if !unsafe { m.exists(ii, kk) } {
                continue;
            }
            for jj in kk + 1..nb {
                // SAFETY: rule 2: row kk right of the diagonal is only read in this phase.
                if !unsafe { m.exists(kk, jj) } {
                    continue;
                }
                // Fill-in is allocated by the producer, before the task, as in BOTS.
                // SAFETY: rule 1: (ii, jj) is written by the task spawned next only.
                unsafe { m.block_mut(ii, jj) };
                let m = Arc::clone(m);
                d.spawn(move |_| {
                    // SAFETY: rule 2 for (ii, kk) and (kk, jj), rule 1 for (ii, jj), the
                    // one block this task writes (ii, jj > kk, so it is neither operand).
                    unsafe { bmod(m.block(ii, kk), m.block(kk, jj), m.block_mut(ii, jj), bs) }
                });
            }
        }
        d.barrier();
    }
}

/// One run: the matrix being factored (`None` while shared or after a failed run) and
/// the sequential factors.
struct SparseLuDetachedInstance {
    matrix: Option<Matrix>,
    reference: Matrix,
}

impl SparseLuDetachedInstance {
    fn new(nb: usize, bs: usize) -> Self {
        let mut reference = Matrix::generate(nb, bs);
        sparselu::sparselu(SEQ, &mut reference);
        SparseLuDetachedInstance {
            matrix: Some(Matrix::generate(nb, bs)),
            reference,
        }
    }
}

impl Instance for SparseLuDetachedInstance {
    fn reset(&mut self) {
        self.matrix = Some(Matrix::generate(self.reference.nb, self.reference.bs));
    }

    fn run(&mut self, rt: &Runtime) {
        let m = self.matrix.take().expect("reset before run");
        let shared = Arc::new(Shared::new(m));
        exec_heist_only(
            rt,
            "sparselu-detached",
            || sparselu_detached(&SeqDetach, &shared),
            |w| sparselu_detached(w, &shared),
        );
        let shared = Arc::try_unwrap(shared)
            .unwrap_or_else(|_| panic!("sparselu-detached: a task outlived the last barrier"));
        self.matrix = Some(shared.into_matrix());
    }

    fn verify(&self) -> Result<(), String> {
        verify("sparselu-detached", self.matrix.as_ref(), |m| {
            compare(m, &self.reference)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check_catches;

    #[test]
    fn elision_equals_sparselu_exactly() {
        let mut want = Matrix::generate(7, 3);
        sparselu::sparselu(SEQ, &mut want);
        let shared = Arc::new(Shared::new(Matrix::generate(7, 3)));
        sparselu_detached(&SeqDetach, &shared);
        let got = Arc::try_unwrap(shared).ok().unwrap().into_matrix();
        assert_eq!(got, want);
    }

    #[test]
    fn corrupted_result_fails_verify() {
        let mut inst = SparseLuDetachedInstance::new(10, 10);
        let changed = |i: &mut SparseLuDetachedInstance| {
            i.matrix.as_mut().unwrap().blocks[3 * 10 + 2]
                .as_mut()
                .unwrap()[5] += 1e-6;
        };
        // Block (1, 0), present in the reference.
        let dropped = |i: &mut SparseLuDetachedInstance| {
            i.matrix.as_mut().unwrap().blocks[10] = None;
        };
        let lost = |i: &mut SparseLuDetachedInstance| i.matrix = None;
        check_catches(
            RuntimeKind::HeistRelay,
            &mut inst,
            &[&changed, &dropped, &lost],
        );
    }

    #[test]
    #[should_panic(expected = "sparselu-detached: heist-only constructs do not exist on chili")]
    fn chili_run_is_refused() {
        let rt = Runtime::new(RuntimeKind::Chili, 1).unwrap();
        let mut inst = SparseLuDetachedInstance::new(2, 2);
        inst.run(&rt);
    }
}
