//! A send or receive as a rank posts it, on NCCL or as a `cuda` (CUDA-IPC)
//! transfer: what `comm.rs` hands on, and a coalescing group holds.

use crate::memref::View;
use crate::ops::Team;

/// A send or receive of `data` with team member `peer`, on stream `stream`
/// (an index). For NCCL, `data` is contiguous.
pub(super) struct P2p {
    pub(super) send: bool,
    pub(super) data: View,
    pub(super) peer: usize,
    pub(super) team: Team,
    pub(super) stream: usize,
}
