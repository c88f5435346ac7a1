//! The cpu backend's memory for the caching allocator ([`SiteCache`]): host
//! memory, aligned as vector loads and cache lines want, zeroed once so that
//! runs are deterministic (NaN, every byte `0xff`, with `Config::poison`). An
//! allocation the system refuses is an error naming its size, never an abort.

use crate::error::{Error, Result};
use crate::site_cache::{Memory, SiteCache};
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// What vector loads and cache lines want; CUDA's allocator gives 256.
const ALIGN: usize = 64;

pub(crate) struct HostMemory {
    /// Whether a new block is NaN instead of zero.
    pub poison: bool,
}

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
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) }).ok_or_else(|| {
            Error::OutOfMemory(format!("cannot allocate {bytes} B at site {site}"))
        })?;
        if self.poison {
            // SAFETY: the block just allocated holds `layout.size()` bytes.
            unsafe { ptr.as_ptr().write_bytes(0xff, layout.size()) };
        }
        Ok(ptr)
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
        Allocator::new(HostMemory { poison: false }, Default::default())
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
    fn a_poisoned_block_is_nan_in_every_dtype() {
        let mut poisoned = Allocator::new(HostMemory { poison: true }, Default::default());
        let block = poisoned.alloc(1, 8).unwrap();
        // SAFETY: 8 bytes, 64-byte aligned.
        let bytes = unsafe { std::slice::from_raw_parts(block.as_ptr(), 8) };
        let f32s = [0, 4].map(|at| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()));
        assert!(f32s.iter().all(|x| x.is_nan()), "{f32s:?}");
        let halves = [0, 2].map(|at| u16::from_le_bytes([bytes[at], bytes[at + 1]]));
        // bf16 and f16 NaN: exponent all ones, mantissa not zero.
        assert!(
            halves
                .iter()
                .all(|&h| h & 0x7f80 == 0x7f80 && h & 0x7f != 0)
        );
        assert!(
            halves
                .iter()
                .all(|&h| h & 0x7c00 == 0x7c00 && h & 0x3ff != 0)
        );
        let mut plain = allocator();
        let zero = plain.alloc(1, 8).unwrap();
        // SAFETY: as above.
        assert_eq!(
            unsafe { std::slice::from_raw_parts(zero.as_ptr(), 8) },
            &[0; 8]
        );
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
