//! The caching allocator: one buffer per (allocation site, size), handed out
//! on every call and kept until the world ends. IPC handles are cached by
//! buffer, so a site must get the same buffer on every call and every rank
//! (a rank that missed the cache would exchange handles its peers do not).
//! Memory is zeroed once, so that runs are deterministic.

use crate::error::{Error, Result};
use std::alloc::{Layout, alloc_zeroed, dealloc, handle_alloc_error};
use std::collections::HashMap;
use std::ptr::NonNull;

/// What vector loads and cache lines want; CUDA's allocator gives 256.
const ALIGN: usize = 64;

struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
    /// Allocations not yet returned: `dealloc` of a buffer with none is a
    /// double free.
    live: usize,
}

#[derive(Default)]
pub(crate) struct Allocator {
    blocks: HashMap<(i64, usize), Block>,
    by_address: HashMap<usize, (i64, usize)>,
}

// The blocks are plain memory owned by the allocator.
unsafe impl Send for Allocator {}

impl Allocator {
    pub fn alloc(&mut self, site: i64, bytes: usize) -> Result<NonNull<u8>> {
        let block = match self.blocks.entry((site, bytes)) {
            std::collections::hash_map::Entry::Occupied(block) => block.into_mut(),
            std::collections::hash_map::Entry::Vacant(slot) => {
                let layout = Layout::from_size_align(bytes.max(1), ALIGN).map_err(|_| {
                    Error::Invalid(format!("cannot allocate {bytes} bytes at site {site}"))
                })?;
                // SAFETY: the layout has a non-zero size.
                let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })
                    .unwrap_or_else(|| handle_alloc_error(layout));
                self.by_address.insert(ptr.as_ptr() as usize, (site, bytes));
                slot.insert(Block {
                    ptr,
                    layout,
                    live: 0,
                })
            }
        };
        block.live += 1;
        Ok(block.ptr)
    }

    /// Returns a buffer to the cache. Work still queued on it is unaffected:
    /// cached memory is only freed when the world ends, after every queue
    /// has drained.
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

impl Drop for Allocator {
    fn drop(&mut self) {
        for block in self.blocks.values() {
            // SAFETY: allocated above with this layout, freed once.
            unsafe { dealloc(block.ptr.as_ptr(), block.layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_gets_one_aligned_buffer() {
        let mut allocator = Allocator::default();
        let a = allocator.alloc(7, 100).unwrap();
        assert_eq!(a.as_ptr() as usize % ALIGN, 0);
        allocator.dealloc(a.as_ptr()).unwrap();
        assert_eq!(allocator.alloc(7, 100).unwrap(), a);
        assert_ne!(allocator.alloc(7, 200).unwrap(), a);
        assert_ne!(allocator.alloc(8, 100).unwrap(), a);
        allocator.dealloc(a.as_ptr()).unwrap();
        assert!(allocator.dealloc(a.as_ptr()).is_err());
        assert!(allocator.dealloc(std::ptr::null_mut()).is_err());
    }
}
