//! The cuda backend: each rank is a host thread driving its own GPU through
//! the CUDA driver API (cudarc, loaded at run time: the crate builds and its
//! cpu backend runs where no CUDA is installed).
//!
//! A rank has the caller's stream 0 and a pool of `num_streams` streams, all
//! non-blocking; `sync_stream` records an event and makes the current stream
//! wait for it (`cuStreamWaitEvent`), never blocking the host. Compute runs on
//! the current stream: cuBLASLt for matmul and linear (`blas.rs`), NVRTC
//! kernels for the rest (`kernels.rs`). Collectives and NCCL send/recv are
//! posted on the current stream too; their request is an event recorded after
//! them, which `wait` makes the (then) current stream wait for. `cuda`
//! transfers are CUDA-IPC copies into the peer's buffer (`ipc.rs`). See
//! `docs/Runtime.md` for what is verified on which machine.

mod alloc;
mod blas;
mod caller_stream;
mod fused;
#[cfg(test)]
mod fused_tests;
mod graph;
#[cfg(test)]
mod graph_tests;
mod grouped;
mod ipc;
mod kernels;
pub(crate) mod mailbox;
mod nccl;
mod process;
#[cfg(test)]
mod tests;
mod timeline;
mod timer;
mod versions;

pub use crate::core::bootstrap::Bootstrap;
pub use alloc::DeviceBuffer;
pub use caller_stream::CallerStream;
pub use graph::Graph;
pub use timer::TimingEvent;
pub use versions::{Versions, versions};

use crate::bootstrap::{Inflight, Stuck, Watched};
use crate::bounds::Allocations;
use crate::core::bootstrap::ThreadBootstrap;
use crate::core::rank_threads;
use crate::core::sync::Faults;
use crate::device::{Device, Request};
use crate::error::{Error, RankError, Result, RunError};
use crate::lock;
use crate::memref::View;
use crate::ops::{CollectiveOp, Kernel, KernelOp, Team, Transfer, batch_axes_read};
use crate::trace::Trace;
use alloc::Allocator;
use blas::{Blas, Gemm};
use cudarc::driver::{CudaContext, result as cu, sys};
use hir_abi::{Collective, Entry, Transport};
use ipc::Ipc;
use kernels::Kernels;
use nccl::{Comm, CommCell};
use std::collections::HashMap;
use std::fmt::Display;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use timeline::Timeline;

/// A raw CUDA stream.
pub(crate) type Stream = sys::CUstream;

/// Maps a CUDA library error to the runtime's, naming the call.
pub(crate) trait Check<T> {
    fn check(self, what: &str) -> Result<T>;
}

impl<T, E: Display> Check<T> for std::result::Result<T, E> {
    fn check(self, what: &str) -> Result<T> {
        self.map_err(|error| Error::Cuda(format!("{what} failed: {error}")))
    }
}

/// Whether this machine can run the cuda backend: the number of devices, or
/// why not. Probes the libraries before cudarc's loader, which panics when
/// one is missing.
pub fn probe() -> std::result::Result<usize, String> {
    // SAFETY: only tries to open the libraries.
    let missing: Vec<&str> = unsafe {
        [
            (
                "libcuda (the driver)",
                cudarc::driver::sys::is_culib_present(),
            ),
            ("libnvrtc", cudarc::nvrtc::sys::is_culib_present()),
            ("libcublasLt", cudarc::cublaslt::sys::is_culib_present()),
        ]
    }
    .into_iter()
    .filter(|(_, present)| !present)
    .map(|(name, _)| name)
    .collect();
    if !missing.is_empty() {
        return Err(format!("no {} on the library path", missing.join(", ")));
    }
    cu::init().map_err(|error| format!("cuInit failed: {error}"))?;
    match cu::device::get_count() {
        Ok(0) => Err("no CUDA device".into()),
        Ok(count) => Ok(count as usize),
        Err(error) => Err(format!("cuDeviceGetCount failed: {error}")),
    }
}

