//! An op's temporary device buffers, in stream order: contiguous staging
//! for views that NCCL, cuBLASLt or a copy cannot take as they are.

use super::axes::coalesce;
use super::kernels::Kernels;
use super::{Check, Stream};
use crate::error::Result;
use crate::memref::View;
use cudarc::driver::{result as cu, sys};

/// Whether `view` is one dense row-major block.
pub(super) fn is_contiguous(view: &View) -> bool {
    let (sizes, strides) = coalesce(&view.sizes, std::slice::from_ref(&view.strides));
    sizes.len() <= 1 && strides[0].first().is_none_or(|&stride| stride == 1)
}

/// Temporary device buffers of one op, allocated and freed in stream order
/// (`cuMemAllocAsync`/`cuMemFreeAsync`), so later work reuses them safely.
pub(crate) struct Scratch {
    buffers: Vec<(sys::CUdeviceptr, Stream)>,
    /// Whether a new buffer is filled with NaN first ([`Config::poison`]).
    poison: bool,
}

impl Scratch {
    pub fn new(poison: bool) -> Scratch {
        Scratch {
            buffers: Vec::new(),
            poison,
        }
    }

    /// A contiguous buffer shaped as `like`, on `stream`.
    pub(super) fn contiguous(&mut self, like: &View, stream: Stream) -> Result<View> {
        let bytes = (like.numel() * like.dtype.size()).max(1);
        // SAFETY: freed on the same stream when `self` drops.
        let ptr = unsafe { cu::malloc_async(stream, bytes) }.check("cuMemAllocAsync")?;
        self.buffers.push((ptr, stream));
        if self.poison {
            // SAFETY: `bytes` bytes just allocated on `stream`.
            unsafe { cu::memset_d8_async(ptr, 0xff, bytes, stream) }.check("cuMemsetD8Async")?;
        }
        Ok(View::contiguous(like.dtype, ptr as *mut u8, &like.sizes))
    }

    /// A contiguous copy of `view`.
    pub(super) fn contiguous_copy(
        &mut self,
        kernels: &Kernels,
        view: &View,
        stream: Stream,
    ) -> Result<View> {
        let copy = self.contiguous(view, stream)?;
        kernels.copy(view, &copy, stream)?;
        Ok(copy)
    }

    /// `view` itself if contiguous, else a contiguous copy of it.
    pub(super) fn readable(
        &mut self,
        kernels: &Kernels,
        view: &View,
        stream: Stream,
    ) -> Result<View> {
        if is_contiguous(view) {
            Ok(view.clone())
        } else {
            self.contiguous_copy(kernels, view, stream)
        }
    }

    /// Where to write `view`'s contents contiguously, and whether they must
    /// then be copied into `view`.
    pub(super) fn writable(&mut self, view: &View, stream: Stream) -> Result<(View, bool)> {
        if is_contiguous(view) {
            Ok((view.clone(), false))
        } else {
            Ok((self.contiguous(view, stream)?, true))
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for &(ptr, stream) in &self.buffers {
            // SAFETY: allocated on `stream` by `contiguous`; freed after the
            // work enqueued on it so far.
            let _ = unsafe { cu::free_async(ptr, stream) };
        }
    }
}
