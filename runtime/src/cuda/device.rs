//! A rank's device: creating it (context, streams, kernels, allocator),
//! the launcher's copies, the [`Device`] entries the program calls, and
//! tearing it down once its streams are idle.

use super::alloc::{self, Allocator, DeviceBuffer};
use super::blas::Blas;
use super::comm::Group;
use super::kernels::Kernels;
use super::p2p::P2p;
use super::scratch::Scratch;
use super::streams::{Completion, Slot, label, new_event, new_or_reused_event};
use super::timeline::Timeline;
use super::{Check, Config, CudaDevice, State, caller_stream, fused, ipc::Ipc, nccl};
use crate::bootstrap::Inflight;
use crate::bounds::Allocations;
use crate::core::bootstrap::Bootstrap;
use crate::core::sync::Faults;
use crate::device::{Device, Request};
use crate::error::{Error, Result};
use crate::lock;
use crate::memref::View;
use crate::ops::{CollectiveOp, Kernel, Team, Transfer};
use crate::trace::Trace;
use cudarc::driver::{CudaContext, result as cu, sys};
use hir_abi::{DType, Transport};
use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

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
            cudnn: Default::default(),
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
    pub(super) fn bind(&self) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .check("binding the rank's context")
    }

    /// The state, with the context bound.
    pub(super) fn state(&self) -> Result<std::sync::MutexGuard<'_, State>> {
        self.bind()?;
        Ok(lock(&self.state))
    }

    pub(super) fn check_stream(&self, stream: i64) -> Result<usize> {
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

    /// Fills the `dtype` array of `shape` at `dst` with the random input
    /// values keyed `key` ([`crate::random`]) of the global array it is a
    /// box of: element `i` of it is global element `first + i·global_strides`
    /// (a dot product over the axes). Ordered after the work on stream 0
    /// and complete when this returns.
    pub fn fill_random(
        &self,
        dst: *mut u8,
        dtype: DType,
        shape: &[usize],
        global_strides: &[usize],
        first: usize,
        key: u64,
    ) -> Result<()> {
        let state = self.state()?;
        let view = View::contiguous(dtype, dst, shape);
        state
            .kernels
            .random(key, first, global_strides, &view, state.streams[0])?;
        // SAFETY: a live stream of the bound context.
        unsafe { cu::stream::synchronize(state.streams[0]).check("cuStreamSynchronize") }
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
        state.enqueued.note_current(stream);
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
            Self::release_requests(state);
        }
        Ok(())
    }
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
