//! The cuda backend's memory for the caching allocator ([`SiteCache`]):
//! device buffers (so IPC and NCCL registrations keyed by buffer stay valid),
//! zeroed once (NaN, every byte `0xff`, with `Config::poison`), freed when the rank's device drops; and the launcher's
//! [`DeviceBuffer`]s. Both are recorded in the rank's [`Allocations`], which
//! the entries check views against. A failed `cuMemAlloc` is an error naming
//! the size.
//!
//! Freeing is stream-ordered: `hir_rt_dealloc` records an event on every
//! stream that was current while the buffer was held (the streams that can
//! have used it: [`Touched`]), and the stream that gets the block next waits
//! for those events (`cuStreamWaitEvent`, no host wait), except its own.
//! A loop's per-iteration buffer therefore costs one event record and no
//! `cuMemAlloc` once each pool stream has its block (see [`SiteCache`]).

use super::{Check, State};
use crate::bounds::{Allocations, Registration};
use crate::error::{Error, Result};
use crate::site_cache::{Memory, SiteCache};
use cudarc::driver::{result as cu, sys};
use std::ptr::NonNull;

pub(crate) struct DeviceMemory {
    /// Whether a new buffer is NaN instead of zero.
    pub poison: bool,
}

pub(crate) type Allocator = SiteCache<DeviceMemory>;

/// When each stream was last current, counted in switches of the current
/// stream: which streams a buffer held since switch `n` can have been used
/// on.
#[derive(Default)]
pub(super) struct Touched {
    switches: u64,
    /// Per stream, the switch that made it stop being current (`None`: never).
    left: Vec<Option<u64>>,
}

impl Touched {
    /// The clock: switches so far.
    pub fn now(&self) -> u64 {
        self.switches
    }

    /// `stream` stops being current.
    pub fn leave(&mut self, stream: usize) {
        if self.left.len() <= stream {
            self.left.resize(stream + 1, None);
        }
        self.left[stream] = Some(self.switches);
        self.switches += 1;
    }

    /// The streams of `streams` current at some point since switch `since`:
    /// `current` and those that stopped being current since.
    pub fn since(&self, since: u64, current: usize, streams: usize) -> Vec<usize> {
        (0..streams)
            .filter(|&stream| {
                stream == current
                    || self
                        .left
                        .get(stream)
                        .copied()
                        .flatten()
                        .is_some_and(|left| left >= since)
            })
            .collect()
    }
}

/// A block from the rank's cache for `site`, ready on the current stream:
/// behind the events its last holder's streams recorded (and NaN again,
/// with `Config::poison`, as a new block is).
pub(super) fn alloc(state: &mut State, site: i64, bytes: usize) -> Result<NonNull<u8>> {
    let current = state.current;
    let handout = state
        .allocator
        .alloc(site, bytes, current as i64, state.touched.now())?;
    let Some(marks) = handout.after else {
        return Ok(handout.ptr);
    };
    let stream = state.streams[current];
    let mut waited = Ok(());
    for (user, event) in marks {
        if user != current && waited.is_ok() {
            // SAFETY: live event and stream.
            waited = unsafe {
                cu::stream::wait_event(
                    stream,
                    event,
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
            }
            .check("cuStreamWaitEvent (a reused buffer's last users)");
        }
        // The wait is enqueued: the event may be recorded again.
        state.events.push(event);
    }
    waited?;
    if state.poison {
        // SAFETY: the block holds `bytes` bytes; the fill is ordered on the
        // stream that gets it, behind its last users.
        unsafe {
            cu::memset_d8_async(
                handout.ptr.as_ptr() as sys::CUdeviceptr,
                0xff,
                bytes.max(1),
                stream,
            )
        }
        .check("cuMemsetD8Async")?;
    }
    Ok(handout.ptr)
}

/// Returns `ptr` to the cache, behind an event recorded on each stream that
/// was current while it was held.
pub(super) fn dealloc(state: &mut State, ptr: *mut u8) -> Result<()> {
    let State {
        allocator,
        touched,
        streams,
        events,
        current,
        ..
    } = state;
    allocator.dealloc(ptr, *current as i64, |since| {
        touched
            .since(since, *current, streams.len())
            .into_iter()
            .map(|user| {
                let event = match events.pop() {
                    Some(event) => event,
                    None => super::streams::new_event()?,
                };
                // SAFETY: live event and stream.
                unsafe { cu::event::record(event, streams[user]) }.check("cuEventRecord")?;
                Ok((user, event))
            })
            .collect()
    })
}

/// Forgets the marks of the free blocks, their events back in the pool:
/// for the streams' drained state at a capture's start, and at its end,
/// where the marks are events recorded into the graph, which no stream
/// outside it may wait for. A replay then finds the blocks as its capture
/// did: the launcher replays one program at a time, each call
/// synchronized.
pub(super) fn settle(state: &mut State) {
    let State {
        allocator, events, ..
    } = state;
    allocator.settle_marks(|marks| events.extend(marks.drain(..).map(|(_, event)| event)));
}

impl Memory for DeviceMemory {
    /// Per stream that can have used the block, an event recorded on it when
    /// the block was freed.
    type Marks = Vec<(usize, sys::CUevent)>;

    /// Needs the rank's context current.
    fn allocate(&mut self, site: i64, bytes: usize) -> Result<NonNull<u8>> {
        // SAFETY: a plain allocation (256-byte aligned), filled before any
        // stream can see it, freed in `free`.
        let fill = if self.poison { 0xff } else { 0 };
        let ptr = unsafe {
            let ptr = cu::malloc_sync(bytes.max(1))
                .check(&format!("allocating {bytes} B at site {site}"))?;
            cu::memset_d8_sync(ptr, fill, bytes.max(1)).check("cuMemsetD8")?;
            ptr
        };
        NonNull::new(ptr as *mut u8).ok_or_else(|| {
            Error::OutOfMemory(format!(
                "cuMemAlloc of {bytes} B at site {site} returned null"
            ))
        })
    }

    unsafe fn free(&mut self, ptr: NonNull<u8>, _bytes: usize) {
        // SAFETY: allocated in `allocate`, freed once; the owning device made
        // its context current and synchronized its streams.
        let _ = unsafe { cu::free_sync(ptr.as_ptr() as sys::CUdeviceptr) };
    }
}

/// Device memory a launcher owns, such as a program's arguments: not cached,
/// freed when dropped.
pub struct DeviceBuffer {
    ptr: cudarc::driver::sys::CUdeviceptr,
    ctx: std::sync::Arc<cudarc::driver::CudaContext>,
    /// Known to the rank while the buffer lives; taken before it is freed.
    known: Option<Registration>,
}

impl DeviceBuffer {
    /// `bytes` bytes on `ctx`'s device, recorded in `known`; the context
    /// must be current.
    pub(crate) fn new(
        ctx: std::sync::Arc<cudarc::driver::CudaContext>,
        bytes: usize,
        known: &std::sync::Arc<Allocations>,
    ) -> Result<DeviceBuffer> {
        // SAFETY: a plain allocation, freed in `drop`.
        let ptr = unsafe { cu::malloc_sync(bytes.max(1)) }
            .check(&format!("allocating a {bytes} B argument"))?;
        let mut buffer = DeviceBuffer {
            ptr,
            ctx,
            known: None,
        };
        buffer.known = Some(known.register(ptr as *const u8, bytes)?);
        Ok(buffer)
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr as *mut u8
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        self.known.take();
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: allocated in `new`, freed once; the launcher drops its
            // buffers after the runs that use them returned (synchronized).
            let _ = unsafe { cu::free_sync(self.ptr) };
        }
    }
}
