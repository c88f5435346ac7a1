//! The gradient of `fusion.attention`, `O = softmax(S) V` with the scores
//! `S = scale Q Kᵀ (+ mask)` (`-inf` where `causal` hides a key), built of
//! the fusion ops the other rules emit. The probabilities `P` are not saved:
//! the backward reads the saved `Q`, `K` and `V` and computes `S` and `P`
//! again, as the forward's `--attention math` does (materialising the
//! `[B.., Sq, Sk]` scores, where the fused forward kernel does not). Then
//!
//! ```text
//! dV = Pᵀ dO        dP = dO Vᵀ        dS = P (dP - rowsum(P dP))
//! dQ = scale dS K   dK = dSᵀ (scale Q)   dmask = dS summed over the batch axes
//! ```
//!
//! (`rowsum(P dP)` is `rowsum(dO O)`, without saving `O`.) The op's
//! verifier keeps `Sq`, `Sk`, `D` and `Dv` `serial` and the batch axes
//! placed alike in `q`, `k`, `v` and the result, so every product is local
//! to a device; only the mask's gradient, a sum over the heads, crosses the
//! devices the heads are split over (an allreduce).

use super::Tape;
use super::emit::Tensor;
use crate::ops::Op;
use hir_dialects::dist::{Dist, ParallelType};
use melior::ir::{
    OperationRef, Type, Value, ValueLike, attribute::FloatAttribute, operation::OperationLike,
};

