//! The cpu backend's float compute (integers are `super::ints`', casts to and
//! from them `super::casts`'): every kernel reads its strided inputs into
//! contiguous f32 (the accumulation type of every dtype), computes, and
//! writes the output view rounding once to its element type (through
//! `super::elements`); a GEMM's activation epilogue applies before that
//! rounding. A kernel of another type is handed on from [`run`],
//! as is attention, `super::attention`'s.

use super::elements::{
    contiguous_strides, copy, filled, iota_indices, load, projection, store, with_capacity,
};
use crate::error::Result;
use crate::memref::View;
use crate::ops::{Kernel, KernelOp, batch_axes_read, matmul_batch};
use hir_abi::{Binary, Reduction, Unary};

/// Propagates NaN like `torch.maximum`: a NaN operand gives NaN.
fn max(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else {
        a.max(b)
    }
}

fn min(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else {
        a.min(b)
    }
}

pub(crate) fn unary(op: Unary, x: f32) -> f32 {
    match op {
        Unary::Neg => -x,
        Unary::Exp => x.exp(),
        Unary::Tanh => x.tanh(),
        Unary::Abs => x.abs(),
        Unary::Relu => {
            if x < 0.0 {
                0.0
            } else {
                x
            }
        }
        Unary::Gelu => {
            let inner = std::f32::consts::FRAC_2_SQRT_PI
                * std::f32::consts::FRAC_1_SQRT_2
                * (x + 0.044715 * x * x * x);
            0.5 * x * (1.0 + inner.tanh())
        }
        Unary::Rsqrt => 1.0 / x.sqrt(),
    }
}

pub(crate) fn binary(op: Binary, a: f32, b: f32) -> f32 {
    match op {
        Binary::Add => a + b,
        Binary::Sub => a - b,
        Binary::Mul => a * b,
        Binary::Div => a / b,
        Binary::Max => max(a, b),
        Binary::Min => min(a, b),
    }
}

/// `c[b] = a[lhs_b] @ w[rhs_b]` for each batch entry `b` of `c [batch, m, n]`
/// and its pair `(lhs_b, rhs_b)` in `pairs`: the matrices of `a [.., m, k]`
/// and `w [.., k, n]` it reads (a broadcast matrix is read by several
/// entries, never copied).
fn matmul(
    a: &[f32],
    w: &[f32],
    pairs: &[(usize, usize)],
    m: usize,
    k: usize,
    n: usize,
) -> Result<Vec<f32>> {
    let mut c = filled(pairs.len() * m * n, 0f32)?;
    for (b, &(lhs, rhs)) in pairs.iter().enumerate() {
        let (ab, wb) = (&a[lhs * m * k..][..m * k], &w[rhs * k * n..][..k * n]);
        for i in 0..m {
            let row = &mut c[(b * m + i) * n..][..n];
            for (p, &x) in ab[i * k..][..k].iter().enumerate() {
                // Rows of `w` stream through, which vectorizes.
                for (out, &y) in row.iter_mut().zip(&wb[p * n..][..n]) {
                    *out += x * y;
                }
            }
        }
    }
    Ok(c)
}

/// For each entry of the batch `batch` (row-major), the index of the
/// matrix an operand with the (contiguous) batch axes `operand` gives it:
/// aligned from the right, read at 0 along an axis it lacks or broadcasts.
fn batch_matrices(operand: &[usize], batch: &[usize]) -> Result<Vec<usize>> {
    let own_strides = contiguous_strides(operand);
    let strides: Vec<usize> = batch_axes_read(operand, batch)
        .into_iter()
        .map(|own| own.map_or(0, |own| own_strides[own]))
        .collect();
    let count = batch.iter().product();
    let mut matrices = with_capacity(count)?;
    matrices.extend((0..count).map(|mut entry| {
        let mut matrix = 0;
        for (&extent, &stride) in batch.iter().zip(&strides).rev() {
            matrix += entry % extent * stride;
            entry /= extent;
        }
        matrix
    }));
    Ok(matrices)
}

