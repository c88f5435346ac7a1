//! Decoding an entry's arguments: buffer descriptors into views checked
//! against the rank's known buffers, team lists, axis lists and codes, and
//! the views a transpose or reshape reads its input through.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::memref::{Extents, Operand, UnrankedMemRef, View, read_i64_table, read_i64s};
use crate::ops::Team;
use hir_abi::{DType, Transport};

/// A `memref<*xT>` argument through `llvm.emit_c_interface`.
pub(super) type Buf = *const UnrankedMemRef;

/// Decodes an entry's buffer arguments `(buf, dtype)`, which come first in
/// every entry that takes buffers, and checks them all against the rank's
/// known buffers (one lookup each, under one lock).
pub(super) unsafe fn views(
    device: &dyn Device,
    bufs: impl ExactSizeIterator<Item = (Buf, DType)>,
) -> Result<Vec<View>> {
    let mut views = Vec::with_capacity(bufs.len());
    let checker = device.allocations().checker();
    for (number, (buf, dtype)) in (1..).zip(bufs) {
        // SAFETY: the entry's caller passes valid descriptors.
        let operand = unsafe { Operand::from_unranked(buf, dtype) }?;
        checker.check(number, &operand)?;
        views.push(operand.view);
    }
    Ok(views)
}

/// As [`views`], for a fixed number of buffers.
pub(super) unsafe fn fixed<const N: usize>(
    device: &dyn Device,
    bufs: [(Buf, DType); N],
) -> Result<[View; N]> {
    // SAFETY: as `views`.
    let views = unsafe { views(device, bufs.into_iter()) }?;
    Ok(views
        .try_into()
        .unwrap_or_else(|_| unreachable!("one view per buffer")))
}

/// A team list, or several teams one per row, of which this rank's.
pub(super) unsafe fn team(buf: Buf, device: &dyn Device) -> Result<Team> {
    // SAFETY: as `view`.
    let (sizes, ranks) = unsafe { read_i64_table(buf) }?;
    match sizes[..] {
        [_, size] if size > 0 => {
            let rank = device.rank() as i64;
            let row = ranks
                .chunks(size)
                .find(|row| row.contains(&rank))
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "rank {rank} is in none of the teams {:?}",
                        ranks.chunks(size).collect::<Vec<_>>()
                    ))
                })?;
            Team::new(row, device.num_devices())
        }
        _ => Team::new(&ranks, device.num_devices()),
    }
}

pub(super) fn non_negative(value: i64, what: &str) -> Result<usize> {
    usize::try_from(value).map_err(|_| Error::Invalid(format!("{what} {value} is negative")))
}

pub(super) fn backend(code: i64) -> Result<Transport> {
    Transport::from_code(code).ok_or_else(|| Error::Invalid(format!("unknown backend code {code}")))
}

/// `view` with axis `i` its axis `permutation[i]`.
pub(super) fn permuted(view: &View, permutation: &[usize]) -> Result<View> {
    let mut seen = vec![false; view.rank()];
    if permutation.len() != view.rank()
        || permutation
            .iter()
            .any(|&axis| axis >= view.rank() || std::mem::replace(&mut seen[axis], true))
    {
        return Err(Error::Invalid(format!(
            "permutation {permutation:?} does not list each of the {} input axes once",
            view.rank()
        )));
    }
    Ok(View {
        sizes: permutation.iter().map(|&axis| view.sizes[axis]).collect(),
        strides: permutation.iter().map(|&axis| view.strides[axis]).collect(),
        ..view.clone()
    })
}

/// `view`'s elements in row-major order as a view of shape `sizes`, without
/// a copy (PyTorch's `view`: each run of axes that `sizes` merges or splits
/// is contiguous in `view`); an error where that takes a copy.
pub(super) fn reshaped(view: &View, sizes: &[usize]) -> Result<View> {
    let cannot = || {
        Error::Invalid(format!(
            "a reshape of sizes {:?} and strides {:?} to {sizes:?} is not a view",
            view.sizes, view.strides
        ))
    };
    let numel: usize = sizes.iter().product();
    if numel != view.numel() {
        return Err(cannot());
    }
    let contiguous = || View::contiguous(view.dtype, view.ptr, sizes);
    let Some(&innermost) = view.strides.last() else {
        return Ok(contiguous());
    };
    if numel == 0 {
        return Ok(contiguous());
    }
    // From the innermost axis out, over the chunks of `view` that are
    // contiguous: the new axes that fill a chunk take its stride.
    let mut strides = vec![0; sizes.len()];
    let mut next = sizes.len();
    let (mut chunk_stride, mut chunk, mut filled) = (innermost, 1, 1);
    for axis in (0..view.rank()).rev() {
        chunk *= view.sizes[axis];
        let ends = axis == 0
            || (view.sizes[axis - 1] != 1 && view.strides[axis - 1] != chunk * chunk_stride);
        if ends {
            while next > 0 && (filled < chunk || sizes[next - 1] == 1) {
                next -= 1;
                strides[next] = filled * chunk_stride;
                filled *= sizes[next];
            }
            if filled != chunk {
                return Err(cannot());
            }
            if axis > 0 {
                (chunk_stride, chunk, filled) = (view.strides[axis - 1], 1, 1);
            }
        }
    }
    if next != 0 {
        return Err(cannot());
    }
    Ok(View {
        sizes: Extents::from_slice(sizes),
        strides: strides.into(),
        ..view.clone()
    })
}

pub(super) unsafe fn axis_list(buf: Buf) -> Result<Vec<usize>> {
    unsafe { read_i64s(buf) }?
        .into_iter()
        .map(|axis| non_negative(axis, "axis"))
        .collect()
}