/// The gradients of `op`'s operands (`q`, `k`, `v`, the mask) that
/// `needs` marks, given its result's `dy`.
pub(super) fn gradients<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    op: OperationRef<'c, 'a>,
    dy: Value<'c, 'a>,
    needs: &[bool],
) -> Vec<(usize, Value<'c, 'a>)> {
    let operand = |index: usize| op.operand(index).expect("checked by the op's verifier");
    let (q_in, k_in, v_in) = (operand(0), operand(1), operand(2));
    let mask_in = op.operand(3).ok();
    let q_type = Tensor::of(q_in.r#type());
    let rank = q_type.rank();
    let scale = op
        .attribute("scale")
        .ok()
        .and_then(|scale| FloatAttribute::try_from(scale).ok())
        .map_or_else(
            || 1.0 / (q_type.shape[rank - 1] as f64).sqrt(),
            |scale| scale.value(),
        );
    let shapes = Shapes::new(tape, &q_type, Tensor::of(k_in.r#type()).shape[rank - 2]);

    let q = tape.primal(q_in);
    let k = tape.primal(k_in);
    let scale_q = tape.emit.fill(scale, q_in.r#type());
    let scaled_q = tape.emit.binary(Op::FusionMul, q, scale_q);
    let p = probabilities(tape, &shapes, &op, scaled_q, k, mask_in);

    let mut gradients = Vec::new();
    if needs[2] {
        let pt = tape.emit.transpose(p, &shapes.swap);
        let dv = tape
            .emit
            .op(Op::FusionMatmul, &[pt, dy], &[], v_in.r#type());
        gradients.push((2, dv));
    }
    let needs_mask = needs.get(3) == Some(&true);
    if !(needs[0] || needs[1] || needs_mask) {
        return gradients;
    }
    let v = tape.primal(v_in);
    let vt = tape.emit.transpose(v, &shapes.swap);
    let dp = tape
        .emit
        .op(Op::FusionMatmul, &[dy, vt], &[], shapes.scores);
    // dS = P dP - P rowsum(P dP): the softmax's Jacobian, row by row.
    let weighted = tape.emit.binary(Op::FusionMul, p, dp);
    let total = tape.emit.sum(weighted, &shapes.keys, shapes.rows);
    let total = tape.emit.broadcast(total, &shapes.keys, shapes.scores);
    let shared = tape.emit.binary(Op::FusionMul, p, total);
    let ds = tape.emit.binary(Op::FusionSub, weighted, shared);
    if needs[0] {
        let product = tape.emit.op(Op::FusionMatmul, &[ds, k], &[], q_in.r#type());
        gradients.push((0, tape.emit.binary(Op::FusionMul, product, scale_q)));
    }
    if needs[1] {
        let dst = tape.emit.transpose(ds, &shapes.swap);
        let dk = tape
            .emit
            .op(Op::FusionMatmul, &[dst, scaled_q], &[], k_in.r#type());
        gradients.push((1, dk));
    }
    if let Some(mask) = mask_in.filter(|_| needs_mask) {
        // One mask for every batch index: its gradient sums them.
        let dmask = if shapes.batch.is_empty() {
            ds
        } else {
            tape.emit.sum(ds, &shapes.batch, mask.r#type())
        };
        gradients.push((3, dmask));
    }
    gradients
}

/// The types and axes of the scores, from `q`'s.
struct Shapes<'c> {
    /// `[B.., Sq, Sk]`, placed as `q`'s batch axes and `Sq`.
    scores: Type<'c>,
    /// `[B.., Sq]`: one per query.
    rows: Type<'c>,
    /// `[Sq, Sk]` in f32, whole on every device of `q`'s mesh.
    positions: Type<'c>,
    /// The batch axes.
    batch: Vec<usize>,
    /// The keys' axis of the scores, which the softmax reduces.
    keys: [usize; 1],
    /// The permutation that swaps the last two axes.
    swap: Vec<usize>,
}

impl<'c> Shapes<'c> {
    fn new(tape: &Tape<'c, '_>, q: &Tensor<'c>, keys: i64) -> Self {
        let context = tape.emit.context;
        let rank = q.rank();
        let batch: Vec<usize> = (0..rank - 2).collect();
        // q's axes with Sq again for Sk: Sq is serial, so Sk is too.
        let mut scores = q.pick(&(0..rank).map(|axis| axis.min(rank - 2)).collect::<Vec<_>>());
        scores.shape[rank - 1] = keys;
        let rows = q.pick(&(0..rank - 1).collect::<Vec<_>>());
        let positions = Tensor {
            shape: scores.shape[rank - 2..].to_vec(),
            element: Type::float32(context),
            dist: q.dist.as_ref().map(|dist| Dist {
                mesh: dist.mesh.clone(),
                axes: vec![ParallelType::Serial; 2],
                stream_chunks: None,
            }),
        };
        let mut swap: Vec<usize> = (0..rank).collect();
        swap.swap(rank - 2, rank - 1);
        Self {
            scores: scores.to_type(context),
            rows: rows.to_type(context),
            positions: positions.to_type(context),
            batch,
            keys: [rank - 1],
            swap,
        }
    }
}

/// `P = softmax(S)` over the keys, computed again from `scale Q` and `K` as
/// the op defines it: `S = (scale Q) Kᵀ + mask`, `-inf` where `causal`
/// hides a key, shifted by its row's maximum. A row whose every score is
/// `-inf` (the mask hides every key) is all zeros, as the op's result is:
/// its maximum is clamped to the lowest finite value, so that the shift
/// is not `-inf - -inf`, and its sum (0) to 1; a row that sees a key sums
/// to at least 1 (its maximum's `exp(0)`) and keeps it.
fn probabilities<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    shapes: &Shapes<'c>,
    op: &OperationRef<'c, 'a>,
    scaled_q: Value<'c, 'a>,
    k: Value<'c, 'a>,
    mask: Option<Value<'c, 'a>>,
) -> Value<'c, 'a> {
    let kt = tape.emit.transpose(k, &shapes.swap);
    let mut scores = tape
        .emit
        .op(Op::FusionMatmul, &[scaled_q, kt], &[], shapes.scores);
    let masked = mask.is_some();
    if let Some(mask) = mask {
        let mask = tape.primal(mask);
        let mask = spread(tape, shapes, mask);
        scores = tape.emit.binary(Op::FusionAdd, scores, mask);
    }
    if op.has_attribute("causal") {
        let hidden = hidden(tape, shapes);
        let never = tape.emit.fill(f64::NEG_INFINITY, shapes.scores);
        scores = tape.emit.select(hidden, never, scores);
    }
    let mut maximum = tape.emit.amax(scores, &shapes.keys, shapes.rows);
    if masked {
        let lowest = tape.emit.fill(lowest(tape, shapes.rows), shapes.rows);
        maximum = tape.emit.binary(Op::FusionMax, maximum, lowest);
    }
    let maximum = tape.emit.broadcast(maximum, &shapes.keys, shapes.scores);
    let shifted = tape.emit.binary(Op::FusionSub, scores, maximum);
    let exp = tape.emit.unary(Op::FusionExp, shifted);
    let mut total = tape.emit.sum(exp, &shapes.keys, shapes.rows);
    if masked {
        let one = tape.emit.fill(1.0, shapes.rows);
        total = tape.emit.binary(Op::FusionMax, total, one);
    }
    let total = tape.emit.broadcast(total, &shapes.keys, shapes.scores);
    tape.emit.binary(Op::FusionDiv, exp, total)
}

/// `[Sq, Sk]` `value` (the mask, the causal positions) repeated over the
/// batch axes into the scores' type.
fn spread<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    shapes: &Shapes<'c>,
    value: Value<'c, 'a>,
) -> Value<'c, 'a> {
    if shapes.batch.is_empty() {
        return tape.emit.convert(value, shapes.scores);
    }
    tape.emit.broadcast(value, &shapes.batch, shapes.scores)
}

/// Nonzero where key `j` is hidden from query `i` (`j > i`): `relu(j - i)`,
/// in f32 (exact positions up to 2^24), then in the scores' type (a
/// positive integer stays nonzero), over the batch axes.
fn hidden<'c, 'a>(tape: &mut Tape<'c, 'a>, shapes: &Shapes<'c>) -> Value<'c, 'a> {
    let queries = tape.emit.iota(0, shapes.positions);
    let keys = tape.emit.iota(1, shapes.positions);
    let ahead = tape.emit.binary(Op::FusionSub, keys, queries);
    let hidden = tape.emit.unary(Op::FusionRelu, ahead);
    let mut square = Tensor::of(shapes.positions);
    square.element = Tensor::of(shapes.scores).element;
    let square = square.to_type(tape.emit.context);
    let hidden = if square == shapes.positions {
        hidden
    } else {
        tape.emit.pointwise(Op::FusionCast, &[hidden], square)
    };
    spread(tape, shapes, hidden)
}

/// The lowest finite value of `r#type`'s element type.
fn lowest(tape: &Tape, r#type: Type) -> f64 {
    let context = tape.emit.context;
    let element = Tensor::of(r#type).element;
    if element == Type::float16(context) {
        -65504.0
    } else if element == Type::bfloat16(context) {
        -3.389_531_389_251_535_5e38
    } else if element == Type::float32(context) {
        f32::MIN.into()
    } else {
        f64::MIN
    }
}