/// Runs a validated kernel.
pub(crate) fn run(kernel: &Kernel) -> Result<()> {
    let out = &kernel.output;
    if let (KernelOp::Cast, [input]) = (&kernel.op, &kernel.inputs[..])
        && !(input.dtype.is_float() && out.dtype.is_float())
    {
        return super::casts::run(input, out);
    }
    if !out.dtype.is_float() {
        return super::ints::run(kernel);
    }
    if out.numel() == 0 {
        return Ok(());
    }
    let input = match (&kernel.op, kernel.inputs.first()) {
        (KernelOp::Fill(value), _) => {
            store(out, &filled(out.numel(), *value as f32)?);
            return Ok(());
        }
        (&KernelOp::Iota { axis, offset }, _) => {
            let values: Vec<f32> = iota_indices(&out.sizes, axis)?
                .into_iter()
                .map(|index| (offset + index as i64) as f32)
                .collect();
            store(out, &values);
            return Ok(());
        }
        (_, Some(input)) => input,
        (_, None) => unreachable!("validated: the other ops have an input"),
    };
    let mut values = match &kernel.op {
        KernelOp::Copy => {
            copy(input, out);
            return Ok(());
        }
        KernelOp::Unary(op) => {
            let mut values = load(input)?;
            values.iter_mut().for_each(|x| *x = unary(*op, *x));
            values
        }
        KernelOp::Cast => load(input)?,
        KernelOp::Binary(op) => {
            let rhs = load(&kernel.inputs[1])?;
            let mut values = load(input)?;
            for (a, &b) in values.iter_mut().zip(&rhs) {
                *a = binary(*op, *a, b);
            }
            values
        }
        KernelOp::Where => {
            let (lhs, rhs) = (load(&kernel.inputs[1])?, load(&kernel.inputs[2])?);
            let mut values = load(input)?;
            for ((value, a), b) in values.iter_mut().zip(lhs).zip(rhs) {
                // NaN is nonzero.
                *value = if *value != 0.0 { a } else { b };
            }
            values
        }
        KernelOp::Reduce(op, axes) => {
            let (init, combine): (f32, fn(f32, f32) -> f32) = match op {
                Reduction::Sum => (0.0, |a, b| a + b),
                Reduction::Amax => (f32::NEG_INFINITY, max),
            };
            let mut acc = filled(out.numel(), init)?;
            for (value, target) in load(input)?
                .into_iter()
                .zip(projection(&input.sizes, axes)?)
            {
                acc[target] = combine(acc[target], value);
            }
            acc
        }
        KernelOp::Broadcast(axes) => {
            let values = load(input)?;
            let sources = projection(&out.sizes, axes)?;
            let mut spread = with_capacity(sources.len())?;
            spread.extend(sources.into_iter().map(|source| values[source]));
            spread
        }
        KernelOp::Matmul | KernelOp::MatmulAccumulate | KernelOp::MatmulActivation(_) => {
            let rhs = &kernel.inputs[1];
            let rank = input.rank();
            let (k, n) = (input.sizes[rank - 1], rhs.sizes[rhs.rank() - 1]);
            // A row `[K]` is one `[1, K]` matrix.
            let m = if rank == 1 { 1 } else { input.sizes[rank - 2] };
            let lhs_batch = &input.sizes[..rank.saturating_sub(2)];
            let rhs_batch = &rhs.sizes[..rhs.rank() - 2];
            let batch = matmul_batch(lhs_batch, rhs_batch).expect("validated");
            let pairs: Vec<(usize, usize)> = batch_matrices(lhs_batch, &batch)?
                .into_iter()
                .zip(batch_matrices(rhs_batch, &batch)?)
                .collect();
            let mut values = matmul(&load(input)?, &load(rhs)?, &pairs, m, k, n)?;
            if kernel.op == KernelOp::MatmulAccumulate {
                // In f32, so that `store` rounds the sum once.
                for (value, old) in values.iter_mut().zip(load(out)?) {
                    *value += old;
                }
            }
            values
        }
        KernelOp::Linear | KernelOp::LinearActivation(_) | KernelOp::LinearAccumulate => {
            let weight = &kernel.inputs[1];
            let (n, k) = (weight.sizes[0], weight.sizes[1]);
            let rows = input.numel() / k.max(1);
            // `weight [n, k]` read transposed, as `[k, n]`.
            let transposed = View {
                sizes: smallvec::smallvec![k, n],
                strides: smallvec::smallvec![weight.strides[1], weight.strides[0]],
                ..weight.clone()
            };
            let mut values = matmul(&load(input)?, &load(&transposed)?, &[(0, 0)], rows, k, n)?;
            if let Some(bias) = kernel.inputs.get(2) {
                let bias = load(bias)?;
                for row in values.chunks_mut(n.max(1)) {
                    row.iter_mut().zip(&bias).for_each(|(x, b)| *x += b);
                }
            }
            if kernel.op == KernelOp::LinearAccumulate {
                // In f32, so that `store` rounds the sum once.
                for (value, old) in values.iter_mut().zip(load(out)?) {
                    *value += old;
                }
            }
            values
        }
        &KernelOp::Attention { scale, causal } => super::attention::run(kernel, scale, causal)?,
        KernelOp::Fill(_) | KernelOp::Iota { .. } => unreachable!("generated above"),
    };
    // A GEMM's epilogue: on the f32 product (plus bias), before `store`'s
    // one rounding.
    if let Some(activation) = kernel.op.activation() {
        values
            .iter_mut()
            .for_each(|x| *x = unary(activation.unary(), *x));
    }
    store(out, &values);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};
    use hir_abi::DType;

    /// `fill` rounds its value once to the element type; `iota` writes
    /// `offset` plus the index along its axis, through a strided view.
    #[test]
    fn fill_and_iota_write_every_element_of_their_view() {
        for dtype in DType::FLOATS {
            let mut bytes = vec![0u8; 12 * dtype.size()];
            // [2, 3] viewed transposed from a [3, 2] buffer, and the buffer.
            let transposed = View {
                sizes: smallvec::smallvec![2, 3],
                strides: smallvec::smallvec![1, 2],
                ..View::contiguous(dtype, bytes.as_mut_ptr(), &[2, 3])
            };
            let whole = View::contiguous(dtype, bytes.as_mut_ptr(), &[3, 2]);
            let iota = Kernel {
                op: KernelOp::Iota {
                    axis: 1,
                    offset: 10,
                },
                inputs: Vec::new(),
                output: transposed.clone(),
            };
            iota.validate().unwrap();
            run(&iota).unwrap();
            // Element (i, j) of the view is (j, i) of the buffer.
            assert_eq!(
                load(&whole).unwrap(),
                [10.0, 10.0, 11.0, 11.0, 12.0, 12.0],
                "{dtype:?}"
            );
            let fill = Kernel {
                op: KernelOp::Fill(0.1),
                inputs: Vec::new(),
                output: transposed,
            };
            fill.validate().unwrap();
            run(&fill).unwrap();
            let rounded = match dtype {
                DType::F32 => 0.1f32,
                DType::BF16 => bf16::from_f32(0.1).to_f32(),
                DType::F16 => f16::from_f32(0.1).to_f32(),
                DType::I32 | DType::I64 => unreachable!("floats only"),
            };
            assert_eq!(load(&whole).unwrap(), [rounded; 6], "{dtype:?}");
            let out_of_range = Kernel {
                op: KernelOp::Iota { axis: 2, offset: 0 },
                inputs: Vec::new(),
                output: whole,
            };
            assert!(out_of_range.validate().is_err());
        }
    }

    /// `where` selects lhs where the mask is nonzero (NaN included, -0.0
    /// not), in every element type.
    #[test]
    fn where_selects_lhs_where_the_mask_is_nonzero() {
        let mask = [1.0, 0.0, -0.0, f32::NAN, -2.0, 0.5];
        let lhs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let rhs = [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0];
        for dtype in DType::FLOATS {
            let mut bytes = vec![0u8; 4 * mask.len() * dtype.size()];
            let views: Vec<View> = bytes
                .chunks_mut(mask.len() * dtype.size())
                .map(|chunk| View::contiguous(dtype, chunk.as_mut_ptr(), &[2, 3]))
                .collect();
            for (view, values) in views.iter().zip([&mask, &lhs, &rhs]) {
                store(view, values);
            }
            let kernel = Kernel {
                op: KernelOp::Where,
                inputs: views[..3].to_vec(),
                output: views[3].clone(),
            };
            kernel.validate().unwrap();
            run(&kernel).unwrap();
            assert_eq!(
                load(&views[3]).unwrap(),
                [1.0, -2.0, -3.0, 4.0, 5.0, 6.0],
                "{dtype:?}"
            );
        }
    }

    /// Every unary op, in every element type, against the C ABI's f64
    /// meaning of it, within the element type's rounding.
    #[test]
    fn unary_ops_compute_their_abi_meaning() {
        let inputs: Vec<f32> = (0..64).map(|i| (i as f32 - 31.5) / 10.0).collect();
        for dtype in DType::FLOATS {
            let tolerance = match dtype {
                DType::F32 => 1e-6,
                DType::BF16 => 1.0 / 128.0,
                DType::F16 => 1.0 / 1024.0,
                DType::I32 | DType::I64 => unreachable!("floats only"),
            };
            let mut input = vec![0u8; inputs.len() * dtype.size()];
            let mut output = vec![0u8; inputs.len() * dtype.size()];
            let input = View::contiguous(dtype, input.as_mut_ptr(), &[8, 8]);
            let output = View::contiguous(dtype, output.as_mut_ptr(), &[8, 8]);
            store(&input, &inputs);
            let stored = load(&input).unwrap();
            for op in Unary::ALL {
                let kernel = Kernel {
                    op: KernelOp::Unary(op),
                    inputs: vec![input.clone()],
                    output: output.clone(),
                };
                run(&kernel).unwrap();
                for (&x, y) in stored.iter().zip(load(&output).unwrap()) {
                    let expected = op.eval(f64::from(x));
                    // rsqrt of a negative input.
                    if expected.is_nan() {
                        assert!(y.is_nan(), "{} {dtype:?} of {x}: {y}", op.name());
                        continue;
                    }
                    let error = (f64::from(y) - expected).abs() / expected.abs().max(1.0);
                    assert!(
                        error <= tolerance,
                        "{} {dtype:?} of {x}: {y}, expected {expected}",
                        op.name()
                    );
                }
            }
        }
    }
}