/// Whether NCCL can be loaded (`libnccl.so` on the library path).
pub fn nccl_present() -> bool {
    // SAFETY: only tries to open the library.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

/// How a [`World`] is set up.
#[derive(Clone, Debug)]
pub struct Config {
    /// Ranks, one GPU each: rank `r` runs on device `r`.
    pub ranks: usize,
    pub num_streams: usize,
    /// How long the NCCL bootstrap and barriers wait for the other ranks.
    pub timeout: Duration,
    /// Whether to time every op with CUDA events (see [`World::write_chrome_trace`]).
    pub trace: bool,
    /// Whether fresh device memory is NaN (every byte `0xff`: NaN in f32,
    /// bf16 and f16) instead of zero: `hir_rt_alloc`'s buffers when they are
    /// made, and the temporaries of every op (staging copies), so that a
    /// read of what nobody wrote computes NaN.
    pub poison: bool,
}

impl Config {
    pub fn new(ranks: usize, num_streams: usize) -> Config {
        Config {
            ranks,
            num_streams,
            timeout: Duration::from_secs(60),
            trace: false,
            poison: false,
        }
    }
}

/// The ranks of one process, each a thread on its own GPU.
pub struct World {
    faults: Arc<Faults>,
    devices: Vec<Arc<CudaDevice>>,
    trace: Option<Arc<Trace>>,
}

impl World {
    pub fn new(config: Config) -> Result<World> {
        let count = probe()
            .map_err(|reason| Error::Cuda(format!("the cuda backend cannot start: {reason}")))?;
        if config.ranks == 0 || config.num_streams == 0 {
            return Err(Error::Invalid(format!(
                "a world needs at least one rank and one pool stream, got {} and {}",
                config.ranks, config.num_streams
            )));
        }
        if config.ranks > count {
            return Err(Error::Invalid(format!(
                "{} ranks need as many GPUs; this machine has {count}",
                config.ranks
            )));
        }
        let faults = Arc::new(Faults::new(config.ranks));
        let bootstrap: Arc<dyn Bootstrap> =
            Arc::new(ThreadBootstrap::new(faults.clone(), config.timeout));
        let trace = config.trace.then(|| Arc::new(Trace::default()));
        let devices = (0..config.ranks)
            .map(|rank| {
                CudaDevice::new(
                    rank,
                    rank,
                    &config,
                    faults.clone(),
                    bootstrap.clone(),
                    trace.clone(),
                )
                .map(Arc::new)
            })
            .collect::<Result<_>>()?;
        Ok(World {
            faults,
            devices,
            trace,
        })
    }

    /// Writes the ops' GPU times and the host calls as Chrome/Perfetto JSON.
    pub fn write_chrome_trace(&self, path: &Path) -> std::io::Result<()> {
        self.recorded()?.write_chrome_trace(path)
    }

    /// The trace's events, for a launcher that merges the traces of ranks
    /// in several processes with [`crate::trace::chrome_json`].
    pub fn chrome_events(&self) -> std::io::Result<Vec<String>> {
        Ok(self.recorded()?.chrome_events())
    }

    fn recorded(&self) -> std::io::Result<&Trace> {
        self.trace
            .as_deref()
            .ok_or_else(|| std::io::Error::other("no trace was recorded: set Config::trace"))
    }

    /// One rank of a world of `config.ranks` ranks in as many processes:
    /// this process runs rank `rank` on its GPU `local_device`, and its NCCL
    /// communicators span the processes, which exchange their unique ids
    /// through `bootstrap` (a [`crate::bootstrap::TcpBootstrap`]).
    /// `Device::num_devices` is `config.ranks`; [`World::run`] runs the one
    /// rank. Start a watchdog on [`World::watched`] so that a hang in NCCL
    /// becomes an error (see [`crate::bootstrap::ProcessGroup::watch`]), and
    /// stop it before the world drops.
    pub fn process(
        config: Config,
        rank: usize,
        local_device: usize,
        bootstrap: Arc<dyn Bootstrap>,
    ) -> Result<World> {
        let count = probe()
            .map_err(|reason| Error::Cuda(format!("the cuda backend cannot start: {reason}")))?;
        if config.num_streams == 0 {
            return Err(Error::Invalid(
                "a world needs at least one pool stream, got 0".into(),
            ));
        }
        if rank >= config.ranks {
            return Err(Error::Invalid(format!(
                "rank {rank} is not in a world of {} ranks",
                config.ranks
            )));
        }
        if local_device >= count {
            return Err(Error::Invalid(format!(
                "rank {rank} runs on GPU {local_device} (its local rank); this machine has {count}"
            )));
        }
        let faults = Arc::new(Faults::new(config.ranks));
        let trace = config.trace.then(|| Arc::new(Trace::default()));
        let device = CudaDevice::new(
            rank,
            local_device,
            &config,
            faults.clone(),
            bootstrap,
            trace.clone(),
        )?;
        Ok(World {
            faults,
            devices: vec![Arc::new(device)],
            trace,
        })
    }

    /// The ranks this process runs (all of them for [`World::new`]).
    pub fn ranks(&self) -> usize {
        self.devices.len()
    }

    /// The global ranks this process runs, in order.
    pub fn local_ranks(&self) -> Vec<usize> {
        self.devices.iter().map(|device| device.rank).collect()
    }

    /// Rank `rank`'s device, e.g. to copy a launcher's inputs to it; `rank`
    /// must run in this process.
    pub fn device(&self, rank: usize) -> Arc<CudaDevice> {
        self.devices
            .iter()
            .find(|device| device.rank == rank)
            .unwrap_or_else(|| panic!("rank {rank} does not run in this process"))
            .clone()
    }

    /// What a watchdog watches of each rank of this process: its NCCL
    /// requests in flight (events it queries with `cuEventQuery`), its
    /// error, and its communicators to abort.
    pub fn watched(&self) -> Vec<Arc<dyn Watched>> {
        self.devices
            .iter()
            .map(|device| Arc::new(CudaWatch(device.clone())) as Arc<dyn Watched>)
            .collect()
    }

    /// Runs `body` on one thread per rank with that rank entered, then waits
    /// for all the work it enqueued, as the cpu backend's `World::run` does.
    pub fn run<T: Send>(&self, body: impl Fn(&CudaDevice) -> T + Sync) -> Result<Vec<T>, RunError> {
        rank_threads::run(
            &self.devices,
            "hir-cuda-rank",
            &self.faults,
            // The devices share one timeout, and a world has at least one.
            self.devices[0].timeout,
            |device| {
                device.bind()?;
                Ok(body(device))
            },
            |device| {
                if let Err(error) = device.synchronize() {
                    device.fail("synchronize", error);
                }
            },
        )
    }
}

/// A request: complete once all its completions are.
enum Slot {
    /// Of a coalescing group that has not ended.
    Open,
    Done(Vec<Completion>),
}

/// What a stream waits for to complete a request.
enum Completion {
    Event(sys::CUevent),
    /// A `cuda` receive: its data has arrived once the flag is set.
    Flag(ipc::FlagWait),
}

impl Completion {
    /// `stream` waits for it.
    fn enqueue(&self, stream: Stream) -> Result<()> {
        match self {
            // SAFETY: live event and stream.
            Completion::Event(event) => unsafe {
                cu::stream::wait_event(
                    stream,
                    *event,
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
                .check("cuStreamWaitEvent")
            },
            Completion::Flag(wait) => wait.enqueue(stream),
        }
    }

    fn event(&self) -> Option<sys::CUevent> {
        match self {
            Completion::Event(event) => Some(*event),
            Completion::Flag(_) => None,
        }
    }
}

/// A send or receive of `data` with team member `peer`, on stream `stream`
/// (an index). For NCCL, `data` is contiguous.
struct P2p {
    send: bool,
    data: View,
    peer: usize,
    team: Team,
    stream: usize,
}

/// A coalescing group being posted.
struct Group {
    request: usize,
    posts: Vec<P2p>,
    /// `cuda` transfers, posted at the end: receives first.
    ipc: Vec<P2p>,
    /// Received into staging: copied to their views, on their streams, once
    /// the group ends.
    copies: Vec<(View, View, usize)>,
    scratch: Scratch,
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

/// A request's event as the watchdog holds it; `None` while it is posted.
struct EventPtr(Option<sys::CUevent>);

/// A communication being posted, in [`CudaDevice::inflight`]: dropped, it is
/// forgotten (its posting failed); [`Posting::posted`] gives it its request's
/// event.
struct Posting<'a> {
    inflight: &'a Inflight<EventPtr>,
    id: u64,
}

impl Posting<'_> {
    /// The communication is `request`: the watchdog watches its event.
    fn posted(self, state: &State, request: Request) -> Request {
        let slot = usize::try_from(request - state.retired - 1)
            .ok()
            .and_then(|index| state.requests.get(index));
        // A `cuda` receive alone has no event: the stream drain's timeout
        // covers it instead.
        let event = match slot {
            Some(Slot::Done(completions)) => completions.iter().find_map(Completion::event),
            _ => None,
        };
        if let Some(event) = event {
            self.inflight.update(self.id, EventPtr(Some(event)));
            std::mem::forget(self);
        }
        request
    }
}

impl Drop for Posting<'_> {
    fn drop(&mut self) {
        self.inflight.remove(self.id);
    }
}

// Queried by the watchdog under `Inflight`'s lock, which the rank takes
// before it reuses or destroys the event.
unsafe impl Send for EventPtr {}

