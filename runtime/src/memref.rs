//! Buffers as the runtime sees them: MLIR memref descriptors decoded into
//! [`Operand`]s (a [`View`]: a base pointer, sizes and strides in elements,
//! and the allocated pointer its bounds are checked against), the bytes a
//! view spans, and the byte footprint of a view that race detection
//! compares. Decoding uses checked arithmetic throughout: a descriptor whose
//! element count, offset or byte span overflows is an error.

use crate::error::{Error, Result};
use hir_abi::DType;
use std::ffi::c_void;
use std::ops::Range;

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
    pub sizes: Extents,
    /// In elements; may be zero (broadcast) but not negative.
    pub strides: Extents,
}

/// A view's sizes or strides: inline up to six axes, so that decoding the
/// views of a small op allocates nothing for them.
pub type Extents = smallvec::SmallVec<[usize; 6]>;

// A view is a description of memory owned elsewhere; the runtime's ordering
// (streams, events, requests) and race detection govern who touches it when.
unsafe impl Send for View {}
unsafe impl Sync for View {}

impl View {
    /// A view of `sizes` at `ptr` in row-major (C) order.
    pub fn contiguous(dtype: DType, ptr: *mut u8, sizes: &[usize]) -> View {
        let mut strides = Extents::from_elem(0, sizes.len());
        let mut stride = 1;
        for (axis, &size) in sizes.iter().enumerate().rev() {
            strides[axis] = stride;
            stride *= size;
        }
        View {
            dtype,
            ptr,
            sizes: Extents::from_slice(sizes),
            strides,
        }
    }

    pub fn rank(&self) -> usize {
        self.sizes.len()
    }

    /// The number of elements. Exact for every view the runtime handles:
    /// [`Operand::from_unranked`] checks that a descriptor's count and byte
    /// span fit, and the views derived from it (slices, staging copies) are
    /// no larger.
    pub fn numel(&self) -> usize {
        self.sizes.iter().product()
    }

    /// The addresses of the bytes the view may touch, from its first element
    /// to the end of its last (empty when the view has no element), or an
    /// error when that span does not fit the address space.
    pub fn byte_range(&self) -> Result<Range<usize>> {
        let start = self.ptr as usize;
        let elem = self.dtype.size();
        let overflow = || {
            Error::Invalid(format!(
                "a view of sizes {:?} and strides {:?} ({elem} B elements) spans more bytes \
                 than the address space holds",
                self.sizes, self.strides
            ))
        };
        let Some(last) = last_offset(&self.sizes, &self.strides).map_err(|()| overflow())? else {
            return Ok(start..start);
        };
        let end = last
            .checked_add(1)
            .and_then(|count| count.checked_mul(elem))
            .and_then(|bytes| start.checked_add(bytes))
            .ok_or_else(overflow)?;
        Ok(start..end)
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

/// A buffer argument of an entry as its descriptor gives it: the view, and
/// the allocated pointer (the start of the buffer the view is of, which a
/// subview keeps), against which [`crate::bounds`] checks the view.
#[derive(Clone, Debug)]
pub struct Operand {
    pub view: View,
    pub allocated: usize,
}

impl Operand {
    /// Decodes the descriptor `memref` points to, taking the element type
    /// from the entry since the descriptor has none. Negative sizes, strides
    /// and an element count, offset or byte span that overflow are errors.
    ///
    /// # Safety
    /// `memref` is null or points to a valid unranked descriptor whose ranked
    /// part has `rank` sizes and strides.
    pub unsafe fn from_unranked(memref: *const UnrankedMemRef, dtype: DType) -> Result<Operand> {
        // SAFETY: the caller's contract.
        let fields = unsafe { ranked_fields(memref)? };
        let (sizes, strides) = extents(fields)?;
        let aligned = fields[1] as usize;
        let offset = fields[2];
        if sizes
            .iter()
            .try_fold(1usize, |n, &size| n.checked_mul(size))
            .is_none()
        {
            return Err(Error::Invalid(format!(
                "memref of sizes {sizes:?} has more elements than 64-bit sizes hold"
            )));
        }
        let ptr = offset
            .checked_mul(dtype.size() as i64)
            .and_then(|bytes| aligned.checked_add_signed(bytes as isize))
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "memref offset {offset} ({} B elements) from {aligned:#x} is outside the address space",
                    dtype.size()
                ))
            })?;
        let view = View {
            dtype,
            ptr: ptr as *mut u8,
            sizes,
            strides,
        };
        let span = view.byte_range()?;
        if aligned == 0 && !span.is_empty() {
            return Err(Error::Invalid("memref has a null aligned pointer".into()));
        }
        Ok(Operand {
            view,
            allocated: fields[0] as usize,
        })
    }
}

/// The sizes and strides of a ranked descriptor's fields, none negative.
fn extents(fields: &[i64]) -> Result<(Extents, Extents)> {
    let rank = (fields.len() - 3) / 2;
    let mut sizes = Extents::with_capacity(rank);
    let mut strides = Extents::with_capacity(rank);
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
    Ok((sizes, strides))
}

/// The longest `i64` list an entry takes: a team has at most one entry per
/// rank, an axis list one per axis.
const MAX_I64S: usize = 1 << 20;

/// Reads an `i64` memref (a team or an axis list) into a vector.
///
/// # Safety
/// As [`Operand::from_unranked`], for a memref of `i64` whose elements are
/// all inside its buffer.
pub unsafe fn read_i64s(memref: *const UnrankedMemRef) -> Result<Vec<i64>> {
    // SAFETY: the caller's contract.
    Ok(unsafe { read_i64_table(memref) }?.1)
}

