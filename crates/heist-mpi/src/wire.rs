//! What ranks send each other, and its encoding: steal requests (thesis §3.2, Listing 3.3:
//! the thief, its failed-forward count and its steal-one/steal-half flag, §5.1), batches
//! of tasks (postcard), bound updates, and the news of a failed rank. Control messages
//! are a few little-endian bytes; tasks and results go through serde.

use crate::{Error, ErrorKind};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A steal request.
pub(crate) const TAG_REQUEST: i32 = 1;
/// A batch of tasks answering a steal request (the only message that makes work).
pub(crate) const TAG_TASKS: i32 = 2;
/// A better bound.
pub(crate) const TAG_BOUND: i32 = 3;
/// A rank failed: its rank and message.
pub(crate) const TAG_ABORT: i32 = 4;
/// A partial result on its way up the combining tree.
pub(crate) const TAG_RESULT: i32 = 5;

/// A steal request: who asks, how often it was forwarded, and what to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Request {
    pub(crate) thief: u32,
    pub(crate) hops: u32,
    /// Steal one task (the oldest) instead of half.
    pub(crate) one: bool,
}

impl Request {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(9);
        b.extend_from_slice(&self.thief.to_le_bytes());
        b.extend_from_slice(&self.hops.to_le_bytes());
        b.push(u8::from(self.one));
        b
    }

    pub(crate) fn decode(b: &[u8]) -> Option<Request> {
        Some(Request {
            thief: u32::from_le_bytes(b.get(0..4)?.try_into().ok()?),
            hops: u32::from_le_bytes(b.get(4..8)?.try_into().ok()?),
            one: *b.get(8)? != 0,
        })
    }
}

/// A bound update.
pub(crate) fn encode_bound(v: i64) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

pub(crate) fn decode_bound(b: &[u8]) -> Option<i64> {
    Some(i64::from_le_bytes(b.try_into().ok()?))
}

/// A failure: its kind, the failing rank and its message (an abort, or the error part
/// of a result).
pub(crate) fn encode_failure(e: &Error) -> Vec<u8> {
    let mut b = vec![e.kind as u8];
    b.extend_from_slice(&e.rank.to_le_bytes());
    b.extend_from_slice(e.message.as_bytes());
    b
}

/// The failure in `b`; a malformed one is blamed on `from`.
pub(crate) fn decode_failure(b: &[u8], from: i32) -> Error {
    match (b.first(), b.get(1..5)) {
        (Some(&k), Some(r)) => Error {
            kind: ErrorKind::from_u8(k),
            rank: i32::from_le_bytes(r.try_into().expect("four bytes")),
            message: String::from_utf8_lossy(&b[5..]).into_owned(),
        },
        _ => Error {
            kind: ErrorKind::Codec,
            rank: from,
            message: "malformed failure message".into(),
        },
    }
}

/// A batch of tasks with the sender's bound (so that the thief prunes with it at once).
pub(crate) fn encode_tasks<T: Serialize>(bound: i64, tasks: &[T]) -> Result<Vec<u8>, String> {
    postcard::to_allocvec(&(bound, tasks)).map_err(|e| format!("encoding tasks: {e}"))
}

pub(crate) fn decode_tasks<T: DeserializeOwned>(b: &[u8]) -> Result<(i64, Vec<T>), String> {
    postcard::from_bytes(b).map_err(|e| format!("decoding tasks: {e}"))
}

/// A value (a partial result) through serde.
pub(crate) fn encode_value<R: Serialize>(v: &R) -> Result<Vec<u8>, String> {
    postcard::to_allocvec(v).map_err(|e| format!("encoding a result: {e}"))
}

pub(crate) fn decode_value<R: DeserializeOwned>(b: &[u8]) -> Result<R, String> {
    postcard::from_bytes(b).map_err(|e| format!("decoding a result: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_messages_round_trip() {
        let r = Request {
            thief: 7,
            hops: 3,
            one: true,
        };
        assert_eq!(Request::decode(&r.encode()), Some(r));
        assert_eq!(Request::decode(&[1, 2]), None);
        assert_eq!(decode_bound(&encode_bound(-5)), Some(-5));
        let e = Error {
            rank: 2,
            kind: ErrorKind::Codec,
            message: "boom".into(),
        };
        assert_eq!(decode_failure(&encode_failure(&e), 0), e);
        assert_eq!(decode_failure(&[1], 3).rank, 3);
        let b = encode_tasks(9, &[(1u32, [3u8; 20]), (2, [4; 20])]).unwrap();
        let (bound, t): (i64, Vec<(u32, [u8; 20])>) = decode_tasks(&b).unwrap();
        assert_eq!((bound, t), (9, vec![(1, [3; 20]), (2, [4; 20])]));
    }
}
