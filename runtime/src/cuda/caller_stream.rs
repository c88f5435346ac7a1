//! A launcher's CUDA stream as a call's stream 0, the call enqueued on it
//! as a library op is (e.g. torch's current stream, for the Python package).
//!
//! [`CudaDevice::on_stream`] lends the rank a caller's stream for one call:
//! the rank's own stream 0 is first joined into it (so the call runs after
//! the rank's earlier calls, on any stream, and after the caller's work
//! queued there so far), the call's stream 0 is the caller's (the host
//! program's forks wait on it, its joins end on it, its stream-0 kernels run
//! on it), then every pool stream it made current is joined back into it
//! (the others hold none of its work), an end event is recorded there, and
//! the rank's own stream 0 waits for that event. The
//! host does not wait: later work on the caller's stream runs after the
//! call, and the call's outputs are the caller's once its stream reaches
//! them. Calls on different caller streams run one after another in call
//! order: the rank's pool and its per-stream state are shared.
//!
//! What `World::run`'s synchronize does after every call happens here
//! without the host waiting, per call, once its end event has completed:
//! the call's request events are reused, the watchdog forgets its
//! communications. The host asks (`cuEventQuery`, which flushes the
//! driver's queue and costs about a third of a small call's launch) only
//! once [`RETIRE_AT`] calls are outstanding, and then retires every one that
//! ended, found by a binary search. A call's requests are retired from the
//! request table when it returns (a request does not outlive the call that
//! posts it). At most
//! [`MAX_ENQUEUED`] calls are outstanding: the next one waits on the host
//! for the oldest, with the world's timeout, so a loop of calls holds
//! bounded memory however far the host runs ahead. An NCCL communicator's
//! asynchronous error fails the next call; a GPU error of an earlier call
//! fails a call at most [`RETIRE_AT`] calls later, and a synchronize reports
//! it too. A call that fails, a traced
//! world, and a call that armed `cuda` (CUDA-IPC) receive flags synchronize
//! as `World::run` does: the host waits for them.
//!
//! **A capturing caller's stream** (`torch.cuda.graph`): the call is
//! captured into the caller's graph, and every replay of that graph repeats
//! it. The rank's own streams are first drained on the host (a captured
//! stream may wait for no work outside its capture), the rank's thread makes
//! its calls in the relaxed capture mode for the call (so that the
//! caller's global mode does not forbid them), every pool stream is forked
//! from the caller's stream (so that all the call enqueues is captured,
//! whatever stream it is on) and joined back, and the rank's own stream 0
//! does not wait for the call (it cannot wait for a capture): later direct
//! calls are not ordered after a replay, as torch's own work on another
//! stream is not. Nothing runs while capturing, so the call's requests end
//! with it. Refused in such a capture: `cuda` (CUDA-IPC) transfers, whose
//! flag values only HIR's own graphs renumber before each replay
//! (`ipc_graph.rs`), and barriers.

use super::streams::{Completion, EventPtr, Slot, new_or_reused_event, wait_for};
use super::{Check, CudaDevice, State, Stream, World};
use crate::bootstrap::Inflight;
use crate::core::rank_threads;
use crate::device::{Device, Request};
use crate::error::{Error, RankError, Result, RunError};
use cudarc::driver::{result as cu, sys};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A caller's CUDA stream: a raw `CUstream` (`cudaStream_t`) of the rank's
/// device, e.g. torch's `torch.cuda.current_stream().cuda_stream`; 0 is the
/// device's legacy default stream.
pub type CallerStream = usize;

/// Calls on caller streams whose end the host has not seen, at most.
pub(super) const MAX_ENQUEUED: usize = 64;

/// Calls on caller streams outstanding before the host asks which ended.
pub(super) const RETIRE_AT: usize = 16;

/// A rank's calls enqueued on caller streams.
#[derive(Default)]
pub(super) struct Enqueued {
    /// Oldest first.
    calls: VecDeque<Call>,
    /// The rank's own stream 0 while a caller's stream stands in for it.
    own: Option<Stream>,
    /// While the caller's stream is capturing: this thread's capture mode
    /// before the call.
    capture: Option<sys::CUstreamCaptureMode>,
    /// Per stream, whether the call made it current: only those have work
    /// of the call to join back.
    used: Vec<bool>,
}

