//! `host-reduce-pipeline`: a reduce-scatter after a stream loop that writes
//! its input slice by slice along the scattered axis becomes, at the end of
//! each iteration, a reduce of the block that iteration wrote: iteration `i`
//! combines every rank's block `i` onto rank `i` (`comm.reduce ... root %i`,
//! a root value), on the iteration's stream, so that block `i` travels while
//! later iterations still compute theirs. The reduce-based counterpart of the
//! GEMM+RS ring, with NCCL's reduce instead of point-to-point transfers
//! (`hir-lower{reduce-scatter=reduce}`, for `p2p=none`).
//!
//! ```mlir
//! host.stream_for %c0 to %c2 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %pi = host.select %p[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
//!   host.neg ins(...) outs(%pi : ...)
//! }
//! %r = comm.reduce_scatter %p into %o sum team [0, 1] : memref<2x8xf32> into memref<1x8xf32>
//! comm.wait %r
//! ```
//! becomes
//! ```mlir
//! %o0 = host.select %o[0][%c0] : memref<1x8xf32> to memref<8xf32, strided<[1], offset: ?>>
//! host.stream_for %c0 to %c2 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %pi = host.select %p[0][%i] : ...
//!   host.neg ins(...) outs(%pi : ...)
//!   %bi = host.select %p[0][%i] : ...
//!   %q = comm.reduce %bi into %o0 sum root %i team [0, 1] : ...
//!   comm.wait %q
//! }
//! ```
//!
//! The scattered input may be the loop's buffer or a whole view of it that
//! drops an axis of extent 1 (`host.select %b[u][0]`, as
//! convert-fusion-to-host makes for GEMM+RS). Only where it is the same
//! program: the team is the whole mesh in order (so the index is the rank
//! that owns block `i`), the reduce-scatter's one wait follows it, the last
//! op before it that does work is a `host.stream_for` of `D` iterations from
//! 0 by 1 that writes slice `%i` of the scattered buffer along the scattered
//! axis, and the output has extent 1 along that axis. Any other
//! reduce-scatter stays whole.

use crate::{
    HirPass,
    builders::{self, Builder, static_shape},
    ir,
    ops::Op,
    rewrite,
};
use hir_dialects::comm;
use melior::{
    Context, RewriterBase,
    ir::{
        BlockLike, OperationRef, RegionLike, Value, ValueLike,
        operation::{OperationLike, OperationResult},
    },
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-reduce-pipeline";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(ReducePipeline)
}

struct ReducePipeline;

impl HirPass for ReducePipeline {
    fn run(&mut self, function: OperationRef) -> bool {
        let context = function.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        let rewriter = rewrite::rewriter(function);
        let rewriter = rewriter.as_rewriter_base();
        for reduce_scatter in ir::nested(function) {
            rewrite(context, &rewriter, reduce_scatter);
        }
        true
    }
}

/// Rewrites `reduce_scatter` into its reduces, if it is one that can become
/// them.
pub(super) fn rewrite<'c>(
    context: &'c Context,
    rewriter: &melior::RewriterBase,
    reduce_scatter: OperationRef<'c, '_>,
) {
    if let Some(pipeline) = Pipeline::of(reduce_scatter) {
        pipeline.rewrite(context, rewriter);
    }
}

/// A reduce-scatter that can become reduces, and the loop that writes it.
struct Pipeline<'c, 'a> {
    reduce_scatter: OperationRef<'c, 'a>,
    wait: OperationRef<'c, 'a>,
    stream_for: OperationRef<'c, 'a>,
    /// The scattered buffer as the loop slices it.
    base: Value<'c, 'a>,
    /// The axis of extent 1 a whole view of `base` drops, if the input is one.
    dropped: Option<usize>,
    axis: usize,
}

