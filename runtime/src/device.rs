//! The backend boundary. A [`Device`] is one rank of a backend; the C-ABI
//! entries ([`crate::ffi`]) decode their arguments and call the device of the
//! calling thread, which the launcher installs with [`enter`]. A backend is
//! chosen at start-up by building its devices: the entries never change.

use crate::bounds::Allocations;
use crate::error::{Error, Result};
use crate::fused::FusedKernel;
use crate::memref::View;
use crate::ops::{CollectiveOp, Kernel, Team, Transfer};
use hir_abi::Transport;
use std::cell::RefCell;
use std::ptr::NonNull;
use std::sync::{Arc, OnceLock};

/// A stream handle as the program holds it: 0 is the caller's stream,
/// `1..=pool size` the pool.
pub type Stream = i64;

/// A posted communication, completed on a stream by [`Device::wait`].
pub type Request = i64;

/// One rank of a backend. Every method is called on that rank's host thread
/// (the one the launcher ran [`enter`] on); work is enqueued on the current
/// stream and runs asynchronously unless the method says otherwise.
pub trait Device: Send + Sync {
    fn rank(&self) -> usize;
    fn num_devices(&self) -> usize;

    /// Whether this rank has failed: the entries then skip all further work.
    fn failed(&self) -> bool;
    /// Records this rank's first error, in `op`.
    fn fail(&self, op: &str, error: Error);

    fn current_stream(&self) -> Stream;
    fn set_current_stream(&self, stream: Stream) -> Result<()>;
    /// Stream `index mod pool size` of the pool.
    fn stream_from_pool(&self, index: i64) -> Stream;
    /// The current stream waits for the work enqueued so far on `stream`.
    fn sync_stream(&self, stream: Stream) -> Result<()>;

    /// A buffer of at least `bytes` bytes, 64-byte aligned, the same one for
    /// the same `(site, bytes)` on every call; freed when the device is.
    fn alloc(&self, site: i64, bytes: usize) -> Result<NonNull<u8>>;
    /// Returns an [`Device::alloc`] buffer to the cache.
    fn dealloc(&self, ptr: *mut u8) -> Result<()>;
    /// The buffers the entries' views may point into: [`Device::alloc`]'s,
    /// and those a launcher registers (its arguments).
    fn allocations(&self) -> &Arc<Allocations>;

    fn compute(&self, kernel: Kernel) -> Result<()>;
    /// Runs a `host.fused` op's program over its buffers as one kernel.
    fn fused(&self, kernel: FusedKernel) -> Result<()>;

    /// Posts a collective on the current stream. A rank outside the team does
    /// nothing and gets a request that is already complete.
    fn collective(&self, op: CollectiveOp) -> Result<Request>;
    fn send(&self, transfer: Transfer) -> Result<Request>;
    fn recv(&self, transfer: Transfer) -> Result<Request>;
    /// Opens a group of sends and receives posted together; inside it, those
    /// return the group's request.
    fn start_coalescing(&self) -> Result<()>;
    fn end_coalescing(&self) -> Result<Request>;
    /// The current stream waits for `request`; the host does not.
    fn wait(&self, request: Request) -> Result<()>;

    /// Exports `buffer` to the team and maps the peers' (host-blocking, once
    /// per buffer and team).
    fn share_mem_handle(&self, buffer: View, team: Team) -> Result<()>;
    /// The host waits until every rank of the team reaches the barrier.
    fn barrier(&self, team: Team, backend: Transport) -> Result<()>;

    /// The host waits until all work enqueued on this rank is done.
    fn synchronize(&self) -> Result<()>;
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<dyn Device>>> = const { RefCell::new(None) };
}

/// Makes `device` the calling thread's rank until the guard drops.
pub fn enter(device: Arc<dyn Device>) -> Entered {
    let previous = CURRENT.with(|current| current.replace(Some(device)));
    Entered { previous }
}

/// Restores the thread's previous device when dropped.
pub struct Entered {
    previous: Option<Arc<dyn Device>>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        CURRENT.with(|current| *current.borrow_mut() = self.previous.take());
    }
}

/// Gives the device of a thread that entered none: see [`set_fallback`].
pub type Fallback = fn() -> Option<Arc<dyn Device>>;

static FALLBACK: OnceLock<Fallback> = OnceLock::new();

/// Makes `fallback` the device of every thread that entered none (it is
/// called on each such entry call). Without one, such a call is a launcher
/// bug and aborts. The standalone library (`libhir_runtime.so`, crate
/// `hir-runtime-so`) sets one that starts a default world on first use; the
/// launchers (`hir-run`, `hir-bench`) never do. Returns false if one was
/// already set (the first stays).
pub fn set_fallback(fallback: Fallback) -> bool {
    FALLBACK.set(fallback).is_ok()
}

/// The address of the device a launcher entered on the calling thread, if
/// one did (not the [`set_fallback`] device, which this never starts): a
/// rank's identity, compared and never dereferenced.
pub(crate) fn entered_address() -> Option<usize> {
    CURRENT.with(|current| {
        let current = current.borrow();
        current
            .as_ref()
            .map(|device| Arc::as_ptr(device).cast::<()>() as usize)
    })
}

/// The calling thread's device: the one a launcher entered, else the
/// [`set_fallback`] device, if any.
pub fn current() -> Option<Arc<dyn Device>> {
    CURRENT
        .with(|current| current.borrow().clone())
        .or_else(|| FALLBACK.get().and_then(|fallback| fallback()))
}
