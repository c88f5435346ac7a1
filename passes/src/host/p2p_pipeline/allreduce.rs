//! An allreduce of GEMM partials as rings (`allreduce=ring`): the
//! reduce-scatter ring (a chain of accumulating GEMMs where it applies),
//! then an allgather ring of the reduced blocks.
//!
//! GEMM+AR (K split over the devices, the partial products allreduced)
//! lowers to a stream loop that writes the partials block by block and an
//! allreduce after it. NCCL's allreduce kernels take SMs from the GEMMs they
//! would overlap, so the pass splits the allreduce in two before it
//! recognises its rings ([`split`]):
//!
//! - `comm.reduce_scatter` of the partials into the rank's own block of the
//!   output (a `memref.subview` of one block along the axis the loop writes
//!   the partials along, defined before the loop), which the pass then
//!   turns into the reduce-scatter ring of that loop, overlapped with its
//!   GEMMs (by `sum` with GEMM-written partials, the chain);
//! - after it, a loop of `D - 1` steps on the caller's stream that gathers
//!   the other ranks' blocks into the output: at step `i` the rank receives
//!   block `(r + i) mod D` from its owner and sends its own to
//!   `(D + r - i) mod D` (the formulas of [`super::schedule`]), over NCCL
//!   send/recv (one coalescing group a step) or CUDA-IPC copies (the output
//!   shared once, before the stream loop).
//!
//! Every rank's block is complete only when its last GEMM is, so the
//! allgather follows the GEMMs; over `cuda` its copies run on copy engines.
//!
//! ```mlir
//! host.stream_for ... { ... host.matmul ... outs(host.select %p[1][%i]) }
//! %v = host.select %p[0][%c0] : memref<1x4x8x16xf32> to memref<4x8x16xf32, ...>
//! %r = comm.allreduce %v into %c sum team [0, 1, 2, 3] : ...
//! comm.wait %r
//! ```
//! becomes, before the ring rewrite,
//! ```mlir
//! %rank = host.rank : index
//! %own = memref.subview %c[%rank * 1, 0, 0] [1, 8, 16] [1, 1, 1] : ...
//! host.stream_for ... { ... }
//! %v = host.select %p[0][%c0] : ...
//! %r = comm.reduce_scatter %v into %own sum team [0, 1, 2, 3] : ...
//! comm.wait %r
//! scf.for %i = %c1 to %c4 step %c1 {
//!   ... %s = (rank + i) mod 4, %to = (4 + rank - i) mod 4 ...
//!   %block = memref.subview %c[%s * 1, 0, 0] [1, 8, 16] [1, 1, 1] : ...
//!   comm.start_coalescing
//!   %0 = comm.recv %block from %s team [0, 1, 2, 3] : ...
//!   %1 = comm.send %own to %to team [0, 1, 2, 3] : ...
//!   %2 = comm.end_coalescing
//!   comm.wait %2
//! }
//! ```
//!
//! An allreduce that no stream loop writes along an axis is left alone (a
//! stream-sliced allreduce of a collective pipeline, in its loop, too).
//! Once one does, the rings are what was asked for, and what prevents them
//! is a located error: a reduce kind other than `sum` and `max`, a team
//! that is not the whole mesh in order, an axis whose extent is not the
//! team's size, an allreduce not after its loop in one block, an output
//! not defined before the loop, or a request used otherwise than by one
//! `comm.wait`. The reduce-scatter then meets the rules of its ring.

use super::{
    exchange::{Direction, Transfer, Transport, point_to_point, request_of},
    plan::{Reported, Sliced, defined_before, integer_attribute, slicing_stream_for, whole_mesh},
    schedule::{Emitted, partner, slice},
};
use crate::{
    builders::{self, Builder, static_shape, strides},
    diagnostics::emit_error,
    ir,
    ops::Op,
    rewrite,
};
use hir_dialects::comm;
use melior::{
    Context,
    ir::{OperationRef, Value, ValueLike, operation::OperationLike},
};

/// An allreduce the pass splits, and what it needs for it.
struct Candidate<'c, 'a> {
    op: OperationRef<'c, 'a>,
    wait: OperationRef<'c, 'a>,
    /// The `host.stream_for` that writes the input.
    stream_for: OperationRef<'c, 'a>,
    /// The input's axis the loop writes it along, one block per rank.
    axis: i64,
    size: i64,
}

/// Splits every allreduce of `function` that a stream loop writes the input
/// of, block by block, into a reduce-scatter into the rank's block of the
/// output and an allgather ring of the blocks (see the module's doc).
/// Nothing changes where an error was emitted.
pub(super) fn split<'c, 'a>(
    context: &'c Context,
    backend: Transport,
    function: OperationRef<'c, 'a>,
) -> Result<(), Reported> {
    let mut candidates = Vec::new();
    let mut failed = false;
    for op in ir::nested(function) {
        match candidate(op) {
            Ok(Some(found)) => candidates.push(found),
            Ok(None) => {}
            Err(Reported) => failed = true,
        }
    }
    if failed {
        return Err(Reported);
    }
    for found in candidates {
        rewrite_candidate(context, backend, &found);
    }
    Ok(())
}

