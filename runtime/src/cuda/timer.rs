//! GPU timing for launchers: an event recorded on a rank's stream 0 (the
//! caller's stream, which a host program's work joins before it returns).
//! Two of them bracket a call; [`TimingEvent::elapsed_ms`] is the GPU time
//! between them. `hir-bench` times its iterations this way.

use super::{Check, CudaDevice};
use crate::error::Result;
use cudarc::driver::{CudaContext, result as cu, sys};
use std::sync::Arc;

/// A timing event recorded on stream 0 of one rank.
pub struct TimingEvent {
    ctx: Arc<CudaContext>,
    event: sys::CUevent,
}

// The event is a driver handle of the rank's context, which every method
// binds before using it.
unsafe impl Send for TimingEvent {}

impl CudaDevice {
    /// Records a timing event on stream 0, after the work enqueued there so
    /// far; the host does not wait.
    pub fn record_timing_event(&self) -> Result<TimingEvent> {
        let state = self.state()?;
        let event =
            cu::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).check("cuEventCreate")?;
        let timing = TimingEvent {
            ctx: self.ctx.clone(),
            event,
        };
        // SAFETY: live event and stream, with the rank's context bound.
        unsafe { cu::event::record(event, state.streams[0]) }.check("cuEventRecord")?;
        Ok(timing)
    }
}

impl TimingEvent {
    /// Milliseconds of GPU time from `self` to `end` (both of one rank);
    /// blocks the host until `end` has completed.
    pub fn elapsed_ms(&self, end: &TimingEvent) -> Result<f32> {
        self.ctx
            .bind_to_thread()
            .check("binding the rank's context")?;
        // SAFETY: live events of the bound context, both recorded.
        unsafe {
            cu::event::synchronize(end.event).check("cuEventSynchronize")?;
            cu::event::elapsed(self.event, end.event).check("cuEventElapsedTime")
        }
    }
}

impl Drop for TimingEvent {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: the event is live and no longer used.
            unsafe {
                let _ = cu::event::destroy(self.event);
            }
        }
    }
}
