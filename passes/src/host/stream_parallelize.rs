//! `host-stream-parallelize{num-streams=N}`: turns every host or comm op
//! marked `host.stream_axis = k` (by `convert-fusion-to-host`) into a
//! `host.stream_for` over axis k of the buffer it writes, each iteration on
//! its own stream of the pool, so that iterations overlap.
//!
//! The body of iteration `i` selects slice `i` of every buffer operand along
//! the axis that maps to the stream axis (identity for pointwise ops, copies
//! and communications; the kept axes of a reduction; the input axes of a
//! broadcast, whose new axes are not sliced; the input axis a transpose
//! moves to the stream axis; the batch axes of matmul and
//! linear, whose shared operands are not sliced; a matmul operand's batch axis
//! of extent 1 that the op broadcasts along the stream axis is taken at 0 by
//! one view before the loop, never copied), and renumbers the axis
//! attributes the slicing shifts. Consecutive marked ops over the same extent
//! share one loop; views, allocations and constants between them are not
//! work and stay in front of the loop; any other op closes the loop.
//!
//! The fork (every pool stream waits for the caller's stream, hoisted before
//! any iteration's work) and the join (each iteration ends by making the
//! caller's stream wait for its stream) are the semantics of the op, which
//! host-lower-stream-for expands into today's two loops:
//!
//! ```mlir
//! %main = host.get_current_stream : !host.stream
//! host.stream_for %c0 to %c4 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %ai = host.select %a[0][%i] : ...
//!   %gi = host.select %g[0][%i] : ...
//!   %r = comm.allgather %ai into %gi team [0, 1, 2, 3] : ...
//!   comm.wait %r
//!   ...
//! }
//! ```
//!
//! A collective that gathers or scatters along the stream axis (`didx` ->
//! `stream` on the same axis) has no per-slice form: iteration i needs one
//! rank's shard. It runs whole, outside the loops: an allgather before the
//! loop that reads its slices, a reduce-scatter after the loop that writes
//! them; `host-p2p-pipeline` turns it into a ring inside the loop.
//!
//! `num-streams=N` rotates iterations over the first N streams of the pool
//! (`streams %cN`: `stream_from_pool (i mod N)`); 0, the default, leaves the rotation to the
//! pool's size. A marked op that cannot be sliced (the output columns of a
//! matmul, an operand whose extent differs from the loop's) is a located
//! error.

