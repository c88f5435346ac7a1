//! The cpu backend's integer compute: exact, in `i64`. Every kernel widens
//! its strided inputs to `i64`, computes with wrapping (two's complement)
//! arithmetic, and writes the output view truncating to its element type,
//! which is the wrapping result in that type (`i32` add, sub, mul and neg
//! wrap as the low 32 bits of the `i64` ones). The cuda backend's integer
//! kernels compute the same way, so both agree bit for bit.

use super::elements::{
    Stored, copy, filled, iota_indices, load_as, projection, store_as, with_capacity,
};
use crate::error::{Error, Result};
use crate::memref::View;
use crate::ops::{Kernel, KernelOp};
use hir_abi::{Binary, DType, ReduceKind, Reduction, Unary};

impl Stored<i64> for i32 {
    fn widen(self) -> i64 {
        self.into()
    }
    /// The low bits of `value`: the wrapping conversion.
    fn narrow(value: i64) -> Self {
        value as i32
    }
}

impl Stored<i64> for i64 {
    fn widen(self) -> i64 {
        self
    }
    fn narrow(value: i64) -> Self {
        value
    }
}

/// The view's elements in row-major order, widened to `i64`.
pub(crate) fn load(view: &View) -> Result<Vec<i64>> {
    match view.dtype {
        DType::I32 => load_as::<i32, i64>(view),
        DType::I64 => load_as::<i64, i64>(view),
        other => unreachable!("{other:?} is not an integer type"),
    }
}

/// Writes `values` (row-major) into the view, wrapping to its element type.
pub(crate) fn store(view: &View, values: &[i64]) {
    debug_assert_eq!(values.len(), view.numel());
    match view.dtype {
        DType::I32 => store_as::<i32, i64>(view, values),
        DType::I64 => store_as::<i64, i64>(view, values),
        other => unreachable!("{other:?} is not an integer type"),
    }
}

/// `Unary::takes` an integer type for these.
fn unary(op: Unary, x: i64) -> i64 {
    match op {
        Unary::Neg => x.wrapping_neg(),
        Unary::Abs => x.wrapping_abs(),
        Unary::Relu => x.max(0),
        _ => unreachable!("validated: {} takes no integers", op.name()),
    }
}

fn binary(op: Binary, a: i64, b: i64) -> i64 {
    match op {
        Binary::Add => a.wrapping_add(b),
        Binary::Sub => a.wrapping_sub(b),
        Binary::Mul => a.wrapping_mul(b),
        Binary::Max => a.max(b),
        Binary::Min => a.min(b),
        Binary::Div => unreachable!("validated: div takes no integers"),
    }
}

/// The smallest value of an integer type: what an empty `amax` gives.
fn lowest(dtype: DType) -> i64 {
    match dtype {
        DType::I32 => i32::MIN.into(),
        _ => i64::MIN,
    }
}

