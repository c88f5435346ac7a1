//! `host-broadcast-pipeline`: an allgather before a stream loop that reads
//! its output slice by slice along the gathered axis becomes, in each
//! iteration, a broadcast of the slice that iteration reads: iteration `i`
//! broadcasts rank `i`'s shard (`comm.broadcast ... root %i`) into slice `i`
//! of the output, on the iteration's stream, right before the iteration uses
//! it. The slices arrive one by one and each iteration's compute waits only
//! for its own, as in a ring, but with NCCL's broadcast instead of P2P
//! transfers (`hir-lower{allgather=broadcast}`, for `p2p=none`).
//!
//! ```mlir
//! %r = comm.allgather %a into %g team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
//! comm.wait %r
//! host.stream_for %c0 to %c2 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %gi = host.select %g[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
//!   host.neg ins(%gi : ...) outs(...)
//! }
//! ```
//! becomes
//! ```mlir
//! %a0 = host.select %a[0][%c0] : memref<1x8xf32> to memref<8xf32, strided<[1], offset: ?>>
//! host.stream_for %c0 to %c2 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %gi = host.select %g[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
//!   %b = comm.broadcast %a0 into %gi root %i team [0, 1] : ...
//!   comm.wait %b
//!   host.neg ins(%gi : ...) outs(...)
//! }
//! ```
//!
//! Only where it is the same program: the allgather's team is the whole mesh
//! in order (so the iteration index is the root's rank), its one wait follows
//! it, the next op that does work is a `host.stream_for` of `D` iterations
//! from 0 by 1, and that loop takes slice `%i` of the output along the
//! gathered axis before anything else uses the output. Any other allgather
//! stays whole.

use crate::{
    HirPass,
    builders::{self, Builder, static_shape},
    ir,
    ops::Op,
};
use hir_dialects::comm;
use melior::{
    Context,
    ir::{BlockLike, OperationRef, RegionLike, Value, ValueLike, operation::OperationLike},
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-broadcast-pipeline";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(BroadcastPipeline)
}

struct BroadcastPipeline;

impl HirPass for BroadcastPipeline {
    fn run(&mut self, function: OperationRef) -> bool {
        let context = function.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        let rewriter = crate::rewrite::rewriter(function);
        let rewriter = rewriter.as_rewriter_base();
        for allgather in ir::nested(function) {
            rewrite(context, &rewriter, allgather);
        }
        true
    }
}

/// Rewrites `allgather` into its broadcasts, if it is one that can become
/// them.
pub(super) fn rewrite<'c>(
    context: &'c Context,
    rewriter: &melior::RewriterBase,
    allgather: OperationRef<'c, '_>,
) {
    if let Some(pipeline) = Pipeline::of(allgather) {
        pipeline.rewrite(context, rewriter);
    }
}

/// An allgather that can become broadcasts, and the loop that reads it.
struct Pipeline<'c, 'a> {
    allgather: OperationRef<'c, 'a>,
    wait: OperationRef<'c, 'a>,
    /// The loop's view of slice `%i` of the output.
    slice: OperationRef<'c, 'a>,
    axis: usize,
}

impl<'c, 'a> Pipeline<'c, 'a> {
    fn of(allgather: OperationRef<'c, 'a>) -> Option<Self> {
        if !Op::CommAllgather.is(&allgather) {
            return None;
        }
        let devices = ir::whole_mesh_size(&allgather)?;
        let axis = usize::try_from(ir::integer_attribute(&allgather, "axis").unwrap_or(0)).ok()?;
        let output = ir::operand(&allgather, 1)?;
        let wait = ir::sole_wait(allgather)?;
        let next_work = std::iter::successors(wait.next_in_block(), |op| op.next_in_block())
            .find(|op| !does_no_work(op))?;
        if !Op::HostStreamFor.is(&next_work)
            || !ir::runs_from_zero(&next_work, devices)
            || static_shape(output.r#type())?.get(axis) != Some(&devices)
        {
            return None;
        }
        let body = ir::region(&next_work, 0)?.first_block()?;
        let index: Value = body.argument(0).ok()?.into();
        // The first op of the body that uses the output takes slice %i of it.
        let first_use =
            ir::block_ops(body).find(|op| op.operands().any(|operand| operand == output))?;
        let slice = (Op::HostSelect.is(&first_use)
            && ir::operand(&first_use, 1) == Some(index)
            && ir::integer_attribute(&first_use, "axis") == Some(axis as i64))
        .then_some(first_use)?;
        // Nothing but that slice reads the output in the loop, and nothing
        // between the allgather and the loop uses it.
        let readers = ir::users(output);
        if readers
            .iter()
            .any(|&user| user != allgather && user != slice && !within(user, next_work))
        {
            return None;
        }
        Some(Pipeline {
            allgather,
            wait,
            slice,
            axis,
        })
    }

    fn rewrite(self, context: &'c Context, rewriter: &melior::RewriterBase) {
        let location = self.allgather.location();
        let input = self
            .allgather
            .operand(0)
            .expect("an allgather has an input");
        let team = self
            .allgather
            .attribute("team")
            .expect("an allgather has a team");
        // Rank r's shard: the input without its gathered axis (of extent 1).
        let before = Builder::before(context, self.allgather);
        let zero = before.index(0, location);
        let shard = before.select(input, self.axis, zero, location);
        let slice: Value = self.slice.result(0).expect("a view").into();
        let index = self.slice.operand(1).expect("the loop's index");
        let after_slice = Builder::after(context, self.slice);
        let broadcast = comm::BroadcastOperation::builder(context, location)
            .request(builders::request_type(context))
            .input(shard)
            .output(slice)
            .team(team)
            .dynamic_root(index)
            .build();
        let broadcast = after_slice.insert(broadcast);
        Builder::after(context, broadcast).wait(builders::result(broadcast), location);
        rewriter.erase_op(self.wait);
        rewriter.erase_op(self.allgather);
    }
}

/// Ops between an allgather's wait and its loop that do no work.
fn does_no_work(op: &OperationRef) -> bool {
    matches!(
        Op::of(op),
        Some(
            Op::ArithConstant
                | Op::HostGetCurrentStream
                | Op::HostAlloc
                | Op::HostSelect
                | Op::MemrefExpandShape
        )
    )
}

/// Whether `op` is nested in `ancestor`.
fn within(op: OperationRef, ancestor: OperationRef) -> bool {
    std::iter::successors(op.parent_operation(), |parent| parent.parent_operation())
        .any(|parent| parent == ancestor)
}
