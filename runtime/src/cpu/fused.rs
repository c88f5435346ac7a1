//! The cpu backend's fused kernel: the program interpreted over the
//! iteration shape a block of elements at a time, each instruction the
//! scalar op of the unfused kernel ([`super::kernels`]) and each result
//! rounded to its element type as the unfused op's output buffer rounds it,
//! so that the fused kernel gives the unfused chain's bits (a constant is
//! the fill kernel's value, rounded through f32). A row program runs a row
//! at a time: its row-level slots hold one value, the others the row's, and
//! a reduction folds its operand in order from the unfused kernel's
//! identity, as that kernel does.

use super::elements::round;
use super::kernels::{binary, unary};
use crate::error::Result;
use crate::fused::FusedKernel;
use crate::memref::{Extents, View};
use half::{bf16, f16};
use hir_abi::fused::Instr;
use hir_abi::{DType, Reduction};

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

/// Instruction `instr` at one element, its operand slots' values read by
/// `operand`, before its rounding: the unfused kernel's scalar op.
fn evaluate(instr: Instr, operand: impl Fn(usize) -> f32) -> f32 {
    match instr {
        Instr::Unary(op, a) => unary(op, operand(a)),
        Instr::Binary(op, a, b) => binary(op, operand(a), operand(b)),
        // NaN is nonzero.
        Instr::Where(mask, a, b) => match operand(mask) != 0.0 {
            true => operand(a),
            false => operand(b),
        },
        Instr::Convert(a) => operand(a),
        // Through f32, as the fill kernel rounds its value.
        Instr::Constant(bits) => f64::from_bits(bits) as f32,
        Instr::Reduce(..) => unreachable!("a reduction folds a row, not an element"),
    }
}

