//! The cuda backend: each rank is a host thread driving its own GPU through
//! the CUDA driver API (cudarc, loaded at run time: the crate builds and its
//! cpu backend runs where no CUDA is installed).
//!
//! A rank has the caller's stream 0 and a pool of `num_streams` streams, all
//! non-blocking; `sync_stream` records an event and makes the current stream
//! wait for it (`cuStreamWaitEvent`), never blocking the host. Compute runs on
//! the current stream: cuBLASLt for matmul and linear (`blas.rs`), cuDNN's
//! fused attention where cuDNN is here (`attention.rs` picks,
//! `cudnn_attention.rs`), NVRTC kernels for the rest (`kernels.rs`,
//! `attention.rs`). Collectives and NCCL send/recv are
//! posted on the current stream too; their request is an event recorded after
//! them, which `wait` makes the (then) current stream wait for. `cuda`
//! transfers are CUDA-IPC copies into the peer's buffer (`ipc.rs`). See
//! `docs/Runtime.md` for what is verified on which machine.
//!
//! This file holds a rank's shape ([`CudaDevice`] and its host-side `State`),
//! which the files below share: `world.rs` starts and runs the ranks,
//! `device.rs` is the [`Device`](crate::Device) entries, `streams.rs` orders
//! work across streams (requests, events), `compute.rs` and `comm.rs` enqueue
//! kernels and communication, `scratch.rs` holds an op's staging buffers.

mod alloc;
mod attention;
mod axes;
mod blas;
mod caller_stream;
mod comm;
mod compute;
mod cudnn;
mod cudnn_attention;
mod cudnn_sdpa;
mod device;
mod export;
mod fused;
mod fused_rows;
#[cfg(test)]
mod fused_rows_tests;
#[cfg(test)]
mod fused_tests;
mod graph;
#[cfg(test)]
mod graph_tests;
mod grouped;
mod ipc;
mod ipc_caller_graph;
mod ipc_destination;
mod ipc_graph;
mod ipc_signal;
mod kernel_source;
mod kernels;
pub(crate) mod mailbox;
mod nccl;
mod nvrtc;
mod p2p;
mod process;
mod scratch;
mod streams;
#[cfg(test)]
mod tests;
mod timeline;
mod timer;
mod versions;
mod world;

pub use crate::core::bootstrap::Bootstrap;
pub use alloc::DeviceBuffer;
pub use caller_stream::CallerStream;
pub use graph::Graph;
pub use timer::TimingEvent;
pub use versions::{Versions, versions};
pub use world::{Config, World, nccl_present, probe};

use crate::bootstrap::Inflight;
use crate::bounds::Allocations;
use crate::core::sync::Faults;
use crate::error::{Error, Result};
use crate::ops::Team;
use alloc::Allocator;
use blas::Blas;
use comm::Group;
use cudarc::driver::{CudaContext, sys};
use ipc::Ipc;
use kernels::Kernels;
use nccl::{Comm, CommCell};
use std::collections::HashMap;
use std::fmt::Display;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use streams::{EventPtr, Slot};
use timeline::Timeline;

/// A raw CUDA stream.
pub(crate) type Stream = sys::CUstream;

/// Maps a CUDA library error to the runtime's, naming the call.
pub(crate) trait Check<T> {
    fn check(self, what: &str) -> Result<T>;

    /// As `check`, with the description made only on failure (for calls
    /// made once per op, where formatting it would cost more than the call).
    fn check_with(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Display> Check<T> for std::result::Result<T, E> {
    fn check(self, what: &str) -> Result<T> {
        self.check_with(|| what.to_string())
    }

    fn check_with(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|error| Error::Cuda(format!("{} failed: {error}", what())))
    }
}

/// A rank's host-side state, touched by its host thread.
struct State {
    current: usize,
    /// Stream 0 (the caller's) and the pool.
    streams: Vec<Stream>,
    /// Per stream, the event `sync_stream` records on it.
    marks: Vec<sys::CUevent>,
    /// Per stream, its cuBLASLt workspace (allocated on first use).
    workspaces: Vec<Option<sys::CUdeviceptr>>,
    kernels: Kernels,
    blas: Blas,
    /// cuDNN's handle and attention plans (made on first use).
    cudnn: cudnn_attention::CudnnAttention,
    allocator: Allocator,
    /// Which streams were current when: the streams a buffer can have been
    /// used on, whose events its dealloc records.
    touched: alloc::Touched,
    /// Request `retired + i + 1` is `requests[i]`.
    requests: Vec<Slot>,
    retired: i64,
    /// Events of retired requests, for reuse.
    events: Vec<sys::CUevent>,
    group: Option<Group>,
    comms: HashMap<Team, Comm>,
    /// Per team, the bootstrap exchanges so far.
    exchanges: HashMap<Team, u64>,
    timeline: Option<Timeline>,
    ipc: Ipc,
    /// [`Config::poison`].
    poison: bool,
    /// Whether stream 0 is capturing a call ([`CudaDevice::capture`]).
    capturing: bool,
    /// Calls enqueued on a caller's stream ([`CudaDevice::on_stream`]).
    enqueued: caller_stream::Enqueued,
}

// The raw handles are used by the rank's host thread, with its context current.
unsafe impl Send for State {}

/// One rank of the cuda backend.
pub struct CudaDevice {
    rank: usize,
    ranks: usize,
    num_streams: usize,
    /// How long `synchronize` waits for a stream before calling it stuck.
    timeout: Duration,
    ctx: Arc<CudaContext>,
    faults: Arc<Faults>,
    bootstrap: Arc<dyn Bootstrap>,
    state: Mutex<State>,
    /// The allocator's buffers and the launcher's, which views are checked against.
    allocations: Arc<Allocations>,
    /// The communications in flight, for the watchdog: each request's event.
    inflight: Inflight<EventPtr>,
    /// Every communicator created, for the watchdog to abort.
    live: Mutex<Vec<Arc<CommCell>>>,
}
