//! Buffers as the runtime sees them: MLIR memref descriptors decoded into
//! [`View`]s (a base pointer, sizes and strides in elements), and the byte
//! footprint of a view that race detection compares.

use crate::abi::DType;
use crate::error::{Error, Result};
use std::ffi::c_void;

/// What `llvm.emit_c_interface` passes for a `memref<*xT>` argument: the rank
/// and a pointer to the ranked descriptor
/// `{ T *allocated, *aligned; i64 offset, sizes[rank], strides[rank] }`.
#[repr(C)]
#[derive(Debug)]
pub struct UnrankedMemRef {
    pub rank: i64,
    pub descriptor: *mut c_void,
}

/// A strided view of a buffer: element `(i0, .., in)` is at
/// `ptr + sum(ik * strides[k]) * dtype.size()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    pub dtype: DType,
    /// The first element (`aligned + offset`).
    pub ptr: *mut u8,
    pub sizes: Vec<usize>,
    /// In elements; may be zero (broadcast) but not negative.
    pub strides: Vec<usize>,
}

// A view is a description of memory owned elsewhere; the runtime's ordering
// (streams, events, requests) and race detection govern who touches it when.
unsafe impl Send for View {}
unsafe impl Sync for View {}

impl View {
    /// A view of `sizes` at `ptr` in row-major (C) order.
    pub fn contiguous(dtype: DType, ptr: *mut u8, sizes: &[usize]) -> View {
        let mut strides = vec![0; sizes.len()];
        let mut stride = 1;
        for (axis, &size) in sizes.iter().enumerate().rev() {
            strides[axis] = stride;
            stride *= size;
        }
        View {
            dtype,
            ptr,
            sizes: sizes.to_vec(),
            strides,
        }
    }

    /// Decodes the descriptor `memref` points to, taking the element type from
    /// the entry since the descriptor has none.
    ///
    /// # Safety
    /// `memref` is null or points to a valid unranked descriptor whose ranked
    /// part has `rank` sizes and strides.
    pub unsafe fn from_unranked(memref: *const UnrankedMemRef, dtype: DType) -> Result<View> {
        // SAFETY: the caller's contract.
        let fields = unsafe { ranked_fields(memref)? };
        let rank = (fields.len() - 3) / 2;
        let aligned = fields[1] as usize as *mut u8;
        let offset = fields[2];
        let mut sizes = Vec::with_capacity(rank);
        let mut strides = Vec::with_capacity(rank);
        for axis in 0..rank {
            let (size, stride) = (fields[3 + axis], fields[3 + rank + axis]);
            if size < 0 || stride < 0 {
                return Err(Error::Invalid(format!(
                    "memref axis {axis} has size {size} and stride {stride}; negative ones are not supported"
                )));
            }
            sizes.push(size as usize);
            strides.push(stride as usize);
        }
        if aligned.is_null() && sizes.iter().product::<usize>() != 0 {
            return Err(Error::Invalid("memref has a null aligned pointer".into()));
        }
        let ptr = aligned.wrapping_offset(offset as isize * dtype.size() as isize);
        Ok(View {
            dtype,
            ptr,
            sizes,
            strides,
        })
    }

    pub fn rank(&self) -> usize {
        self.sizes.len()
    }

    pub fn numel(&self) -> usize {
        self.sizes.iter().product()
    }

    /// The view of `len` indices from `start` along `axis`.
    pub fn slice(&self, axis: usize, start: usize, len: usize) -> View {
        debug_assert!(start + len <= self.sizes[axis]);
        let mut view = self.clone();
        view.ptr = self
            .ptr
            .wrapping_add(start * self.strides[axis] * self.dtype.size());
        view.sizes[axis] = len;
        view
    }

    /// The element offsets of the view in row-major order of its indices.
    pub fn offsets(&self) -> Offsets<'_> {
        Offsets::new(&self.sizes, &self.strides)
    }

    /// The bytes the view may touch.
    pub fn footprint(&self) -> Footprint {
        Footprint::of(self)
    }
}

