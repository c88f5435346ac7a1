//! The cuda backend's caching allocator: as the cpu backend's, one device
//! buffer per (allocation site, size), handed out on every call (so IPC and
//! NCCL registrations keyed by buffer stay valid), zeroed once, freed when the
//! rank's device drops.

use super::Check;
use crate::error::{Error, Result};
use cudarc::driver::{result as cu, sys};
use std::collections::HashMap;
use std::ptr::NonNull;

struct Block {
    ptr: sys::CUdeviceptr,
    /// Allocations not yet returned.
    live: usize,
}

#[derive(Default)]
pub(crate) struct Allocator {
    blocks: HashMap<(i64, usize), Block>,
    by_address: HashMap<sys::CUdeviceptr, (i64, usize)>,
}

impl Allocator {
    /// Needs the rank's context current.
    pub fn alloc(&mut self, site: i64, bytes: usize) -> Result<NonNull<u8>> {
        let block = match self.blocks.entry((site, bytes)) {
            std::collections::hash_map::Entry::Occupied(block) => block.into_mut(),
            std::collections::hash_map::Entry::Vacant(slot) => {
                // SAFETY: a plain allocation (256-byte aligned), zeroed before
                // any stream can see it, freed in `drop`.
                let ptr = unsafe {
                    let ptr = cu::malloc_sync(bytes.max(1))
                        .check(&format!("allocating {bytes} bytes at site {site}"))?;
                    cu::memset_d8_sync(ptr, 0, bytes.max(1)).check("cuMemsetD8")?;
                    ptr
                };
                self.by_address.insert(ptr, (site, bytes));
                slot.insert(Block { ptr, live: 0 })
            }
        };
        block.live += 1;
        Ok(NonNull::new(block.ptr as *mut u8).expect("cuMemAlloc returns non-null"))
    }

    pub fn dealloc(&mut self, ptr: *mut u8) -> Result<()> {
        let key = self
            .by_address
            .get(&(ptr as sys::CUdeviceptr))
            .ok_or_else(|| {
                Error::Invalid(format!("dealloc of {ptr:p}, which alloc did not return"))
            })?;
        let block = self.blocks.get_mut(key).expect("indexed blocks exist");
        if block.live == 0 {
            return Err(Error::Invalid(format!(
                "dealloc of {ptr:p} (site {}, {} bytes), which is not allocated",
                key.0, key.1
            )));
        }
        block.live -= 1;
        Ok(())
    }
}

impl Drop for Allocator {
    fn drop(&mut self) {
        for block in self.blocks.values() {
            // SAFETY: allocated in `alloc`, freed once; the owning device
            // made its context current and synchronized its streams.
            let _ = unsafe { cu::free_sync(block.ptr) };
        }
    }
}