/// A call enqueued on a caller's stream.
struct Call {
    /// Recorded on the caller's stream after the call's work, the pool's
    /// included: once it completed, so did every event below.
    end: sys::CUevent,
    /// Its requests' events, reused once `end` completed.
    events: Vec<sys::CUevent>,
    /// Its communications are those the watchdog numbered below this.
    watched: u64,
}

impl Enqueued {
    /// Every call's events, for reuse: the rank's streams are idle.
    pub fn settle(&mut self, events: &mut Vec<sys::CUevent>) {
        for call in self.calls.drain(..) {
            events.push(call.end);
            events.extend(call.events);
        }
    }

    /// `stream` is current: while a call is lent a caller's stream, that
    /// call's work is on it.
    pub fn note_current(&mut self, stream: usize) {
        if let Some(used) = self.used.get_mut(stream) {
            *used = true;
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.calls.len()
    }
}

/// Whether `event` completed; a GPU error of the work before it is an error.
fn complete(event: sys::CUevent) -> Result<bool> {
    // SAFETY: a live event of the bound context.
    match unsafe { cu::event::query(event) } {
        Ok(()) => Ok(true),
        Err(error) if error.0 == sys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
        Err(error) => Err(Error::Cuda(format!(
            "a call enqueued earlier on a caller's stream failed on the GPU: {error}"
        ))),
    }
}

/// Whether `stream` is capturing a graph.
fn is_capturing(stream: Stream) -> Result<bool> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: a live stream of the bound context (the caller's promise).
    unsafe { sys::cuStreamIsCapturing(stream, &mut status) }
        .result()
        .check("asking whether the caller's stream captures (cuStreamIsCapturing)")?;
    Ok(status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}

/// Sets this thread's stream-capture mode; returns the one it had.
fn exchange_capture_mode(mut mode: sys::CUstreamCaptureMode) -> Result<sys::CUstreamCaptureMode> {
    // SAFETY: a thread-local setting of the driver.
    unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) }
        .result()
        .check("cuThreadExchangeStreamCaptureMode")?;
    Ok(mode)
}

impl World {
    /// Runs `body` on one thread per rank with that rank entered, the rank
    /// of `local_ranks()[i]` on the caller's stream `streams[i]`
    /// ([`CudaDevice::on_stream`]), and returns once the work is enqueued.
    pub fn run_on<T: Send>(
        &self,
        streams: &[CallerStream],
        body: impl Fn(&CudaDevice) -> T + Sync,
    ) -> Result<Vec<T>, RunError> {
        if streams.len() != self.devices.len() {
            return Err(RunError {
                errors: vec![RankError {
                    rank: self.devices[0].rank,
                    op: "launcher".into(),
                    error: Error::Invalid(format!(
                        "this process runs {} ranks, but {} caller streams were given",
                        self.devices.len(),
                        streams.len()
                    )),
                }],
            });
        }
        let work = |device: &CudaDevice| {
            device.bind()?;
            let index = self
                .devices
                .iter()
                .position(|other| other.rank == device.rank)
                .expect("the threads run the world's devices");
            device.on_stream(streams[index], || body(device))
        };
        let finish = |device: &CudaDevice| {
            if device.failed()
                && let Err(error) = device.synchronize()
            {
                device.fail("synchronize", error);
            }
        };
        if let [device] = &self.devices[..] {
            // One rank enqueues on the caller's thread, which gets its own
            // context back (torch's current device, say) afterwards.
            let previous = current_context().map_err(|error| RunError {
                errors: vec![RankError {
                    rank: device.rank,
                    op: "launcher".into(),
                    error,
                }],
            })?;
            let value = rank_threads::run_here(&self.calls, device, &self.faults, work, finish);
            if previous != device.ctx.cu_ctx() {
                // SAFETY: a context this thread had current (or none).
                unsafe { sys::cuCtxSetCurrent(previous) };
            }
            return value.map(|value| vec![value]);
        }
        rank_threads::run(
            &self.calls,
            &self.devices,
            "hir-cuda-rank",
            &self.faults,
            self.devices[0].timeout,
            work,
            finish,
        )
    }
}