impl CudaDevice {
    /// Rank `rank` of `config.ranks` on device `ordinal`, exchanging NCCL ids
    /// through `bootstrap`.
    pub(crate) fn new(
        rank: usize,
        ordinal: usize,
        config: &Config,
        faults: Arc<Faults>,
        bootstrap: Arc<dyn Bootstrap>,
        trace: Option<Arc<Trace>>,
    ) -> Result<CudaDevice> {
        let ctx = CudaContext::new(ordinal)
            .check(&format!("creating the context of device {ordinal}"))?;
        ctx.bind_to_thread().check("binding the context")?;
        let (major, minor) = ctx
            .compute_capability()
            .check("reading the compute capability")?;
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .check("reading the multiprocessor count")?;
        let streams = (0..=config.num_streams)
            .map(|_| {
                cu::stream::create(cu::stream::StreamKind::NonBlocking).check("cuStreamCreate")
            })
            .collect::<Result<Vec<_>>>()?;
        let marks = (0..=config.num_streams)
            .map(|_| new_event())
            .collect::<Result<Vec<_>>>()?;
        let timeline = trace
            .map(|trace| Timeline::new(rank, trace, &streams))
            .transpose()?;
        let allocations = Arc::<Allocations>::default();
        let state = State {
            current: 0,
            workspaces: vec![None; streams.len()],
            streams,
            marks,
            kernels: Kernels::load(major * 10 + minor, sms as u32)?,
            blas: Blas::new()?,
            allocator: Allocator::new(
                alloc::DeviceMemory {
                    poison: config.poison,
                },
                allocations.clone(),
                config.num_streams + 1,
            ),
            touched: alloc::Touched::default(),
            requests: Vec::new(),
            retired: 0,
            events: Vec::new(),
            group: None,
            comms: HashMap::new(),
            exchanges: HashMap::new(),
            timeline,
            ipc: Ipc::default(),
            poison: config.poison,
            capturing: false,
            enqueued: caller_stream::Enqueued::default(),
        };
        Ok(CudaDevice {
            rank,
            ranks: config.ranks,
            num_streams: config.num_streams,
            timeout: config.timeout,
            ctx,
            faults,
            bootstrap,
            state: Mutex::new(state),
            allocations,
            inflight: Inflight::default(),
            live: Mutex::new(Vec::new()),
        })
    }

