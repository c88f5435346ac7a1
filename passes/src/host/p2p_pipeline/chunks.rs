//! Ring steps in chunks (`chunks=c`): each step's transfer and compute are
//! split into `c` parts along the rows of its slices, so that a step's
//! compute starts on the first part of its slice while the rest still
//! travels, and the last transfer of the ring leaves only `1/c` of a step's
//! compute after it.
//!
//! The loop runs `D * c` iterations; iteration `j` is part `j mod c` of step
//! `j / c`. Every use of the index becomes the step (`arith.divui`), so the
//! ring, the streams and the joins see the `D` steps as before: a step's
//! parts run on its stream, one after the other. Every slice
//! the loop takes at the step is narrowed to its part (`memref.subview` of
//! `1/c` of the axis that follows the sliced one, which stays in place), and
//! so are the ring's own buffers. This is sound only where the step computes
//! each row of a slice from the same row of the others: elementwise ops over
//! slices alone, and `host.matmul`/`host.linear` whose first operand and
//! output are slices along the same rows and whose weight (and a linear's
//! bias, added to every row) is not one: every part shares it.
//! Anything else is a located error.

use super::plan::{Reported, StreamLoop, constant, integer_attribute};
use crate::{
    builders::{Builder, static_shape},
    diagnostics::emit_error,
    ir,
    ops::Op,
    rewrite,
};
use hir_dialects::OpKind;
use melior::{
    Context,
    dialect::arith,
    ir::{
        BlockLike, Location, OperationRef, Type, Value, ValueLike,
        attribute::IntegerAttribute,
        operation::{OperationLike, OperationResult},
        r#type::{MemRefType, ShapedTypeLike},
    },
};

/// The part of a split loop's iteration: `index` (`%j mod c`) of `count`.
#[derive(Clone, Copy)]
pub(super) struct Part<'c, 'a> {
    pub index: Value<'c, 'a>,
    pub count: i64,
}

/// The loop's slices (`host.select` at the index), in program order, with
/// the axis a part narrows in each: the one after the sliced axis, where the
/// view keeps it.
fn slices<'c, 'a>(stream_loop: &StreamLoop<'c, 'a>) -> Vec<(Value<'c, 'a>, i64)> {
    ir::nested(stream_loop.op)
        .into_iter()
        .filter(|op| Op::HostSelect.is(op) && ir::operand(op, 1) == Some(stream_loop.index))
        .filter_map(|select| {
            Some((
                ir::result(&select, 0)?.into(),
                integer_attribute(&select, "axis")?,
            ))
        })
        .collect()
}

/// Whether every slice of the loop splits into `chunks` parts and every op
/// on a slice computes each row from the same rows.
pub(super) fn splits(stream_loop: &StreamLoop, chunks: i64) -> bool {
    problems(stream_loop, chunks).is_empty()
}

/// Checks that every slice of the loop splits into `chunks` parts and that
/// every op on a slice computes each row from the same rows; an error at
/// each op that does not.
pub(super) fn check(stream_loop: &StreamLoop, chunks: i64) -> Result<(), Reported> {
    let problems = problems(stream_loop, chunks);
    // Slices made by one op share its location: say each thing once there.
    let mut said = Vec::new();
    for (location, message) in &problems {
        let said_here = format!("{location}: {message}");
        if !said.contains(&said_here) {
            emit_error(*location, message);
            said.push(said_here);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Reported)
    }
}

