//! The cpu backend's memory for the caching allocator ([`SiteCache`]): host
//! memory, aligned as vector loads and cache lines want, zeroed once so that
//! runs are deterministic. An allocation the system refuses is an error
//! naming its size, never an abort.

use crate::error::{Error, Result};
use crate::site_cache::{Memory, SiteCache};
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// What vector loads and cache lines want; CUDA's allocator gives 256.
const ALIGN: usize = 64;

pub(crate) struct HostMemory;

pub(crate) type Allocator = SiteCache<HostMemory>;

// The blocks are plain memory owned by the allocator.
unsafe impl Send for SiteCache<HostMemory> {}

fn layout(bytes: usize) -> Option<Layout> {
    Layout::from_size_align(bytes.max(1), ALIGN).ok()
}

impl Memory for HostMemory {
    fn allocate(&mut self, site: i64, bytes: usize) -> Result<NonNull<u8>> {
        let layout = layout(bytes).ok_or_else(|| {
            Error::OutOfMemory(format!(
                "cannot allocate {bytes} B at site {site}: larger than any allocation"
            ))
        })?;
        // SAFETY: the layout has a non-zero size.
        NonNull::new(unsafe { alloc_zeroed(layout) })
            .ok_or_else(|| Error::OutOfMemory(format!("cannot allocate {bytes} B at site {site}")))
    }

    unsafe fn free(&mut self, ptr: NonNull<u8>, bytes: usize) {
        let layout = layout(bytes).expect("allocated with this layout");
        // SAFETY: the caller guarantees `ptr` came from `allocate(_, bytes)`.
        unsafe { dealloc(ptr.as_ptr(), layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allocator() -> Allocator {
        Allocator::new(HostMemory, Default::default())
    }

    #[test]
    fn a_site_gets_one_aligned_buffer() {
        let mut allocator = allocator();
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

    #[test]
    fn an_allocation_too_large_is_an_error_naming_its_size() {
        let mut allocator = allocator();
        for bytes in [usize::MAX - 8, 1 << 62] {
            let error = allocator.alloc(3, bytes).unwrap_err();
            assert!(matches!(error, Error::OutOfMemory(_)), "{error}");
            assert!(error.to_string().contains(&format!("{bytes} B at site 3")));
        }
    }
}
