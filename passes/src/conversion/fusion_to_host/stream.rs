//! Stream-parallel ops: an op whose result has a `stream` axis k is emitted
//! in its own `host.stream_for` over axis k of the buffer it writes, its
//! body the op on iteration `i`'s slices, with the `comm.wait` on a
//! collective's request inside the same iteration. A `stream` axis takes one
//! index per iteration: the slices are `host.select` views, which drop the
//! axis. A `stream<k>` axis takes one of k chunks per iteration: the slices
//! are `memref.subview` parts of the same rank, so no axis attribute moves,
//! and a matmul or linear may stream along its output columns N (the
//! weight's part along N).
//!
//! Each buffer operand is sliced along the axis that maps to the stream
//! axis: identity for pointwise ops, copies and communications; the kept
//! axes of a reduction; the input axes of a broadcast, whose new axes are
//! not sliced; the input axis a transpose moves to the stream axis; the
//! batch axes of matmul and linear, whose shared operands are not sliced,
//! and of attention (q, k, v; its mask is shared: the `fusion.attention`
//! verifier keeps a stream axis off Sq, Sk, D and Dv). A
//! matmul operand's batch axis of extent 1 that the op broadcasts along the
//! stream axis is taken at 0, a view the same in every iteration (which
//! `host-stream-parallelize` hoists). The axis attributes the slicing
//! shifts are renumbered. An op that cannot be sliced (the output columns of
//! a matmul, an operand whose extent differs from the loop's) is a located
//! error.
//!
//! A collective that gathers or scatters along the stream axis (`didx` ->
//! `stream` on the same axis) has no per-slice form: iteration i needs one
//! rank's shard. It runs whole: an allgather before the loops that read its
//! slices, a reduce-scatter after the loop that writes them. An allgather
//! whose output no stream loop reads gets a loop that only takes the slices
//! of its output along the stream axis, right after its wait: that states
//! the stream axis for `host-p2p-pipeline`, which makes a ring of it (the
//! slice is where step i receives); without a ring, the loop does nothing
//! and `host-lower-stream-for` erases it.

use super::{Lowering, tensor::Stream};
use crate::{
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
        BlockLike, Location, OperationRef, Value, ValueLike,
        attribute::{DenseI64ArrayAttribute, IntegerAttribute},
        operation::OperationLike,
        r#type::MemRefType,
    },
};