/// The `host.stream_for` ops that select a block of `input` (or of the
/// buffer it is a whole view of) at their index, with the input's axis.
fn writing_loops<'c, 'a>(input: Value<'c, 'a>) -> Vec<(OperationRef<'c, 'a>, i64)> {
    let rank = static_shape(input.r#type()).map_or(0, |shape| shape.len() as i64);
    let mut found = Vec::new();
    for axis in 0..rank {
        for sliced in Sliced::forms(input, axis) {
            for user in ir::users(sliced.buffer) {
                if let Some(stream_for) = slicing_stream_for(user, sliced.axis)
                    && !found.iter().any(|&(known, _)| known == stream_for)
                {
                    found.push((stream_for, axis));
                }
            }
        }
    }
    found
}

/// What the pass does with `op`: nothing (`None`) unless it is an allreduce
/// whose input a stream loop writes block by block; then the split, or a
/// located error for what prevents it.
fn candidate<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<Option<Candidate<'c, 'a>>, Reported> {
    if !Op::CommAllreduce.is(&op) {
        return Ok(None);
    }
    let input = op.operand(0).expect("a collective has an input");
    let output = op.operand(1).expect("a collective has an output");
    let mut loops = writing_loops(input);
    let Some((stream_for, axis)) = loops.pop() else {
        return Ok(None);
    };
    let error = |message: String| {
        emit_error(op.location(), &message);
        Reported
    };
    if !loops.is_empty() {
        return Err(error(format!(
            "'comm.allreduce' has its input written by {} stream loops; its rings run in one",
            loops.len() + 1
        )));
    }
    // `Comm_ReduceKind` codes: sum 0, max 2, the combines of a reduce-scatter ring.
    if !matches!(integer_attribute(&op, "kind"), Some(0 | 2)) {
        return Err(error(
            "'comm.allreduce' has no ring for its reduce kind: the reduce-scatter ring combines \
             the partial blocks with host.sum or host.amax (kinds 'sum' and 'max')"
                .to_owned(),
        ));
    }
    let size = whole_mesh(&op).map_err(error)?;
    if static_shape(input.r#type()).and_then(|shape| shape.get(axis as usize).copied())
        != Some(size)
    {
        return Err(error(format!(
            "axis {axis} of the input of 'comm.allreduce', along which a stream loop writes it, \
             must have extent {size}, one block per rank of the team"
        )));
    }
    if op.block() != stream_for.block() || !stream_for.is_before_in_block(op) {
        return Err(error(format!(
            "'comm.allreduce' must come after the stream loop that writes its input along axis \
             {axis}, in the same block"
        )));
    }
    if !defined_before(output, stream_for) || strides(output.r#type()).is_none() {
        return Err(error(
            "the output of 'comm.allreduce' must be a strided buffer defined before the stream \
             loop that writes its input: the reduce-scatter ring writes the rank's block of it \
             in that loop"
                .to_owned(),
        ));
    }
    let Some(wait) = ir::sole_wait(op) else {
        return Err(error(
            "the request of 'comm.allreduce' must be waited for by one comm.wait in its block \
             and used nowhere else"
                .to_owned(),
        ));
    };
    Ok(Some(Candidate {
        op,
        wait,
        stream_for,
        axis,
        size,
    }))
}

/// Replaces the allreduce of `found` by the reduce-scatter into the rank's
/// block and the allgather ring after it.
fn rewrite_candidate<'c, 'a>(context: &'c Context, backend: Transport, found: &Candidate<'c, 'a>) {
    let Candidate {
        op,
        wait,
        stream_for,
        axis,
        size,
    } = *found;
    let location = op.location();
    let input = op.operand(0).expect("a collective has an input");
    let output = op.operand(1).expect("a collective has an output");
    let team = op.attribute("team").expect("a collective has a team");
    let before_loop = Builder::before(context, stream_for).located(location);
    let rank = before_loop.rank(location);
    let own = before_loop.part(output, axis as usize, rank, size, location);
    if backend == Transport::Cuda {
        before_loop.share_mem_handles(&[output], team, location);
    }

    let at = Builder::before(context, op).located(location);
    let kind = op.attribute("kind").expect("an allreduce has a kind");
    let scattered = builders::result(at.op(
        Op::CommReduceScatter.name(),
        location,
        &[input, own],
        &[
            ("team", team),
            ("kind", kind),
            ("axis", builders::i64_attribute(context, axis)),
        ],
        &[builders::request_type(context)],
    ));
    at.wait(scattered, location);
    if size > 1 {
        let one = at.index(1, location);
        let steps = at.index(size, location);
        let ring = at.new_loop(one, steps, one, location);
        let cursor = ring.body;
        let emitted = |value| Emitted { value, cursor };
        let from = slice(emitted(rank), emitted(ring.index), emitted(steps)).value;
        let to = partner(emitted(rank), emitted(ring.index), emitted(steps)).value;
        let block = cursor.part(output, axis as usize, from, size, location);
        let receive = point_to_point(
            context,
            location,
            backend,
            team,
            Direction::Receive,
            &Transfer {
                buffer: block,
                peer: from,
            },
        );
        let send = point_to_point(
            context,
            location,
            backend,
            team,
            Direction::Send,
            &Transfer {
                buffer: own,
                peer: to,
            },
        );
        match backend {
            // One group: NCCL matches the pair whatever order the peers post it in.
            Transport::Nccl => {
                cursor.insert(comm::StartCoalescingOperation::builder(context, location).build());
                cursor.insert(receive);
                cursor.insert(send);
                let group = request_of(
                    cursor.insert(
                        comm::EndCoalescingOperation::builder(context, location)
                            .request(builders::request_type(context))
                            .build(),
                    ),
                );
                cursor.wait(group, location);
            }
            // The receive frees its slot before the send waits for the peer's.
            Transport::Cuda => {
                let received = request_of(cursor.insert(receive));
                let sent = request_of(cursor.insert(send));
                cursor.wait(sent, location);
                cursor.wait(received, location);
            }
        }
    }
    let rewriter = rewrite::rewriter(op);
    let rewriter = rewriter.as_rewriter_base();
    // The wait has no results and was the request's only user.
    rewriter.erase_op(wait);
    rewriter.erase_op(op);
}
