//! `--trace` on the cuda backend. Each op enqueued on a stream is bracketed
//! by two timing events; when the rank synchronizes, their times after a base
//! event become slices on the stream's track. The base is recorded and waited
//! for when the rank starts, which pins it to the host clock the trace uses,
//! so the ranks' GPU timelines line up with each other and with host slices.

use super::{Check, Stream};
use crate::error::Result;
use crate::trace::Trace;
use cudarc::driver::{result as cu, sys};
use std::sync::Arc;
use std::time::Instant;

/// One traced op whose events have not been read yet.
struct Pending {
    name: String,
    /// The track: 1 + the stream's index (0 is the host).
    track: usize,
    start: sys::CUevent,
    end: sys::CUevent,
}

pub(crate) struct Timeline {
    rank: usize,
    trace: Arc<Trace>,
    base: sys::CUevent,
    /// When `base` completed, in trace microseconds.
    base_us: f64,
    pending: Vec<Pending>,
    /// Read events, for reuse.
    free: Vec<sys::CUevent>,
}

// The events are used by the rank's host thread, with its context current.
unsafe impl Send for Timeline {}

/// An op being enqueued: its start event and when the host call began.
pub(crate) struct Mark {
    start: sys::CUevent,
    host: Instant,
}

impl Timeline {
    /// Names the rank's tracks and pins the base event to the host clock;
    /// blocks until `streams[0]` is idle.
    pub fn new(rank: usize, trace: Arc<Trace>, streams: &[Stream]) -> Result<Timeline> {
        trace.track((rank, 0), "host");
        for index in 0..streams.len() {
            trace.track((rank, index + 1), &format!("stream {index}"));
        }
        let base = timing_event()?;
        // SAFETY: live event and stream.
        unsafe {
            cu::event::record(base, streams[0]).check("cuEventRecord")?;
            cu::event::synchronize(base).check("cuEventSynchronize")?;
        }
        let base_us = trace.now_us();
        Ok(Timeline {
            rank,
            trace,
            base,
            base_us,
            pending: Vec::new(),
            free: Vec::new(),
        })
    }

    /// Starts an op on `stream`.
    pub fn begin(&mut self, stream: Stream) -> Result<Mark> {
        let start = self.event()?;
        // SAFETY: live event and stream.
        unsafe { cu::event::record(start, stream) }.check("cuEventRecord")?;
        Ok(Mark {
            start,
            host: Instant::now(),
        })
    }

    /// Ends the op `mark` began, enqueued on stream `index` (`stream`): a
    /// slice on that stream's track, and the host call on the host track.
    pub fn end(&mut self, mark: Mark, name: &str, index: usize, stream: Stream) -> Result<()> {
        let end = self.event()?;
        // SAFETY: live event and stream.
        unsafe { cu::event::record(end, stream) }.check("cuEventRecord")?;
        let host_us = mark.host.elapsed().as_secs_f64() * 1e6;
        let began = self.trace.now_us() - host_us;
        self.trace.record_us((self.rank, 0), name, began, host_us);
        self.pending.push(Pending {
            name: name.to_string(),
            track: index + 1,
            start: mark.start,
            end,
        });
        Ok(())
    }

    /// Turns the ops enqueued so far into slices; their streams are idle.
    pub fn collect(&mut self) -> Result<()> {
        for op in std::mem::take(&mut self.pending) {
            // SAFETY: recorded, completed events of this context.
            let (start, end) = unsafe {
                (
                    cu::event::elapsed(self.base, op.start).check("cuEventElapsedTime")?,
                    cu::event::elapsed(self.base, op.end).check("cuEventElapsedTime")?,
                )
            };
            let start_us = self.base_us + f64::from(start) * 1e3;
            let duration_us = f64::from(end - start) * 1e3;
            self.trace
                .record_us((self.rank, op.track), &op.name, start_us, duration_us);
            self.free.extend([op.start, op.end]);
        }
        Ok(())
    }

    fn event(&mut self) -> Result<sys::CUevent> {
        match self.free.pop() {
            Some(event) => Ok(event),
            None => timing_event(),
        }
    }
}

impl Drop for Timeline {
    fn drop(&mut self) {
        let events = self.pending.iter().flat_map(|op| [op.start, op.end]);
        for event in events.chain(self.free.iter().copied()).chain([self.base]) {
            // SAFETY: created by this timeline, destroyed once; the owning
            // device synchronized its streams with its context current.
            let _ = unsafe { cu::event::destroy(event) };
        }
    }
}

fn timing_event() -> Result<sys::CUevent> {
    cu::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).check("cuEventCreate")
}
