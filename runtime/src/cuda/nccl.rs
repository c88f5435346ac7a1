//! NCCL: one communicator per team, created on the team's first
//! communication, its unique id exchanged through the [`Bootstrap`].

use super::Stream;
use crate::core::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::lock;
use crate::memref::View;
use crate::ops::Team;
use cudarc::nccl::{result as nccl, sys};
use hir_abi::{DType, ReduceKind};
use std::ffi::{CStr, c_void};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// NCCL's message for `error`, with the communicator's last error if any.
fn message(error: sys::ncclResult_t, comm: Option<sys::ncclComm_t>) -> String {
    // SAFETY: NCCL returns static NUL-terminated strings.
    let text = |ptr: *const std::ffi::c_char| {
        (!ptr.is_null()).then(|| {
            unsafe { CStr::from_ptr(ptr) }
                .to_string_lossy()
                .into_owned()
        })
    };
    let mut message =
        text(unsafe { sys::ncclGetErrorString(error) }).unwrap_or_else(|| format!("{error:?}"));
    if let Some(last) = text(unsafe { sys::ncclGetLastError(comm.unwrap_or(std::ptr::null_mut())) })
        .filter(|last| !last.is_empty())
    {
        message = format!("{message} ({last})");
    }
    message
}

/// Checks an NCCL call, naming it in the error.
pub(crate) fn check<T>(
    result: std::result::Result<T, nccl::NcclError>,
    what: &str,
    comm: Option<sys::ncclComm_t>,
) -> Result<()> {
    result
        .map(drop)
        .map_err(|error| Error::Cuda(format!("NCCL {what} failed: {}", message(error.0, comm))))
}

/// A team's communicator. The raw handle sits behind a lock that the rank
/// holds while it calls NCCL with it, and that the watchdog takes to abort
/// it ([`CommCell::abort`]); an aborted communicator is gone for both.
pub(crate) struct Comm {
    pub cell: Arc<CommCell>,
}

/// The handle of a communicator, `None` once aborted or destroyed.
pub(crate) struct CommCell {
    raw: Mutex<Option<CommPtr>>,
    team: Team,
}

#[derive(Clone, Copy)]
struct CommPtr(sys::ncclComm_t);

// NCCL communicators may be used from any thread, one call at a time: the
// cell's lock serializes the rank and its watchdog.
unsafe impl Send for CommPtr {}

impl CommCell {
    /// Calls `f` with the live handle, holding the lock.
    pub fn with<T>(&self, f: impl FnOnce(sys::ncclComm_t) -> Result<T>) -> Result<T> {
        let raw = lock(&self.raw);
        match *raw {
            Some(CommPtr(comm)) => f(comm),
            None => Err(Error::Cuda(format!(
                "the NCCL communicator of team {} was aborted",
                self.team
            ))),
        }
    }