/// Runs a validated fused kernel.
pub(crate) fn run(kernel: &FusedKernel) -> Result<()> {
    if kernel.program.reduced.is_some() {
        return run_rows(kernel);
    }
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
        .map(|store| (&kernel.buffers[store.buffer], store.slot))
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
            for (e, value) in result[..count].iter_mut().enumerate() {
                *value = round(dtype, evaluate(instr, |operand| slots[operand][e]));
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

/// `view` at the iteration shape without its last axis: one offset per row.
fn rows_of(view: View) -> View {
    let rank = view.sizes.len();
    View {
        sizes: Extents::from_slice(&view.sizes[..rank - 1]),
        strides: Extents::from_slice(&view.strides[..rank - 1]),
        ..view
    }
}

/// Runs a validated row program, a row at a time.
fn run_rows(kernel: &FusedKernel) -> Result<()> {
    let program = &kernel.program;
    let shape = kernel.shape();
    let (n, rows) = match shape.split_last() {
        Some((&n, outer)) => (n, outer.iter().product::<usize>()),
        None => unreachable!("validated: the reduced axis is the iteration shape's last"),
    };
    let levels = program.row_level();
    // Each load's view, with one offset per row for a row-level load and
    // one per element for the others.
    let loads: Vec<View> = program
        .loads
        .iter()
        .enumerate()
        .map(|(slot, load)| match levels[slot] {
            true => rows_of(kernel.load_view(load)),
            false => kernel.load_view(load),
        })
        .collect();
    let mut load_offsets: Vec<_> = loads.iter().map(View::offsets).collect();
    let stores: Vec<View> = program
        .stores
        .iter()
        .map(|store| match store.row {
            true => rows_of(kernel.store_view(store)),
            false => kernel.store_view(store),
        })
        .collect();
    let mut store_offsets: Vec<_> = stores.iter().map(View::offsets).collect();
    let width = |slot: usize| if levels[slot] { 1 } else { n };
    let mut slots: Vec<Vec<f32>> = (0..program.slots())
        .map(|slot| vec![0f32; width(slot)])
        .collect();
    for _ in 0..rows {
        for ((view, offsets), values) in loads.iter().zip(&mut load_offsets).zip(&mut slots) {
            for (value, offset) in values.iter_mut().zip(offsets) {
                // SAFETY: the offsets are the view's, inside the buffer the
                // program passed (a broadcast view repeats its elements).
                *value = unsafe { read(view, offset) };
            }
        }
        for (index, &(instr, dtype)) in program.instrs.iter().enumerate() {
            let slot = program.loads.len() + index;
            let mut result = std::mem::take(&mut slots[slot]);
            // A row-level operand is the same at every element.
            let at = |operand: usize, e: usize| slots[operand][if levels[operand] { 0 } else { e }];
            if let Instr::Reduce(op, a) = instr {
                let (init, combine): (f32, fn(f32, f32) -> f32) = match op {
                    Reduction::Sum => (0.0, |x, y| x + y),
                    Reduction::Amax => {
                        (f32::NEG_INFINITY, |x, y| binary(hir_abi::Binary::Max, x, y))
                    }
                };
                result[0] = round(dtype, slots[a].iter().fold(init, |acc, &x| combine(acc, x)));
            } else {
                for (e, value) in result.iter_mut().enumerate() {
                    *value = round(dtype, evaluate(instr, |operand| at(operand, e)));
                }
            }
            slots[slot] = result;
        }
        for ((view, store), offsets) in stores.iter().zip(&program.stores).zip(&mut store_offsets) {
            let values = &slots[store.slot];
            let count = if store.row { 1 } else { n };
            for (e, offset) in offsets.take(count).enumerate() {
                let value = values[if levels[store.slot] { 0 } else { e }];
                // SAFETY: as for the loads; an output is written once per element.
                unsafe { write(view, offset, value) };
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{Kernel, KernelOp};
    use hir_abi::Binary;
    use hir_abi::fused::{Load, Program, Store};
    use std::sync::Arc;

    /// A buffer of `dtype` holding `values`, rounded to it.
    fn buffer(dtype: DType, values: &[f32]) -> Vec<u8> {
        let mut bytes = vec![0u8; values.len() * dtype.size()];
        let view = View::contiguous(dtype, bytes.as_mut_ptr(), &[values.len()]);
        for (offset, &value) in values.iter().enumerate() {
            // SAFETY: an element of the buffer.
            unsafe { write(&view, offset, value) };
        }
        bytes
    }

    /// `bytes` as a buffer of `dtype` and shape `sizes`.
    fn view(dtype: DType, bytes: &mut [u8], sizes: &[usize]) -> View {
        View::contiguous(dtype, bytes.as_mut_ptr(), sizes)
    }

    /// `program` run on `buffers`, each of the shape `shapes` gives it.
    fn run_program(program: Program, buffers: &mut [Vec<u8>], shapes: &[&[usize]]) {
        let views = buffers
            .iter_mut()
            .zip(&program.dtypes)
            .zip(shapes)
            .map(|((bytes, &dtype), sizes)| view(dtype, bytes, sizes))
            .collect();
        let kernel = FusedKernel {
            words: program.encode().into(),
            program: Arc::new(program),
            buffers: views,
        };
        kernel.validate().unwrap();
        run(&kernel).unwrap();
    }

    /// A constant is the fill kernel's value bit for bit, in every float
    /// type (rounded through f32, so 1e39 is infinite and 1e-46 zero, then
    /// to the type), and `x * c` fused is the unfused fill then mul.
    #[test]
    fn a_constant_is_rounded_as_a_fill_rounds_it() {
        let values = [
            0.7978845608028654,
            0.044715,
            0.1,
            -0.0,
            1e39,
            1e-46,
            65519.0,
        ];
        let xs: Vec<f32> = (0..6).map(|e| e as f32 * 0.37 - 1.1).collect();
        for dtype in DType::FLOATS {
            for value in values {
                let (mut x, zeros) = (buffer(dtype, &xs), buffer(dtype, &[0.0; 6]));
                let (mut filled, mut product) = (zeros.clone(), zeros.clone());
                let fill = Kernel {
                    op: KernelOp::Fill(value),
                    inputs: Vec::new(),
                    output: view(dtype, &mut filled, &[2, 3]),
                };
                super::super::kernels::run(&fill).unwrap();
                let mul = Kernel {
                    op: KernelOp::Binary(Binary::Mul),
                    inputs: vec![view(dtype, &mut x, &[2, 3]), fill.output.clone()],
                    output: view(dtype, &mut product, &[2, 3]),
                };
                super::super::kernels::run(&mul).unwrap();
                let program = Program {
                    reduced: None,
                    dtypes: vec![dtype; 3],
                    loads: vec![Load {
                        buffer: 0,
                        broadcast: vec![],
                    }],
                    instrs: vec![
                        (Instr::constant(value), dtype),
                        (Instr::Binary(Binary::Mul, 0, 1), dtype),
                    ],
                    stores: vec![Store::whole(1, 1), Store::whole(2, 2)],
                };
                let mut buffers = [x.clone(), zeros.clone(), zeros];
                let shape: &[usize] = &[2, 3];
                run_program(program, &mut buffers, &[shape; 3]);
                assert_eq!(buffers[1], filled, "{dtype:?} {value}");
                assert_eq!(buffers[2], product, "{dtype:?} {value}");
            }
        }
    }

    /// In a row program a constant is one value per row: the row mean as a
    /// sum times the constant 1/5 (stored per row), then the centred row
    /// times a bf16 constant, each rounded as declared.
    #[test]
    fn a_row_program_scales_by_constants() {
        let (f, b) = (DType::F32, DType::BF16);
        let program = Program {
            reduced: Some(1),
            dtypes: vec![b, b, f],
            loads: vec![Load {
                buffer: 0,
                broadcast: vec![],
            }],
            instrs: vec![
                (Instr::Reduce(Reduction::Sum, 0), f),
                (Instr::constant(0.2), f),
                (Instr::Binary(Binary::Mul, 1, 2), f),
                (Instr::Binary(Binary::Sub, 0, 3), b),
                (Instr::constant(0.044715), b),
                (Instr::Binary(Binary::Mul, 4, 5), b),
            ],
            stores: vec![Store::whole(1, 6), Store::row(2, 3)],
        };
        let levels = [false, true, true, true, false, true, false];
        assert_eq!(program.row_level(), levels);
        let xs: Vec<f32> = (0..15).map(|i| ((i * 7) % 11) as f32 * 0.3 - 1.5).collect();
        let mut buffers = [buffer(b, &xs), buffer(b, &[0.0; 15]), buffer(f, &[0.0; 3])];
        run_program(program, &mut buffers, &[&[3, 5], &[3, 5], &[3]]);
        let x: Vec<f32> = xs.iter().map(|&v| round(b, v)).collect();
        let scale = round(b, 0.044715f64 as f32);
        let (mut y, mut means) = (Vec::new(), Vec::new());
        for row in x.chunks(5) {
            let mean = row.iter().sum::<f32>() * 0.2f64 as f32;
            y.extend(row.iter().map(|&v| round(b, round(b, v - mean) * scale)));
            means.push(mean);
        }
        assert_eq!(buffers[1], buffer(b, &y));
        assert_eq!(buffers[2], buffer(f, &means));
    }

    /// Softmax over rows of a `[3, 5]` f32 buffer, with the row maxima also
    /// stored: checked against an f64 evaluation.
    #[test]
    fn a_row_program_reduces_each_row() {
        let f = DType::F32;
        let program = Program {
            reduced: Some(1),
            dtypes: vec![f, f, f],
            loads: vec![Load {
                buffer: 0,
                broadcast: vec![],
            }],
            instrs: vec![
                (Instr::Reduce(Reduction::Amax, 0), f),
                (Instr::Binary(Binary::Sub, 0, 1), f),
                (Instr::Unary(hir_abi::Unary::Exp, 2), f),
                (Instr::Reduce(Reduction::Sum, 3), f),
                (Instr::Binary(Binary::Div, 3, 4), f),
            ],
            stores: vec![Store::whole(1, 5), Store::row(2, 1)],
        };
        let mut x: Vec<f32> = (0..15).map(|i| ((i * 7) % 11) as f32 * 0.5 - 2.0).collect();
        let (mut y, mut max) = (vec![0f32; 15], vec![0f32; 3]);
        let view = |data: &mut [f32], sizes: &[usize]| {
            View::contiguous(f, data.as_mut_ptr().cast(), sizes)
        };
        let kernel = FusedKernel {
            words: program.encode().into(),
            program: Arc::new(program),
            buffers: vec![
                view(&mut x, &[3, 5]),
                view(&mut y, &[3, 5]),
                view(&mut max, &[3]),
            ],
        };
        kernel.validate().unwrap();
        run(&kernel).unwrap();
        for row in 0..3 {
            let values: Vec<f64> = x[row * 5..][..5].iter().map(|&v| v as f64).collect();
            let top = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(max[row] as f64, top);
            let total: f64 = values.iter().map(|v| (v - top).exp()).sum();
            for (e, value) in values.iter().enumerate() {
                let want = (value - top).exp() / total;
                let got = y[row * 5 + e] as f64;
                assert!(
                    (got - want).abs() <= 1e-6 * want.abs().max(1e-3),
                    "{got} vs {want}"
                );
            }
        }
    }
}
