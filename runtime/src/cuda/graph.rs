//! A rank's whole host program as one CUDA graph: [`CudaDevice::capture`]
//! records every stream operation a call enqueues (pool streams forked from
//! and joined back into stream 0, events, kernels, cuBLASLt, NCCL, the
//! temporaries' stream-ordered allocations) into one graph, and
//! [`CudaDevice::replay`] launches it on stream 0 with one driver call.
//!
//! A replay repeats the captured operations on the captured addresses: the
//! program's arguments must stay where they were, and every allocation it
//! makes must already exist, so a launcher runs the program once directly
//! before capturing it (that call also creates the communicators and
//! cuBLASLt workspaces, whose set-up cannot be captured). `cuda` (CUDA-IPC)
//! transfers, whose flag values the host numbers per call, are renumbered
//! before each replay (`ipc_graph.rs`). What a replay cannot repeat is
//! refused during capture with an error that says so: host barriers and
//! traced runs.

use super::ipc_graph::GraphSignals;
use super::{Check, CudaDevice};
use crate::device::Device;
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, result as cu, sys};
use std::sync::Arc;

/// A captured host program, instantiated for replay on one rank.
pub struct Graph {
    ctx: Arc<CudaContext>,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    /// The `cuda` transfers' flag nodes, renumbered before each replay.
    signals: Option<GraphSignals>,
}

// Driver handles of the rank's context; a graph is used by one rank's host
// thread at a time (the launcher keeps one per rank).
unsafe impl Send for Graph {}

impl Drop for Graph {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: created in `capture`, destroyed once; no replay is in
            // flight once the launcher drops it (its runs are synchronized).
            unsafe {
                let _ = cu::graph::exec_destroy(self.exec);
                let _ = cu::graph::destroy(self.graph);
            }
        }
    }
}

/// Why a capture ended without a graph, as the driver reports it.
fn capture_failure(error: sys::CUresult) -> Error {
    let why = match error {
        sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNJOINED => {
            "a stream the call forked from stream 0 was not joined back before the call returned"
        }
        sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED => {
            "an operation during the call cannot be captured (the driver invalidated the capture)"
        }
        sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_ISOLATION => {
            "a captured stream waited for work enqueued outside the capture"
        }
        _ => "the driver refused to end it",
    };
    Error::Invalid(format!(
        "capturing the host program as a CUDA graph failed: {why} ({error:?})"
    ))
}

/// Makes every pool stream wait for `main`, so that it captures too.
pub(super) fn fork_pool(state: &super::State, main: super::Stream) -> Result<()> {
    let pool = &state.streams[1..];
    // SAFETY: live event and streams of the bound context.
    unsafe {
        cu::event::record(state.marks[0], main).check("cuEventRecord")?;
        for &stream in pool {
            cu::stream::wait_event(
                stream,
                state.marks[0],
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
            .check("cuStreamWaitEvent")?;
        }
    }
    Ok(())
}

/// Makes stream 0 wait for every pool stream: a capture ends with every
/// stream it forked joined back.
fn join_pool(state: &super::State) -> Result<()> {
    (1..state.streams.len()).try_for_each(|index| {
        super::streams::wait_for(state.streams[0], state.marks[index], state.streams[index])
    })
}

impl CudaDevice {
    /// Captures what `call` enqueues on this rank into a graph, without
    /// running it. Stream 0 must be the current stream, as between calls.
    pub fn capture(&self, call: impl FnOnce()) -> Result<Graph> {
        // The free blocks' marks are events recorded outside the capture,
        // which no captured stream may wait for: drained, they are dropped.
        self.synchronize()?;
        {
            let mut state = self.state()?;
            super::alloc::settle(&mut state);
            if state.timeline.is_some() {
                return Err(Error::Invalid(
                    "a traced run cannot be captured as a CUDA graph: a replay records no \
                     per-operation events"
                        .into(),
                ));
            }
            if state.current != 0 {
                return Err(Error::Invalid(format!(
                    "a capture starts on stream 0, but stream {} is current",
                    state.current
                )));
            }
            // Relaxed: the host-side work of a call (cuBLASLt heuristics, the
            // temporaries' pool) may run while the stream captures.
            // SAFETY: a live stream of the bound context.
            unsafe {
                cu::stream::begin_capture(
                    state.streams[0],
                    sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED,
                )
            }
            .check("cuStreamBeginCapture")?;
            state.capturing = true;
            state.ipc.begin_capture();
            // Every pool stream joins the capture: work a call enqueues on a
            // stream it never forked from stream 0 (a transfer's flag wait
            // where the program waits for it) would otherwise run at once,
            // outside the graph.
            fork_pool(&state, state.streams[0])?;
        }
        call();
        let mut state = self.state()?;
        state.capturing = false;
        let numbering = state.ipc.end_capture();
        let joined = join_pool(&state);
        // SAFETY: the stream began capturing above.
        let ended = unsafe { cu::stream::end_capture(state.streams[0]) };
        joined?;
        super::alloc::settle(&mut state);
        let graph = match ended {
            Ok(graph) => graph,
            Err(error) => return Err(capture_failure(error.0)),
        };
        // SAFETY: a graph the capture returned, destroyed once below or by
        // the `Graph` that owns it.
        let destroy = |graph| unsafe {
            let _ = cu::graph::destroy(graph);
        };
        if self.failed() {
            destroy(graph);
            return Err(Error::Invalid(
                "the call failed while being captured (its error is reported above)".into(),
            ));
        }
        let signals = match GraphSignals::find(graph, numbering) {
            Ok(signals) => signals,
            Err(error) => {
                destroy(graph);
                return Err(error);
            }
        };
        let flags = sys::CUgraphInstantiate_flags(0);
        // SAFETY: as above.
        match unsafe { cu::graph::instantiate(graph, flags) } {
            Ok(exec) => Ok(Graph {
                ctx: self.ctx.clone(),
                graph,
                exec,
                signals,
            }),
            Err(error) => {
                destroy(graph);
                Err(error).check("cuGraphInstantiate")
            }
        }
    }

    /// Launches `graph` on stream 0, after the work enqueued there so far;
    /// the host does not wait.
    pub fn replay(&self, graph: &Graph) -> Result<()> {
        let mut state = self.state()?;
        if let Some(signals) = &graph.signals {
            signals.renumber(graph.exec, &mut state.ipc)?;
        }
        // SAFETY: an instantiated graph of this rank's context, on its stream.
        unsafe { cu::graph::launch(graph.exec, state.streams[0]) }.check("cuGraphLaunch")
    }

    /// Refuses `what` while a call is being captured: a replay would not
    /// repeat it as the program means.
    pub(super) fn refuse_in_capture(capturing: bool, what: &str, why: &str) -> Result<()> {
        if capturing {
            return Err(Error::Invalid(format!(
                "{what} cannot be captured as a CUDA graph: {why}; run the program without a graph"
            )));
        }
        Ok(())
    }
}