    /// Aborts the communicator (`ncclCommAbort`), so that whatever waits on
    /// it returns; waits at most `patience` for a call in progress to end
    /// (one stuck inside NCCL keeps the lock: it is left alone then).
    /// Whether it was aborted now.
    pub fn abort(&self, patience: Duration) -> bool {
        let deadline = std::time::Instant::now() + patience;
        loop {
            match self.raw.try_lock() {
                Ok(mut raw) => {
                    return match raw.take() {
                        // SAFETY: a live communicator, taken out of the cell
                        // so that nobody uses it again.
                        Some(CommPtr(comm)) => {
                            let _ = unsafe { nccl::comm_abort(comm) };
                            true
                        }
                        None => false,
                    };
                }
                Err(std::sync::TryLockError::Poisoned(poisoned)) => {
                    let mut raw = poisoned.into_inner();
                    return match raw.take() {
                        Some(CommPtr(comm)) => {
                            let _ = unsafe { nccl::comm_abort(comm) };
                            true
                        }
                        None => false,
                    };
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    if std::time::Instant::now() >= deadline {
                        return false;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
    }
}

impl Comm {
    /// Creates the communicator of `team` as member `position` (blocks until
    /// every member has joined). `number` is the bootstrap exchange's number
    /// on this team.
    pub fn new(
        team: &Team,
        position: usize,
        number: u64,
        bootstrap: &dyn Bootstrap,
    ) -> Result<Comm> {
        let id = if position == 0 {
            let id = nccl::get_uniqueid().map_err(|error| {
                Error::Cuda(format!(
                    "ncclGetUniqueId failed: {}",
                    message(error.0, None)
                ))
            })?;
            id.internal.iter().map(|&byte| byte as u8).collect()
        } else {
            Vec::new()
        };
        let all = bootstrap.all_gather(team, number, position, id)?;
        let mut id = sys::ncclUniqueId { internal: [0; 128] };
        if all[0].len() != id.internal.len() {
            return Err(Error::Cuda(format!(
                "the NCCL unique id of team {team} has {} bytes",
                all[0].len()
            )));
        }
        for (slot, &byte) in id.internal.iter_mut().zip(&all[0]) {
            *slot = byte as std::ffi::c_char;
        }
        let mut comm = std::mem::MaybeUninit::uninit();
        // SAFETY: every member calls this with the same id, its own position.
        let result = unsafe {
            nccl::comm_init_rank(comm.as_mut_ptr(), team.len() as i32, id, position as i32)
        };
        check(result, &format!("ncclCommInitRank for team {team}"), None)?;
        // SAFETY: initialized by the successful call.
        let comm = unsafe { comm.assume_init() };
        Ok(Comm {
            cell: Arc::new(CommCell {
                raw: Mutex::new(Some(CommPtr(comm))),
                team: team.clone(),
            }),
        })
    }

    /// Calls `f` with the live handle (see [`CommCell::with`]).
    pub fn with<T>(&self, f: impl FnOnce(sys::ncclComm_t) -> Result<T>) -> Result<T> {
        self.cell.with(f)
    }

    /// The first asynchronous error of the communicator, if any.
    pub fn async_error(&self) -> Result<()> {
        self.with(|comm| {
            let mut state = sys::ncclResult_t::ncclSuccess;
            // SAFETY: a live communicator.
            let result = unsafe { sys::ncclCommGetAsyncError(comm, &mut state) }.result();
            check(result, "ncclCommGetAsyncError", Some(comm))?;
            check(state.result(), "asynchronous operation", Some(comm))
        })
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once (unless the watchdog
        // aborted it), after the owner synchronized its streams.
        if let Some(CommPtr(comm)) = lock(&self.cell.raw).take() {
            let _ = unsafe { nccl::comm_destroy(comm) };
        }
    }
}

pub(crate) fn data_type(dtype: DType) -> sys::ncclDataType_t {
    match dtype {
        DType::F32 => sys::ncclDataType_t::ncclFloat32,
        DType::BF16 => sys::ncclDataType_t::ncclBfloat16,
        DType::F16 => sys::ncclDataType_t::ncclFloat16,
        DType::I32 => sys::ncclDataType_t::ncclInt32,
        DType::I64 => sys::ncclDataType_t::ncclInt64,
    }
}

pub(crate) fn red_op(kind: ReduceKind) -> sys::ncclRedOp_t {
    match kind {
        ReduceKind::Sum => sys::ncclRedOp_t::ncclSum,
        ReduceKind::Prod => sys::ncclRedOp_t::ncclProd,
        ReduceKind::Max => sys::ncclRedOp_t::ncclMax,
        ReduceKind::Min => sys::ncclRedOp_t::ncclMin,
        ReduceKind::Avg => sys::ncclRedOp_t::ncclAvg,
    }
}

/// A raw stream as NCCL takes it.
pub(crate) fn stream(stream: Stream) -> sys::cudaStream_t {
    stream.cast()
}

/// A device address as NCCL takes it.
pub(crate) fn ptr(address: *mut u8) -> *mut c_void {
    address.cast()
}

/// `view` with `axis` split into `(parts, extent / parts)` and the parts
/// moved first: the layout NCCL's concatenating collectives use.
pub(super) fn split(view: &View, axis: usize, parts: usize) -> View {
    let extent = view.sizes[axis] / parts;
    let mut sizes = vec![parts];
    sizes.extend(&view.sizes);
    sizes[axis + 1] = extent;
    let mut strides = vec![extent * view.strides[axis]];
    strides.extend(&view.strides);
    View {
        sizes: sizes.into(),
        strides: strides.into(),
        ..view.clone()
    }
}