    /// Makes the rank's context current on the calling thread.
    fn bind(&self) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .check("binding the rank's context")
    }

    /// The state, with the context bound.
    fn state(&self) -> Result<std::sync::MutexGuard<'_, State>> {
        self.bind()?;
        Ok(lock(&self.state))
    }

    fn check_stream(&self, stream: i64) -> Result<usize> {
        usize::try_from(stream)
            .ok()
            .filter(|&stream| stream <= self.num_streams)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "stream {stream} does not exist: streams are 0 and the pool 1..={}",
                    self.num_streams
                ))
            })
    }

    /// Device memory for a launcher's buffer of `bytes` bytes.
    pub fn buffer(&self, bytes: usize) -> Result<DeviceBuffer> {
        self.bind()?;
        DeviceBuffer::new(self.ctx.clone(), bytes, &self.allocations)
    }

    /// Copies `bytes` to device memory at `dst`, ordered after the work on
    /// stream 0 and complete when this returns.
    pub fn copy_to_device(&self, dst: *mut u8, bytes: &[u8]) -> Result<()> {
        let state = self.state()?;
        // SAFETY: `dst` is device memory of at least `bytes.len()` bytes; the
        // host slice outlives the copy, which is synchronized below.
        unsafe {
            cu::memcpy_htod_async(dst as sys::CUdeviceptr, bytes, state.streams[0])
                .check("cuMemcpyHtoDAsync")?;
            cu::stream::synchronize(state.streams[0]).check("cuStreamSynchronize")
        }
    }

    /// Copies device memory at `src` into `bytes`, after the work on stream 0.
    pub fn copy_from_device(&self, src: *const u8, bytes: &mut [u8]) -> Result<()> {
        let state = self.state()?;
        // SAFETY: as `copy_to_device`.
        unsafe {
            cu::memcpy_dtoh_async(bytes, src as sys::CUdeviceptr, state.streams[0])
                .check("cuMemcpyDtoHAsync")?;
            cu::stream::synchronize(state.streams[0]).check("cuStreamSynchronize")
        }
    }

    /// The communicator of `team`, created on first use (host-blocking).
    fn comm<'s>(&self, state: &'s mut State, team: &Team) -> Result<&'s Comm> {
        if !state.comms.contains_key(team) {
            let position = team.require(self.rank, "rank")?;
            let number = state.exchanges.entry(team.clone()).or_default();
            let comm = Comm::new(team, position, *number, &*self.bootstrap)?;
            *number += 1;
            lock(&self.live).push(comm.cell.clone());
            state.comms.insert(team.clone(), comm);
        }
        Ok(&state.comms[team])
    }

    /// Shows the watchdog that the communication `op` is being posted (from
    /// before its communicator is created, which may block on the peers).
    fn posting(&self, op: String) -> Posting<'_> {
        Posting {
            inflight: &self.inflight,
            id: self.inflight.post(op, EventPtr(None)),
        }
    }

    /// Issues a request complete once the current stream's work so far is.
    fn record_request(state: &mut State) -> Result<Request> {
        let event = new_or_reused_event(state)?;
        // SAFETY: live event and stream.
        unsafe { cu::event::record(event, state.streams[state.current]) }.check("cuEventRecord")?;
        Ok(Self::issue(state, vec![Completion::Event(event)]))
    }

    fn complete_request(state: &mut State) -> Request {
        Self::issue(state, Vec::new())
    }

    fn issue(state: &mut State, completions: Vec<Completion>) -> Request {
        state.requests.push(Slot::Done(completions));
        state.retired + state.requests.len() as Request
    }

    /// The host side of `cuda` transfers.
    fn me(&self) -> ipc::Me<'_> {
        ipc::Me {
            rank: self.rank,
            ctx: self.ctx.cu_ctx(),
            bootstrap: &*self.bootstrap,
        }
    }

    /// Posts a `cuda` send or receive; returns what its request waits for.
    fn post_ipc(&self, state: &mut State, p2p: &P2p, scratch: &mut Scratch) -> Result<Completion> {
        let stream = state.streams[p2p.stream];
        let me = self.me();
        if !p2p.send {
            return Ok(Completion::Flag(state.ipc.recv(&me, p2p, stream)?));
        }
        let event = new_or_reused_event(state)?;
        state.ipc.send(&me, p2p, stream, &state.kernels, scratch)?;
        // SAFETY: live event and stream.
        unsafe { cu::event::record(event, stream) }.check("cuEventRecord")?;
        Ok(Completion::Event(event))
    }

    fn post_collective(&self, state: &mut State, op: &CollectiveOp) -> Result<()> {
        let stream = state.streams[state.current];
        let n = op.team.len();
        let position = op.team.require(self.rank, "rank")?;
        let root = op.team.position(op.root).unwrap_or(0);
        let dtype = nccl::data_type(op.dtype());
        let red = nccl::red_op(op.kind);
        let cell = self.comm(state, &op.team)?.cell.clone();
        let mut scratch = Scratch::new(state.poison);
        let kernels = &state.kernels;
        let ns = nccl::stream(stream);
        let what = format!("{} on team {}", op.entry(), op.team);
        type Posted =
            std::result::Result<cudarc::nccl::result::NcclStatus, cudarc::nccl::result::NcclError>;
        let call = |post: &dyn Fn(cudarc::nccl::sys::ncclComm_t) -> Posted| {
            cell.with(|comm| nccl::check(post(comm), &what, Some(comm)))
        };
        match op.op {
            Collective::Allgather => {
                let input = scratch.readable(kernels, &op.input, stream)?;
                let whole = split(&op.output, op.axis, n);
                let (target, back) = scratch.writable(&whole, stream)?;
                // SAFETY: device buffers of the validated sizes, live comm.
                call(&|comm| unsafe {
                    cudarc::nccl::result::all_gather(
                        nccl::ptr(input.ptr),
                        nccl::ptr(target.ptr),
                        input.numel(),
                        dtype,
                        comm,
                        ns,
                    )
                })?;
                if back {
                    kernels.copy(&target, &whole, stream)?;
                }
            }
            Collective::ReduceScatter => {
                let input = scratch.readable(kernels, &split(&op.input, op.axis, n), stream)?;
                let (target, back) = scratch.writable(&op.output, stream)?;
                call(&|comm| unsafe {
                    cudarc::nccl::result::reduce_scatter(
                        nccl::ptr(input.ptr),
                        nccl::ptr(target.ptr),
                        target.numel(),
                        dtype,
                        red,
                        comm,
                        ns,
                    )
                })?;
                if back {
                    kernels.copy(&target, &op.output, stream)?;
                }
            }
            Collective::Allreduce | Collective::Broadcast | Collective::Reduce => {
                let reads = op.op != Collective::Broadcast || position == root;
                let writes = op.op != Collective::Reduce || position == root;
                let input = if reads {
                    scratch.readable(kernels, &op.input, stream)?
                } else {
                    op.input.clone()
                };
                let (target, back) = if writes {
                    scratch.writable(&op.output, stream)?
                } else {
                    (op.output.clone(), false)
                };
                let (send, recv, count) = (
                    nccl::ptr(input.ptr),
                    nccl::ptr(target.ptr),
                    op.input.numel(),
                );
                call(&|comm| unsafe {
                    match op.op {
                        Collective::Allreduce => cudarc::nccl::result::all_reduce(
                            send, recv, count, dtype, red, comm, ns,
                        ),
                        Collective::Broadcast => cudarc::nccl::result::broadcast(
                            send,
                            recv,
                            count,
                            dtype,
                            root as i32,
                            comm,
                            ns,
                        ),
                        _ => cudarc::nccl::result::reduce(
                            send,
                            recv,
                            count,
                            dtype,
                            red,
                            root as i32,
                            comm,
                            ns,
                        ),
                    }
                })?;
                if back {
                    kernels.copy(&target, &op.output, stream)?;
                }
            }
            Collective::Gather | Collective::Scatter | Collective::Alltoall => {
                cell.with(|comm| {
                    let parts = grouped::Parts {
                        op,
                        me: position,
                        root,
                        comm,
                        kernels,
                        stream,
                    };
                    parts.post(&mut scratch)
                })?;
            }
        }
        Ok(())
    }

    fn transfer(&self, transfer: Transfer, send: bool) -> Result<Request> {
        let Transfer {
            buffer,
            peer,
            team,
            backend,
        } = transfer;
        let peer_rank = peer;
        let entry = if send {
            Entry::Send(buffer.dtype)
        } else {
            Entry::Recv(buffer.dtype)
        };
        let what = format!(
            "{} {} rank {peer} on team {team}",
            label(entry),
            if send { "to" } else { "from" }
        );
        let peer = team.require(peer, "peer")?;
        team.require(self.rank, "rank")?;
        let mut guard = self.state()?;
        let state = &mut *guard;
        if backend == Transport::Cuda {
            Self::refuse_in_capture(
                state.capturing,
                "a `cuda` (CUDA-IPC) transfer",
                "its flag values are numbered by the host on each call, so a replay would \
                 signal with stale ones",
            )?;
            let direction = if send { "send to" } else { "recv from" };
            state.ipc.check(&team, peer_rank, &buffer, direction)?;
            let p2p = P2p {
                send,
                data: buffer,
                peer,
                team,
                stream: state.current,
            };
            if let Some(group) = &mut state.group {
                group.ipc.push(p2p);
                return Ok(state.retired + group.request as Request + 1);
            }
            let posting = self.posting(what);
            let completion = Self::traced(
                state,
                || label(entry),
                |state| {
                    let mut scratch = Scratch::new(state.poison);
                    self.post_ipc(state, &p2p, &mut scratch)
                },
            )?;
            let request = Self::issue(state, vec![completion]);
            return Ok(posting.posted(state, request));
        }
        let stream = state.current;
        let raw = state.streams[stream];
        let mut own = Scratch::new(state.poison);
        let scratch = match &mut state.group {
            Some(group) => &mut group.scratch,
            None => &mut own,
        };
        let (data, back) = if send {
            (scratch.readable(&state.kernels, &buffer, raw)?, false)
        } else {
            scratch.writable(&buffer, raw)?
        };
        let p2p = P2p {
            send,
            data,
            peer,
            team,
            stream,
        };
        if let Some(group) = &mut state.group {
            // Posted at end_coalescing, once every communicator exists:
            // creating one inside an NCCL group would defer its set-up.
            if back {
                group.copies.push((p2p.data.clone(), buffer, stream));
            }
            group.posts.push(p2p);
            return Ok(state.retired + group.request as Request + 1);
        }
        let posting = self.posting(what);
        self.comm(state, &p2p.team)?;
        Self::traced(state, || label(entry), |state| Self::post_p2p(state, &p2p))?;
        if back {
            state.kernels.copy(&p2p.data, &buffer, raw)?;
        }
        drop(own);
        let request = Self::record_request(state)?;
        Ok(posting.posted(state, request))
    }

    /// Posts an NCCL send or receive; its team's communicator exists.
    fn post_p2p(state: &State, p2p: &P2p) -> Result<()> {
        let stream = nccl::stream(state.streams[p2p.stream]);
        let (dtype, count, peer) = (
            nccl::data_type(p2p.data.dtype),
            p2p.data.numel(),
            p2p.peer as i32,
        );
        let what = format!(
            "{} with team member {} of {}",
            if p2p.send { "ncclSend" } else { "ncclRecv" },
            p2p.peer,
            p2p.team
        );
        state.comms[&p2p.team].with(|comm| {
            // SAFETY: contiguous device buffers of `count` elements, a live
            // communicator and stream.
            let result = unsafe {
                if p2p.send {
                    cudarc::nccl::result::send(
                        nccl::ptr(p2p.data.ptr),
                        count,
                        dtype,
                        peer,
                        comm,
                        stream,
                    )
                } else {
                    cudarc::nccl::result::recv(
                        nccl::ptr(p2p.data.ptr),
                        count,
                        dtype,
                        peer,
                        comm,
                        stream,
                    )
                }
            };
            nccl::check(result, &what, Some(comm))
        })
    }

    /// The current stream waits for the work enqueued so far on `stream`.
    fn join(state: &State, stream: usize) -> Result<()> {
        let mark = state.marks[stream];
        // SAFETY: live event and streams; the wait captures the event's
        // current state, so the event can be recorded again later.
        unsafe {
            cu::event::record(mark, state.streams[stream]).check("cuEventRecord")?;
            cu::stream::wait_event(
                state.streams[state.current],
                mark,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
            .check("cuStreamWaitEvent")
        }
    }

    /// Enqueues work on the current stream, timed as `name` when tracing.
    fn traced<R>(
        state: &mut State,
        name: impl FnOnce() -> String,
        enqueue: impl FnOnce(&mut State) -> Result<R>,
    ) -> Result<R> {
        let (index, stream) = (state.current, state.streams[state.current]);
        let mark = match &mut state.timeline {
            Some(timeline) => Some(timeline.begin(stream)?),
            None => None,
        };
        let value = enqueue(state)?;
        if let (Some(mark), Some(timeline)) = (mark, &mut state.timeline) {
            timeline.end(mark, &name(), index, stream)?;
        }
        Ok(value)
    }

    /// Enqueues a validated kernel on the current stream.
    fn enqueue_kernel(state: &mut State, kernel: &Kernel) -> Result<()> {
        let stream = state.streams[state.current];
        let Kernel { op, inputs, output } = kernel;
        let kernels = &state.kernels;
        match op {
            KernelOp::Copy => kernels.copy(&inputs[0], output, stream),
            KernelOp::Unary(op) => kernels.unary(*op, &inputs[0], output, stream),
            KernelOp::Cast => kernels.cast(&inputs[0], output, stream),
            KernelOp::Binary(op) => kernels.binary(*op, &inputs[0], &inputs[1], output, stream),
            KernelOp::Where => kernels.select(&inputs[0], &inputs[1], &inputs[2], output, stream),
            KernelOp::Reduce(op, axes) => kernels.reduce(*op, &inputs[0], axes, output, stream),
            KernelOp::Broadcast(axes) => kernels.broadcast(&inputs[0], axes, output, stream),
            KernelOp::Fill(value) => kernels.fill(*value, output, stream),
            KernelOp::Iota { axis, offset } => kernels.iota(*axis, *offset, output, stream),
            KernelOp::Matmul | KernelOp::MatmulAccumulate | KernelOp::Linear => {
                let workspace = Self::workspace(state)?;
                let mut scratch = Scratch::new(state.poison);
                let bias = kernel
                    .inputs
                    .get(2)
                    .filter(|_| kernel.op == KernelOp::Linear);
                for (lhs, rhs, out) in &gemms(kernel) {
                    let gemm = Gemm {
                        lhs,
                        rhs,
                        bias,
                        out,
                        accumulate: kernel.op == KernelOp::MatmulAccumulate,
                    };
                    state
                        .blas
                        .gemm(gemm, stream, workspace, &state.kernels, &mut scratch)?;
                }
                Ok(())
            }
        }
    }

    /// Waits until `stream` (index `index`) is idle, polling, so that a
    /// stream stuck on a communication whose peer never came, or on a peer
    /// that failed, is an error naming the stream instead of a hang.
    fn drain(&self, index: usize, stream: Stream) -> Result<()> {
        let start = std::time::Instant::now();
        loop {
            // SAFETY: a live stream.
            match unsafe { sys::cuStreamQuery(stream) } {
                sys::CUresult::CUDA_SUCCESS => return Ok(()),
                sys::CUresult::CUDA_ERROR_NOT_READY => {}
                error => return error.result().check("cuStreamQuery"),
            }
            if let Some(peer) = self.faults.first_failed().filter(|&peer| peer != self.rank) {
                return Err(Error::PeerFailed(peer));
            }
            if start.elapsed() > self.timeout {
                return Err(Error::Timeout {
                    after: self.timeout,
                    waiting: format!(
                        "for stream {index} to finish: its work waits for a communication \
                         that did not complete (a peer that never posted its half of a \
                         transfer or collective)"
                    ),
                });
            }
            if start.elapsed() < Duration::from_millis(1) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }

    /// The current stream's workspace for cuBLASLt.
    fn workspace(state: &mut State) -> Result<sys::CUdeviceptr> {
        let current = state.current;
        if let Some(workspace) = state.workspaces[current] {
            return Ok(workspace);
        }
        // SAFETY: a plain device allocation, freed when the device drops.
        let workspace =
            unsafe { cu::malloc_sync(blas::WORKSPACE) }.check("allocating a cuBLASLt workspace")?;
        state.workspaces[current] = Some(workspace);
        Ok(workspace)
    }
}

fn new_event() -> Result<sys::CUevent> {
    cu::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).check("cuEventCreate")
}

