//! Bounded, non-blocking channels (thesis §3.1): an SPSC ring for tasks and an MPSC queue
//! for steal requests. Both are sized by the one-outstanding-request rule, so a send
//! that finds the channel full is a protocol error, not a condition to wait out. The
//! MPSC sending side is lock-free (the thesis used a lock): producers claim a cell by CAS
//! on the tail and publish it through the cell's sequence number.

use crate::core::mem::{try_boxed, NoMemory};
use crate::core::sync::Padded;
use crate::core::sync::{AtomicUsize, RaceCell};
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

/// A single-producer single-consumer ring buffer.
pub(crate) struct Spsc<T> {
    head: Padded<AtomicUsize>,
    tail: Padded<AtomicUsize>,
    buf: Box<[RaceCell<MaybeUninit<T>>]>,
}

// SAFETY: a cell is written by the one producer before it publishes `tail` (release) and
// read by the one consumer after it observes `tail` (acquire), and vice versa for reuse
// through `head`; `T: Send` lets values cross threads.
unsafe impl<T: Send> Sync for Spsc<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for Spsc<T> {}

impl<T: Copy> Spsc<T> {
    /// A channel holding up to `cap` items.
    #[cfg(all(test, loom))]
    pub(crate) fn new(cap: usize) -> Spsc<T> {
        Spsc::try_new(cap).expect("a model's channel fits in memory")
    }

    /// `new`, or the allocation that failed.
    pub(crate) fn try_new(cap: usize) -> Result<Spsc<T>, NoMemory> {
        let cap = cap.max(1).next_power_of_two();
        Ok(Spsc {
            head: Padded(AtomicUsize::new(0)),
            tail: Padded(AtomicUsize::new(0)),
            buf: try_boxed(cap, |_| RaceCell::new(MaybeUninit::uninit()))?,
        })
    }

    /// Sends `v`; false if the channel is full. Only one thread may send at a time, and
    /// successive senders must be ordered by happens-before.
    pub(crate) fn send(&self, v: T) -> bool {
        let tail = self.tail.0.load(Relaxed);
        if tail - self.head.0.load(Acquire) == self.buf.len() {
            return false;
        }
        let cell = &self.buf[tail & (self.buf.len() - 1)];
        // SAFETY: the cell is free (the consumer released it through `head`) and only the
        // producer writes it until `tail` is published below.
        unsafe { cell.with_mut(|p| (*p).write(v)) };
        self.tail.0.store(tail + 1, Release);
        true
    }

    /// Receives the oldest item, if any. Only the owning worker receives.
    pub(crate) fn recv(&self) -> Option<T> {
        let head = self.head.0.load(Relaxed);
        if head == self.tail.0.load(Acquire) {
            return None;
        }
        let cell = &self.buf[head & (self.buf.len() - 1)];
        // SAFETY: the producer initialised this cell before its release store of `tail`,
        // which the acquire load above observed; nobody writes it until `head` moves on.
        let v = unsafe { cell.with_mut(|p| (*p).assume_init()) };
        self.head.0.store(head + 1, Release);
        Some(v)
    }

    /// Whether an item is waiting (a hint for sleepers).
    pub(crate) fn is_empty(&self) -> bool {
        self.head.0.load(Acquire) == self.tail.0.load(Acquire)
    }
}

struct Cell<T> {
    seq: AtomicUsize,
    val: RaceCell<MaybeUninit<T>>,
}

/// A multi-producer single-consumer bounded queue (cells with sequence numbers).
pub(crate) struct Mpsc<T> {
    head: Padded<AtomicUsize>,
    tail: Padded<AtomicUsize>,
    cells: Box<[Cell<T>]>,
}

// SAFETY: a producer owns a cell from its successful tail CAS until its release store of
// the cell's `seq`; the consumer owns it from its acquire load of that `seq` until it
// releases the cell with the next lap's sequence number.
unsafe impl<T: Send> Sync for Mpsc<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for Mpsc<T> {}

impl<T: Copy> Mpsc<T> {
    /// A queue holding up to `cap` items.
    #[cfg(all(test, loom))]
    pub(crate) fn new(cap: usize) -> Mpsc<T> {
        Mpsc::try_new(cap).expect("a model's channel fits in memory")
    }

    /// `new`, or the allocation that failed.
    pub(crate) fn try_new(cap: usize) -> Result<Mpsc<T>, NoMemory> {
        let cap = cap.max(2).next_power_of_two();
        Ok(Mpsc {
            head: Padded(AtomicUsize::new(0)),
            tail: Padded(AtomicUsize::new(0)),
            cells: try_boxed(cap, |i| Cell {
                seq: AtomicUsize::new(i),
                val: RaceCell::new(MaybeUninit::uninit()),
            })?,
        })
    }

    /// Sends `v` from any thread; false if the queue is full.
    pub(crate) fn send(&self, v: T) -> bool {
        let mask = self.cells.len() - 1;
        // Acquire on every read of `tail`: whoever moved it saw the consumer release the
        // cell it points at, and so must we before calling the queue full.
        let mut tail = self.tail.0.load(Acquire);
        loop {
            let cell = &self.cells[tail & mask];
            let seq = cell.seq.load(Acquire);
            if seq == tail {
                match self
                    .tail
                    .0
                    .compare_exchange_weak(tail, tail + 1, AcqRel, Acquire)
                {
                    Ok(_) => {
                        // SAFETY: the CAS gave this producer the cell for this lap; the
                        // consumer reads it only after the release store of `seq` below.
                        unsafe { cell.val.with_mut(|p| (*p).write(v)) };
                        cell.seq.store(tail + 1, Release);
                        return true;
                    }
                    Err(now) => tail = now,
                }
            } else if seq < tail {
                return false;
            } else {
                tail = self.tail.0.load(Acquire);
            }
        }
    }

    /// Receives the oldest item, if any. Only the owning worker receives.
    pub(crate) fn recv(&self) -> Option<T> {
        let head = self.head.0.load(Relaxed);
        let cell = &self.cells[head & (self.cells.len() - 1)];
        if cell.seq.load(Acquire) != head + 1 {
            return None;
        }
        // SAFETY: `seq == head + 1` means a producer wrote the value and published it with
        // release ordering; no producer touches the cell again until we release it.
        let v = unsafe { cell.val.with_mut(|p| (*p).assume_init()) };
        cell.seq.store(head + self.cells.len(), Release);
        self.head.0.store(head + 1, Relaxed);
        Some(v)
    }

    /// Whether an item is waiting (a hint).
    pub(crate) fn is_empty(&self) -> bool {
        let head = self.head.0.load(Relaxed);
        self.cells[head & (self.cells.len() - 1)].seq.load(Acquire) != head + 1
    }
}