/// Reads an `i64` memref of any rank (a list, or several teams one per
/// row) into its sizes and its elements in row-major order.
///
/// # Safety
/// As [`read_i64s`].
pub unsafe fn read_i64_table(memref: *const UnrankedMemRef) -> Result<(Vec<usize>, Vec<i64>)> {
    // SAFETY: the caller's contract.
    let fields = unsafe { ranked_fields(memref)? };
    let (sizes, strides) =
        extents(fields).map_err(|error| Error::Invalid(format!("i64 list: {error}")))?;
    sizes
        .iter()
        .try_fold(1usize, |n, &size| n.checked_mul(size))
        .filter(|&count| count <= MAX_I64S)
        .ok_or_else(|| {
            Error::Invalid(format!(
                "an i64 list of sizes {sizes:?} is longer than any team or axis list \
                 (at most {MAX_I64S})"
            ))
        })?;
    if last_offset(&sizes, &strides).is_err() {
        return Err(Error::Invalid(format!(
            "an i64 list of sizes {sizes:?} and strides {strides:?} spans more elements \
             than 64-bit offsets hold"
        )));
    }
    let base = (fields[1] as usize as *const i64).wrapping_offset(fields[2] as isize);
    let values = Offsets::new(&sizes, &strides)
        // SAFETY: every offset is inside the described memref (the caller's
        // contract), and the largest one fits (checked above).
        .map(|offset| unsafe { *base.wrapping_add(offset) })
        .collect();
    Ok((sizes.to_vec(), values))
}

/// The largest element offset of a strided shape: `None` when it has no
/// element, `Err` when it does not fit.
fn last_offset(sizes: &[usize], strides: &[usize]) -> std::result::Result<Option<usize>, ()> {
    if sizes.contains(&0) {
        return Ok(None);
    }
    let mut last = 0usize;
    for (&size, &stride) in sizes.iter().zip(strides) {
        last = (size - 1)
            .checked_mul(stride)
            .and_then(|step| last.checked_add(step))
            .ok_or(())?;
    }
    Ok(Some(last))
}

/// `[allocated, aligned, offset, sizes.., strides..]` of the ranked
/// descriptor, borrowed for as long as the caller keeps it.
unsafe fn ranked_fields<'a>(memref: *const UnrankedMemRef) -> Result<&'a [i64]> {
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
    Ok(unsafe { std::slice::from_raw_parts(memref.descriptor as *const i64, len) })
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
            Descriptor::raw(fields)
        }

        /// `{ allocated, aligned, offset, sizes.., strides.. }` as given.
        pub fn raw(fields: Vec<i64>) -> Box<Self> {
            let rank = (fields.len() as i64 - 3) / 2;
            let mut descriptor = Box::new(Descriptor {
                fields,
                memref: UnrankedMemRef {
                    rank,
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
        let operand = unsafe { Operand::from_unranked(descriptor.ptr(), DType::F32) }.unwrap();
        assert_eq!(operand.allocated, base as usize);
        let view = operand.view;
        assert_eq!(view.ptr, base.wrapping_add(16));
        let start = base as usize + 16;
        assert_eq!(view.byte_range().unwrap(), start..start + 16 * 4);
        assert_eq!(
            view.offsets().collect::<Vec<_>>(),
            [0, 1, 2, 3, 12, 13, 14, 15]
        );
    }

    fn decode(fields: Vec<i64>) -> Result<Operand> {
        unsafe { Operand::from_unranked(Descriptor::raw(fields).ptr(), DType::F32) }
    }

    #[test]
    fn overflowing_descriptors_are_errors_not_wraps() {
        let base = 1 << 20;
        // 2^32 x 2^32 elements: the count overflows.
        let error = decode(vec![base, base, 0, 1 << 32, 1 << 32, 1 << 32, 1])
            .unwrap_err()
            .to_string();
        assert!(error.contains("more elements than 64-bit sizes"), "{error}");
        // 2^62 elements of 4 bytes: the byte span overflows.
        let error = decode(vec![base, base, 0, 1 << 62, 1])
            .unwrap_err()
            .to_string();
        assert!(error.contains("spans more bytes"), "{error}");
        // An offset whose byte count overflows.
        let error = decode(vec![base, base, i64::MAX / 2, 4, 1])
            .unwrap_err()
            .to_string();
        assert!(error.contains("outside the address space"), "{error}");
        assert!(decode(vec![base, base, 0, 4, -1]).is_err());
        // An empty view spans nothing, wherever it is.
        let empty = decode(vec![base, base, 3, 0, 1 << 40]).unwrap();
        assert!(empty.view.byte_range().unwrap().is_empty());
    }

    #[test]
    fn reads_i64_lists() {
        let mut team = [2i64, 0, 1];
        let descriptor = Descriptor::new(team.as_mut_ptr().cast(), 0, &[3], &[1]);
        assert_eq!(unsafe { read_i64s(descriptor.ptr()) }.unwrap(), [2, 0, 1]);
        // Too long to be a team, before anything is read.
        let huge = Descriptor::raw(vec![8, 8, 0, 1 << 40, 1]);
        assert!(unsafe { read_i64s(huge.ptr()) }.is_err());
    }

    #[test]
    fn interleaved_slices_do_not_overlap() {
        let base = 4096 as *mut u8;
        // [4, 3, 8] f32 sliced along the middle axis: runs of 32 bytes.
        let full = View::contiguous(DType::F32, base, &[4, 3, 8]);
        let a = View {
            sizes: smallvec::smallvec![4, 8],
            strides: smallvec::smallvec![24, 1],
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
            sizes: smallvec::smallvec![12],
            strides: smallvec::smallvec![8],
            ..full.clone()
        };
        assert!(a.footprint().overlaps(&column.footprint()));
        assert!(!b.slice(1, 2, 6).footprint().overlaps(&column.footprint()));
    }
}