/// `view` with `axis` split into `(parts, extent / parts)` and the parts
/// moved first: the layout NCCL's concatenating collectives use.
fn split(view: &View, axis: usize, parts: usize) -> View {
    let extent = view.sizes[axis] / parts;
    let mut sizes = vec![parts];
    sizes.extend(&view.sizes);
    sizes[axis + 1] = extent;
    let mut strides = vec![extent * view.strides[axis]];
    strides.extend(&view.strides);
    View {
        sizes,
        strides,
        ..view.clone()
    }
}

/// Whether `view` is one dense row-major block.
fn is_contiguous(view: &View) -> bool {
    let (sizes, strides) = kernels::coalesce(&view.sizes, std::slice::from_ref(&view.strides));
    sizes.len() <= 1 && strides[0].first().is_none_or(|&stride| stride == 1)
}

/// Temporary device buffers of one op, allocated and freed in stream order
/// (`cuMemAllocAsync`/`cuMemFreeAsync`), so later work reuses them safely.
pub(crate) struct Scratch {
    buffers: Vec<(sys::CUdeviceptr, Stream)>,
    /// Whether a new buffer is filled with NaN first ([`Config::poison`]).
    poison: bool,
}

impl Scratch {
    pub fn new(poison: bool) -> Scratch {
        Scratch {
            buffers: Vec::new(),
            poison,
        }
    }

