//! The end of a reduction: the ranks' values combined with `op` up a binomial tree and
//! the result broadcast, so that every rank returns the same value or the same error.
//! Results are serde values of any size, which MPI's fixed-size reductions cannot carry,
//! hence a tree of point-to-point messages (log2(P) steps) and one `MPI_Ibcast`.

use crate::manager::Manager;
use crate::raw::{self, Msg};
use crate::{panic_message, wire, Error, ErrorKind};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::panic::{self, AssertUnwindSafe};

/// A rank's part on its way up: its encoded value and bound, or the first failure.
pub(crate) enum Part {
    Ok { bound: i64, bytes: Vec<u8> },
    Err(Error),
}

impl Part {
    fn encode(&self) -> Vec<u8> {
        match self {
            Part::Ok { bound, bytes } => {
                let mut b = vec![0u8];
                b.extend_from_slice(&bound.to_le_bytes());
                b.extend_from_slice(bytes);
                b
            }
            Part::Err(e) => {
                let mut b = vec![1u8];
                b.extend_from_slice(&wire::encode_failure(e));
                b
            }
        }
    }

    fn decode(b: &[u8], from: i32) -> Part {
        let bad = || {
            Part::Err(Error {
                rank: from,
                kind: ErrorKind::Codec,
                message: "malformed partial result".into(),
            })
        };
        match b.first() {
            Some(0) if b.len() >= 9 => Part::Ok {
                bound: i64::from_le_bytes(b[1..9].try_into().expect("eight bytes")),
                bytes: b[9..].to_vec(),
            },
            Some(1) => Part::Err(wire::decode_failure(&b[1..], from)),
            _ => bad(),
        }
    }
}

/// Runs `f` (user code: serde or `op`), turning a panic or an error into this rank's
/// error of kind `kind`.
pub(crate) fn guarded<X>(
    rank: i32,
    kind: ErrorKind,
    f: impl FnOnce() -> Result<X, String>,
) -> Result<X, Error> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(x)) => Ok(x),
        Ok(Err(message)) => Err(Error {
            rank,
            kind,
            message,
        }),
        Err(p) => {
            let message = panic_message(&*p);
            crate::drop_quietly(p);
            Err(Error {
                rank,
                kind: ErrorKind::Panic,
                message,
            })
        }
    }
}

/// Merges a child's part into ours: errors win (the lowest rank's), values are combined
/// with `op`, bounds with `max`.
fn merge<R, O>(rank: i32, mine: Part, theirs: Part, op: &O) -> Part
where
    R: Serialize + DeserializeOwned,
    O: Fn(R, R) -> R,
{
    match (mine, theirs) {
        (Part::Err(a), Part::Err(b)) => Part::Err(if b.rank < a.rank { b } else { a }),
        (Part::Err(e), _) | (_, Part::Err(e)) => Part::Err(e),
        (Part::Ok { bound: a, bytes: x }, Part::Ok { bound: b, bytes: y }) => {
            let combined = guarded(rank, ErrorKind::Codec, || {
                let x: R = wire::decode_value(&x)?;
                let y: R = wire::decode_value(&y)?;
                wire::encode_value(&op(x, y))
            });
            match combined {
                Ok(bytes) => Part::Ok {
                    bound: a.max(b),
                    bytes,
                },
                Err(e) => Part::Err(e),
            }
        }
    }
}

/// Combines every rank's `mine` (collective over the manager's communicator) and
/// returns the result every rank gets.
pub(crate) fn combine<R, O>(m: &mut Manager, mine: Part, op: &O) -> Part
where
    R: Serialize + DeserializeOwned,
    O: Fn(R, R) -> R,
{
    let (me, p) = (m.rank(), m.size());
    let mut part = mine;
    let mut step = 1;
    while step < p {
        if me & step != 0 {
            m.send(me - step, wire::TAG_RESULT, part.encode());
            break;
        }
        if me + step < p {
            let child = me + step;
            let msg = take_early(&mut m.early, child)
                .unwrap_or_else(|| raw::recv_from(m.comm(), child, wire::TAG_RESULT));
            part = merge(me, part, Part::decode(&msg.bytes, child), op);
        }
        step <<= 1;
    }
    let mut bytes = if me == 0 { part.encode() } else { Vec::new() };
    raw::broadcast(m.comm(), 0, &mut bytes);
    m.flush();
    Part::decode(&bytes, 0)
}

fn take_early(early: &mut Vec<Msg>, from: i32) -> Option<Msg> {
    let i = early.iter().position(|m| m.source == from)?;
    Some(early.swap_remove(i))
}
