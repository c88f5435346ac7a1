//! `host-presplit-chunks`: views an allgather whose stream loop takes its
//! output in chunks, one per member of its team, in the pre-split layout the
//! pipelines work on.
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
fn presplit_loop<'c>(rewriter: &RewriterBase<'c, '_>, stream_for: OperationRef<'c, '_>) -> bool {
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
    // the allgather that writes each, if any.
    let chunks: Vec<(OperationRef, usize, Value, Option<Gathering>)> = ir::block_ops(body)
        .filter_map(|op| {
            let (axis, size) = builders::chunk_at(&op, index)?;
            let source = ir::operand(&op, 0)?;
            let extent = builders::static_shape(source.r#type())?[axis];
            (extent == iterations * size && builders::is_contiguous(source.r#type()))
                .then(|| (op, axis, source, gathering(source, axis, iterations)))
        })
        .collect();
    if chunks.iter().all(|(.., gathered)| gathered.is_none()) {
        return false;
    }
    // Every chunk the loop takes, gathered or not, becomes a select, so that
    // the index only picks slices (what the ring rewrites).
    let mut views: Vec<(Value, usize, Value)> = Vec::new();
    for (chunk, axis, source, gathered) in chunks {
        let known = views
            .iter()
            .find(|&&(buffer, at, _)| buffer == source && at == axis)
            .map(|&(_, _, view)| view);
        // A buffer met before has its view (its allgather, if any, is split).
        let view = match known {
            Some(view) => view,
            None => {
                let view = match gathered {
                    Some(Gathering::Presplit(view)) => view,
                    Some(Gathering::Whole(allgather)) => {
                        presplit_allgather(context, rewriter, allgather, axis, iterations)
                    }
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
        // The offset, nested in the loop, goes with its last chunk.
        if let Ok(result) = OperationResult::try_from(offset)
            && ir::users(offset).is_empty()
        {
            rewriter.erase_op(result.owner());
        }
    }
    true
}

/// How an allgather of as many members as the loop's chunks writes a buffer.
enum Gathering<'c, 'a> {
    /// Into the buffer itself (this op).
    Whole(OperationRef<'c, 'a>),
    /// Into this split view of it, made for an earlier loop.
    Presplit(Value<'c, 'a>),
}

/// The allgather of `members` members along `axis` that writes `buffer`, if
/// any, and its contiguous input.
fn gathering<'c, 'a>(
    buffer: Value<'c, 'a>,
    axis: usize,
    members: i64,
) -> Option<Gathering<'c, 'a>> {
    for user in ir::users(buffer) {
        if Op::MemrefExpandShape.is(&user) {
            let view: Value = user.result(0).expect("a view").into();
            if ir::users(view)
                .iter()
                .any(|op| writes_gathered(op, view, axis, members))
            {
                return Some(Gathering::Presplit(view));
            }
        }
        if writes_gathered(&user, buffer, axis, members)
            && ir::operand(&user, 0).is_some_and(|input| builders::is_contiguous(input.r#type()))
        {
            return Some(Gathering::Whole(user));
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

/// Whether `op` is an allgather of `members` members along `axis` into
/// `output`.
fn writes_gathered(op: &OperationRef, output: Value, axis: usize, members: i64) -> bool {
    Op::CommAllgather.is(op)
        && ir::operand(op, 1) == Some(output)
        && ir::integer_attribute(op, "axis").unwrap_or(0) == axis as i64
        && team_size(op) == Some(members)
}

/// How many ranks each team of a collective has.
fn team_size(op: &OperationRef) -> Option<i64> {
    ir::integer_attribute(op, "team_size").or_else(|| {
        DenseI64ArrayAttribute::try_from(op.attribute("team").ok()?)
            .ok()
            .map(|team| team.len() as i64)
    })
}
