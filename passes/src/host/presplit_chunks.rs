//! `host-presplit-chunks`: views an allgather whose stream loop takes its
//! output in chunks, one per member of its team (or a reduce-scatter whose
//! loop writes its input so), in the pre-split layout the pipelines work on.
//!
//! A `stream<k>` loop over an axis that its operand splits over D devices,
//! with k = D, takes chunk i of the gathered buffer: exactly the rows of
//! team member i (natural-shape AG+GEMM: `A [M, K]` with `didx` rows,
//! `C [M, N]` with `stream<D>` rows). host-p2p-pipeline and
//! host-broadcast-pipeline recognise the pre-split form of that program,
//! where the gathered axis has one index per member and the loop takes
//! `host.select` slices at its index. This pass writes the one as the other
//! without moving data: the allgather's input and output become
//! `memref.expand_shape` views that split the gathered axis (E/D -> `[1,
//! E/D]`, E -> `[D, E/D]`), and each chunk `memref.subview` at
//! `index * E/D` the loop takes of the output becomes `host.select` of the
//! output's view at the index. The loop's other chunks of the same count
//! (its output's rows) become selects of split views too, made in front of
//! the loop, so that the loop's index only picks slices, as in the pre-split
//! program.
//!
//! ```mlir
//! %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<16x32xf32> into memref<64x32xf32>
//! comm.wait %r
//! host.stream_for %c0 to %c4 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %first = arith.muli %i, %c16 : index
//!   %gi = memref.subview %g[%first, 0] [16, 32] [1, 1] : memref<64x32xf32> to memref<16x32xf32, strided<[32, 1], offset: ?>>
//!   host.matmul ins(%gi, %b : ...) outs(...)
//! }
//! ```
//! becomes
//! ```mlir
//! %ax = memref.expand_shape %a [[0, 1], [2]] output_shape [1, 16, 32] : memref<16x32xf32> into memref<1x16x32xf32>
//! %gx = memref.expand_shape %g [[0, 1], [2]] output_shape [4, 16, 32] : memref<64x32xf32> into memref<4x16x32xf32>
//! %r = comm.allgather %ax into %gx team [0, 1, 2, 3] : memref<1x16x32xf32> into memref<4x16x32xf32>
//! comm.wait %r
//! host.stream_for %c0 to %c4 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %gi = host.select %gx[0][%i] : memref<4x16x32xf32> to memref<16x32xf32, strided<[32, 1], offset: ?>>
//!   host.matmul ins(%gi, %b : ...) outs(...)
//! }
//! ```
//!
//! The same holds for a reduce-scatter of D members after the loop, along
//! the axis the loop writes its input in chunks (natural-shape GEMM+RS: the
//! partial sums `P [M, N]` chunk by chunk of rows, as host-auto-stream
//! loops them): its input becomes the split view `E -> [D, E/D]`, in front
//! of the loop, and its output `E/D -> [1, E/D]`, in front of the loop
//! where it is defined there; host-p2p-pipeline's chain and ring and
//! host-reduce-pipeline's reduces work on that form.
//!
//! Left alone: chunks of another count than the team's size (a chunk then
//! holds part of one member's rows, or rows of several), and buffers that
//! are not contiguous from offset 0 (their split view is not an
//! `expand_shape` of the identity layout). The pass cannot fail. It runs in
//! `hir-lower` after host-stream-parallelize, before the pipelines.

use crate::{
    HirPass,
    builders::{self, Builder},
    ir,
    ops::Op,
    patterns, rewrite,
};
use hir_dialects::host;
use melior::{
    Context, RewriterBase,
    ir::{
        BlockLike, OperationRef, RegionLike, Value, ValueLike,
        attribute::DenseI64ArrayAttribute,
        operation::{OperationLike, OperationResult},
    },
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-presplit-chunks";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(PresplitChunks)
}

struct PresplitChunks;

impl HirPass for PresplitChunks {
    fn run(&mut self, function: OperationRef) -> bool {
        // Rooted at the loop, visited after its body: the chunks it takes are
        // nested in it, so the pattern may erase them.
        patterns::walk(function, |context, set| {
            patterns::add(
                set,
                context,
                host::StreamForOperation::name(),
                &[Op::MemrefExpandShape.name(), Op::HostSelect.name()],
                |stream_for, rewriter| presplit_loop(rewriter, stream_for),
            );
        });
        true
    }
}

