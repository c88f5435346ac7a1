//! The runtime's errors: what went wrong in one op ([`Error`]), on which rank
//! and op ([`RankError`]), and what a launcher gets back ([`RunError`]).

use std::fmt;
use std::time::Duration;

/// What went wrong in one op.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Bad arguments: shapes, dtypes, teams, handles, descriptors, views
    /// outside their buffers, sizes that overflow.
    #[error("{0}")]
    Invalid(String),
    /// Ranks of one collective or transfer disagree (op, sizes, dtypes).
    #[error("{0}")]
    Mismatch(String),
    /// A collective, transfer, barrier or handle exchange did not complete.
    #[error("timed out after {after:?} waiting {waiting}")]
    Timeout { after: Duration, waiting: String },
    /// Two unordered accesses to overlapping memory, one a write.
    #[error("data race: {0}")]
    Race(String),
    /// Another rank failed first, so this one stopped waiting for it.
    #[error("gave up: rank {0} failed")]
    PeerFailed(usize),
    /// Another process's rank failed or exited (a multi-process run learns
    /// it through the store): `what` says how, e.g. `exited (connection
    /// closed)` or `failed in hir_rt_allgather_f32: ...`.
    #[error("gave up: rank {rank} {what}")]
    Peer { rank: usize, what: String },
    /// The run was interrupted (Ctrl-C, [`crate::interrupt`]): why.
    #[error("interrupted: {0}")]
    Interrupted(String),
    /// The world can run nothing more: why, and what to do instead.
    #[error("this world is closed: {0}")]
    Closed(String),
    /// An allocation failed: what was asked for, with its size.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// A panic inside the runtime, caught at the C ABI.
    #[error("internal error: {0}")]
    Panic(String),
    #[error("{0}")]
    Io(String),
    /// A CUDA, NVRTC, cuBLASLt or NCCL call failed.
    #[error("{0}")]
    Cuda(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The first error of one rank, with the op it happened in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankError {
    pub rank: usize,
    /// The runtime symbol (`hir_rt_allgather_f32`) or an internal step.
    pub op: String,
    pub error: Error,
}

impl fmt::Display for RankError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank {}: {}: {}", self.rank, self.op, self.error)
    }
}

impl std::error::Error for RankError {}

/// Every rank's first error, in the order they happened: the first is the
/// cause, the rest usually follow from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunError {
    pub errors: Vec<RankError>,
}

impl RunError {
    /// The error that happened first.
    pub fn first(&self) -> &RankError {
        &self.errors[0]
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.first())?;
        for other in &self.errors[1..] {
            write!(f, "\n  then {other}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RunError {}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        message.to_string()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "a panic with no message".into()
    }
}
