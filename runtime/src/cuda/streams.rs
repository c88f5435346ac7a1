//! How a rank orders its work across streams: a stream joining another's
//! work so far, requests and what completes them (events, `cuda` receives'
//! flags), the watchdog's view of communications being posted, tracing
//! what is enqueued, and draining a stream with a timeout.

use super::{Check, CudaDevice, State, Stream, ipc};
use crate::bootstrap::Inflight;
use crate::device::Request;
use crate::error::{Error, Result};
use cudarc::driver::{result as cu, sys};
use hir_abi::Entry;
use std::time::Duration;

/// A request: complete once all its completions are.
pub(super) enum Slot {
    /// Of a coalescing group that has not ended.
    Open,
    Done(Vec<Completion>),
}

/// What a stream waits for to complete a request.
pub(super) enum Completion {
    Event(sys::CUevent),
    /// A `cuda` receive: its data has arrived once the flag is set.
    Flag(ipc::FlagWait),
}

impl Completion {
    /// `stream` waits for it.
    pub(super) fn enqueue(&self, stream: Stream) -> Result<()> {
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

    pub(super) fn event(&self) -> Option<sys::CUevent> {
        match self {
            Completion::Event(event) => Some(*event),
            Completion::Flag(_) => None,
        }
    }
}

/// A request's event as the watchdog holds it; `None` while it is posted.
pub(super) struct EventPtr(pub(super) Option<sys::CUevent>);

/// A communication being posted, in [`CudaDevice::inflight`]: dropped, it is
/// forgotten (its posting failed); [`Posting::posted`] gives it its request's
/// event.
pub(super) struct Posting<'a> {
    inflight: &'a Inflight<EventPtr>,
    id: u64,
}

impl Posting<'_> {
    /// The communication is `request`: the watchdog watches its event.
    pub(super) fn posted(self, state: &State, request: Request) -> Request {
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
    /// Shows the watchdog that the communication `op` is being posted (from
    /// before its communicator is created, which may block on the peers).
    pub(super) fn posting(&self, op: String) -> Posting<'_> {
        Posting {
            inflight: &self.inflight,
            id: self.inflight.post(op, EventPtr(None)),
        }
    }

    /// Issues a request complete once the current stream's work so far is.
    pub(super) fn record_request(state: &mut State) -> Result<Request> {
        let event = new_or_reused_event(state)?;
        // SAFETY: live event and stream.
        unsafe { cu::event::record(event, state.streams[state.current]) }.check("cuEventRecord")?;
        Ok(Self::issue(state, vec![Completion::Event(event)]))
    }

    pub(super) fn complete_request(state: &mut State) -> Request {
        Self::issue(state, Vec::new())
    }

    pub(super) fn issue(state: &mut State, completions: Vec<Completion>) -> Request {
        state.requests.push(Slot::Done(completions));
        state.retired + state.requests.len() as Request
    }

    /// The current stream waits for the work enqueued so far on `stream`.
    pub(super) fn join(state: &State, stream: usize) -> Result<()> {
        wait_for(
            state.streams[state.current],
            state.marks[stream],
            state.streams[stream],
        )
    }

    /// Ends every request in the table: their events may be reused.
    pub(super) fn release_requests(state: &mut State) {
        state.retired += state.requests.len() as Request;
        for slot in state.requests.drain(..) {
            if let Slot::Done(completions) = slot {
                state
                    .events
                    .extend(completions.iter().filter_map(Completion::event));
            }
        }
    }

    /// Enqueues work on the current stream, timed as `name` when tracing.
    pub(super) fn traced<R>(
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

    /// Waits until `stream` (index `index`) is idle, polling, so that a
    /// stream stuck on a communication whose peer never came, or on a peer
    /// that failed, is an error naming the stream instead of a hang.
    pub(super) fn drain(&self, index: usize, stream: Stream) -> Result<()> {
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
}

pub(super) fn new_event() -> Result<sys::CUevent> {
    cu::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).check("cuEventCreate")
}

/// An entry as a trace names it: `matmul_bf16`.
pub(super) fn label(entry: Entry) -> String {
    let name = entry.name();
    name.strip_prefix("hir_rt_").unwrap_or(&name).to_string()
}

pub(super) fn new_or_reused_event(state: &mut State) -> Result<sys::CUevent> {
    match state.events.pop() {
        Some(event) => Ok(event),
        None => new_event(),
    }
}

/// `waiter` waits for the work enqueued on `stream` so far, through `mark`.
pub(super) fn wait_for(waiter: Stream, mark: sys::CUevent, stream: Stream) -> Result<()> {
    // SAFETY: live event and streams of the bound context; the wait takes
    // the event's state now, so the event can be recorded again later.
    unsafe {
        cu::event::record(mark, stream).check("cuEventRecord")?;
        cu::stream::wait_event(waiter, mark, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
            .check("cuStreamWaitEvent")
    }
}
