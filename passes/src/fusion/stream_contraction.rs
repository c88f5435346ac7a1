//! Streaming through a contraction: a `matmul` or `linear` whose contracted
//! axis K is a `stream` axis of an operand runs in that stream loop.
//! Iteration i multiplies chunk i of K of every operand, and the result is
//! the sum of those partial products over the loop's iterations (nvFuser's
//! stream-parallel reduction: FC1 with its output features streamed, gelu,
//! then FC2 contracting them, with no intermediate held whole).
//!
//! The result's distribution has no stream axis and places the result as
//! for the same op without the stream: what a later op reads is the whole
//! sum, complete when the loop ends (every iteration is joined into the
//! caller's stream before that op runs). The schedule is the operand's: a
//! stream axis schedules the op that produces a tensor, and, on a
//! contracted axis, also the contraction that reads it.
//!
//! The form that lowers (`convert-fusion-to-host`: iteration 0 writes the
//! product, each later one adds its own to it in stream order) is stated
//! once here, for `fusion-verify-sharding`, which refuses the rest, and for
//! the conversion:
//! - every operand's K is that stream axis (the same iteration count) or
//!   `serial` (read in the same chunks); not `didx`, `didy` or `didz`,
//!   whose reduction across devices is a collective, not a loop;
//! - the result has no `stream` axis: the loop runs over K, and one op has
//!   one loop.
//!
//! ```mlir
//! %a = fusion.gelu %h : tensor<8x64xf32, #fusion.dist<@tp, [serial, stream<4>]>> -> ...
//! %y = fusion.linear %a, %w2 : tensor<8x64xf32, #fusion.dist<@tp, [serial, stream<4>]>>,
//!                              tensor<16x64xf32, #fusion.dist<@tp, [serial, serial]>>
//!                           -> tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>
//! ```

use super::axis_map;
use crate::ir;
use hir_dialects::{
    OpKind,
    dist::{Dist, ParallelType},
};
use melior::ir::{OperationRef, ValueLike};

/// How a contraction streams over its contracted axis K.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamedContraction {
    /// The loop's iteration count: the stream's chunk count (K's extent for
    /// `stream`, one index a chunk).
    pub iterations: i64,
    /// For each operand, its K axis; `None` for one without (a bias).
    pub contracted: Vec<Option<usize>>,
}

/// Whether `op` (a fusion op) is a contraction over a stream axis: `None`
/// when it is not a contraction or no operand's K is `stream`; an error
/// saying why when it streams K in a form that does not lower.
pub fn of(op: &OperationRef) -> Result<Option<StreamedContraction>, String> {
    if OpKind::of(op) != OpKind::Contraction {
        return Ok(None);
    }
    let Some(maps) = axis_map::operand_axes(op) else {
        return Ok(None);
    };
    let name = ir::name(op);
    let contracted: Vec<Option<usize>> = maps
        .iter()
        .map(|axes| axis_map::reduced(axes).next())
        .collect();
    let operand = |index: usize| {
        let value = ir::operand(op, index)?;
        Some((
            Dist::of_type(value.r#type())?,
            axis_map::shape(value.r#type())?,
        ))
    };
    // The first operand whose K is stream, and its iteration count.
    let streamed = contracted.iter().enumerate().find_map(|(index, &axis)| {
        let (dist, shape) = operand(index)?;
        let (stream, iterations) = dist.stream(&shape)?;
        (Some(stream) == axis).then_some((index, stream, iterations))
    });
    let Some((first, first_axis, iterations)) = streamed else {
        return Ok(None);
    };
    if iterations < 1 {
        // No iteration would write the result (the sum of no products).
        return Err(format!(
            "'{name}' contracts axis {first_axis} of operand #{first}, a stream axis of \
             extent 0; a contraction streamed over its contracted axis needs an iteration"
        ));
    }
    for (index, &axis) in contracted.iter().enumerate() {
        let (Some(axis), Some((dist, shape))) = (axis, operand(index)) else {
            continue;
        };
        let parallel_type = dist.axes[axis];
        if parallel_type.is_device() {
            return Err(format!(
                "'{name}' contracts axis {first_axis} of operand #{first}, a stream axis, \
                 with axis {axis} of operand #{index}, which is {}; a contraction streamed \
                 over its contracted axis sums its iterations on each device, so every \
                 operand's contracted axis must be the stream axis or serial",
                parallel_type.keyword()
            ));
        }
        if parallel_type == ParallelType::Stream
            && let Some((_, other)) = dist.stream(&shape)
            && other != iterations
        {
            return Err(format!(
                "'{name}' contracts axis {first_axis} of operand #{first}, streamed in \
                 {iterations} iterations, with axis {axis} of operand #{index}, streamed in \
                 {other}; the operands of a contraction streamed over its contracted axis \
                 stream it alike"
            ));
        }
    }
    let result = ir::result(op, 0).and_then(|result| Dist::of_type(result.r#type()));
    if let Some(axis) = result.and_then(|result| result.find(ParallelType::Stream)) {
        return Err(format!(
            "'{name}' contracts axis {first_axis} of operand #{first}, a stream axis, and \
             streams result axis {axis}; a contraction streams its contracted axis (its \
             result summed over the loop) or an output axis, not both"
        ));
    }
    Ok(Some(StreamedContraction {
        iterations,
        contracted,
    }))
}
