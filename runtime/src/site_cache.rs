//! The caching policy both backends' allocators share: one buffer per
//! (allocation site, size), handed out on every call and kept until the
//! allocator drops. IPC handles and NCCL registrations are cached by buffer,
//! so a site must get the same buffer on every call and every rank (a rank
//! that missed the cache would exchange handles its peers do not). A backend
//! only says how to get and free zeroed memory ([`Memory`]). Every buffer is
//! recorded in the rank's [`Allocations`], which the entries check views
//! against.

use crate::bounds::Allocations;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::Arc;

/// Where a backend's buffers come from.
pub(crate) trait Memory {
    /// Zeroed memory of at least `bytes` bytes (at least one), for `site`.
    fn allocate(&mut self, site: i64, bytes: usize) -> Result<NonNull<u8>>;

    /// Frees what `allocate` returned for `bytes`.
    ///
    /// # Safety
    /// `ptr` came from `allocate(_, bytes)` and is freed once.
    unsafe fn free(&mut self, ptr: NonNull<u8>, bytes: usize);
}

struct Block {
    ptr: NonNull<u8>,
    /// Allocations not yet returned: `dealloc` of a buffer with none is a
    /// double free.
    live: usize,
    /// Its record in the rank's [`Allocations`].
    known: u64,
}

pub(crate) struct SiteCache<M: Memory> {
    memory: M,
    blocks: HashMap<(i64, usize), Block>,
    by_address: HashMap<usize, (i64, usize)>,
    known: Arc<Allocations>,
}

impl<M: Memory> SiteCache<M> {
    /// A cache recording its buffers in `known`.
    pub fn new(memory: M, known: Arc<Allocations>) -> Self {
        Self {
            memory,
            blocks: HashMap::new(),
            by_address: HashMap::new(),
            known,
        }
    }

    pub fn alloc(&mut self, site: i64, bytes: usize) -> Result<NonNull<u8>> {
        let block = match self.blocks.entry((site, bytes)) {
            std::collections::hash_map::Entry::Occupied(block) => block.into_mut(),
            std::collections::hash_map::Entry::Vacant(slot) => {
                let ptr = self.memory.allocate(site, bytes)?;
                let known = match self.known.insert(ptr.as_ptr(), bytes) {
                    Ok(known) => known,
                    Err(error) => {
                        // SAFETY: just allocated for `bytes`, not handed out.
                        unsafe { self.memory.free(ptr, bytes) };
                        return Err(error);
                    }
                };
                self.by_address.insert(ptr.as_ptr() as usize, (site, bytes));
                slot.insert(Block {
                    ptr,
                    live: 0,
                    known,
                })
            }
        };
        block.live += 1;
        Ok(block.ptr)
    }

    /// Returns a buffer to the cache. Work still queued on it is unaffected:
    /// cached memory is only freed when the allocator drops, after every
    /// queue has drained.
    pub fn dealloc(&mut self, ptr: *mut u8) -> Result<()> {
        let key = self.by_address.get(&(ptr as usize)).ok_or_else(|| {
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

impl<M: Memory> Drop for SiteCache<M> {
    fn drop(&mut self) {
        for (&(_, bytes), block) in &self.blocks {
            self.known.remove(block.ptr.as_ptr() as usize, block.known);
            // SAFETY: allocated once in `alloc` for `bytes`, freed once here.
            unsafe { self.memory.free(block.ptr, bytes) };
        }
    }
}