    /// A contiguous buffer shaped as `like`, on `stream`.
    fn contiguous(&mut self, like: &View, stream: Stream) -> Result<View> {
        let bytes = (like.numel() * like.dtype.size()).max(1);
        // SAFETY: freed on the same stream when `self` drops.
        let ptr = unsafe { cu::malloc_async(stream, bytes) }.check("cuMemAllocAsync")?;
        self.buffers.push((ptr, stream));
        if self.poison {
            // SAFETY: `bytes` bytes just allocated on `stream`.
            unsafe { cu::memset_d8_async(ptr, 0xff, bytes, stream) }.check("cuMemsetD8Async")?;
        }
        Ok(View::contiguous(like.dtype, ptr as *mut u8, &like.sizes))
    }

    /// A contiguous copy of `view`.
    fn contiguous_copy(&mut self, kernels: &Kernels, view: &View, stream: Stream) -> Result<View> {
        let copy = self.contiguous(view, stream)?;
        kernels.copy(view, &copy, stream)?;
        Ok(copy)
    }

    /// `view` itself if contiguous, else a contiguous copy of it.
    fn readable(&mut self, kernels: &Kernels, view: &View, stream: Stream) -> Result<View> {
        if is_contiguous(view) {
            Ok(view.clone())
        } else {
            self.contiguous_copy(kernels, view, stream)
        }
    }

    /// Where to write `view`'s contents contiguously, and whether they must
    /// then be copied into `view`.
    fn writable(&mut self, view: &View, stream: Stream) -> Result<(View, bool)> {
        if is_contiguous(view) {
            Ok((view.clone(), false))
        } else {
            Ok((self.contiguous(view, stream)?, true))
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for &(ptr, stream) in &self.buffers {
            // SAFETY: allocated on `stream` by `contiguous`; freed after the
            // work enqueued on it so far.
            let _ = unsafe { cu::free_async(ptr, stream) };
        }
    }
}

impl Device for CudaDevice {
    fn rank(&self) -> usize {
        self.rank
    }

    fn num_devices(&self) -> usize {
        self.ranks
    }

    fn failed(&self) -> bool {
        self.faults.failed(self.rank)
    }

    fn fail(&self, op: &str, error: Error) {
        self.faults.fail(self.rank, op, error);
    }

    fn current_stream(&self) -> i64 {
        lock(&self.state).current as i64
    }

    fn set_current_stream(&self, stream: i64) -> Result<()> {
        let stream = self.check_stream(stream)?;
        let mut state = lock(&self.state);
        let left = state.current;
        state.touched.leave(left);
        state.current = stream;
        Ok(())
    }

    fn stream_from_pool(&self, index: i64) -> i64 {
        1 + index.rem_euclid(self.num_streams as i64)
    }

    fn sync_stream(&self, stream: i64) -> Result<()> {
        let stream = self.check_stream(stream)?;
        let state = self.state()?;
        if stream == state.current {
            return Ok(());
        }
        Self::join(&state, stream)
    }

    fn alloc(&self, site: i64, bytes: usize) -> Result<NonNull<u8>> {
        alloc::alloc(&mut *self.state()?, site, bytes)
    }

    fn dealloc(&self, ptr: *mut u8) -> Result<()> {
        alloc::dealloc(&mut *self.state()?, ptr)
    }

    fn allocations(&self) -> &Arc<Allocations> {
        &self.allocations
    }

    fn compute(&self, kernel: Kernel) -> Result<()> {
        kernel.validate()?;
        let mut state = self.state()?;
        Self::traced(
            &mut state,
            || label(kernel.entry()),
            |state| Self::enqueue_kernel(state, &kernel),
        )
    }

    fn fused(&self, kernel: crate::fused::FusedKernel) -> Result<()> {
        kernel.validate()?;
        let mut state = self.state()?;
        Self::traced(
            &mut state,
            || label(kernel.entry()),
            |state| fused::launch(&kernel, state.streams[state.current]),
        )
    }

    fn collective(&self, op: CollectiveOp) -> Result<Request> {
        op.validate()?;
        let mut guard = self.state()?;
        let state = &mut *guard;
        if op.team.position(self.rank).is_none() {
            return Ok(Self::complete_request(state));
        }
        if state.group.is_some() {
            return Err(Error::Invalid(
                "a collective inside a coalescing group: groups hold sends and receives".into(),
            ));
        }
        let posting = self.posting(format!("{} on team {}", op.entry().name(), op.team));
        Self::traced(
            state,
            || label(op.entry()),
            |state| self.post_collective(state, &op),
        )?;
        let request = Self::record_request(state)?;
        Ok(posting.posted(state, request))
    }

    fn send(&self, transfer: Transfer) -> Result<Request> {
        self.transfer(transfer, true)
    }

    fn recv(&self, transfer: Transfer) -> Result<Request> {
        self.transfer(transfer, false)
    }

    fn start_coalescing(&self) -> Result<()> {
        let mut state = self.state()?;
        if state.group.is_some() {
            return Err(Error::Invalid("coalescing groups do not nest".into()));
        }
        state.requests.push(Slot::Open);
        let request = state.requests.len() - 1;
        state.group = Some(Group {
            request,
            posts: Vec::new(),
            ipc: Vec::new(),
            copies: Vec::new(),
            scratch: Scratch::new(state.poison),
        });
        Ok(())
    }

