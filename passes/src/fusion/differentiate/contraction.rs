//! The gradients of `matmul` and `linear`: `dA = dC Bᵀ`, `dB = Aᵀ dC`
//! (summed over the batch axes an operand was broadcast along), and for
//! `linear` (`y = x Wᵀ + b`) `dx = linear(dy, Wᵀ)`, `dW = dyᵀ x` summed over
//! the batch axes, `db` = `dy` summed over all but its last axis.
//!
//! Each product states its placement: where one side of the contraction is
//! split over devices and the other is not, or an operand is split along an
//! axis its result is not, that operand is gathered by an explicit
//! `fusion.set` first (one per value, shared by the products that read it),
//! so that a split contraction is always a sum across devices (an allreduce,
//! or a reduce-scatter into a split result) and a split row is always an
//! allgather feeding a GEMM.

use super::Tape;
use super::emit::Tensor;
use crate::diagnostics::Emitted;
use crate::ir;
use crate::ops::Op;
use melior::ir::{OperationRef, Type, Value, ValueLike, operation::OperationLike};

/// An operand of a product: a value, transposed by `permutation` if any.
struct Operand<'c, 'a> {
    value: Value<'c, 'a>,
    permutation: Option<Vec<usize>>,
}

impl<'c, 'a> Operand<'c, 'a> {
    fn of(value: Value<'c, 'a>) -> Self {
        Self {
            value,
            permutation: None,
        }
    }

