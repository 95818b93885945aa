//! The MPI calls heist-mpi makes, on rsmpi's raw layer (`mpi::ffi`): a private
//! communicator, non-blocking sends that own their buffers, matched probes, and the
//! non-blocking all-reduce and broadcast that carry the termination waves and the result
//! (thesis §3.1.2 sketches channels as `MPI_Isend` and `MPI_Iprobe`).
//!
//! rsmpi's safe requests borrow their buffers for a scope; a steal request or a batch of
//! tasks outlives any scope here (it is sent at one task boundary and completed at a
//! later one), so the buffers are owned next to their `MPI_Request`s instead. Nothing
//! here blocks in MPI: every wait tests and sleeps ([`Snooze`]), so that ranks beyond the
//! cores leave them to the ranks that work.

use mpi::ffi;
use std::os::raw::{c_int, c_void};
use std::ptr;
use std::time::Duration;

/// Checks an MPI return code. MPI's default handler aborts the job on an error before
/// one is returned, so a failure here means a handler was changed under us.
fn check(code: c_int, what: &str) {
    assert!(code == 0, "heist-mpi: {what} failed with MPI error {code}");
}

/// A communicator of heist-mpi's own, duplicated from the caller's for one reduction, so
/// that its messages never match the caller's receives nor another reduction's.
pub(crate) struct Comm {
    raw: ffi::MPI_Comm,
    pub(crate) rank: i32,
    pub(crate) size: i32,
}

// SAFETY: an `MPI_Comm` is a handle that any thread may use when MPI runs at
// `MPI_THREAD_SERIALIZED` or above, which `Reducer::run` checks before it makes one, as
// long as calls are not concurrent: every use goes through the rank's manager lock.
unsafe impl Send for Comm {}

impl Comm {
    /// Duplicates `parent` (collective over `parent`).
    pub(crate) fn dup(parent: ffi::MPI_Comm) -> Comm {
        let mut raw = parent;
        let (mut rank, mut size) = (0, 0);
        // SAFETY: `parent` is a valid communicator of the caller's; the out-pointers are
        // live locals.
        unsafe {
            check(ffi::MPI_Comm_dup(parent, &mut raw), "MPI_Comm_dup");
            check(ffi::MPI_Comm_rank(raw, &mut rank), "MPI_Comm_rank");
            check(ffi::MPI_Comm_size(raw, &mut size), "MPI_Comm_size");
        }
        Comm { raw, rank, size }
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // SAFETY: `raw` came from `MPI_Comm_dup` and is freed once; pending operations on
        // it, if any, complete normally (MPI 4.0 §7.4.3).
        unsafe { ffi::MPI_Comm_free(&mut self.raw) };
    }
}

/// A received message.
pub(crate) struct Msg {
    pub(crate) source: i32,
    pub(crate) tag: i32,
    pub(crate) bytes: Vec<u8>,
}

/// Receives a message from `source` with `tag` (or any, with `None`) if one has arrived.
pub(crate) fn try_recv(comm: &Comm, from: Option<(i32, i32)>) -> Option<Msg> {
    // SAFETY: the constants are initialised by MPI_Init; `message` and `status` are
    // written by a successful `MPI_Improbe` before they are read, and `MPI_Mrecv` writes
    // at most `count` bytes into a buffer of that length.
    unsafe {
        let (source, tag) = from.unwrap_or((ffi::RSMPI_ANY_SOURCE, ffi::RSMPI_ANY_TAG));
        let mut flag: c_int = 0;
        let mut message = ffi::RSMPI_MESSAGE_NULL;
        let mut status = std::mem::zeroed::<ffi::MPI_Status>();
        check(
            ffi::MPI_Improbe(source, tag, comm.raw, &mut flag, &mut message, &mut status),
            "MPI_Improbe",
        );
        if flag == 0 {
            return None;
        }
        let mut count: c_int = 0;
        check(
            ffi::MPI_Get_count(&status, ffi::RSMPI_UINT8_T, &mut count),
            "MPI_Get_count",
        );
        let mut bytes = vec![0u8; count as usize];
        check(
            ffi::MPI_Mrecv(
                bytes.as_mut_ptr().cast::<c_void>(),
                count,
                ffi::RSMPI_UINT8_T,
                &mut message,
                ffi::RSMPI_STATUS_IGNORE,
            ),
            "MPI_Mrecv",
        );
        Some(Msg {
            source: status.MPI_SOURCE,
            tag: status.MPI_TAG,
            bytes,
        })
    }
}