impl<'c, 'a> Pipeline<'c, 'a> {
    fn of(reduce_scatter: OperationRef<'c, 'a>) -> Option<Self> {
        if !Op::CommReduceScatter.is(&reduce_scatter) {
            return None;
        }
        let devices = ir::whole_mesh_size(&reduce_scatter)?;
        let axis =
            usize::try_from(ir::integer_attribute(&reduce_scatter, "axis").unwrap_or(0)).ok()?;
        let input = ir::operand(&reduce_scatter, 0)?;
        let output = ir::operand(&reduce_scatter, 1)?;
        let wait = ir::sole_wait(reduce_scatter)?;
        if static_shape(output.r#type())?.get(axis) != Some(&1)
            || static_shape(input.r#type())?.get(axis) != Some(&devices)
        {
            return None;
        }
        // melior has no previous-op walk: the block's ops up to this one.
        let before: Vec<_> = ir::block_ops(reduce_scatter.block()?)
            .take_while(|&op| op != reduce_scatter)
            .collect();
        let stream_for = *before.iter().rev().find(|op| !does_no_work(op))?;
        if !Op::HostStreamFor.is(&stream_for) || !ir::runs_from_zero(&stream_for, devices) {
            return None;
        }
        // The input, or the buffer a whole view of it drops an axis of.
        let (base, dropped) = match whole_view(input) {
            Some((base, dropped)) => (base, Some(dropped)),
            None => (input, None),
        };
        let base_axis = match dropped {
            Some(dropped) if dropped <= axis => axis + 1,
            _ => axis,
        };
        // The loop writes slice %i of the base along the scattered axis.
        let body = ir::region(&stream_for, 0)?.first_block()?;
        let index: Value = body.argument(0).ok()?.into();
        let writes_slice = ir::block_ops(body).any(|op| {
            Op::HostSelect.is(&op)
                && ir::operand(&op, 0) == Some(base)
                && ir::operand(&op, 1) == Some(index)
                && ir::integer_attribute(&op, "axis") == Some(base_axis as i64)
                && ir::result(&op, 0).is_some_and(|slice| {
                    ir::users(slice.into()).iter().any(|user| {
                        hir_dialects::destination(user)
                            .is_some_and(|at| ir::operand(user, at) == Some(slice.into()))
                    })
                })
        });
        // The output, which the loop's reduces write, can be defined before it.
        let output_movable = rewrite::definitions_after(output, stream_for).is_some();
        (writes_slice && output_movable).then_some(Pipeline {
            reduce_scatter,
            wait,
            stream_for,
            base,
            dropped,
            axis,
        })
    }

    fn rewrite(self, context: &'c Context, rewriter: &RewriterBase) {
        let location = self.reduce_scatter.location();
        let output = self
            .reduce_scatter
            .operand(1)
            .expect("a reduce-scatter has an output");
        let team = self.reduce_scatter.attribute("team").expect("a team");
        let kind = self.reduce_scatter.attribute("kind").expect("a kind");
        // Before the loop: the output (its allocation moved there, where it
        // came after the loop), without its scattered axis (extent 1), and
        // the input as the loop's iterations slice it.
        rewrite::hoist_before(rewriter, output, self.stream_for);
        let before = Builder::before(context, self.stream_for);
        let zero = before.index(0, location);
        let output_view = before.select(output, self.axis, zero, location);
        let input = match self.dropped {
            Some(dropped) => before.select(self.base, dropped, zero, location),
            None => self.base,
        };
        // At the end of each iteration: its block, reduced onto its owner.
        let body = self
            .stream_for
            .region(0)
            .expect("host.stream_for has a body")
            .first_block()
            .expect("with a block");
        let index: Value = body.argument(0).expect("the iteration's index").into();
        let terminator = body.terminator().expect("ends with host.yield");
        let at_end = Builder::before(context, terminator);
        let block = at_end.select(input, self.axis, index, location);
        let reduce = comm::ReduceOperation::builder(context, location)
            .request(builders::request_type(context))
            .input(block)
            .output(output_view)
            .kind(kind)
            .team(team)
            .dynamic_root(index)
            .build();
        let reduce = at_end.insert(reduce);
        at_end.wait(builders::result(reduce), location);
        let old_input = self.reduce_scatter.operand(0).expect("an input");
        rewriter.erase_op(self.wait);
        rewriter.erase_op(self.reduce_scatter);
        // The whole view the reduce-scatter took after the loop, now unused.
        if let Ok(view) = OperationResult::try_from(old_input)
            && ir::users(old_input).is_empty()
        {
            rewrite::erase_with_dead_operands(rewriter, view.owner());
        }
    }
}

/// `value` as `host.select %base[u][0]` of a base whose axis `u` has extent
/// 1: the base and `u`.
fn whole_view<'c: 'a, 'a>(value: Value<'c, 'a>) -> Option<(Value<'c, 'a>, usize)> {
    let select = OperationResult::try_from(value).ok()?.owner();
    if !Op::HostSelect.is(&select) || ir::operand(&select, 1).and_then(ir::constant) != Some(0) {
        return None;
    }
    let base = ir::operand(&select, 0)?;
    let dropped = usize::try_from(ir::integer_attribute(&select, "axis")?).ok()?;
    (static_shape(base.r#type())?.get(dropped) == Some(&1)).then_some((base, dropped))
}

/// Ops between a stream loop and the reduce-scatter after it that do no work.
fn does_no_work(op: &OperationRef) -> bool {
    matches!(
        Op::of(op),
        Some(Op::ArithConstant | Op::HostSelect | Op::HostAlloc | Op::MemrefExpandShape)
    )
}