/// The calling thread's current CUDA context (null for none).
fn current_context() -> Result<sys::CUcontext> {
    let mut context = std::ptr::null_mut();
    // SAFETY: writes the current context handle.
    unsafe { sys::cuCtxGetCurrent(&mut context) }
        .result()
        .check("finding the caller's context")?;
    Ok(context)
}

impl CudaDevice {
    /// Runs `call` (which enqueues a host program's work on this rank) with
    /// `stream` as its stream 0, and returns once the work is enqueued: see
    /// the module's documentation. Stream 0 must be current, as between
    /// calls; the rank's context must be bound to this thread.
    pub fn on_stream<T>(&self, stream: CallerStream, call: impl FnOnce() -> T) -> Result<T> {
        self.lend(stream as Stream)?;
        let lent = Lent(self);
        let value = call();
        drop(lent);
        Ok(value)
    }

    /// Makes `stream` stream 0, after the rank's own.
    fn lend(&self, stream: Stream) -> Result<()> {
        // In a capture, this thread's calls (the drain below included) must
        // not be forbidden by the caller's global capture mode.
        let capture = if is_capturing(stream)? {
            let relaxed = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
            Some(exchange_capture_mode(relaxed)?)
        } else {
            None
        };
        let lent = self.lend_to(stream, capture);
        if let (Err(_), Some(mode)) = (&lent, capture) {
            // The error is the call's; this one would only hide it.
            exchange_capture_mode(mode).ok();
        }
        lent
    }

    fn lend_to(&self, stream: Stream, capture: Option<sys::CUstreamCaptureMode>) -> Result<()> {
        if capture.is_some() {
            self.synchronize()?;
        }
        let mut guard = self.state()?;
        let state = &mut *guard;
        if state.enqueued.own.is_some() || state.capturing || state.current != 0 {
            return Err(Error::Invalid(
                "a call on a caller's stream starts between calls, with stream 0 current \
                 (not inside another call or a capture)"
                    .into(),
            ));
        }
        self.retire_enqueued(state)?;
        for comm in state.comms.values() {
            comm.async_error()?;
        }
        match capture {
            None => wait_for(stream, state.marks[0], state.streams[0])?,
            Some(_) => {
                // The free blocks' marks are events outside the capture,
                // which no captured stream may wait for: the streams are
                // drained, the marks dropped.
                super::alloc::settle(state);
                super::graph::fork_pool(state, stream)?;
            }
        }
        state.enqueued.own = Some(state.streams[0]);
        state.streams[0] = stream;
        // A capture forked every stream: all of them join back.
        state.enqueued.used = vec![capture.is_some(); state.streams.len()];
        state.enqueued.capture = capture;
        state.capturing = capture.is_some();
        if capture.is_some() {
            state.ipc.begin_caller_capture();
        }
        Ok(())
    }

    /// Gives the rank its own stream 0 back, after the call's work on the
    /// caller's: see the module's documentation.
    fn give_back(&self) -> Result<()> {
        let synchronize = {
            let mut guard = self.state()?;
            let state = &mut *guard;
            let Some(own) = state.enqueued.own.take() else {
                return Ok(());
            };
            let caller = std::mem::replace(&mut state.streams[0], own);
            let used = std::mem::take(&mut state.enqueued.used);
            for index in (1..state.streams.len()).filter(|&index| used[index]) {
                wait_for(caller, state.marks[index], state.streams[index])?;
            }
            if let Some(mode) = state.enqueued.capture.take() {
                state.ipc.end_caller_capture(caller)?;
                // Marks recorded into the graph: no stream outside may wait
                // for them.
                super::alloc::settle(state);
                state.capturing = false;
                self.inflight.retire();
                Self::release_requests(state);
                exchange_capture_mode(mode)?;
                return Ok(());
            }
            let end = new_or_reused_event(state)?;
            wait_for(own, end, caller)?;
            let group = state.group.is_some();
            if !group {
                Self::retire_requests(state, end, self.inflight.next_id());
            }
            group || state.timeline.is_some() || state.ipc.armed()
        };
        if synchronize {
            self.synchronize()?;
        }
        Ok(())
    }