    /// `value` with its last two axes swapped.
    fn transposed(value: Value<'c, 'a>) -> Self {
        let rank = Tensor::of(value.r#type()).rank();
        let mut permutation: Vec<usize> = (0..rank).collect();
        permutation.swap(rank - 2, rank - 1);
        Self {
            value,
            permutation: Some(permutation),
        }
    }

    /// The tensor the product reads.
    fn tensor(&self) -> Tensor<'c> {
        let tensor = Tensor::of(self.value.r#type());
        match &self.permutation {
            Some(permutation) => tensor.pick(permutation),
            None => tensor,
        }
    }
}

/// The gradients of the operands of `op` (a matmul or linear) that `needs`
/// marks, given its result's `dy`.
pub(super) fn gradients<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    op: OperationRef<'c, 'a>,
    dy: Value<'c, 'a>,
    needs: &[bool],
) -> Result<Vec<(usize, Value<'c, 'a>)>, Emitted> {
    let operand = |index: usize| op.operand(index).expect("checked by the op's verifier");
    let mut gradients = Vec::new();
    if Op::FusionMatmul.is(&op) {
        let (lhs, rhs) = (operand(0), operand(1));
        if needs[0] {
            let rhs = Operand::transposed(tape.primal(rhs));
            let full = batched(tape, lhs.r#type(), dy.r#type());
            let product = contract(tape, Op::FusionMatmul, Operand::of(dy), rhs, full);
            gradients.push((0, unbroadcast(tape, product, lhs.r#type())));
        }
        if needs[1] {
            let lhs = Operand::transposed(tape.primal(lhs));
            let full = batched(tape, rhs.r#type(), dy.r#type());
            let product = contract(tape, Op::FusionMatmul, lhs, Operand::of(dy), full);
            gradients.push((1, unbroadcast(tape, product, rhs.r#type())));
        }
        return Ok(gradients);
    }

    let (input, weight) = (operand(0), operand(1));
    let rank = Tensor::of(input.r#type()).rank();
    if needs[0] {
        let weight = Operand {
            value: tape.primal(weight),
            permutation: Some(vec![1, 0]),
        };
        let product = contract(
            tape,
            Op::FusionLinear,
            Operand::of(dy),
            weight,
            input.r#type(),
        );
        gradients.push((0, product));
    }
    if needs[1] {
        let x = tape.primal(input);
        let gradient = if rank == 1 {
            // The outer product dy xᵀ.
            let column = as_matrix(tape, dy, 1);
            let row = as_matrix(tape, x, 0);
            contract(
                tape,
                Op::FusionMatmul,
                Operand::of(column),
                Operand::of(row),
                weight.r#type(),
            )
        } else {
            let full = batched(tape, weight.r#type(), dy.r#type());
            let product = contract(
                tape,
                Op::FusionMatmul,
                Operand::transposed(dy),
                Operand::of(x),
                full,
            );
            unbroadcast(tape, product, weight.r#type())
        };
        gradients.push((1, gradient));
    }
    if let Some(bias) = ir::operand(&op, 2).filter(|_| needs.get(2) == Some(&true)) {
        let gradient = if rank == 1 {
            dy
        } else {
            let rows: Vec<usize> = (0..rank - 1).collect();
            tape.emit.sum(dy, &rows, bias.r#type())
        };
        gradients.push((2, gradient));
    }
    Ok(gradients)
}

/// `value`, a vector, as a matrix with a new axis of extent 1 at `axis`.
fn as_matrix<'c, 'a>(tape: &mut Tape<'c, 'a>, value: Value<'c, 'a>, axis: usize) -> Value<'c, 'a> {
    let vector = Tensor::of(value.r#type());
    let mut matrix = vector.pick(&[0, 0]);
    matrix.shape[axis] = 1;
    if let Some(dist) = &mut matrix.dist {
        dist.axes[axis] = hir_dialects::dist::ParallelType::Serial;
    }
    let context = tape.emit.context;
    tape.emit
        .op(Op::FusionReshape, &[value], &[], matrix.to_type(context))
}

/// The type of an operand's gradient before it is summed over the batch
/// axes it was broadcast along: `result`'s batch axes, then `operand`'s
/// last two; `operand` itself where that is its shape.
fn batched<'c>(tape: &Tape<'c, '_>, operand: Type<'c>, result: Type<'c>) -> Type<'c> {
    let (tensor, result) = (Tensor::of(operand), Tensor::of(result));
    let batch: Vec<usize> = (0..result.rank() - 2).collect();
    let mut full = result.pick(&batch).with_element(tensor.element);
    let last_two = tensor.pick(&[tensor.rank() - 2, tensor.rank() - 1]);
    if full.shape.iter().chain(&last_two.shape).eq(&tensor.shape) {
        return operand;
    }
    full.shape.extend(&last_two.shape);
    if let (Some(dist), Some(last)) = (&mut full.dist, &last_two.dist) {
        dist.axes.extend(&last.axes);
        dist.stream_chunks = dist.stream_chunks.or(last.stream_chunks);
    }
    full.to_type(tape.emit.context)
}

/// `full` summed over the batch axes `target` lacks or has of extent 1
/// where `full`'s is longer, as `target`.
fn unbroadcast<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    full: Value<'c, 'a>,
    target: Type<'c>,
) -> Value<'c, 'a> {
    let tensor = Tensor::of(full.r#type());
    let goal = Tensor::of(target);
    let lead = tensor.rank() - goal.rank();
    let summed: Vec<usize> = (0..tensor.rank() - 2)
        .filter(|&axis| axis < lead || (goal.shape[axis - lead] == 1 && tensor.shape[axis] != 1))
        .collect();
    if summed.is_empty() {
        return full;
    }
    let kept: Vec<usize> = (0..tensor.rank())
        .filter(|axis| !summed.contains(axis))
        .collect();
    let kept_type = tensor.pick(&kept).to_type(tape.emit.context);
    let sum = tape.emit.sum(full, &summed, kept_type);
    if kept.len() == goal.rank() {
        sum
    } else {
        tape.emit.op(Op::FusionReshape, &[sum], &[], target)
    }
}

/// `kind` (matmul or linear) of `lhs` and `rhs` into `result`, each
/// operand gathered first where its placement would leave the product
/// ill-defined (module doc).
fn contract<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    kind: Op,
    lhs: Operand<'c, 'a>,
    rhs: Operand<'c, 'a>,
    result: Type<'c>,
) -> Value<'c, 'a> {
    let (left, right, out) = (lhs.tensor(), rhs.tensor(), Tensor::of(result));
    let (rank, left_rank, right_rank) = (out.rank(), left.rank(), right.rank());
    let left_k = left_rank - 1;
    let (right_k, right_map): (usize, Vec<(usize, usize)>) = if kind == Op::FusionMatmul {
        let mut map: Vec<(usize, usize)> = (0..right_rank - 2)
            .map(|axis| (axis, rank - right_rank + axis))
            .collect();
        map.push((right_rank - 1, rank - 1));
        (right_rank - 2, map)
    } else {
        (right_rank - 1, vec![(0, rank - 1)])
    };
    let left_map: Vec<(usize, usize)> = (0..left_rank - 1)
        .map(|axis| (axis, rank - left_rank + axis))
        .collect();

    let (left_place, right_place) = (left.placement(left_k), right.placement(right_k));
    let needed = |tensor: &Tensor, contracted: usize, map: &[(usize, usize)]| {
        let mut gathered: Vec<usize> = Vec::new();
        if left_place != right_place && tensor.placement(contracted).is_device() {
            gathered.push(contracted);
        }
        for &(axis, to) in map {
            let placement = tensor.placement(axis);
            let broadcast = tensor.shape[axis] == 1 && out.shape[to] != 1;
            if placement.is_device() && (broadcast || out.placement(to) != placement) {
                gathered.push(axis);
            }
        }
        gathered
    };
    let left_gathered = needed(&left, left_k, &left_map);
    let right_gathered = needed(&right, right_k, &right_map);
    let lhs = read(tape, lhs, &left_gathered);
    let rhs = read(tape, rhs, &right_gathered);
    tape.emit.op(kind, &[lhs, rhs], &[], result)
}

/// `operand` as a product reads it: gathered along its (transposed) axes
/// `gathered`, then transposed.
fn read<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    operand: Operand<'c, 'a>,
    gathered: &[usize],
) -> Value<'c, 'a> {
    let original: Vec<usize> = gathered
        .iter()
        .map(|&axis| operand.permutation.as_ref().map_or(axis, |p| p[axis]))
        .collect();
    let value = tape.emit.gather(operand.value, &original);
    match &operand.permutation {
        Some(permutation) => tape.emit.transpose(value, permutation),
        None => value,
    }
}
