//! The cpu backend's fused kernel: the program interpreted over the
//! iteration shape a block of elements at a time, each instruction the
//! scalar op of the unfused kernel ([`super::kernels`]) and each result
//! rounded to its element type as the unfused op's output buffer rounds it,
//! so that the fused kernel gives the unfused chain's bits.

use super::elements::round;
use super::kernels::{binary, unary};
use crate::error::Result;
use crate::fused::FusedKernel;
use crate::memref::View;
use half::{bf16, f16};
use hir_abi::DType;
use hir_abi::fused::Instr;

/// Elements computed at a time: each slot holds this many values.
const BLOCK: usize = 1024;

/// The element at `offset` of `view`, as f32.
///
/// # Safety
/// `offset` is the offset of an element of the view.
unsafe fn read(view: &View, offset: usize) -> f32 {
    // SAFETY: the caller's contract.
    unsafe {
        match view.dtype {
            DType::F32 => view.ptr.cast::<f32>().add(offset).read_unaligned(),
            DType::BF16 => view
                .ptr
                .cast::<bf16>()
                .add(offset)
                .read_unaligned()
                .to_f32(),
            DType::F16 => view.ptr.cast::<f16>().add(offset).read_unaligned().to_f32(),
            DType::I32 | DType::I64 => unreachable!("decoded: fused programs are float only"),
        }
    }
}

/// Writes `value` rounded to the view's element type at `offset`.
///
/// # Safety
/// As [`read`].
unsafe fn write(view: &View, offset: usize, value: f32) {
    // SAFETY: the caller's contract.
    unsafe {
        match view.dtype {
            DType::F32 => view.ptr.cast::<f32>().add(offset).write_unaligned(value),
            DType::BF16 => view
                .ptr
                .cast::<bf16>()
                .add(offset)
                .write_unaligned(bf16::from_f32(value)),
            DType::F16 => view
                .ptr
                .cast::<f16>()
                .add(offset)
                .write_unaligned(f16::from_f32(value)),
            DType::I32 | DType::I64 => unreachable!("decoded: fused programs are float only"),
        }
    }
}

/// Runs a validated fused kernel.
pub(crate) fn run(kernel: &FusedKernel) -> Result<()> {
    let program = &kernel.program;
    let numel: usize = kernel.shape().iter().product();
    let loads: Vec<View> = program
        .loads
        .iter()
        .map(|load| kernel.load_view(load))
        .collect();
    let mut load_offsets: Vec<_> = loads.iter().map(View::offsets).collect();
    let stores: Vec<(&View, usize)> = program
        .stores
        .iter()
        .map(|&(buffer, slot)| (&kernel.buffers[buffer], slot))
        .collect();
    let mut store_offsets: Vec<_> = stores.iter().map(|(view, _)| view.offsets()).collect();
    let mut slots = vec![vec![0f32; BLOCK]; program.slots()];
    let mut done = 0;
    while done < numel {
        let count = BLOCK.min(numel - done);
        for ((view, offsets), values) in loads.iter().zip(&mut load_offsets).zip(&mut slots) {
            for (value, offset) in values[..count].iter_mut().zip(offsets) {
                // SAFETY: the offsets are the view's, inside the buffer the
                // program passed (a broadcast view repeats its elements).
                *value = unsafe { read(view, offset) };
            }
        }
        for (index, &(instr, dtype)) in program.instrs.iter().enumerate() {
            let slot = program.loads.len() + index;
            // Operands are earlier slots, so the result's can be taken out.
            let mut result = std::mem::take(&mut slots[slot]);
            let operand = |slot: usize| &slots[slot][..count];
            let values = &mut result[..count];
            match instr {
                Instr::Unary(op, a) => {
                    for (value, &x) in values.iter_mut().zip(operand(a)) {
                        *value = round(dtype, unary(op, x));
                    }
                }
                Instr::Binary(op, a, b) => {
                    for ((value, &x), &y) in values.iter_mut().zip(operand(a)).zip(operand(b)) {
                        *value = round(dtype, binary(op, x, y));
                    }
                }
                Instr::Where(mask, a, b) => {
                    let (mask, a, b) = (operand(mask), operand(a), operand(b));
                    for (e, value) in values.iter_mut().enumerate() {
                        // NaN is nonzero.
                        *value = round(dtype, if mask[e] != 0.0 { a[e] } else { b[e] });
                    }
                }
                Instr::Convert(a) => {
                    for (value, &x) in values.iter_mut().zip(operand(a)) {
                        *value = round(dtype, x);
                    }
                }
            }
            slots[slot] = result;
        }
        for ((view, slot), offsets) in stores.iter().zip(&mut store_offsets) {
            for (&value, offset) in slots[*slot][..count].iter().zip(offsets) {
                // SAFETY: as for the loads; an output is written once per element.
                unsafe { write(view, offset, value) };
            }
        }
        done += count;
    }
    Ok(())
}
