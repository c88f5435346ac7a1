//! The cpu backend's memory for the caching allocator ([`SiteCache`]): host
//! memory, aligned as vector loads and cache lines want, zeroed once so that
//! runs are deterministic (NaN, every byte `0xff`, with `Config::poison`). An
//! allocation the system refuses is an error naming its size, never an abort.
//! A freed block's marks are the last task of every queue when it was freed
//! (the streams' and the communication queues'): whoever gets it next waits
//! for them all, in queue order and in the race detector's clocks.

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

/// Where a block's users ran to when it was freed: the last task of each
/// queue that had any.
pub(crate) type Marks = Vec<super::Event>;

pub(crate) type Allocator = SiteCache<HostMemory>;

// The blocks are plain memory owned by the allocator.
unsafe impl Send for SiteCache<HostMemory> {}

fn layout(bytes: usize) -> Option<Layout> {
    Layout::from_size_align(bytes.max(1), ALIGN).ok()
}

impl Memory for HostMemory {
    type Marks = Marks;

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
        Allocator::new(HostMemory { poison: false }, Default::default(), 1)
    }

    #[test]
    fn blocks_are_aligned_and_reused_once_freed() {
        let mut allocator = allocator();
        let a = allocator.alloc(7, 100, 0, 0).unwrap().ptr;
        assert_eq!(a.as_ptr() as usize % ALIGN, 0);
        let b = allocator.alloc(7, 100, 0, 0).unwrap().ptr;
        assert_ne!(a, b, "a block held is not handed out again");
        assert_eq!(b.as_ptr() as usize % ALIGN, 0);
        allocator
            .dealloc(a.as_ptr(), 0, |_| Ok(Vec::new()))
            .unwrap();
        assert_eq!(allocator.alloc(7, 100, 0, 0).unwrap().ptr, a);
    }

    #[test]
    fn a_poisoned_block_is_nan_in_every_dtype() {
        let mut poisoned = Allocator::new(HostMemory { poison: true }, Default::default(), 1);
        let block = poisoned.alloc(1, 8, 0, 0).unwrap().ptr;
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
        let zero = plain.alloc(1, 8, 0, 0).unwrap().ptr;
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
            let error = allocator.alloc(3, bytes, 0, 0).err().unwrap();
            assert!(matches!(error, Error::OutOfMemory(_)), "{error}");
            assert!(error.to_string().contains(&format!("{bytes} B at site 3")));
        }
    }
}
