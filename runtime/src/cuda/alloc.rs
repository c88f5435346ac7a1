//! The cuda backend's memory for the caching allocator ([`SiteCache`]):
//! device buffers (so IPC and NCCL registrations keyed by buffer stay valid),
//! zeroed once (NaN, every byte `0xff`, with `Config::poison`), freed when the rank's device drops; and the launcher's
//! [`DeviceBuffer`]s. Both are recorded in the rank's [`Allocations`], which
//! the entries check views against. A failed `cuMemAlloc` is an error naming
//! the size.

use super::Check;
use crate::bounds::{Allocations, Registration};
use crate::error::{Error, Result};
use crate::site_cache::{Memory, SiteCache};
use cudarc::driver::result as cu;
use std::ptr::NonNull;

pub(crate) struct DeviceMemory {
    /// Whether a new buffer is NaN instead of zero.
    pub poison: bool,
}

pub(crate) type Allocator = SiteCache<DeviceMemory>;

impl Memory for DeviceMemory {
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
        let _ = unsafe { cu::free_sync(ptr.as_ptr() as cudarc::driver::sys::CUdeviceptr) };
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