/// Whether `req` completed (it is then `MPI_REQUEST_NULL`).
fn test(req: &mut ffi::MPI_Request) -> bool {
    let mut flag: c_int = 0;
    // SAFETY: `req` is an active request or MPI_REQUEST_NULL (for which MPI_Test reports
    // completion at once).
    unsafe {
        check(
            ffi::MPI_Test(req, &mut flag, ffi::RSMPI_STATUS_IGNORE),
            "MPI_Test",
        );
    }
    flag != 0
}

/// Waits for `req` by testing and snoozing, never by blocking inside MPI (Open MPI's
/// blocking calls poll at full speed).
fn wait(req: &mut ffi::MPI_Request) {
    let mut snooze = Snooze::default();
    while !test(req) {
        snooze.snooze();
    }
}

/// Sends in flight, each with the buffer it reads.
#[derive(Default)]
pub(crate) struct Outbox {
    pending: Vec<(ffi::MPI_Request, Vec<u8>)>,
}

// SAFETY: requests are handles, and the buffers are plain bytes; see `Comm`'s `Send`.
unsafe impl Send for Outbox {}

impl Outbox {
    /// Starts sending `bytes` to `dest` with `tag`; the bytes stay here until sent.
    pub(crate) fn send(&mut self, comm: &Comm, dest: i32, tag: i32, bytes: Vec<u8>) {
        let count = c_int::try_from(bytes.len()).expect("heist-mpi: message over 2 GiB");
        // SAFETY: the constants are initialised; `bytes`'s heap buffer does not move when
        // the `Vec` is moved into `pending`, and it is kept until the request completed
        // (`progress`, `flush`) or is leaked with it (`drop`).
        unsafe {
            let mut req = ffi::RSMPI_REQUEST_NULL;
            check(
                ffi::MPI_Isend(
                    bytes.as_ptr().cast::<c_void>(),
                    count,
                    ffi::RSMPI_UINT8_T,
                    dest,
                    tag,
                    comm.raw,
                    &mut req,
                ),
                "MPI_Isend",
            );
            self.pending.push((req, bytes));
        }
    }

    /// Frees the buffers of completed sends.
    pub(crate) fn progress(&mut self) {
        self.pending.retain_mut(|(req, _)| !test(req));
    }

    /// Waits until every send completed.
    pub(crate) fn flush(&mut self) {
        for (req, _) in self.pending.iter_mut() {
            wait(req);
        }
        self.pending.clear();
    }
}

impl Drop for Outbox {
    /// Only reached with sends in flight when a reduction unwinds: the requests are freed
    /// (their sends still complete) and their buffers leaked, since MPI may still read them.
    fn drop(&mut self) {
        for (mut req, bytes) in self.pending.drain(..) {
            // SAFETY: `req` is an active send request of ours; freeing it lets the send
            // complete without us, and `bytes` is leaked so that it stays readable.
            unsafe { ffi::MPI_Request_free(&mut req) };
            std::mem::forget(bytes);
        }
    }
}

/// Width of a termination wave's vector (see `rank::Counts`).
pub(crate) const WAVE: usize = 4;

/// A non-blocking sum of `WAVE` counters over all ranks: one termination wave.
pub(crate) struct Wave {
    req: ffi::MPI_Request,
    /// The contribution, then the sum.
    buf: Box<[u64; 2 * WAVE]>,
}

// SAFETY: as `Outbox`.
unsafe impl Send for Wave {}

