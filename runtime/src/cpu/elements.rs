//! The cpu kernels' element layer: a strided view read into a row-major
//! vector of its elements (widened to the type they are computed in) and
//! written back (narrowed), and the row-major index maps the kernels use.
//! Float and integer compute (`kernels.rs`, `ints.rs`) and the casts
//! between them all stand on it. Temporaries are allocated fallibly: one the
//! system refuses (a broadcast view of stride 0 may have far more elements
//! than its buffer) is an error.

use crate::error::{Error, Result};
use crate::memref::{Extents, View};
use half::{bf16, f16};
use hir_abi::DType;

/// An element type as the kernels compute on it: widened to `W` (f32 for
/// the float types, i64 for the integers in `super::ints`) when read,
/// narrowed back (rounded once, or wrapped) when written.
pub(super) trait Stored<W>: Copy {
    fn widen(self) -> W;
    fn narrow(value: W) -> Self;
}

impl Stored<f32> for f32 {
    fn widen(self) -> f32 {
        self
    }
    fn narrow(value: f32) -> Self {
        value
    }
}

impl Stored<f32> for bf16 {
    fn widen(self) -> f32 {
        bf16::to_f32(self)
    }
    fn narrow(value: f32) -> Self {
        bf16::from_f32(value)
    }
}

impl Stored<f32> for f16 {
    fn widen(self) -> f32 {
        f16::to_f32(self)
    }
    fn narrow(value: f32) -> Self {
        f16::from_f32(value)
    }
}

/// An empty vector with room for `len` values, or an error naming the size.
pub(crate) fn with_capacity<T>(len: usize) -> Result<Vec<T>> {
    let mut values = Vec::new();
    values.try_reserve_exact(len).map_err(|_| {
        Error::OutOfMemory(format!(
            "cannot allocate a temporary of {len} elements of {} B",
            size_of::<T>()
        ))
    })?;
    Ok(values)
}

/// `len` copies of `value`, or an error naming the size.
pub(crate) fn filled<T: Clone>(len: usize, value: T) -> Result<Vec<T>> {
    let mut values = with_capacity(len)?;
    values.resize(len, value);
    Ok(values)
}

/// The view's elements in row-major order, widened.
pub(super) fn load_as<T: Stored<W>, W>(view: &View) -> Result<Vec<W>> {
    let base = view.ptr.cast::<T>();
    let mut values = with_capacity(view.numel())?;
    // SAFETY: the offsets stay inside the view the program passed.
    values.extend(
        view.offsets()
            .map(|offset| unsafe { base.add(offset).read_unaligned() }.widen()),
    );
    Ok(values)
}

/// Writes `values` (row-major) into the view, narrowed.
pub(super) fn store_as<T: Stored<W>, W: Copy>(view: &View, values: &[W]) {
    let base = view.ptr.cast::<T>();
    for (offset, &value) in view.offsets().zip(values) {
        // SAFETY: as in `load_as`.
        unsafe { base.add(offset).write_unaligned(T::narrow(value)) };
    }
}

/// The view's elements in row-major order, as f32; a float type's
/// (integers are computed by `super::ints`).
pub(crate) fn load(view: &View) -> Result<Vec<f32>> {
    match view.dtype {
        DType::F32 => load_as::<f32, f32>(view),
        DType::BF16 => load_as::<bf16, f32>(view),
        DType::F16 => load_as::<f16, f32>(view),
        DType::I32 | DType::I64 => unreachable!("integers are not computed through f32"),
    }
}

/// Writes `values` (row-major) into the view, rounding to its float type.
pub(crate) fn store(view: &View, values: &[f32]) {
    debug_assert_eq!(values.len(), view.numel());
    match view.dtype {
        DType::F32 => store_as::<f32, f32>(view, values),
        DType::BF16 => store_as::<bf16, f32>(view, values),
        DType::F16 => store_as::<f16, f32>(view, values),
        DType::I32 | DType::I64 => unreachable!("integers are not computed through f32"),
    }
}

/// `value` rounded to the float type `dtype`, as f32.
pub(super) fn round(dtype: DType, value: f32) -> f32 {
    match dtype {
        DType::F32 => value,
        DType::BF16 => bf16::from_f32(value).to_f32(),
        DType::F16 => f16::from_f32(value).to_f32(),
        DType::I32 | DType::I64 => unreachable!("integers are not computed through f32"),
    }
}

/// Copies `from` into `to` element by element in row-major order, bit for
/// bit; both have one element type and count.
pub(crate) fn copy(from: &View, to: &View) {
    debug_assert_eq!((from.dtype, from.numel()), (to.dtype, to.numel()));
    let size = from.dtype.size();
    for (src, dst) in from.offsets().zip(to.offsets()) {
        // SAFETY: both offsets stay inside their views; overlapping views are
        // copied element by element as the program ordered them.
        unsafe { std::ptr::copy(from.ptr.add(src * size), to.ptr.add(dst * size), size) };
    }
}

/// Row-major strides of a contiguous shape.
pub(super) fn contiguous_strides(sizes: &[usize]) -> Vec<usize> {
    View::contiguous(DType::F32, std::ptr::null_mut(), sizes)
        .strides
        .to_vec()
}

/// For each element of `full` (row-major), the row-major index of the element
/// of `sizes` (its axes without `dropped`) it maps to.
pub(crate) fn projection(full: &[usize], dropped: &[usize]) -> Result<Vec<usize>> {
    let kept: Vec<usize> = (0..full.len())
        .filter(|axis| !dropped.contains(axis))
        .collect();
    let kept_sizes: Vec<usize> = kept.iter().map(|&axis| full[axis]).collect();
    let kept_strides = contiguous_strides(&kept_sizes);
    let mut strides = vec![0; full.len()];
    for (&axis, &stride) in kept.iter().zip(&kept_strides) {
        strides[axis] = stride;
    }
    let view = View {
        dtype: DType::F32,
        ptr: std::ptr::null_mut(),
        sizes: Extents::from_slice(full),
        strides: strides.into(),
    };
    let mut offsets = with_capacity(view.numel())?;
    offsets.extend(view.offsets());
    Ok(offsets)
}

/// For each element of a row-major shape, its index along `axis`.
pub(crate) fn iota_indices(sizes: &[usize], axis: usize) -> Result<Vec<usize>> {
    // The index along `axis` of element `e` is `e / inner % extent`.
    let inner: usize = sizes[axis + 1..].iter().product();
    let (extent, numel) = (sizes[axis], sizes.iter().product::<usize>());
    let mut indices = with_capacity(numel)?;
    indices.extend((0..numel).map(|element| element / inner % extent));
    Ok(indices)
}