/// Reads an `i64` memref (a team or an axis list) into a vector.
///
/// # Safety
/// As [`View::from_unranked`], for a memref of `i64`.
pub unsafe fn read_i64s(memref: *const UnrankedMemRef) -> Result<Vec<i64>> {
    // SAFETY: the caller's contract.
    let fields = unsafe { ranked_fields(memref)? };
    let rank = (fields.len() - 3) / 2;
    let base = (fields[1] as usize as *const i64).wrapping_offset(fields[2] as isize);
    let sizes: Vec<usize> = fields[3..3 + rank].iter().map(|&s| s as usize).collect();
    let strides: Vec<usize> = fields[3 + rank..].iter().map(|&s| s as usize).collect();
    if fields[3..].iter().any(|&field| field < 0) {
        return Err(Error::Invalid(
            "i64 memref has a negative size or stride".into(),
        ));
    }
    Ok(Offsets::new(&sizes, &strides)
        // SAFETY: every offset is inside the described memref.
        .map(|offset| unsafe { *base.add(offset) })
        .collect())
}

/// `[allocated, aligned, offset, sizes.., strides..]` of the ranked descriptor.
unsafe fn ranked_fields(memref: *const UnrankedMemRef) -> Result<Vec<i64>> {
    if memref.is_null() {
        return Err(Error::Invalid("null memref descriptor".into()));
    }
    // SAFETY: the caller's contract.
    let memref = unsafe { &*memref };
    if !(0..=64).contains(&memref.rank) || memref.descriptor.is_null() {
        return Err(Error::Invalid(format!(
            "bad unranked memref descriptor (rank {}, descriptor {:p})",
            memref.rank, memref.descriptor
        )));
    }
    let len = 3 + 2 * memref.rank as usize;
    // SAFETY: a ranked descriptor is `len` 8-byte fields (pointers are 64-bit
    // on every target the JIT runs on).
    Ok(unsafe { std::slice::from_raw_parts(memref.descriptor as *const i64, len) }.to_vec())
}

/// Element offsets of a strided shape in row-major index order.
pub struct Offsets<'a> {
    sizes: &'a [usize],
    strides: &'a [usize],
    index: Vec<usize>,
    offset: usize,
    left: usize,
}

impl<'a> Offsets<'a> {
    fn new(sizes: &'a [usize], strides: &'a [usize]) -> Self {
        Offsets {
            sizes,
            strides,
            index: vec![0; sizes.len()],
            offset: 0,
            left: sizes.iter().product(),
        }
    }
}