    fn end_coalescing(&self) -> Result<Request> {
        let mut guard = self.state()?;
        let state = &mut *guard;
        let Some(mut group) = state.group.take() else {
            return Err(Error::Invalid(
                "closes no group: no start_coalescing before it".into(),
            ));
        };
        let posting = self.posting(format!(
            "a coalesced group of {} sends and receives",
            group.posts.len() + group.ipc.len()
        ));
        // `cuda` receives first: a send's host waits for its receiver's
        // receive, so posting them first lets any order in a group complete.
        let (sends, recvs): (Vec<P2p>, Vec<P2p>) = group.ipc.drain(..).partition(|p2p| p2p.send);
        let mut events = Vec::new();
        for p2p in recvs.iter().chain(&sends) {
            events.push(self.post_ipc(state, p2p, &mut group.scratch)?);
        }
        for post in &group.posts {
            self.comm(state, &post.team)?;
        }
        if !group.posts.is_empty() {
            let posts = &group.posts;
            Self::traced(
                state,
                || format!("coalesced {} send/recv", posts.len()),
                |state| {
                    nccl::check(cudarc::nccl::result::group_start(), "ncclGroupStart", None)?;
                    let posted = posts
                        .iter()
                        .try_for_each(|post| Self::post_p2p(state, post));
                    // The group is closed even when a post failed, so NCCL's state stays sane.
                    nccl::check(cudarc::nccl::result::group_end(), "ncclGroupEnd", None)?;
                    posted
                },
            )?;
        }
        for (staging, target, stream) in &group.copies {
            state
                .kernels
                .copy(staging, target, state.streams[*stream])?;
        }
        // The group's request covers every stream it posted on.
        let current = state.current;
        let mut streams: Vec<usize> = group.posts.iter().map(|post| post.stream).collect();
        streams.sort_unstable();
        streams.dedup();
        for other in streams.into_iter().filter(|&other| other != current) {
            Self::join(state, other)?;
        }
        let stream = state.streams[current];
        drop(group.scratch);
        let event = new_or_reused_event(state)?;
        // SAFETY: live event and stream.
        unsafe { cu::event::record(event, stream) }.check("cuEventRecord")?;
        events.push(Completion::Event(event));
        state.requests[group.request] = Slot::Done(events);
        let request = state.retired + group.request as Request + 1;
        Ok(posting.posted(state, request))
    }

    fn wait(&self, request: Request) -> Result<()> {
        let state = self.state()?;
        let slot = usize::try_from(request - state.retired - 1)
            .ok()
            .and_then(|index| state.requests.get(index))
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "request {request} is unknown (requests do not outlive a synchronize)"
                ))
            })?;
        match slot {
            Slot::Open => Err(Error::Invalid(format!(
                "request {request} is of a coalescing group that has not ended: \
                 wait for the group's end_coalescing request"
            ))),
            Slot::Done(completions) => completions
                .iter()
                .try_for_each(|completion| completion.enqueue(state.streams[state.current])),
        }
    }

    fn share_mem_handle(&self, buffer: View, team: Team) -> Result<()> {
        if team.position(self.rank).is_none() {
            return Ok(());
        }
        let mut guard = self.state()?;
        let state = &mut *guard;
        let number = || {
            let number = state.exchanges.entry(team.clone()).or_default();
            *number += 1;
            *number - 1
        };
        state.ipc.share(&self.me(), &team, &buffer, number)
    }

    fn barrier(&self, team: Team, backend: Transport) -> Result<()> {
        if backend != Transport::Nccl {
            return Err(Error::Invalid(
                "a barrier runs on the 'nccl' backend".into(),
            ));
        }
        let Some(position) = team.position(self.rank) else {
            return Ok(());
        };
        let number = {
            let mut state = lock(&self.state);
            Self::refuse_in_capture(
                state.capturing,
                "a barrier",
                "it is a meeting of the ranks' hosts, which a replay does not repeat",
            )?;
            let number = state.exchanges.entry(team.clone()).or_default();
            *number += 1;
            *number - 1
        };
        self.bootstrap
            .all_gather(&team, number, position, Vec::new())
            .map(drop)
    }

    fn synchronize(&self) -> Result<()> {
        let mut guard = self.state()?;
        let state = &mut *guard;
        let drained = state
            .streams
            .iter()
            .enumerate()
            .try_for_each(|(index, &stream)| self.drain(index, stream));
        if let Err(error) = drained {
            // Give the streams back before failing, so nothing later (nor
            // another world on this GPU) queues behind a wait that never ends.
            state.ipc.release()?;
            return Err(error);
        }
        state.ipc.settled();
        for comm in state.comms.values() {
            comm.async_error()?;
        }
        if let Some(timeline) = &mut state.timeline {
            timeline.collect()?;
        }
        if state.group.is_none() {
            // Before any event is reused: the watchdog stops asking about them.
            self.inflight.retire();
            state.enqueued.settle(&mut state.events);
            state.retired += state.requests.len() as Request;
            for slot in state.requests.drain(..) {
                if let Slot::Done(completions) = slot {
                    state
                        .events
                        .extend(completions.iter().filter_map(Completion::event));
                }
            }
        }
        Ok(())
    }
}

/// An entry as a trace names it: `matmul_bf16`.
fn label(entry: Entry) -> String {
    let name = entry.name();
    name.strip_prefix("hir_rt_").unwrap_or(&name).to_string()
}

fn new_or_reused_event(state: &mut State) -> Result<sys::CUevent> {
    match state.events.pop() {
        Some(event) => Ok(event),
        None => new_event(),
    }
}

