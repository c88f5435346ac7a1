//! GPU timing for launchers: an event recorded on a rank's stream 0 (the
//! caller's stream, which a host program's work joins before it returns).
//! Two of them bracket a call; [`TimingEvent::elapsed_ms`] is the GPU time
//! between them. `hir-bench` times its iterations this way, after
//! [`CudaDevice::align_ranks`].

use super::{Check, CudaDevice};
use crate::device::Device;
use crate::error::Result;
use crate::memref::View;
use crate::ops::{CollectiveOp, Team};
use cudarc::driver::{CudaContext, result as cu, sys};
use hir_abi::{Collective, DType, ReduceKind, Transport};
use std::sync::Arc;

/// A timing event recorded on stream 0 of one rank.
pub struct TimingEvent {
    ctx: Arc<CudaContext>,
    event: sys::CUevent,
}

// The event is a driver handle of the rank's context, which every method
// binds before using it.
unsafe impl Send for TimingEvent {}

/// The allocation site of the one float [`CudaDevice::align_ranks`]
/// all-reduces; a host program's sites are not negative.
const ALIGN_SITE: i64 = -1;

impl CudaDevice {
    /// Lines this rank's stream 0 up with every rank's: an NCCL all-reduce of
    /// one float over the world, on stream 0 (the current stream between
    /// calls). A timing event recorded next completes once the last rank has
    /// arrived, so the ranks' timed regions start together on the GPUs
    /// whatever the skew of their hosts (a barrier through a store releases
    /// processes tens of microseconds apart).
    pub fn align_ranks(&self) -> Result<()> {
        let world = self.num_devices();
        let ranks: Vec<i64> = (0..world as i64).collect();
        let ptr = self.alloc(ALIGN_SITE, 4)?;
        let view = View::contiguous(DType::F32, ptr.as_ptr(), &[1]);
        let request = self.collective(CollectiveOp {
            op: Collective::Allreduce,
            kind: ReduceKind::Sum,
            root: 0,
            axis: 0,
            team: Team::new(&ranks, world)?,
            backend: Transport::Nccl,
            input: view.clone(),
            output: view,
        })?;
        self.wait(request)?;
        // The cache keeps the float for the next call; queued work is unaffected.
        self.dealloc(ptr.as_ptr())
    }

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