/// Rewrites the chunks `stream_for` takes at its index, when one of them is
/// of a gathered buffer; whether it changed anything.
pub(super) fn presplit_loop<'c>(
    rewriter: &RewriterBase<'c, '_>,
    stream_for: OperationRef<'c, '_>,
) -> bool {
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite.
    let context = unsafe { context.to_ref() };
    let Some(iterations) = ir::operand(&stream_for, 1).and_then(ir::constant) else {
        return false;
    };
    if iterations < 2 || !ir::runs_from_zero(&stream_for, iterations) {
        return false;
    }
    let Some(body) = ir::region(&stream_for, 0).and_then(|region| region.first_block()) else {
        return false;
    };
    let index: Value = body.argument(0).expect("the iteration's index").into();
    // The chunks of the loop's count, of buffers that have a split view, and
    // the collective that communicates each, if any.
    let chunks: Vec<(OperationRef, usize, Value, Option<Communication>)> = ir::block_ops(body)
        .filter_map(|op| {
            let (axis, size) = builders::chunk_at(&op, index)?;
            let source = ir::operand(&op, 0)?;
            let extent = builders::static_shape(source.r#type())?[axis];
            (extent == iterations * size && builders::is_contiguous(source.r#type())).then(|| {
                let communicated = communication(source, axis, iterations, stream_for);
                (op, axis, source, communicated)
            })
        })
        .collect();
    if chunks
        .iter()
        .all(|(.., communicated)| communicated.is_none())
    {
        return false;
    }
    // Every chunk the loop takes, communicated or not, becomes a select, so
    // that the index only picks slices (what the ring rewrites).
    let mut views: Vec<(Value, usize, Value)> = Vec::new();
    for (chunk, axis, source, communicated) in chunks {
        let known = views
            .iter()
            .find(|&&(buffer, at, _)| buffer == source && at == axis)
            .map(|&(_, _, view)| view);
        // A buffer met before has its view (its allgather, if any, is split).
        let view = match known {
            Some(view) => view,
            None => {
                let view = match communicated {
                    Some(Communication::Presplit(view)) => view,
                    Some(Communication::Gathered(allgather)) => {
                        presplit_allgather(context, rewriter, allgather, axis, iterations)
                    }
                    Some(Communication::Scattered(reduce_scatter)) => presplit_reduce_scatter(
                        context,
                        rewriter,
                        reduce_scatter,
                        stream_for,
                        axis,
                        iterations,
                    ),
                    None => Builder::before(context, stream_for).presplit(
                        source,
                        axis,
                        iterations,
                        stream_for.location(),
                    ),
                };
                views.push((source, axis, view));
                view
            }
        };
        let location = chunk.location();
        let slice = Builder::before(context, chunk).select(view, axis, index, location);
        let offset = ir::operand(&chunk, 1).expect("a chunk's offset");
        rewrite::replace_uses(
            rewriter,
            chunk.result(0).expect("a view").into(),
            slice,
            |_| false,
        );
        rewriter.erase_op(chunk);
        // The offset, nested in the loop, goes with its last chunk (and its
        // size, when nothing else uses it).
        if let Ok(result) = OperationResult::try_from(offset)
            && ir::users(offset).is_empty()
        {
            rewrite::erase_with_dead_operands(rewriter, result.owner());
        }
    }
    true
}

/// How a collective of as many members as the loop's chunks communicates a
/// buffer the loop takes chunks of.
enum Communication<'c, 'a> {
    /// An allgather writes the buffer itself (this op).
    Gathered(OperationRef<'c, 'a>),
    /// An allgather writes this split view of it, made for an earlier loop.
    Presplit(Value<'c, 'a>),
    /// A reduce-scatter after the loop reads the buffer itself (this op):
    /// the loop writes its partial blocks (natural-shape GEMM+RS).
    Scattered(OperationRef<'c, 'a>),
}

/// The collective of `members` members along `axis` that communicates
/// `buffer`, which `stream_for` takes chunks of, if any: an allgather that
/// writes it, or a reduce-scatter after the loop that reads it; their other
/// buffer contiguous.
fn communication<'c, 'a>(
    buffer: Value<'c, 'a>,
    axis: usize,
    members: i64,
    stream_for: OperationRef<'c, 'a>,
) -> Option<Communication<'c, 'a>> {
    let contiguous = |op: &OperationRef, position| {
        ir::operand(op, position).is_some_and(|other| builders::is_contiguous(other.r#type()))
    };
    for user in ir::users(buffer) {
        if Op::MemrefExpandShape.is(&user) {
            let view: Value = user.result(0).expect("a view").into();
            if ir::users(view)
                .iter()
                .any(|op| writes_gathered(op, view, axis, members))
            {
                return Some(Communication::Presplit(view));
            }
        }
        if writes_gathered(&user, buffer, axis, members) && contiguous(&user, 0) {
            return Some(Communication::Gathered(user));
        }
        if Op::CommReduceScatter.is(&user)
            && ir::operand(&user, 0) == Some(buffer)
            && along(&user, axis, members)
            && user.block() == stream_for.block()
            && stream_for.is_before_in_block(user)
            && contiguous(&user, 1)
        {
            return Some(Communication::Scattered(user));
        }
    }
    None
}

/// Makes `allgather` write split views of its input and output: the
/// output's.
fn presplit_allgather<'c: 'a, 'a>(
    context: &'c Context,
    rewriter: &RewriterBase<'c, '_>,
    allgather: OperationRef<'c, 'a>,
    axis: usize,
    members: i64,
) -> Value<'c, 'a> {
    let at = Builder::before(context, allgather);
    let location = allgather.location();
    let mut operands: Vec<Value> = allgather.operands().collect();
    operands[0] = at.presplit(operands[0], axis, 1, location);
    operands[1] = at.presplit(operands[1], axis, members, location);
    rewrite::set_operands(rewriter, allgather, &operands);
    operands[1]
}

/// Makes `reduce_scatter`, after `stream_for`, read a split view of its
/// input, made in front of the loop (which takes its blocks), and write a
/// split view of its output, made in front of the loop where the output is
/// defined there: the input's view.
fn presplit_reduce_scatter<'c: 'a, 'a>(
    context: &'c Context,
    rewriter: &RewriterBase<'c, '_>,
    reduce_scatter: OperationRef<'c, 'a>,
    stream_for: OperationRef<'c, 'a>,
    axis: usize,
    members: i64,
) -> Value<'c, 'a> {
    let location = reduce_scatter.location();
    let mut operands: Vec<Value> = reduce_scatter.operands().collect();
    let before_loop = Builder::before(context, stream_for);
    operands[0] = before_loop.presplit(operands[0], axis, members, location);
    let output_at = if defined_before(operands[1], stream_for) {
        before_loop
    } else {
        Builder::before(context, reduce_scatter)
    };
    operands[1] = output_at.presplit(operands[1], axis, 1, location);
    rewrite::set_operands(rewriter, reduce_scatter, &operands);
    operands[0]
}

/// Whether `value` is defined before `op`, in its block or around it.
fn defined_before(value: Value, op: OperationRef) -> bool {
    match OperationResult::try_from(value) {
        Ok(result) => result.owner().block() != op.block() || result.owner().is_before_in_block(op),
        Err(_) => true,
    }
}

/// Whether `op` is an allgather of `members` members along `axis` into
/// `output`.
fn writes_gathered(op: &OperationRef, output: Value, axis: usize, members: i64) -> bool {
    Op::CommAllgather.is(op) && ir::operand(op, 1) == Some(output) && along(op, axis, members)
}

/// Whether collective `op` communicates along `axis` in teams of `members`.
fn along(op: &OperationRef, axis: usize, members: i64) -> bool {
    ir::integer_attribute(op, "axis").unwrap_or(0) == axis as i64 && team_size(op) == Some(members)
}

/// How many ranks each team of a collective has.
fn team_size(op: &OperationRef) -> Option<i64> {
    ir::integer_attribute(op, "team_size").or_else(|| {
        DenseI64ArrayAttribute::try_from(op.attribute("team").ok()?)
            .ok()
            .map(|team| team.len() as i64)
    })
}