/// Runs a validated kernel whose buffers are of an integer type.
pub(crate) fn run(kernel: &Kernel) -> Result<()> {
    let out = &kernel.output;
    if out.numel() == 0 {
        return Ok(());
    }
    let input = kernel.inputs.first();
    let values = match (&kernel.op, input) {
        (KernelOp::Copy, Some(input)) => {
            copy(input, out);
            return Ok(());
        }
        // Validated integral: exact in `i64`.
        (KernelOp::Fill(value), _) => filled(out.numel(), *value as i64)?,
        (&KernelOp::Iota { axis, offset }, _) => iota_indices(&out.sizes, axis)?
            .into_iter()
            .map(|index| offset.wrapping_add(index as i64))
            .collect(),
        (KernelOp::Unary(op), Some(input)) => {
            let mut values = load(input)?;
            values.iter_mut().for_each(|x| *x = unary(*op, *x));
            values
        }
        (KernelOp::Binary(op), Some(input)) => {
            let rhs = load(&kernel.inputs[1])?;
            let mut values = load(input)?;
            for (a, &b) in values.iter_mut().zip(&rhs) {
                *a = binary(*op, *a, b);
            }
            values
        }
        (KernelOp::Where, Some(mask)) => {
            let (lhs, rhs) = (load(&kernel.inputs[1])?, load(&kernel.inputs[2])?);
            let mut values = load(mask)?;
            for ((value, a), b) in values.iter_mut().zip(lhs).zip(rhs) {
                *value = if *value != 0 { a } else { b };
            }
            values
        }
        (KernelOp::Reduce(op, axes), Some(input)) => {
            let (init, combine): (i64, fn(i64, i64) -> i64) = match op {
                Reduction::Sum => (0, i64::wrapping_add),
                Reduction::Amax => (lowest(out.dtype), i64::max),
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
        (KernelOp::Broadcast(axes), Some(input)) => {
            let values = load(input)?;
            let sources = projection(&out.sizes, axes)?;
            let mut spread = with_capacity(sources.len())?;
            spread.extend(sources.into_iter().map(|source| values[source]));
            spread
        }
        _ => {
            return Err(Error::Invalid(format!(
                "{} is not defined on integers",
                kernel.entry()
            )));
        }
    };
    store(out, &values);
    Ok(())
}

/// Combines the views elementwise in team order, wrapping; `avg` is
/// refused by `CollectiveOp::validate`.
pub(crate) fn combine(kind: ReduceKind, views: &[View]) -> Result<Vec<i64>> {
    let mut parts = views.iter().map(load);
    let mut acc = parts.next().expect("a team is not empty")?;
    for part in parts {
        for (a, b) in acc.iter_mut().zip(part?) {
            *a = match kind {
                ReduceKind::Sum => a.wrapping_add(b),
                ReduceKind::Prod => a.wrapping_mul(b),
                ReduceKind::Max => (*a).max(b),
                ReduceKind::Min => (*a).min(b),
                ReduceKind::Avg => unreachable!("validated: no avg of integers"),
            };
        }
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values near the ends of each type, so that the arithmetic wraps.
    fn views(dtype: DType, bytes: &mut [u8], count: usize, len: usize) -> Vec<View> {
        bytes
            .chunks_mut(len * dtype.size())
            .take(count)
            .map(|chunk| View::contiguous(dtype, chunk.as_mut_ptr(), &[len]))
            .collect()
    }

    fn run_op(op: KernelOp, dtype: DType, inputs: &[&[i64]]) -> Vec<i64> {
        let len = inputs.first().map_or(4, |values| values.len());
        let mut bytes = vec![0u8; (inputs.len() + 1) * len * dtype.size()];
        let mut views = views(dtype, &mut bytes, inputs.len() + 1, len);
        for (view, values) in views.iter().zip(inputs) {
            store(view, values);
        }
        let output = views.pop().expect("an output");
        let kernel = Kernel {
            op,
            inputs: views,
            output: output.clone(),
        };
        kernel.validate().unwrap();
        run(&kernel).unwrap();
        load(&output).unwrap()
    }

    /// Each op against values worked out by hand, wrapping included.
    #[test]
    fn integer_kernels_are_exact_and_wrap() {
        let (min, max) = (i64::from(i32::MIN), i64::from(i32::MAX));
        let a: &[i64] = &[max, min, -7, 3];
        let b: &[i64] = &[1, -1, 5, -3];
        let add = run_op(KernelOp::Binary(Binary::Add), DType::I32, &[a, b]);
        assert_eq!(add, [min, max, -2, 0]);
        let sub = run_op(KernelOp::Binary(Binary::Sub), DType::I32, &[a, b]);
        assert_eq!(sub, [max - 1, min + 1, -12, 6]);
        let mul = run_op(KernelOp::Binary(Binary::Mul), DType::I32, &[a, b]);
        assert_eq!(mul, [max, min, -35, -9]);
        let big = run_op(
            KernelOp::Binary(Binary::Mul),
            DType::I32,
            &[&[65536], &[65536]],
        );
        assert_eq!(big, [0]);
        let top = run_op(KernelOp::Binary(Binary::Max), DType::I32, &[a, b]);
        assert_eq!(top, [max, -1, 5, 3]);
        let bottom = run_op(KernelOp::Binary(Binary::Min), DType::I32, &[a, b]);
        assert_eq!(bottom, [1, min, -7, -3]);
        assert_eq!(
            run_op(KernelOp::Unary(Unary::Neg), DType::I32, &[a]),
            [-max, min, 7, -3]
        );
        assert_eq!(
            run_op(KernelOp::Unary(Unary::Abs), DType::I32, &[a]),
            [max, min, 7, 3]
        );
        assert_eq!(
            run_op(KernelOp::Unary(Unary::Relu), DType::I32, &[a]),
            [max, 0, 0, 3]
        );
        let wide = run_op(
            KernelOp::Binary(Binary::Add),
            DType::I64,
            &[&[i64::MAX, max], &[1, 1]],
        );
        assert_eq!(wide, [i64::MIN, max + 1]);
        let mask: &[i64] = &[0, 2, -1, 0];
        let chosen = run_op(KernelOp::Where, DType::I64, &[mask, a, b]);
        assert_eq!(chosen, [1, min, -7, -3]);
        assert_eq!(
            run_op(KernelOp::Fill(-3.0), DType::I64, &[]),
            [-3, -3, -3, -3]
        );
        assert_eq!(
            run_op(KernelOp::Iota { axis: 0, offset: 5 }, DType::I32, &[]),
            [5, 6, 7, 8]
        );
    }

    /// Sums and maxima over axes, and a broadcast, of a `[2, 3]` tensor.
    #[test]
    fn integer_reductions_and_broadcasts_are_exact() {
        for dtype in DType::INTS {
            let mut bytes = vec![0u8; 12 * dtype.size()];
            let (input, rest) = bytes.split_at_mut(6 * dtype.size());
            let input = View::contiguous(dtype, input.as_mut_ptr(), &[2, 3]);
            let output = View::contiguous(dtype, rest.as_mut_ptr(), &[3]);
            store(&input, &[1, -2, 3, 40, 50, -60]);
            let reduce = |op| {
                let kernel = Kernel {
                    op: KernelOp::Reduce(op, vec![0]),
                    inputs: vec![input.clone()],
                    output: output.clone(),
                };
                kernel.validate().unwrap();
                run(&kernel).unwrap();
                load(&output).unwrap()
            };
            assert_eq!(reduce(Reduction::Sum), [41, 48, -57], "{dtype:?}");
            assert_eq!(reduce(Reduction::Amax), [40, 50, 3], "{dtype:?}");
            let spread = Kernel {
                op: KernelOp::Broadcast(vec![0]),
                inputs: vec![output.clone()],
                output: input.clone(),
            };
            run(&spread).unwrap();
            assert_eq!(load(&input).unwrap(), [40, 50, 3, 40, 50, 3], "{dtype:?}");
        }
    }

    /// Float-only ops are refused on integers before they run.
    #[test]
    fn float_only_ops_are_refused() {
        let mut bytes = vec![0u8; 32];
        let a = View::contiguous(DType::I32, bytes.as_mut_ptr(), &[2, 2]);
        for op in [
            KernelOp::Unary(Unary::Exp),
            KernelOp::Binary(Binary::Div),
            KernelOp::Matmul,
        ] {
            let inputs = if op == KernelOp::Unary(Unary::Exp) {
                vec![a.clone()]
            } else {
                vec![a.clone(), a.clone()]
            };
            let kernel = Kernel {
                op,
                inputs,
                output: a.clone(),
            };
            let error = kernel.validate().unwrap_err().to_string();
            assert!(error.contains("not defined on i32"), "{error}");
        }
    }

    #[test]
    fn collectives_combine_integers_exactly() {
        let mut bytes = vec![0u8; 3 * 2 * 8];
        let parts = views(DType::I64, &mut bytes, 3, 2);
        store(&parts[0], &[i64::MAX, 2]);
        store(&parts[1], &[1, -3]);
        store(&parts[2], &[5, 7]);
        assert_eq!(combine(ReduceKind::Sum, &parts).unwrap(), [i64::MIN + 5, 6]);
        assert_eq!(combine(ReduceKind::Prod, &parts).unwrap()[1], -42);
        assert_eq!(combine(ReduceKind::Max, &parts).unwrap(), [i64::MAX, 7]);
        assert_eq!(combine(ReduceKind::Min, &parts).unwrap(), [1, -3]);
    }
}