    /// Moves the call's requests out of the table into an enqueued call
    /// that ends with `end`.
    fn retire_requests(state: &mut State, end: sys::CUevent, watched: u64) {
        let mut events = Vec::new();
        state.retired += state.requests.len() as Request;
        for slot in state.requests.drain(..) {
            if let Slot::Done(completions) = slot {
                events.extend(completions.iter().filter_map(Completion::event));
            }
        }
        state.enqueued.calls.push_back(Call {
            end,
            events,
            watched,
        });
    }

    /// With [`RETIRE_AT`] calls outstanding, gives back the events of those
    /// that ended; with [`MAX_ENQUEUED`], first waits for the oldest. Calls
    /// end in call order (each one's stream waits, through the rank's own
    /// stream 0, for the end of the one before), so a binary search finds
    /// those that did in a few queries, however many there are.
    fn retire_enqueued(&self, state: &mut State) -> Result<()> {
        let calls = &state.enqueued.calls;
        if calls.len() < RETIRE_AT {
            return Ok(());
        }
        let mut ended = 0;
        if calls.len() >= MAX_ENQUEUED {
            self.await_end(calls[0].end)?;
            ended = 1;
        }
        // Calls before `ended` ended; from `running` on, they had not.
        let mut running = calls.len();
        while ended < running {
            let middle = (ended + running) / 2;
            if complete(calls[middle].end)? {
                ended = middle + 1;
            } else {
                running = middle;
            }
        }
        for _ in 0..ended {
            Self::retire_oldest(state, &self.inflight);
        }
        Ok(())
    }

    /// Gives back the events of the oldest enqueued call, which ended.
    fn retire_oldest(state: &mut State, inflight: &Inflight<EventPtr>) {
        let call = state.enqueued.calls.pop_front().expect("an enqueued call");
        // Before the events are reused: the watchdog stops asking about them.
        inflight.retire_before(call.watched);
        state.events.push(call.end);
        state.events.extend(call.events);
    }