impl Iterator for Offsets<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let current = self.offset;
        for axis in (0..self.sizes.len()).rev() {
            self.index[axis] += 1;
            self.offset += self.strides[axis];
            if self.index[axis] < self.sizes[axis] {
                break;
            }
            self.offset -= self.strides[axis] * self.sizes[axis];
            self.index[axis] = 0;
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Offsets<'_> {}

/// Past this many intervals, a footprint merges its inner axes into one
/// interval: race detection stays cheap and errs towards reporting.
const MAX_INTERVALS: usize = 1 << 16;

/// The bytes a view may touch: its bounds, and on demand the exact sorted
/// byte intervals.
#[derive(Clone, Debug)]
pub struct Footprint {
    pub start: usize,
    pub end: usize,
    /// Contiguous runs: (run length in bytes, and per outer axis its size and
    /// byte stride).
    run: usize,
    outer: Vec<(usize, usize)>,
}

impl Footprint {
    fn of(view: &View) -> Footprint {
        let elem = view.dtype.size();
        let start = view.ptr as usize;
        if view.numel() == 0 {
            return Footprint {
                start,
                end: start,
                run: 0,
                outer: Vec::new(),
            };
        }
        // Axes by increasing stride, dropping those that do not move.
        let mut axes: Vec<(usize, usize)> = view
            .sizes
            .iter()
            .zip(&view.strides)
            .filter(|&(&size, &stride)| size > 1 && stride > 0)
            .map(|(&size, &stride)| (size, stride * elem))
            .collect();
        axes.sort_by_key(|&(_, stride)| stride);
        let extent: usize = axes.iter().map(|&(size, stride)| (size - 1) * stride).sum();
        // Merge the innermost axes that continue one contiguous run.
        let mut run = elem;
        let mut merged = 0;
        while merged < axes.len() && axes[merged].1 == run {
            run *= axes[merged].0;
            merged += 1;
        }
        let mut outer = axes.split_off(merged);
        // Coarsen (towards over-reporting) while there are too many runs.
        while outer.iter().map(|&(size, _)| size).product::<usize>() > MAX_INTERVALS {
            let (size, stride) = outer.remove(0);
            run += (size - 1) * stride;
        }
        Footprint {
            start,
            end: start + extent + elem,
            run,
            outer,
        }
    }

    fn intervals(&self) -> Vec<(usize, usize)> {
        let sizes: Vec<usize> = self.outer.iter().map(|&(size, _)| size).collect();
        let strides: Vec<usize> = self.outer.iter().map(|&(_, stride)| stride).collect();
        let mut intervals: Vec<(usize, usize)> = Offsets::new(&sizes, &strides)
            .map(|offset| (self.start + offset, self.start + offset + self.run))
            .collect();
        intervals.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(intervals.len());
        for (lo, hi) in intervals {
            match merged.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        merged
    }

    /// Whether the two footprints share a byte.
    pub fn overlaps(&self, other: &Footprint) -> bool {
        if self.start >= other.end || other.start >= self.end || self.run == 0 || other.run == 0 {
            return false;
        }
        if self.outer.is_empty() || other.outer.is_empty() {
            // One side is a single run, overlapping the other's bounds.
            let (run, strided) = if self.outer.is_empty() {
                (self, other)
            } else {
                (other, self)
            };
            return strided
                .intervals()
                .iter()
                .any(|&(lo, hi)| lo < run.end && run.start < hi);
        }
        let (a, b) = (self.intervals(), other.intervals());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            if a[i].0 < b[j].1 && b[j].0 < a[i].1 {
                return true;
            }
            if a[i].1 <= b[j].1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        false
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An unranked descriptor built the way JIT'd code passes one.
    pub struct Descriptor {
        fields: Vec<i64>,
        pub memref: UnrankedMemRef,
    }

    impl Descriptor {
        pub fn new(ptr: *mut u8, offset: usize, sizes: &[usize], strides: &[usize]) -> Box<Self> {
            let mut fields = vec![ptr as i64, ptr as i64, offset as i64];
            fields.extend(sizes.iter().map(|&s| s as i64));
            fields.extend(strides.iter().map(|&s| s as i64));
            let mut descriptor = Box::new(Descriptor {
                fields,
                memref: UnrankedMemRef {
                    rank: sizes.len() as i64,
                    descriptor: std::ptr::null_mut(),
                },
            });
            descriptor.memref.descriptor = descriptor.fields.as_mut_ptr().cast();
            descriptor
        }

        pub fn of(view: &View) -> Box<Self> {
            Descriptor::new(view.ptr, 0, &view.sizes, &view.strides)
        }

        pub fn ptr(&self) -> *const UnrankedMemRef {
            &self.memref
        }
    }

    #[test]
    fn decodes_a_strided_descriptor() {
        let mut data = [0f32; 24];
        let base = data.as_mut_ptr().cast::<u8>();
        // data viewed as [2, 3, 4], sliced at index 1 of the middle axis.
        let descriptor = Descriptor::new(base, 4, &[2, 4], &[12, 1]);
        let view = unsafe { View::from_unranked(descriptor.ptr(), DType::F32) }.unwrap();
        assert_eq!(view.ptr, base.wrapping_add(16));
        assert_eq!(
            view.offsets().collect::<Vec<_>>(),
            [0, 1, 2, 3, 12, 13, 14, 15]
        );
    }

    #[test]
    fn reads_i64_lists() {
        let mut team = [2i64, 0, 1];
        let descriptor = Descriptor::new(team.as_mut_ptr().cast(), 0, &[3], &[1]);
        assert_eq!(unsafe { read_i64s(descriptor.ptr()) }.unwrap(), [2, 0, 1]);
    }

    #[test]
    fn interleaved_slices_do_not_overlap() {
        let base = 4096 as *mut u8;
        // [4, 3, 8] f32 sliced along the middle axis: runs of 32 bytes.
        let full = View::contiguous(DType::F32, base, &[4, 3, 8]);
        let a = View {
            sizes: vec![4, 8],
            strides: vec![24, 1],
            ..full.clone()
        };
        let b = View {
            ptr: base.wrapping_add(32),
            ..a.clone()
        };
        assert!(!a.footprint().overlaps(&b.footprint()));
        assert!(a.footprint().overlaps(&full.footprint()));
        let column = View {
            ptr: base.wrapping_add(4),
            sizes: vec![12],
            strides: vec![8],
            ..full.clone()
        };
        assert!(a.footprint().overlaps(&column.footprint()));
        assert!(!b.slice(1, 2, 6).footprint().overlaps(&column.footprint()));
    }
}