/// The rank-3 GEMMs (`[batch, m, k] x [batch, k, n] -> [batch, m, n]`) of a
/// validated matmul or linear: batch axes that collapse into one stride
/// become the GEMM's batch (folded into `m` when rows continue across it and
/// the rhs is shared); the others are looped over. An operand's batch axis
/// of extent 1 (or one it lacks) has stride 0 there: cuBLASLt reads the same
/// matrix for every entry.
fn gemms(kernel: &Kernel) -> Vec<(View, View, View)> {
    let (lhs, out) = (&kernel.inputs[0], &kernel.output);
    // As row-major [batch.., m, k] x [batch.. or none, k, n].
    let (mut lhs, rhs, mut out) = match kernel.op {
        KernelOp::Linear => {
            let weight = &kernel.inputs[1];
            let transposed = View {
                sizes: vec![weight.sizes[1], weight.sizes[0]],
                strides: vec![weight.strides[1], weight.strides[0]],
                ..weight.clone()
            };
            // [B.., K] as [B.., 1, K]: rows fold below.
            let mut lhs = lhs.clone();
            let mut out = out.clone();
            let k = lhs.rank() - 1;
            lhs.sizes.insert(k, 1);
            lhs.strides.insert(k, 0);
            let n = out.rank() - 1;
            out.sizes.insert(n, 1);
            out.strides.insert(n, 0);
            (lhs, transposed, out)
        }
        _ if lhs.rank() == 1 => {
            let mut lhs = lhs.clone();
            lhs.sizes.insert(0, 1);
            lhs.strides.insert(0, 0);
            let mut out = out.clone();
            out.sizes.insert(0, 1);
            out.strides.insert(0, 0);
            (lhs, kernel.inputs[1].clone(), out)
        }
        _ => (lhs.clone(), kernel.inputs[1].clone(), out.clone()),
    };
    // The output's batch axes, and each operand's stride along them: its own
    // (aligned from the right), or 0 where it lacks or broadcasts the axis
    // (torch.matmul's broadcasting: a broadcast matrix is read again, never
    // copied).
    let batch = out.sizes[..out.rank() - 2].to_vec();
    let batch_rank = batch.len();
    let aligned = |view: &View| -> Vec<usize> {
        batch_axes_read(&view.sizes[..view.rank() - 2], &batch)
            .into_iter()
            .map(|axis| axis.map_or(0, |axis| view.strides[axis]))
            .collect()
    };
    let (lhs_batch, rhs_batch) = (aligned(&lhs), aligned(&rhs));
    let out_batch = out.strides[..batch_rank].to_vec();
    let lhs_rows = lhs.rank() - 2;
    // Fold batch axes into m where the rhs is one matrix for every entry and
    // lhs and out rows continue across them.
    let shared = (0..batch_rank).all(|axis| rhs_batch[axis] == 0 || batch[axis] == 1);
    let lhs_whole = (0..batch_rank).all(|axis| lhs_batch[axis] != 0 || batch[axis] == 1);
    if shared && lhs_whole {
        let (sizes, strides) = kernels::coalesce(
            &[&batch[..], &[lhs.sizes[lhs_rows]]].concat(),
            &[
                [&lhs_batch[..], &[lhs.strides[lhs_rows]]].concat(),
                [&out_batch[..], &[out.strides[batch_rank]]].concat(),
            ],
        );
        if sizes.len() <= 1 {
            let rows = sizes.first().copied().unwrap_or(1);
            let (ls, os) = (
                strides[0].first().copied().unwrap_or(0),
                strides[1].first().copied().unwrap_or(0),
            );
            lhs = View {
                sizes: vec![1, rows, lhs.sizes[lhs_rows + 1]],
                strides: vec![0, ls, lhs.strides[lhs_rows + 1]],
                ..lhs
            };
            out = View {
                sizes: vec![1, rows, out.sizes[batch_rank + 1]],
                strides: vec![0, os, out.strides[batch_rank + 1]],
                ..out
            };
            let matrix = rhs.rank() - 2;
            let rhs = View {
                sizes: [&[1][..], &rhs.sizes[matrix..]].concat(),
                strides: [&[0][..], &rhs.strides[matrix..]].concat(),
                ..rhs
            };
            return vec![(lhs, rhs, out)];
        }
    }
    let (sizes, strides) = kernels::coalesce(&batch, &[lhs_batch, rhs_batch, out_batch]);
    let matrix = |view: &View, offset: usize| {
        (
            view.sizes[offset..].to_vec(),
            view.strides[offset..].to_vec(),
        )
    };
    let (lm, rm, om) = (
        matrix(&lhs, lhs_rows),
        matrix(&rhs, rhs.rank() - 2),
        matrix(&out, batch_rank),
    );
    // The innermost collapsed batch axis is the GEMM's; the others loop.
    let (inner, outer) = match sizes.split_last() {
        Some((&inner, outer)) => (inner, outer.to_vec()),
        None => (1, Vec::new()),
    };
    let inner_strides: Vec<usize> = strides
        .iter()
        .map(|s| s.last().copied().unwrap_or(0))
        .collect();
    let outer_count: usize = outer.iter().product();
    let mut gemms = Vec::with_capacity(outer_count);
    for index in 0..outer_count {
        let mut rest = index;
        let mut offsets = [0usize; 3];
        for axis in (0..outer.len()).rev() {
            let i = rest % outer[axis];
            rest /= outer[axis];
            for (offset, view) in offsets.iter_mut().zip(&strides) {
                *offset += i * view[axis];
            }
        }
        let at = |view: &View,
                  (sizes, strides): &(Vec<usize>, Vec<usize>),
                  offset: usize,
                  batch_stride: usize| View {
            ptr: view.ptr.wrapping_add(offset * view.dtype.size()),
            sizes: [&[inner][..], sizes].concat(),
            strides: [&[batch_stride][..], strides].concat(),
            dtype: view.dtype,
        };
        gemms.push((
            at(&lhs, &lm, offsets[0], inner_strides[0]),
            at(&rhs, &rm, offsets[1], inner_strides[1]),
            at(&out, &om, offsets[2], inner_strides[2]),
        ));
    }
    gemms
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        if self.bind().is_err() {
            return;
        }
        self.inflight.retire();
        let streams = lock(&self.state).streams.clone();
        let _ = lock(&self.state).ipc.release();
        if streams
            .iter()
            .enumerate()
            .any(|(index, &stream)| self.drain(index, stream).is_err())
        {
            // A stream is stuck on a communication that will never complete:
            // its handles and memory are left to the process's exit, since
            // destroying them would wait forever or pull memory from under it.
            return;
        }
        let state = self
            .state
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // SAFETY: every handle below was created by this device and is
        // destroyed once, after its streams finished.
        unsafe {
            state.comms.clear();
            state.timeline = None;
            drop(std::mem::take(&mut state.ipc));
            for workspace in state.workspaces.iter().flatten() {
                let _ = cu::free_sync(*workspace);
            }
            for slot in state.requests.drain(..) {
                if let Slot::Done(completions) = slot {
                    for event in completions.iter().filter_map(Completion::event) {
                        let _ = cu::event::destroy(event);
                    }
                }
            }
            state.enqueued.settle(&mut state.events);
            for &event in state.events.iter().chain(&state.marks) {
                let _ = cu::event::destroy(event);
            }
            for &stream in &state.streams {
                let _ = cu::stream::destroy(stream);
            }
        }
    }
}

/// What the watchdog watches of a cuda rank.
struct CudaWatch(Arc<CudaDevice>);

impl Watched for CudaWatch {
    fn rank(&self) -> usize {
        self.0.rank
    }

    fn stuck(&self, timeout: Duration) -> Option<Stuck> {
        // The events belong to the rank's context.
        self.0.bind().ok()?;
        self.0.inflight.stuck(Instant::now(), timeout, |event| {
            let Some(event) = event.0 else {
                // Still being posted (creating a communicator, or inside NCCL).
                return false;
            };
            // SAFETY: a live event (retired ones are not asked about).
            match unsafe { cu::event::query(event) } {
                Ok(()) => true,
                Err(error) => error.0 != sys::cudaError_enum::CUDA_ERROR_NOT_READY,
            }
        })
    }

    fn error(&self) -> Option<RankError> {
        self.0
            .faults
            .errors()
            .into_iter()
            .find(|error| error.rank == self.0.rank)
    }

    fn fail(&self, op: &str, error: Error) {
        self.0.fail(op, error);
    }

    fn abort(&self) {
        let _ = self.0.bind();
        let cells: Vec<Arc<CommCell>> = lock(&self.0.live).clone();
        for cell in cells {
            cell.abort(Duration::from_secs(1));
        }
    }
}