/// Where and why the loop's steps do not split into `chunks` parts.
fn problems<'c>(stream_loop: &StreamLoop<'c, '_>, chunks: i64) -> Vec<(Location<'c>, String)> {
    let slices = slices(stream_loop);
    let axis_of = |value: Value| {
        slices
            .iter()
            .find(|(slice, _)| *slice == value)
            .map(|&(_, axis)| axis)
    };
    let rank = |value: Value| {
        MemRefType::try_from(value.r#type()).map_or(0, |r#type| r#type.rank() as i64)
    };
    let mut problems = Vec::new();
    for &(slice, axis) in &slices {
        let extent =
            static_shape(slice.r#type()).and_then(|shape| shape.get(axis as usize).copied());
        let owner = OperationResult::try_from(slice)
            .expect("a select's result")
            .owner();
        if extent.is_none_or(|extent| extent % chunks != 0) {
            problems.push((
                owner.location(),
                format!(
                    "chunks={chunks} splits each ring step along axis {axis} of its slices, but \
                     this slice has {} there",
                    extent.map_or("a dynamic extent".to_owned(), |extent| format!(
                        "{extent} rows"
                    ))
                ),
            ));
        }
        for user in ir::users(slice) {
            let name = ir::name(&user);
            let operands: Vec<Value> = user.operands().collect();
            let kind = OpKind::of(&user);
            // An elementwise op computes each row of its output from the
            // same row of every operand.
            let by_rows = if kind == OpKind::Elementwise {
                operands
                    .iter()
                    .all(|&operand| axis_of(operand) == Some(axis) && rank(operand) == rank(slice))
            } else if kind == OpKind::Contraction {
                // ins(%x, %w) outs(%y), or ins(%x, %w, %bias) outs(%y) for a
                // linear: rows of %x make the same rows of %y; the weight and
                // the bias, added to every row, are shared by every part.
                let (x, shared, y) = match operands[..] {
                    [x, w, y] => (x, vec![w], y),
                    [x, w, bias, y] => (x, vec![w, bias], y),
                    _ => (slice, vec![slice], slice),
                };
                axis_of(x) == Some(axis)
                    && axis_of(y) == Some(axis)
                    && shared.iter().all(|&operand| axis_of(operand).is_none())
                    && rank(x) == rank(y)
                    && axis <= rank(x) - 2
            } else {
                false
            };
            if !by_rows {
                problems.push((
                    user.location(),
                    format!(
                        "'{name}' cannot be split into the chunks={chunks} parts of a ring step: \
                         only elementwise ops over slices, and host.matmul or host.linear whose \
                         first operand and output are slices along the same rows, compute each \
                         row of a slice from the same rows"
                    ),
                ));
            }
        }
    }
    problems
}

/// Makes `stream_loop` run `chunks` parts per step: the loop runs `D * chunks`
/// iterations, `%step = %j / chunks` takes every use of the index, and `%j
/// mod chunks` is the part. Returns the loop as the ring sees it (indexed by
/// the step, `D` steps) and the part.
pub(super) fn split_loop<'c, 'a>(
    context: &'c Context,
    stream_loop: &StreamLoop<'c, 'a>,
    chunks: i64,
) -> (StreamLoop<'c, 'a>, Part<'c, 'a>) {
    let index = Type::index(context);
    let steps = constant(stream_loop.upper).expect("a ring loop runs a constant D steps");
    let before_loop = Builder::before(context, stream_loop.op);
    let index_constant = |cursor: Builder<'c, 'a>, value: i64| {
        cursor.value(arith::constant(
            context,
            IntegerAttribute::new(index, value).into(),
            cursor.location,
        ))
    };
    let iterations = index_constant(before_loop, steps * chunks);
    let rewriter = rewrite::rewriter(stream_loop.op);
    let rewriter = rewriter.as_rewriter_base();
    rewrite::set_operand(&rewriter, stream_loop.op, 1, iterations);
    let first = stream_loop
        .body
        .first_operation()
        .expect("scf.for has a body");
    let top = Builder::before(context, first);
    let count = index_constant(top, chunks);
    let step = top.value(arith::divui(stream_loop.index, count, top.location));
    let part = top.value(arith::remui(stream_loop.index, count, top.location));
    // The index stays in the two ops that make the step and the part of it.
    let makes = |user: OperationRef, value: Value| {
        ir::result(&user, 0).is_some_and(|result| Value::from(result) == value)
    };
    rewrite::replace_uses(&rewriter, stream_loop.index, step, |user| {
        makes(user, step) || makes(user, part)
    });
    (
        StreamLoop {
            index: step,
            ..*stream_loop
        },
        Part {
            index: part,
            count: chunks,
        },
    )
}

/// Narrows every slice the loop takes at its step to the iteration's part;
/// returns each slice with its part.
pub(super) fn narrow_slices<'c, 'a>(
    context: &'c Context,
    stream_loop: &StreamLoop<'c, 'a>,
    part: Part<'c, 'a>,
) -> Vec<(Value<'c, 'a>, Value<'c, 'a>)> {
    slices(stream_loop)
        .into_iter()
        .map(|(slice, axis)| {
            let select = OperationResult::try_from(slice)
                .expect("a select's result")
                .owner();
            let after = select.next_in_block().expect("a terminator follows");
            let cursor = Builder::before(context, after);
            let narrowed = cursor.part(
                slice,
                axis as usize,
                part.index,
                part.count,
                cursor.location,
            );
            rewrite::replace_uses(
                &rewrite::rewriter(select).as_rewriter_base(),
                slice,
                narrowed,
                |user| ir::result(&user, 0).is_some_and(|result| Value::from(result) == narrowed),
            );
            (slice, narrowed)
        })
        .collect()
}