impl Wave {
    /// Contributes `mine` to the next wave (collective: every rank starts its waves in the
    /// same order).
    pub(crate) fn start(comm: &Comm, mine: [u64; WAVE]) -> Wave {
        let mut buf = Box::new([0u64; 2 * WAVE]);
        buf[..WAVE].copy_from_slice(&mine);
        let mut req = unsafe_request_null();
        // SAFETY: the boxed buffer does not move while the request is active: it is freed
        // only after the request completed (`test`) or leaked with it (`drop`).
        unsafe {
            let p = buf.as_mut_ptr();
            check(
                ffi::MPI_Iallreduce(
                    p.cast::<c_void>(),
                    p.add(WAVE).cast::<c_void>(),
                    WAVE as c_int,
                    ffi::RSMPI_UINT64_T,
                    ffi::RSMPI_SUM,
                    comm.raw,
                    &mut req,
                ),
                "MPI_Iallreduce",
            );
        }
        Wave { req, buf }
    }

    /// The sums, once every rank has contributed.
    pub(crate) fn test(&mut self) -> Option<[u64; WAVE]> {
        if self.req == unsafe_request_null() || test(&mut self.req) {
            let mut sum = [0; WAVE];
            sum.copy_from_slice(&self.buf[WAVE..]);
            Some(sum)
        } else {
            None
        }
    }
}

impl Drop for Wave {
    fn drop(&mut self) {
        if self.req != unsafe_request_null() {
            // A collective cannot be cancelled: leak its buffer, which MPI may still write
            // (only when a reduction unwinds).
            std::mem::forget(std::mem::replace(&mut self.buf, Box::new([0; 2 * WAVE])));
        }
    }
}

fn unsafe_request_null() -> ffi::MPI_Request {
    // SAFETY: a constant initialised by the MPI library.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

/// Sends `bytes` from `root` to every rank (collective); `bytes` is ignored elsewhere and
/// replaced by the root's.
pub(crate) fn broadcast(comm: &Comm, root: i32, bytes: &mut Vec<u8>) {
    let mut len = bytes.len() as u64;
    // SAFETY: each buffer lives on this frame until its request completed (`wait`), and
    // has the length every rank passes (the length is broadcast first).
    unsafe {
        let mut req = ffi::RSMPI_REQUEST_NULL;
        check(
            ffi::MPI_Ibcast(
                ptr::addr_of_mut!(len).cast::<c_void>(),
                1,
                ffi::RSMPI_UINT64_T,
                root,
                comm.raw,
                &mut req,
            ),
            "MPI_Ibcast",
        );
        wait(&mut req);
        bytes.resize(len as usize, 0);
        let count = c_int::try_from(len).expect("heist-mpi: result over 2 GiB");
        check(
            ffi::MPI_Ibcast(
                bytes.as_mut_ptr().cast::<c_void>(),
                count,
                ffi::RSMPI_UINT8_T,
                root,
                comm.raw,
                &mut req,
            ),
            "MPI_Ibcast",
        );
        wait(&mut req);
    }
}

/// Receives the next message from `source` with `tag`, snoozing while there is none.
pub(crate) fn recv_from(comm: &Comm, source: i32, tag: i32) -> Msg {
    let mut snooze = Snooze::default();
    loop {
        if let Some(m) = try_recv(comm, Some((source, tag))) {
            return m;
        }
        snooze.snooze();
    }
}

/// An idle rank's back-off: a few yields, then sleeps that double from 10 µs to 200 µs,
/// so that an idle rank takes no core from a rank that works (ranks beyond the cores).
#[derive(Default)]
pub(crate) struct Snooze {
    rounds: u32,
}

impl Snooze {
    const YIELDS: u32 = 8;

    pub(crate) fn snooze(&mut self) {
        if self.rounds < Self::YIELDS {
            std::thread::yield_now();
        } else {
            let step = (self.rounds - Self::YIELDS).min(5);
            std::thread::sleep(Duration::from_micros((10u64 << step).min(200)));
        }
        self.rounds = self.rounds.saturating_add(1);
    }

    /// Something happened: the next wait starts short again.
    pub(crate) fn reset(&mut self) {
        self.rounds = 0;
    }
}
