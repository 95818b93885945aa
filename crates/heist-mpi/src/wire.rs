//! What ranks send each other, and its encoding: steal requests (thesis §3.2, Listing 3.3:
//! the thief, its failed-forward count and its steal-one/steal-half flag, §5.1), batches
//! of tasks (postcard), bound updates, and the news of a failed rank. Control messages
//! are a few little-endian bytes; tasks and results go through serde.

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

/// A failure: the failing rank and its message.
pub(crate) fn encode_failure(rank: u32, message: &str) -> Vec<u8> {
    let mut b = rank.to_le_bytes().to_vec();
    b.extend_from_slice(message.as_bytes());
    b
}

pub(crate) fn decode_failure(b: &[u8]) -> (u32, String) {
    match b.get(0..4) {
        Some(r) => (
            u32::from_le_bytes(r.try_into().expect("four bytes")),
            String::from_utf8_lossy(&b[4..]).into_owned(),
        ),
        None => (u32::MAX, "malformed failure message".into()),
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
        assert_eq!(
            decode_failure(&encode_failure(2, "boom")),
            (2, "boom".into())
        );
        let b = encode_tasks(9, &[(1u32, [3u8; 20]), (2, [4; 20])]).unwrap();
        let (bound, t): (i64, Vec<(u32, [u8; 20])>) = decode_tasks(&b).unwrap();
        assert_eq!((bound, t), (9, vec![(1, [3; 20]), (2, [4; 20])]));
    }
}