use crate::{
    HirPass,
    builders::{self, Builder},
    diagnostics::{Emitted, error},
    ir,
    ops::Op,
    rewrite,
};
use hir_dialects::{OpKind, host};
use melior::{
    Context, RewriterBase,
    ir::{
        Block, BlockLike, Location, OperationRef, Region, RegionLike, Type, Value, ValueLike,
        attribute::DenseI64ArrayAttribute, operation::OperationLike, r#type::MemRefType,
    },
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-stream-parallelize";

/// Creates the pass; `num_streams` is 0 for the pool's size.
pub fn create(num_streams: usize) -> Box<dyn HirPass> {
    Box::new(StreamParallelize { num_streams })
}

struct StreamParallelize {
    num_streams: usize,
}

impl HirPass for StreamParallelize {
    fn run(&mut self, function: OperationRef) -> bool {
        let context = function.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        let rewriter = rewrite::rewriter(function);
        parallelize(
            context,
            &rewriter.as_rewriter_base(),
            function,
            self.num_streams,
        )
        .is_ok()
    }
}

/// A marked op and the `comm.wait`s on its request, which go with it.
struct Unit<'c, 'a> {
    ops: Vec<OperationRef<'c, 'a>>,
    axis: usize,
    extent: i64,
}

fn parallelize<'c, 'a>(
    context: &'c Context,
    rewriter: &RewriterBase,
    function: OperationRef<'c, 'a>,
    num_streams: usize,
) -> Result<(), Emitted> {
    for op in ir::nested(function) {
        if builders::stream_axis(&op).is_some() && op.parent_operation() != Some(function) {
            return error(
                op.location(),
                "a stream-parallel op must be at the top level of its function",
            );
        }
    }
    let ops = ir::body(function);
    let mut groups: Vec<Vec<Unit>> = Vec::new();
    let mut open = false;
    let mut joined = Vec::new();
    let mut allgathers: Vec<Unit> = Vec::new();
    for &op in &ops {
        if joined.contains(&op) {
            continue;
        }
        if let Some(axis) = builders::stream_axis(&op)
            && exchanges_along(&op, axis)
        {
            // No slice of the stream axis is one collective: it runs whole,
            // before the loop that reads it or after the loop that writes it
            // (host-p2p-pipeline makes a ring of it).
            rewrite::remove_attribute(rewriter, op, builders::STREAM_AXIS);
            if Op::CommAllgather.is(&op) {
                let output = written_buffer(&op).expect("an allgather writes its output");
                let mut ops = vec![op];
                ops.extend(waits_of(op));
                allgathers.push(Unit {
                    ops,
                    axis,
                    extent: builders::buffer_shape(output.r#type())[axis],
                });
            }
            open = false;
        } else if let Some(axis) = builders::stream_axis(&op) {
            let Some(written) = written_buffer(&op) else {
                return error(
                    op.location(),
                    format!("'{}' cannot be stream-parallelized", ir::name(&op)),
                );
            };
            let extent = builders::buffer_shape(written.r#type())[axis];
            let mut unit = Unit {
                ops: vec![op],
                axis,
                extent,
            };
            // The waits on its request complete it inside the same iteration.
            let waits = waits_of(op);
            joined.extend(&waits);
            unit.ops.extend(waits);
            match groups.last_mut() {
                Some(group) if open && group[0].extent == extent => group.push(unit),
                _ => groups.push(vec![unit]),
            }
            open = true;
        } else if !is_setup(&op) {
            open = false;
        }
    }
    // The allgathers along the stream axis whose output no stream loop reads.
    let read_in_loops = |output: Value| {
        groups.iter().flatten().any(|unit| {
            unit.ops
                .iter()
                .any(|op| op.operands().any(|operand| operand == output))
        })
    };
    allgathers.retain(|unit| !read_in_loops(written_buffer(&unit.ops[0]).expect("an output")));
    if groups.is_empty() && allgathers.is_empty() {
        return Ok(());
    }

    let entry = function
        .region(0)
        .expect("a function has a body")
        .first_block()
        .expect("a function with ops has a block");
    let first = entry.first_operation().expect("the body has ops");
    let location = function.location();
    let main = Builder::before(context, first).current_stream(location);
    for allgather in &allgathers {
        emit_view_loop(context, allgather, main, num_streams);
    }
    for group in groups {
        emit_loop(context, rewriter, &group, main, num_streams)?;
    }
    Ok(())
}

/// The `comm.wait`s on `op`'s request in its block, in program order.
fn waits_of<'c, 'a>(op: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let Ok(request) = op.result(0) else {
        return Vec::new();
    };
    let mut waits: Vec<_> = ir::users(request.into())
        .into_iter()
        .filter(|user| Op::CommWait.is(user) && user.block() == op.block())
        .collect();
    // Program order, as the uses are listed newest first.
    waits.sort_by(|a, b| match (a == b, a.is_before_in_block(*b)) {
        (true, _) => std::cmp::Ordering::Equal,
        (false, true) => std::cmp::Ordering::Less,
        (false, false) => std::cmp::Ordering::Greater,
    });
    waits
}

/// Ops that do no work (views, allocations, constants, ranks): they may sit
/// between the ops of one loop and stay in front of it.
fn is_setup(op: &OperationRef) -> bool {
    matches!(
        Op::of(op),
        Some(
            Op::HostAlloc
                | Op::HostSelect
                | Op::HostRank
                | Op::HostNumDevices
                | Op::ArithConstant
                | Op::ArithCmpi
                | Op::ArithSelect
        )
    )
}

/// The buffer an op writes: its destination-passing-style init.
fn written_buffer<'c, 'a>(op: &OperationRef<'c, 'a>) -> Option<Value<'c, 'a>> {
    op.operand(hir_dialects::destination(op)?).ok()
}

/// The `host.stream_for` of `group`, after its last op.
fn emit_loop<'c, 'a>(
    context: &'c Context,
    rewriter: &RewriterBase,
    group: &[Unit<'c, 'a>],
    main: Value<'c, 'a>,
    num_streams: usize,
) -> Result<(), Emitted> {
    let last = *group
        .last()
        .expect("groups are not empty")
        .ops
        .last()
        .expect("units are not empty");
    let location = group[0].ops[0].location();
    let (terminator, index) =
        new_stream_for(context, last, group[0].extent, main, num_streams, location);
    for unit in group {
        for &op in &unit.ops {
            rewriter.move_op_before(op, terminator);
            if builders::stream_axis(&op).is_some() {
                slice(context, rewriter, op, unit.axis, unit.extent, index)?;
            }
        }
    }
    Ok(())
}

/// An empty `host.stream_for` of `extent` iterations from `main`, right
/// after `last`: the terminator of its body, and its index.
fn new_stream_for<'c, 'a>(
    context: &'c Context,
    last: OperationRef<'c, 'a>,
    extent: i64,
    main: Value<'c, 'a>,
    num_streams: usize,
    location: Location<'c>,
) -> (OperationRef<'c, 'a>, Value<'c, 'a>) {
    let after = last.next_in_block().expect("a terminator follows");
    let outside = Builder::before(context, after);
    let lower = outside.index(0, location);
    let upper = outside.index(extent, location);
    let step = outside.index(1, location);
    let modulus = (num_streams > 0).then(|| outside.index(num_streams as i64, location));

    let body = Block::new(&[
        (Type::index(context), location),
        (builders::stream_type(context), location),
    ]);
    body.append_operation(
        host::YieldOperation::builder(context, location)
            .build()
            .into(),
    );
    let region = Region::new();
    region.append_block(body);
    let stream_for = host::StreamForOperation::builder(context, location)
        .lower(lower)
        .upper(upper)
        .step(step)
        .caller(main)
        .body(region);
    let stream_for = match modulus {
        Some(modulus) => stream_for.streams(modulus),
        None => stream_for,
    };
    let stream_for = outside.insert(stream_for.build());
    let body = stream_for
        .region(0)
        .expect("host.stream_for has a body")
        .first_block()
        .expect("with a block");
    let terminator = body.terminator().expect("ends with host.yield");
    let index: Value = body.argument(0).expect("the iteration's index").into();
    (terminator, index)
}

/// The loop over the slices of `allgather`'s output along its stream axis,
/// right after the allgather and its waits, for an allgather no stream loop
/// reads slice by slice (a lone DIDx -> Stream set): each iteration only
/// takes its slice, which is what host-p2p-pipeline makes a ring of (the
/// slice is where step `i` receives). Without a ring, the loop does nothing
/// and host-lower-stream-for erases it.
fn emit_view_loop<'c, 'a>(
    context: &'c Context,
    allgather: &Unit<'c, 'a>,
    main: Value<'c, 'a>,
    num_streams: usize,
) {
    let op = allgather.ops[0];
    let last = *allgather.ops.last().expect("units are not empty");
    let output = written_buffer(&op).expect("an allgather writes its output");
    let location = op.location();
    let (terminator, index) =
        new_stream_for(context, last, allgather.extent, main, num_streams, location);
    Builder::before(context, terminator).select(output, allgather.axis, index, location);
}

/// How iteration `i` takes a buffer operand.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slicing {
    /// Whole: every iteration shares it (no axis maps to the stream axis).
    Shared,
    /// Slice `i` along this axis.
    Along(usize),
    /// Slice 0 along this axis of extent 1, which the op broadcasts along
    /// the stream axis (a matmul's batch axis): the same view for every
    /// iteration, taken before the loop.
    Broadcast(usize),
}

/// For each buffer operand of `op`, how each iteration of a loop over the
/// stream axis `axis` of its output takes it.
fn operand_axes(op: &OperationRef, axis: usize) -> Result<Vec<Slicing>, String> {
    let name = ir::name(op);
    let buffers = op
        .operands()
        .filter(|value| MemRefType::try_from(value.r#type()).is_ok())
        .count();
    // A collective's buffers are sliced alike, along the stream axis.
    if matches!(
        Op::of(op),
        Some(Op::CommAllreduce | Op::CommBroadcast | Op::CommReduce)
    ) || Op::exchanges(op)
    {
        return Ok(vec![Slicing::Along(axis); buffers]);
    }
    let maps = hir_dialects::axis_map(op)
        .ok_or_else(|| format!("'{name}' cannot be stream-parallelized"))?;
    let written = written_buffer(op).ok_or("the op writes no buffer")?;
    let output_rank = builders::buffer_shape(written.r#type()).len();
    // A contraction's slice along M, or a batch axis, must still be one: a
    // batched rhs has no M to slice, and N is the weight's.
    if name == host::MatmulOperation::name() {
        let shared_rhs = maps[1].len() == 2;
        if axis + 1 == output_rank || (axis + 2 == output_rank && !shared_rhs) {
            return Err(format!(
                "the stream axis {axis} of the matmul's [..., M, N] output is {}; \
                 only batch axes, and M with a [K, N] rhs, can be stream-parallel",
                if axis + 1 == output_rank {
                    "N"
                } else {
                    "M, with a batched rhs"
                }
            ));
        }
    }
    if name == host::LinearOperation::name() && axis + 1 >= output_rank {
        return Err(format!(
            "the stream axis {axis} is the output-feature axis of the linear; \
             only batch axes can be stream-parallel"
        ));
    }
    // Each operand is sliced along the axis the op maps to the stream axis,
    // at 0 where the op broadcasts that axis.
    let broadcast = hir_dialects::broadcast_axes(op).expect("an op with an axis map");
    Ok(maps
        .iter()
        .zip(&broadcast)
        .map(
            |(map, broadcast)| match map.iter().position(|&mapped| mapped == Some(axis)) {
                None => Slicing::Shared,
                Some(operand_axis) if broadcast[operand_axis] => Slicing::Broadcast(operand_axis),
                Some(operand_axis) => Slicing::Along(operand_axis),
            },
        )
        .collect())
}

/// Slices the operands of `op`, now in the loop body, at `index` and
/// renumbers the axis attributes the slicing shifts.
fn slice<'c, 'a>(
    context: &'c Context,
    rewriter: &RewriterBase,
    op: OperationRef<'c, 'a>,
    axis: usize,
    extent: i64,
    index: Value<'c, 'a>,
) -> Result<(), Emitted> {
    let location = op.location();
    let operand_axes = match operand_axes(&op, axis) {
        Ok(axes) => axes,
        Err(message) => return error(location, message),
    };
    let at_op = Builder::before(context, op);
    let buffers: Vec<(usize, Value)> = op
        .operands()
        .enumerate()
        .filter(|(_, value)| MemRefType::try_from(value.r#type()).is_ok())
        .collect();
    for ((position, buffer), &slicing) in buffers.into_iter().zip(operand_axes.iter()) {
        let operand_axis = match slicing {
            Slicing::Shared => continue,
            Slicing::Broadcast(operand_axis) => {
                // One view for every iteration, before the loop.
                let stream_for = op.parent_operation().expect("the op is in the loop's body");
                let before_loop = Builder::before(context, stream_for);
                let zero = before_loop.index(0, location);
                let view = before_loop.select(buffer, operand_axis, zero, location);
                rewrite::set_operand(rewriter, op, position, view);
                continue;
            }
            Slicing::Along(operand_axis) => operand_axis,
        };
        let operand_extent = builders::buffer_shape(buffer.r#type())[operand_axis];
        if operand_extent != extent {
            return error(
                location,
                format!(
                    "operand #{position} has extent {operand_extent} along axis {operand_axis}, \
                     but the stream loop runs {extent} iterations"
                ),
            );
        }
        let slice = at_op.select(buffer, operand_axis, index, location);
        rewrite::set_operand(rewriter, op, position, slice);
    }
    rewrite::remove_attribute(rewriter, op, builders::STREAM_AXIS);
    match OpKind::of(&op) {
        OpKind::Reduction => {
            let Slicing::Along(input_axis) = operand_axes[0] else {
                unreachable!("reductions slice their input")
            };
            let shifted: Vec<i64> = axes(&op)
                .into_iter()
                .map(|reduced| (reduced - usize::from(reduced > input_axis)) as i64)
                .collect();
            rewrite::set_attribute(
                rewriter,
                op,
                "axes",
                DenseI64ArrayAttribute::new(context, &shifted).into(),
            );
        }
        OpKind::Broadcast => {
            let shifted: Vec<i64> = axes(&op)
                .into_iter()
                .filter(|&new| new != axis)
                .map(|new| (new - usize::from(new > axis)) as i64)
                .collect();
            if shifted.is_empty() {
                // Sliced along its only new axis, the broadcast is a copy.
                let operands: Vec<Value> = op.operands().collect();
                at_op.copy(operands[0], operands[1], location);
                rewriter.erase_op(op);
                return Ok(());
            }
            rewrite::set_attribute(
                rewriter,
                op,
                "axes",
                DenseI64ArrayAttribute::new(context, &shifted).into(),
            );
        }
        _ if Op::HostTranspose.is(&op) => {
            let Slicing::Along(input_axis) = operand_axes[0] else {
                unreachable!("a transpose slices its input")
            };
            // The output loses `axis`, the input `input_axis`.
            let shifted: Vec<i64> = list(&op, "permutation")
                .into_iter()
                .enumerate()
                .filter(|&(output_axis, _)| output_axis != axis)
                .map(|(_, from)| (from - usize::from(from > input_axis)) as i64)
                .collect();
            rewrite::set_attribute(
                rewriter,
                op,
                "permutation",
                DenseI64ArrayAttribute::new(context, &shifted).into(),
            );
        }
        _ if Op::exchanges(&op) => {
            let exchanged = exchanged_axis(&op);
            rewrite::set_attribute(
                rewriter,
                op,
                "axis",
                builders::i64_attribute(
                    context,
                    (exchanged - usize::from(exchanged > axis)) as i64,
                ),
            );
        }
        _ => {}
    }
    Ok(())
}

/// The `axes` attribute of a reduction or broadcast.
fn axes(op: &OperationRef) -> Vec<usize> {
    list(op, "axes")
}

/// The axis-list attribute `name` of `op` (verified to be there).
fn list(op: &OperationRef, name: &str) -> Vec<usize> {
    let axes =
        DenseI64ArrayAttribute::try_from(op.attribute(name).expect("verified")).expect("verified");
    (0..axes.len())
        .map(|index| axes.element(index).expect("in range") as usize)
        .collect()
}

/// Whether `op` is a collective that gathers or scatters along `axis`.
fn exchanges_along(op: &OperationRef, axis: usize) -> bool {
    Op::exchanges(op) && exchanged_axis(op) == axis
}

/// The axis a collective gathers or scatters along (`axis`, 0 when absent).
fn exchanged_axis(op: &OperationRef) -> usize {
    op.attribute("axis")
        .ok()
        .and_then(|attribute| melior::ir::attribute::IntegerAttribute::try_from(attribute).ok())
        .map_or(0, |axis| axis.value() as usize)
}
