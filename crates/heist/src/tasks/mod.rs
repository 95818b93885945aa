//! The task kinds over the core's deque: scopes, promises (the futures of Prell's thesis,
//! §4.3–4.4), broadcasts through the workers' mailboxes, and rayon's FIFO scopes.

pub(crate) mod broadcast;
pub(crate) mod fifo;
pub(crate) mod promise;
pub(crate) mod scope;
pub(crate) mod scope_fifo;
