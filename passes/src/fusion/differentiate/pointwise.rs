//! The gradients of elementwise ops: each operand's is `dy` times the op's
//! local derivative, computed in the result's type (the tape converts it to
//! the operand's). Where a derivative is a choice (`relu` and `abs` at 0,
//! `max` and `min` at ties), it is torch's.

use super::Tape;
use crate::ops::Op;
use melior::ir::{OperationRef, Value, ValueLike, operation::OperationLike};

/// `gelu`'s constants: sqrt(2/pi) and the cubic's coefficient, as
/// `hir_abi::Unary::Gelu` evaluates it (torch's `approximate='tanh'`).
const GELU_SCALE: f64 = 0.797_884_560_802_865_4;
const GELU_CUBIC: f64 = 0.044_715;

/// The gradients of `op`'s operands that `needs` marks, given the result's
/// `dy`; `None` when `op` is not elementwise.
pub(super) fn gradients<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    op: OperationRef<'c, 'a>,
    dy: Value<'c, 'a>,
    needs: &[bool],
) -> Option<Vec<(usize, Value<'c, 'a>)>> {
    let operand = |index: usize| op.operand(index).expect("checked by the op's verifier");
    let result: Value = op.result(0).expect("one result").into();
    let gradients = match Op::of(&op)? {
        Op::FusionSet => vec![(0, dy)],
        Op::FusionNeg => vec![(0, tape.emit.unary(Op::FusionNeg, dy))],
        Op::FusionCast => vec![(
            0,
            tape.emit
                .pointwise(Op::FusionCast, &[dy], operand(0).r#type()),
        )],
        Op::FusionExp => {
            let y = tape.primal(result);
            vec![(0, tape.emit.binary(Op::FusionMul, dy, y))]
        }
        Op::FusionTanh => {
            // 1 - tanh^2
            let y = tape.primal(result);
            let one = tape.emit.constant(1.0, dy);
            let square = tape.emit.binary(Op::FusionMul, y, y);
            let slope = tape.emit.binary(Op::FusionSub, one, square);
            vec![(0, tape.emit.binary(Op::FusionMul, dy, slope))]
        }
        Op::FusionRsqrt => {
            // d(x^-1/2) = -x^-3/2 / 2 = -y^3 / 2
            let y = tape.primal(result);
            let factor = tape.emit.constant(-0.5, dy);
            let square = tape.emit.binary(Op::FusionMul, y, y);
            let cube = tape.emit.binary(Op::FusionMul, square, y);
            let slope = tape.emit.binary(Op::FusionMul, factor, cube);
            vec![(0, tape.emit.binary(Op::FusionMul, dy, slope))]
        }
        Op::FusionRelu => {
            // relu(x) is nonzero exactly where x > 0 (the gradient at 0 is 0).
            let y = tape.primal(result);
            let zero = tape.emit.constant(0.0, dy);
            vec![(0, tape.emit.select(y, dy, zero))]
        }
        Op::FusionAbs => {
            // sign(x) dy, 0 at x = 0, without dividing by |x|.
            let x = tape.primal(operand(0));
            let positive = tape.emit.unary(Op::FusionRelu, x);
            let negated = tape.emit.unary(Op::FusionNeg, dy);
            let signed = tape.emit.select(positive, dy, negated);
            let zero = tape.emit.constant(0.0, dy);
            vec![(0, tape.emit.select(x, signed, zero))]
        }
        Op::FusionGelu => vec![(0, gelu(tape, operand(0), dy))],
        Op::FusionAdd => vec![(0, dy), (1, dy)],
        Op::FusionSub if needs[1] => vec![(0, dy), (1, tape.emit.unary(Op::FusionNeg, dy))],
        Op::FusionSub => vec![(0, dy)],
        Op::FusionMul => {
            let mut gradients = Vec::new();
            for (index, other) in [(0, 1), (1, 0)] {
                if needs[index] {
                    let other = tape.primal(operand(other));
                    gradients.push((index, tape.emit.binary(Op::FusionMul, dy, other)));
                }
            }
            gradients
        }
        Op::FusionDiv => {
            // d(a/b) = da / b - (a/b) db / b
            let rhs = tape.primal(operand(1));
            let lhs_gradient = tape.emit.binary(Op::FusionDiv, dy, rhs);
            let rhs_gradient = if needs[1] {
                let y = tape.primal(result);
                let scaled = tape.emit.binary(Op::FusionMul, lhs_gradient, y);
                tape.emit.unary(Op::FusionNeg, scaled)
            } else {
                lhs_gradient
            };
            vec![(0, lhs_gradient), (1, rhs_gradient)]
        }
        kind @ (Op::FusionMax | Op::FusionMin) => {
            let (lhs, rhs) = (tape.primal(operand(0)), tape.primal(operand(1)));
            // The lhs wins where this is positive, ties where it is zero.
            let (from, less) = if kind == Op::FusionMax {
                (lhs, rhs)
            } else {
                (rhs, lhs)
            };
            let lead = tape
                .emit
                .pointwise(Op::FusionSub, &[from, less], dy.r#type());
            let share = tie_share(tape, lead, dy);
            let lhs_gradient = tape.emit.binary(Op::FusionMul, dy, share);
            let rhs_gradient = tape.emit.binary(Op::FusionSub, dy, lhs_gradient);
            vec![(0, lhs_gradient), (1, rhs_gradient)]
        }
        Op::FusionWhere => {
            // The mask selects; it gets no gradient.
            let mask = tape.primal(operand(0));
            let zero = tape.emit.constant(0.0, dy);
            let mut gradients = Vec::new();
            if needs[1] {
                gradients.push((1, tape.emit.select(mask, dy, zero)));
            }
            if needs[2] {
                gradients.push((2, tape.emit.select(mask, zero, dy)));
            }
            gradients
        }
        _ => return None,
    };
    Some(
        gradients
            .into_iter()
            .filter(|&(index, _)| needs[index])
            .collect(),
    )
}

/// The lhs's share of a `max`'s (`min`'s) gradient from `lead`, how far the
/// lhs leads: 1 where it leads, 0 where it trails, 1/2 at a tie (as torch's
/// `maximum` splits a tie).
fn tie_share<'c, 'a>(
    tape: &mut Tape<'c, 'a>,
    lead: Value<'c, 'a>,
    like: Value<'c, 'a>,
) -> Value<'c, 'a> {
    let one = tape.emit.constant(1.0, like);
    let zero = tape.emit.constant(0.0, like);
    let half = tape.emit.constant(0.5, like);
    let ahead = tape.emit.unary(Op::FusionRelu, lead);
    let apart = tape.emit.select(lead, zero, half);
    tape.emit.select(ahead, one, apart)
}

/// `dy` times gelu'(x), of gelu(x) = x/2 (1 + tanh(u)), u = c (x + a x^3):
/// (1 + t)/2 + x/2 (1 - t^2) c (1 + 3 a x^2), t = tanh(u). Of a bf16 or f16
/// `dy`, computed in f32 and rounded once, as torch's gelu backward is: the
/// twenty steps rounded each to bf16 would cost accuracy, and each rounding
/// integer work in the fused kernel (0.76 ms against 0.31 in f32 on an
/// H200 at [8192, 8192]).
fn gelu<'c, 'a>(tape: &mut Tape<'c, 'a>, input: Value<'c, 'a>, dy: Value<'c, 'a>) -> Value<'c, 'a> {
    let x = tape.primal(input);
    let emit = &mut tape.emit;
    let narrow = dy.r#type();
    let wide = emit.widened(narrow);
    let (x, dy) = match wide {
        Some(wide) => (
            emit.pointwise(Op::FusionCast, &[x], wide),
            emit.pointwise(Op::FusionCast, &[dy], wide),
        ),
        None => (x, dy),
    };
    let half = emit.constant(0.5, dy);
    let one = emit.constant(1.0, dy);
    let scale = emit.constant(GELU_SCALE, dy);
    let cubic = emit.constant(GELU_CUBIC, dy);
    let cubic_slope = emit.constant(3.0 * GELU_CUBIC, dy);

    let square = emit.pointwise(Op::FusionMul, &[x, x], dy.r#type());
    let cube = emit.binary(Op::FusionMul, square, x);
    let inner = emit.binary(Op::FusionMul, cubic, cube);
    let inner = emit.binary(Op::FusionAdd, inner, x);
    let u = emit.binary(Op::FusionMul, scale, inner);
    let t = emit.unary(Op::FusionTanh, u);

    let left = emit.binary(Op::FusionAdd, one, t);
    let left = emit.binary(Op::FusionMul, half, left);
    let sech2 = emit.binary(Op::FusionMul, t, t);
    let sech2 = emit.binary(Op::FusionSub, one, sech2);
    let du = emit.binary(Op::FusionMul, cubic_slope, square);
    let du = emit.binary(Op::FusionAdd, one, du);
    let du = emit.binary(Op::FusionMul, scale, du);
    let right = emit.binary(Op::FusionMul, half, x);
    let right = emit.binary(Op::FusionMul, right, sech2);
    let right = emit.binary(Op::FusionMul, right, du);
    let slope = emit.binary(Op::FusionAdd, left, right);
    let gradient = emit.binary(Op::FusionMul, dy, slope);
    match wide {
        Some(_) => emit.pointwise(Op::FusionCast, &[gradient], narrow),
        None => gradient,
    }
}