impl<'c, 'm> Lowering<'c, 'm> {
    /// Puts `ops` (a host or comm op, then the waits on its request) in a
    /// new `host.stream_for` over axis `axis` of the buffer the first one
    /// writes, where they were, and slices the op.
    pub(super) fn stream_loop(
        &self,
        ops: &[OperationRef<'c, 'm>],
        stream: Stream,
    ) -> Result<(), Emitted> {
        let op = ops[0];
        let Some(written) = written_buffer(&op) else {
            return error(
                op.location(),
                format!("'{}' cannot be stream-parallelized", ir::name(&op)),
            );
        };
        let extent = builders::buffer_shape(written.r#type())[stream.axis];
        let last = *ops.last().expect("a unit has its op");
        let (terminator, index) = self.new_stream_for(last, stream.iterations, op.location());
        for &moved in ops {
            self.rewriter.move_op_before(moved, terminator);
        }
        let loop_axis = LoopAxis {
            axis: stream.axis,
            extent,
            chunks: stream.chunked.then_some(stream.iterations),
        };
        slice(self.context, &self.rewriter, op, loop_axis, index)
    }

    /// A communication (with its wait) of a value whose `stream` axis is
    /// `axis`: in a stream loop, but for a collective along that axis, which
    /// runs whole (an allgather's slices are taken by [`Self::view_loops`]).
    pub(super) fn stream_communication(
        &self,
        communication: OperationRef<'c, 'm>,
        wait: OperationRef<'c, 'm>,
        stream: Stream,
    ) -> Result<(), Emitted> {
        if !(Op::exchanges(&communication) && exchanged_axis(&communication) == stream.axis) {
            return self.stream_loop(&[communication, wait], stream);
        }
        if Op::CommAllgather.is(&communication) {
            let output = written_buffer(&communication).expect("an allgather writes its output");
            self.gathered.borrow_mut().push((wait, output, stream));
        }
        Ok(())
    }

    /// After the function is lowered: the loop over the slices of each
    /// allgather along the stream axis whose output no stream loop reads,
    /// right after its wait.
    pub(super) fn view_loops(&self) {
        for (wait, output, stream) in self.gathered.take() {
            let read_in_loop = ir::users(output).into_iter().any(|user| {
                std::iter::successors(user.parent_operation(), |op| op.parent_operation())
                    .any(|ancestor| Op::HostStreamFor.is(&ancestor))
            });
            if read_in_loop {
                continue;
            }
            let location = wait.location();
            let (terminator, index) = self.new_stream_for(wait, stream.iterations, location);
            let body = Builder::before(self.context, terminator);
            if !stream.chunked {
                body.select(output, stream.axis, index, location);
            } else {
                body.part(output, stream.axis, index, stream.iterations, location);
            }
        }
    }

    /// The caller's stream of the function's stream loops, read once at its
    /// entry.
    pub(super) fn main_stream(&self, location: Location<'c>) -> Value<'c, 'm> {
        if let Some(main) = self.main.get() {
            return main;
        }
        let entry = self.entry.expect("a function with stream loops has a body");
        let first = entry.first_operation().expect("the body has ops");
        let main = Builder::before(self.context, first).current_stream(location);
        self.main.set(Some(main));
        main
    }

    /// An empty `host.stream_for` of `extent` iterations from the caller's
    /// stream, right after `last`: the terminator of its body, and its index.
    pub(super) fn new_stream_for(
        &self,
        last: OperationRef<'c, 'm>,
        extent: i64,
        location: Location<'c>,
    ) -> (OperationRef<'c, 'm>, Value<'c, 'm>) {
        let main = self.main_stream(location);
        let (_, terminator, index) =
            Builder::after(self.context, last).stream_for(extent, main, location);
        (terminator, index)
    }
}

/// The buffer an op writes: its destination-passing-style init.
fn written_buffer<'c, 'a>(op: &OperationRef<'c, 'a>) -> Option<Value<'c, 'a>> {
    ir::operand(op, hir_dialects::destination(op)?)
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
    /// iteration.
    Broadcast(usize),
}

/// The axis a stream loop runs over, in the buffer an op writes.
#[derive(Clone, Copy)]
struct LoopAxis {
    axis: usize,
    extent: i64,
    /// The chunk count of a `stream<k>` loop; `None` for one index per
    /// iteration.
    chunks: Option<i64>,
}

/// For each buffer operand of `op`, how each iteration of a loop over the
/// stream axis `axis` of its output takes it (`chunked`: in parts of the
/// same rank).
fn operand_axes(op: &OperationRef, axis: usize, chunked: bool) -> Result<Vec<Slicing>, String> {
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
    // batched rhs has no M to slice, and N is the weight's. A chunk keeps
    // every axis, so any output axis can be chunked.
    if name == host::MatmulOperation::name() && !chunked {
        let shared_rhs = maps[1].len() == 2;
        if axis + 1 == output_rank || (axis + 2 == output_rank && !shared_rhs) {
            return Err(format!(
                "the stream axis {axis} of the matmul's [..., M, N] output is {}; \
                 only batch axes, and M with a [K, N] rhs, can be stream-parallel one index \
                 per iteration (stream<k> streams any output axis in k chunks)",
                if axis + 1 == output_rank {
                    "N"
                } else {
                    "M, with a batched rhs"
                }
            ));
        }
    }
    if name == host::LinearOperation::name() && axis + 1 >= output_rank && !chunked {
        return Err(format!(
            "the stream axis {axis} is the output-feature axis of the linear; \
             only batch axes can be stream-parallel one index per iteration \
             (stream<k> streams it in k chunks)"
        ));
    }
    // Each operand is sliced along the axis the op maps to the stream axis,
    // at 0 where the op broadcasts that axis (whole when chunked: its
    // extent-1 axis is the same for every chunk).
    let broadcast = hir_dialects::broadcast_axes(op).expect("an op with an axis map");
    Ok(maps
        .iter()
        .zip(&broadcast)
        .map(
            |(map, broadcast)| match map.iter().position(|&mapped| mapped == Some(axis)) {
                None => Slicing::Shared,
                Some(operand_axis) if broadcast[operand_axis] && chunked => Slicing::Shared,
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
    loop_axis: LoopAxis,
    index: Value<'c, 'a>,
) -> Result<(), Emitted> {
    let LoopAxis {
        axis,
        extent,
        chunks,
    } = loop_axis;
    let location = op.location();
    let operand_axes = match operand_axes(&op, axis, chunks.is_some()) {
        Ok(axes) => axes,
        Err(message) => return error(location, message),
    };
    let at_op = Builder::before(context, op);
    // Every chunk starts at the same index of its axis.
    let chunk = chunks.map(|chunks| {
        let size = extent / chunks;
        (at_op.part_offset(index, size, location), size)
    });
    let buffers: Vec<(usize, Value)> = op
        .operands()
        .enumerate()
        .filter(|(_, value)| MemRefType::try_from(value.r#type()).is_ok())
        .collect();
    for ((position, buffer), &slicing) in buffers.into_iter().zip(operand_axes.iter()) {
        let operand_axis = match slicing {
            Slicing::Shared => continue,
            Slicing::Broadcast(operand_axis) => {
                // The same view in every iteration.
                let zero = at_op.index(0, location);
                let view = at_op.select(buffer, operand_axis, zero, location);
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
        let slice = match chunk {
            Some((offset, size)) => at_op.window(buffer, operand_axis, offset, size, location),
            None => at_op.select(buffer, operand_axis, index, location),
        };
        rewrite::set_operand(rewriter, op, position, slice);
    }
    if chunk.is_some() {
        // Parts keep every axis: the op's axis attributes stand.
        return Ok(());
    }
    match OpKind::of(&op) {
        OpKind::Reduction => {
            let Slicing::Along(input_axis) = operand_axes[0] else {
                unreachable!("reductions slice their input")
            };
            let shifted: Vec<i64> = list(&op, "axes")
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
            let shifted: Vec<i64> = list(&op, "axes")
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

/// The axis-list attribute `name` of `op` (verified to be there).
fn list(op: &OperationRef, name: &str) -> Vec<usize> {
    let axes =
        DenseI64ArrayAttribute::try_from(op.attribute(name).expect("verified")).expect("verified");
    (0..axes.len())
        .map(|index| axes.element(index).expect("in range") as usize)
        .collect()
}

/// The axis a collective gathers or scatters along (`axis`, 0 when absent).
fn exchanged_axis(op: &OperationRef) -> usize {
    op.attribute("axis")
        .ok()
        .and_then(|attribute| IntegerAttribute::try_from(attribute).ok())
        .map_or(0, |axis| axis.value() as usize)
}