    /// Waits until `end` completed, polling, with the world's timeout.
    fn await_end(&self, end: sys::CUevent) -> Result<()> {
        let start = Instant::now();
        while !complete(end)? {
            if let Some(peer) = self.faults.first_failed().filter(|&peer| peer != self.rank) {
                return Err(Error::PeerFailed(peer));
            }
            if start.elapsed() > self.timeout {
                return Err(Error::Timeout {
                    after: self.timeout,
                    waiting: format!(
                        "for the oldest of {MAX_ENQUEUED} calls enqueued on caller streams to \
                         finish: its streams wait for a communication that did not complete, \
                         or for the caller's own work"
                    ),
                });
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        Ok(())
    }
}

/// Gives the rank its own stream 0 back when the call returns or unwinds.
struct Lent<'a>(&'a CudaDevice);

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Err(error) = self.0.give_back() {
            self.0.fail("ending a call on the caller's stream", error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CallerStream, MAX_ENQUEUED, RETIRE_AT};
    use crate::cuda::CudaDevice;
    use crate::cuda::tests::{read_f32, world, write_f32};
    use crate::device::Device;
    use crate::memref::View;
    use crate::ops::{Kernel, KernelOp};
    use cudarc::driver::{result as cu, sys};
    use hir_abi::{Binary, DType};

    const LEN: usize = 1 << 20;

    /// `c = a + b` in two halves on the pool streams, forked from stream 0
    /// and left unjoined (the call joins them), then `c += a` over the whole
    /// on stream 0.
    fn program(device: &CudaDevice, [a, b, c]: [usize; 3]) {
        let [a, b, c] = [a, b, c].map(|address| address as *mut u8);
        let half = |ptr: *mut u8, i: usize| {
            View::contiguous(DType::F32, ptr.wrapping_add(i * LEN * 2), &[LEN / 2])
        };
        let whole = |ptr| View::contiguous(DType::F32, ptr, &[LEN]);
        for i in 0..2 {
            let stream = device.stream_from_pool(i as i64);
            device.set_current_stream(stream).unwrap();
            device.sync_stream(0).unwrap();
            let (inputs, output) = (vec![half(a, i), half(b, i)], half(c, i));
            let op = KernelOp::Binary(Binary::Add);
            device.compute(Kernel { op, inputs, output }).unwrap();
        }
        device.set_current_stream(0).unwrap();
        device.sync_stream(1).unwrap();
        device.sync_stream(2).unwrap();
        let (inputs, output) = (vec![whole(c), whole(a)], whole(c));
        let op = KernelOp::Binary(Binary::Add);
        device.compute(Kernel { op, inputs, output }).unwrap();
    }

    /// `program`'s three buffers of LEN f32 (the handles keep them alive):
    /// a = i, b = i / 2, c = -1.
    fn inputs(device: &CudaDevice) -> (Vec<impl Sized>, [*mut u8; 3]) {
        let buffers: Vec<_> = (0..3).map(|_| device.buffer(LEN * 4).unwrap()).collect();
        let [a, b, c] = [0, 1, 2].map(|i| buffers[i].ptr());
        write_f32(device, a, LEN, |i| i as f32);
        write_f32(device, b, LEN, |i| 0.5 * i as f32);
        write_f32(device, c, LEN, |_| -1.0);
        (buffers, [a, b, c])
    }

    /// A flag in pinned host memory mapped into the device: the GPU reads it
    /// (`cuStreamWaitValue32`), the host sets it with a plain store. Set from
    /// a stream instead, the release could queue behind the very wait it
    /// releases: the driver maps streams onto a few hardware queues, and a
    /// stream blocked on a value blocks every stream that shares its queue.
    struct HostFlag {
        host: *mut u32,
        device: sys::CUdeviceptr,
    }

    impl HostFlag {
        fn new() -> Self {
            let mut host = std::ptr::null_mut();
            let mut device = 0;
            // SAFETY: 4 bytes of pinned, mapped memory of the bound context,
            // freed on drop.
            unsafe {
                sys::cuMemHostAlloc(&mut host, 4, sys::CU_MEMHOSTALLOC_DEVICEMAP)
                    .result()
                    .unwrap();
                std::ptr::write_volatile(host.cast::<u32>(), 0);
                sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0)
                    .result()
                    .unwrap();
            }
            Self {
                host: host.cast(),
                device,
            }
        }

        /// Makes `stream`'s later work wait until the flag is set.
        fn hold(&self, stream: sys::CUstream) {
            let flags = sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32;
            // SAFETY: a live stream and the mapped flag.
            unsafe {
                sys::cuStreamWaitValue32_v2(stream, self.device, 1, flags)
                    .result()
                    .unwrap()
            };
        }

        fn set(&self) {
            // SAFETY: the live mapped flag; volatile, so the store happens.
            unsafe { std::ptr::write_volatile(self.host, 1) };
        }
    }

    impl Drop for HostFlag {
        /// Releases whatever still waits on the flag first: a test that
        /// fails while a stream is held would otherwise hang the world's
        /// teardown, and every test after it.
        fn drop(&mut self) {
            self.set();
            // SAFETY: nothing waits on the flag once set. Not unwrapped: a
            // panic here, while a failed test unwinds, aborts every test.
            if let Err(error) = unsafe { sys::cuMemFreeHost(self.host.cast()).result() } {
                eprintln!("freeing a test's host flag: {error:?}");
            }
        }
    }

    /// A call on a caller's stream runs there, after the caller's work, and
    /// the host does not wait for it. The caller's stream is held by a flag,
    /// then writes the call's input `a`: the call returns with that stream
    /// still busy (a host synchronize would never return), and its result is
    /// right only if it ran after the write on the caller's stream (on
    /// another stream it would read the stale `a`). The rank's own stream 0
    /// is ordered after the call: the read-back sees its result.
    #[test]
    fn a_call_is_enqueued_on_the_callers_stream() {
        let Some(world) = world(1, false) else { return };
        let device = world.device(0);
        let (_buffers, [a, b, c]) = inputs(&device);
        let flag = HostFlag::new();
        // SAFETY: a stream of the bound context, destroyed once idle below;
        // `a` holds LEN f32.
        let caller = unsafe {
            let stream = cu::stream::create(cu::stream::StreamKind::NonBlocking).unwrap();
            flag.hold(stream);
            let three = 3.0f32.to_bits();
            sys::cuMemsetD32Async(a as sys::CUdeviceptr, three, LEN, stream)
                .result()
                .unwrap();
            stream
        };
        let addresses = [a, b, c].map(|ptr| ptr as usize);
        world
            .run_on(&[caller as CallerStream], |device| {
                program(device, addresses)
            })
            .unwrap();
        // SAFETY: a live stream.
        let busy = unsafe { sys::cuStreamQuery(caller) };
        assert_eq!(busy, sys::CUresult::CUDA_ERROR_NOT_READY);
        flag.set();
        let c = read_f32(&device, c, LEN);
        let wrong = (0..LEN).find(|&i| c[i] != 6.0 + 0.5 * i as f32);
        assert_eq!(
            wrong, None,
            "c = a + b + a with a = 3 written on the caller's stream"
        );
        // SAFETY: idle once the read-back (ordered after the call) returned.
        unsafe { cu::stream::destroy(caller).unwrap() };
    }

