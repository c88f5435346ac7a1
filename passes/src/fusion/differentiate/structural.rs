//! The gradients of the ops that move, repeat or reduce elements:
//! `transpose` (the inverse permutation), `reshape` (back), `broadcast` (a
//! sum over its new axes), `sum` (a broadcast along the summed axes), `amax`
//! (`dy` where the input is the maximum, split evenly between ties, as
//! `torch.amax`), and `slice` (`dy` scattered into zeros).

use super::Tape;
use super::emit::Tensor;
use crate::diagnostics::Emitted;
use crate::ir;
use crate::ops::Op;
use hir_dialects::dist::ParallelType;
use melior::ir::{OperationRef, Type, Value, ValueLike, operation::OperationLike};

/// The gradient of operand 0 of `op`, given its result's `dy`.
pub(super) fn gradients<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    op: OperationRef<'c, 'a>,
    dy: Value<'c, 'a>,
    needs: &[bool],
) -> Result<Vec<(usize, Value<'c, 'a>)>, Emitted> {
    if !needs[0] {
        return Ok(Vec::new());
    }
    let input = op.operand(0).expect("one input");
    let input_type = input.r#type();
    let list = |name: &str| -> Vec<usize> {
        ir::i64_array(&op, name)
            .expect("checked by the op's verifier")
            .into_iter()
            .map(|axis| axis as usize)
            .collect()
    };
    let gradient = match Op::of(&op).expect("dispatched by name") {
        Op::FusionTranspose => tape.emit.transpose(dy, &inverse(&list("permutation"))),
        Op::FusionReshape => tape.emit.op(Op::FusionReshape, &[dy], &[], input_type),
        Op::FusionBroadcast => tape.emit.sum(dy, &list("axes"), input_type),
        Op::FusionSum => tape.emit.broadcast(dy, &list("axes"), input_type),
        Op::FusionAmax => {
            let result = op.result(0).expect("one result").into();
            amax(tape, input, result, &list("axes"), dy)
        }
        Op::FusionSlice => {
            let offsets = list("offsets");
            let strides = list("strides");
            let extents = Tensor::of(input_type).shape;
            let mut gradient = dy;
            for axis in 0..extents.len() {
                let taken = Tensor::of(gradient.r#type()).shape[axis];
                if offsets[axis] != 0 || strides[axis] != 1 || taken != extents[axis] {
                    let cut = Cut {
                        axis,
                        offset: offsets[axis] as i64,
                        stride: strides[axis] as i64,
                        extent: extents[axis],
                    };
                    gradient = scatter(tape, gradient, cut);
                }
            }
            gradient
        }
        _ => unreachable!("structural ops only"),
    };
    Ok(vec![(0, gradient)])
}

/// The inverse of a permutation.
fn inverse(permutation: &[usize]) -> Vec<usize> {
    let mut inverse = vec![0; permutation.len()];
    for (to, &from) in permutation.iter().enumerate() {
        inverse[from] = to;
    }
    inverse
}

/// `dy` where `input` equals its maximum `result` along `axes`, divided by
/// how many elements do.
fn amax<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    input: Value<'c, 'a>,
    result: Value<'c, 'a>,
    axes: &[usize],
    dy: Value<'c, 'a>,
) -> Value<'c, 'a> {
    let x = tape.primal(input);
    let y = tape.primal(result);
    let input_type = input.r#type();
    let maximum = tape.emit.broadcast(y, axes, input_type);
    // Zero exactly at the maximum.
    let below = tape
        .emit
        .pointwise(Op::FusionSub, &[x, maximum], input_type);
    let zero = tape.emit.fill(0.0, input_type);
    let one = tape.emit.fill(1.0, input_type);
    let hits = tape.emit.select(below, zero, one);
    let count = tape.emit.sum(hits, axes, dy.r#type());
    let share = tape.emit.binary(Op::FusionDiv, dy, count);
    let share = tape.emit.broadcast(share, axes, input_type);
    tape.emit.select(below, zero, share)
}

/// An axis a slice cuts: result index `i` is input index `offset + i * stride`.
struct Cut {
    axis: usize,
    offset: i64,
    stride: i64,
    /// The input's extent along the axis.
    extent: i64,
}

/// `value` scattered along `cut.axis` into zeros of the input's extent: a
/// `linear` by the 0/1 matrix `P[j, i] = (j == offset + i * stride)`, so
/// each element lands once and exactly. (There is no scatter op; the
/// product costs the cut axis's extent times the slice's, once.)
fn scatter<'c, 'a>(tape: &mut Tape<'c, 'a>, value: Value<'c, 'a>, cut: Cut) -> Value<'c, 'a> {
    let tensor = Tensor::of(value.r#type());
    let rank = tensor.rank();
    // The cut axis last, where `linear` contracts.
    let permutation: Vec<usize> = (0..rank)
        .filter(|&axis| axis != cut.axis)
        .chain([cut.axis])
        .collect();
    let moved = if cut.axis + 1 == rank {
        value
    } else {
        tape.emit.transpose(value, &permutation)
    };
    let taken = tensor.shape[cut.axis];
    let selection = selection(tape, &tensor, cut.extent, taken, &cut);
    let mut scattered = Tensor::of(moved.r#type());
    scattered.shape[rank - 1] = cut.extent;
    let context = tape.emit.context;
    let scattered = tape.emit.op(
        Op::FusionLinear,
        &[moved, selection],
        &[],
        scattered.to_type(context),
    );
    if cut.axis + 1 == rank {
        scattered
    } else {
        tape.emit.transpose(scattered, &inverse(&permutation))
    }
}

/// The `[extent, taken]` 0/1 matrix of `cut` in `like`'s element type, on
/// its mesh, whole on every device.
fn selection<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    like: &Tensor<'c>,
    extent: i64,
    taken: i64,
    cut: &Cut,
) -> Value<'c, 'a> {
    let context = tape.emit.context;
    let f32 = Type::float32(context);
    let matrix = |element: Type<'c>| {
        Tensor {
            shape: vec![extent, taken],
            element,
            dist: like.dist.as_ref().map(|dist| hir_dialects::dist::Dist {
                mesh: dist.mesh.clone(),
                axes: vec![ParallelType::Serial; 2],
                stream_chunks: None,
            }),
        }
        .to_type(context)
    };
    // In f32, where the indices are exact; 0 and 1 are exact in every type.
    let index_type = matrix(f32);
    let rows = tape.emit.iota(0, index_type);
    let columns = tape.emit.iota(1, index_type);
    let stride = tape.emit.fill(cut.stride as f64, index_type);
    let offset = tape.emit.fill(cut.offset as f64, index_type);
    let picked = tape.emit.binary(Op::FusionMul, columns, stride);
    let picked = tape.emit.binary(Op::FusionAdd, picked, offset);
    let apart = tape.emit.binary(Op::FusionSub, rows, picked);
    let zero = tape.emit.fill(0.0, index_type);
    let one = tape.emit.fill(1.0, index_type);
    let selection = tape.emit.select(apart, zero, one);
    if like.element == f32 {
        selection
    } else {
        tape.emit
            .pointwise(Op::FusionCast, &[selection], matrix(like.element))
    }
}

#[cfg(test)]
mod tests {
    use super::inverse;

    #[test]
    fn inverse_undoes_a_permutation() {
        let permutation = [2, 0, 1];
        let back = inverse(&permutation);
        let moved: Vec<usize> = back.iter().map(|&axis| permutation[axis]).collect();
        assert_eq!(moved, [0, 1, 2]);
    }
}