    /// A rank's first call, on a caller's stream that waits for work the
    /// GPU does later on another stream, completes once that work ran: the
    /// call's first launches load no kernel (a load would wait for the held
    /// stream, and the releasing work behind the load for the load).
    #[test]
    fn a_first_call_behind_a_stream_the_gpu_releases_completes() {
        let Some(world) = world(1, false) else { return };
        let device = world.device(0);
        let (_buffers, [a, b, c]) = inputs(&device);
        let flag = HostFlag::new();
        let make = || cu::stream::create(cu::stream::StreamKind::NonBlocking).unwrap();
        let caller = make();
        flag.hold(caller);
        let addresses = [a, b, c].map(|ptr| ptr as usize);
        world
            .run_on(&[caller as CallerStream], |device| {
                program(device, addresses)
            })
            .unwrap();
        let release = make();
        // SAFETY: a live stream writing the mapped flag.
        unsafe {
            sys::cuStreamWriteValue32_v2(release, flag.device, 1, 0)
                .result()
                .unwrap()
        };
        let start = std::time::Instant::now();
        // SAFETY: a live stream.
        while unsafe { sys::cuStreamQuery(caller) } == sys::CUresult::CUDA_ERROR_NOT_READY
            && start.elapsed() < std::time::Duration::from_secs(10)
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // SAFETY: a live stream.
        let done = unsafe { sys::cuStreamQuery(caller) } == sys::CUresult::CUDA_SUCCESS;
        // Lets a stuck GPU go, so that a failure fails instead of hanging.
        flag.set();
        assert!(
            done,
            "the held call did not complete 10 s after its release"
        );
        let c = read_f32(&device, c, LEN);
        assert!(c.iter().enumerate().all(|(i, &c)| c == 2.5 * i as f32));
        // SAFETY: idle once the read-back (ordered after both) returned.
        unsafe {
            cu::stream::destroy(caller).unwrap();
            cu::stream::destroy(release).unwrap();
        }
    }

    /// The host retires exactly the calls that ended, oldest first, once
    /// `RETIRE_AT` are outstanding: ten calls on a free stream have ended,
    /// the next ones wait behind a held stream, and the call that finds
    /// `RETIRE_AT` outstanding retires the ten, and only them.
    #[test]
    fn only_calls_that_ended_are_retired() {
        let Some(world) = world(1, false) else { return };
        let device = world.device(0);
        let (_buffers, [a, b, c]) = inputs(&device);
        let addresses = [a, b, c].map(|ptr| ptr as usize);
        let flag = HostFlag::new();
        let [free, held] =
            [0, 1].map(|_| cu::stream::create(cu::stream::StreamKind::NonBlocking).unwrap());
        let call = |stream: sys::CUstream| {
            world
                .run_on(&[stream as CallerStream], |device| {
                    program(device, addresses)
                })
                .unwrap();
        };
        let outstanding = || crate::lock(&device.state).enqueued.len();
        (0..10).for_each(|_| call(free));
        // SAFETY: a live stream; its calls wait for nothing held.
        unsafe { cu::stream::synchronize(free).unwrap() };
        assert_eq!(outstanding(), 10);
        flag.hold(held);
        (10..RETIRE_AT).for_each(|_| call(held));
        assert_eq!(outstanding(), RETIRE_AT, "nothing is asked below RETIRE_AT");
        call(held);
        assert_eq!(
            outstanding(),
            RETIRE_AT - 10 + 1,
            "the ten that ended, and only those"
        );
        assert!(crate::lock(&device.state).requests.is_empty());
        flag.set();
        device.synchronize().unwrap();
        assert_eq!(outstanding(), 0);
        // SAFETY: idle after the synchronize.
        unsafe {
            cu::stream::destroy(free).unwrap();
            cu::stream::destroy(held).unwrap();
        }
    }

    /// Many calls alternating between two caller streams and the legacy
    /// default stream hold at most `MAX_ENQUEUED` calls and their events,
    /// leave no request behind, and run in call order: each adds 2 to what
    /// the one before wrote.
    #[test]
    fn calls_on_caller_streams_stay_bounded_and_in_order() {
        let Some(world) = world(1, false) else { return };
        let device = world.device(0);
        let buffers: Vec<_> = (0..3).map(|_| device.buffer(LEN * 4).unwrap()).collect();
        let [one, p, q] = [0, 1, 2].map(|i| buffers[i].ptr());
        write_f32(&device, one, LEN, |_| 1.0);
        write_f32(&device, p, LEN, |_| 0.0);
        write_f32(&device, q, LEN, |_| 0.0);
        // Streams of the bound context, destroyed once idle.
        let streams =
            [0, 1].map(|_| cu::stream::create(cu::stream::StreamKind::NonBlocking).unwrap());
        let callers = [streams[0] as CallerStream, streams[1] as CallerStream, 0];
        for call in 0..1000 {
            let (from, to) = if call % 2 == 0 { (p, q) } else { (q, p) };
            let addresses = [one, from, to].map(|ptr| ptr as usize);
            world
                .run_on(&[callers[call % 3]], |device| program(device, addresses))
                .unwrap();
            let state = crate::lock(&device.state);
            assert!(state.enqueued.len() <= MAX_ENQUEUED);
            assert!(state.requests.is_empty());
            assert!(state.events.len() <= 2 * MAX_ENQUEUED);
        }
        device.synchronize().unwrap();
        assert_eq!(crate::lock(&device.state).enqueued.len(), 0);
        assert!(
            read_f32(&device, p, LEN)
                .iter()
                .all(|&value| value == 2000.0)
        );
        // SAFETY: idle after the synchronize.
        unsafe {
            for stream in streams {
                cu::stream::destroy(stream).unwrap();
            }
        }
    }

    /// A call on a caller's stream that is capturing (in the global mode,
    /// as `torch.cuda.graph` captures) is captured, pool streams included,
    /// runs nothing, and each replay of the caller's graph computes it anew
    /// from the inputs of the time.
    #[test]
    fn a_call_on_a_capturing_callers_stream_is_captured_and_replays() {
        let Some(world) = world(1, false) else { return };
        let device = world.device(0);
        let (_buffers, [a, b, c]) = inputs(&device);
        let addresses = [a, b, c].map(|ptr| ptr as usize);
        let caller = cu::stream::create(cu::stream::StreamKind::NonBlocking).unwrap();
        let global = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;
        // SAFETY: a live stream of the bound context; the graph and its
        // instance are destroyed below, the stream once idle.
        unsafe {
            cu::stream::begin_capture(caller, global).unwrap();
            world
                .run_on(&[caller as CallerStream], |device| {
                    program(device, addresses)
                })
                .unwrap();
            let graph = cu::stream::end_capture(caller).unwrap();
            let exec = cu::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)).unwrap();
            assert!(
                read_f32(&device, c, LEN).iter().all(|&c| c == -1.0),
                "capturing ran the call"
            );
            for replay in 0..200 {
                let shift = replay as f32;
                write_f32(&device, a, LEN, |i| i as f32 + shift);
                cu::graph::launch(exec, caller).unwrap();
                cu::stream::synchronize(caller).unwrap();
                let c = read_f32(&device, c, LEN);
                let wrong = (0..LEN).find(|&i| c[i] != 2.0 * (i as f32 + shift) + 0.5 * i as f32);
                assert_eq!(wrong, None, "replay {replay}: c = a + b + a");
            }
            cu::graph::exec_destroy(exec).unwrap();
            cu::graph::destroy(graph).unwrap();
            cu::stream::destroy(caller).unwrap();
        }
        assert!(crate::lock(&device.state).requests.is_empty());
    }
}
