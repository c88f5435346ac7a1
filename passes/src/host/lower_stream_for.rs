//! `host-lower-stream-for`: expands every `host.stream_for` into the stream
//! ops it stands for, two `scf.for` over its range: the fork loop, in which
//! every pool stream waits for the caller's stream, then the work loop, whose
//! iteration switches to its pool stream, runs the body, and joins back
//! (the caller's stream current again, waiting for the iteration's stream).
//!
//! ```mlir
//! host.stream_for %c0 to %c4 step %c1 from %main streams %c2 {
//! ^bb0(%i: index, %s: !host.stream):
//!   host.neg ins(...) outs(...)
//! }
//! ```
//! becomes
//! ```mlir
//! scf.for %i = %c0 to %c4 step %c1 {
//!   %r = arith.remui %i, %c2 : index
//!   %s = host.stream_from_pool %r : !host.stream
//!   host.set_current_stream %s
//!   host.sync_stream %main
//! }
//! scf.for %i = %c0 to %c4 step %c1 {
//!   %r = arith.remui %i, %c2 : index
//!   %s = host.stream_from_pool %r : !host.stream
//!   host.set_current_stream %s
//!   host.neg ins(...) outs(...)
//!   host.set_current_stream %main
//!   host.sync_stream %s
//! }
//! ```
//! Without `streams`, the pool index is the loop index (no `arith.remui`).
//! A loop whose iterations do nothing (its body only takes views) is erased,
//! with the bounds and caller stream only it used.
//! A `host.stream_for` nested in another one's body is expanded first. The
//! pass cannot fail: what it needs is what the op's verifier checks.
//! [`expand`] is the rewrite, which host-p2p-pipeline uses too: it returns
//! what it made ([`Expanded`]), so that nothing need recognise it.

use crate::{HirPass, ir, ops::Op, patterns, rewrite};
use hir_dialects::host;
use melior::{
    Context, RewriterBase,
    dialect::{arith, ods, scf},
    ir::{
        Block, BlockLike, Location, Operation, OperationRef, Region, RegionLike, Type, Value,
        operation::OperationLike,
    },
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-lower-stream-for";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(LowerStreamFor)
}

struct LowerStreamFor;

impl HirPass for LowerStreamFor {
    fn run(&mut self, function: OperationRef) -> bool {
        erase_loops_that_do_nothing(function);
        // Post-order: nested stream loops are expanded before the ones around them.
        patterns::walk(function, |context, set| {
            patterns::add(
                set,
                context,
                host::StreamForOperation::name(),
                &[
                    ods::scf::ForOperation::name(),
                    ods::scf::YieldOperation::name(),
                    host::StreamFromPoolOperation::name(),
                    host::SetCurrentStreamOperation::name(),
                    host::SyncStreamOperation::name(),
                    ods::arith::RemUIOperation::name(),
                ],
                |stream_for, rewriter| {
                    expand(rewriter, stream_for);
                    true
                },
            );
        });
        true
    }
}

/// Erases each `host.stream_for` whose iterations do nothing (its body only
/// takes views: convert-fusion-to-host's loop over the slices of a
/// collective that stayed whole, when no ring was made of it), and then what
/// only it used (its bounds, its caller stream), so that no fork and join of
/// streams is left for nothing. Inner loops go first.
fn erase_loops_that_do_nothing(function: OperationRef) {
    let rewriter = rewrite::rewriter(function);
    let rewriter = rewriter.as_rewriter_base();
    let loops: Vec<OperationRef> = ir::nested(function)
        .into_iter()
        .filter(|op| Op::HostStreamFor.is(op))
        .collect();
    for stream_for in loops.into_iter().rev() {
        if rewrite::is_trivially_dead(stream_for) {
            rewrite::erase_with_dead_operands(&rewriter, stream_for);
        }
    }
}

/// What [`expand`] made of a `host.stream_for`: its work loop; the op that
/// takes the loop index to pick the iteration's pool stream (the
/// `arith.remui` where the streams rotate, else the `host.stream_from_pool`),
/// that stream and the switch to it; and the join: the switch back to the
/// caller's stream, then the `host.sync_stream` of the iteration's.
pub struct Expanded<'c, 'a> {
    pub work: OperationRef<'c, 'a>,
    pub pick: OperationRef<'c, 'a>,
    pub stream: Value<'c, 'a>,
    pub switch: OperationRef<'c, 'a>,
    pub join: OperationRef<'c, 'a>,
    pub sync: OperationRef<'c, 'a>,
}

/// Replaces `stream_for` (a `host.stream_for`) by its fork loop and its work
/// loop, through `rewriter`: the body's ops move into the work loop, between
/// the switch to the iteration's stream and the join. Returns the work loop's
/// parts that host-p2p-pipeline rewrites.
pub fn expand<'c, 'a>(
    rewriter: &RewriterBase<'c, '_>,
    stream_for: OperationRef<'c, 'a>,
) -> Expanded<'c, 'a> {
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite.
    let context = unsafe { context.to_ref() };
    let location = stream_for.location();
    let operand = |position| {
        stream_for
            .operand(position)
            .expect("verified: host.stream_for has its range and caller")
    };
    let (lower, upper, step, caller) = (operand(0), operand(1), operand(2), operand(3));
    // Counted, not asked for: melior prints the op into the error of an
    // absent operand, and printing verifies the module, which other threads
    // rewrite (function passes run in parallel).
    let streams = (stream_for.operand_count() > 4).then(|| operand(4));
    let body = stream_for
        .region(0)
        .expect("host.stream_for has a body")
        .first_block()
        .expect("verified: one block");

    rewriter.set_insertion_point_before(stream_for);
    // Fork: every pool stream waits for the caller's stream.
    let fork = new_loop(context, [lower, upper, step], location, |block, index| {
        let stream = pool_stream(context, block, index, streams, location);
        block.append_operation(set_current_stream(context, stream, location));
        block.append_operation(sync_stream(context, caller, location));
    });
    rewriter.insert(fork);
    // Work: the iteration's stream, the body, the join.
    let work = new_loop(context, [lower, upper, step], location, |block, index| {
        let stream = pool_stream(context, block, index, streams, location);
        block.append_operation(set_current_stream(context, stream, location));
        block.append_operation(set_current_stream(context, caller, location));
        block.append_operation(sync_stream(context, stream, location));
    });
    rewriter.insert(work);
    let work = ir::block_ops(stream_for.block().expect("host.stream_for is in a block"))
        .take_while(|op| *op != stream_for)
        .last()
        .expect("the work loop was inserted before the op");
    let work_body = work
        .region(0)
        .expect("a loop has a body")
        .first_block()
        .expect("with a block");
    // [remui,] stream_from_pool, set_current_stream, the join's
    // set_current_stream and sync_stream, scf.yield.
    let ops: Vec<OperationRef> = ir::block_ops(work_body).collect();
    let (pick, switch) = (ops[0], ops[ops.len() - 4]);
    let (join, sync) = (ops[ops.len() - 3], ops[ops.len() - 2]);
    let index: Value = work_body.argument(0).expect("the loop index").into();
    let stream = sync.operand(0).expect("sync_stream has its stream");
    let host_yield = body
        .terminator()
        .expect("verified: the body ends with host.yield");
    rewriter.inline_block_before(body, join, &[index, stream]);
    rewriter.erase_op(host_yield);
    rewriter.erase_op(stream_for);
    Expanded {
        work,
        pick,
        stream,
        switch,
        join,
        sync,
    }
}

/// `scf.for` over `[lower, upper, step]` whose body `fill` builds (before its
/// `scf.yield`), given the body block and the loop index.
fn new_loop<'c>(
    context: &'c Context,
    [lower, upper, step]: [Value<'c, '_>; 3],
    location: Location<'c>,
    fill: impl FnOnce(&Block<'c>, Value<'c, '_>),
) -> Operation<'c> {
    let block = Block::new(&[(Type::index(context), location)]);
    let index: Value = block.argument(0).expect("the loop index").into();
    fill(&block, index);
    block.append_operation(scf::r#yield(&[], location));
    let region = Region::new();
    region.append_block(block);
    scf::r#for(lower, upper, step, region, location)
}

/// Appends `host.stream_from_pool` of `index` (`index mod streams` where
/// `streams` is given) to `block`, and returns the stream.
fn pool_stream<'c, 'b>(
    context: &'c Context,
    block: &'b Block<'c>,
    index: Value<'c, '_>,
    streams: Option<Value<'c, '_>>,
    location: Location<'c>,
) -> Value<'c, 'b> {
    let index = match streams {
        Some(streams) => block
            .append_operation(arith::remui(index, streams, location))
            .result(0)
            .expect("remui has a result")
            .into(),
        None => index,
    };
    block
        .append_operation(
            host::StreamFromPoolOperation::builder(context, location)
                .stream(crate::builders::stream_type(context))
                .index(index)
                .build()
                .into(),
        )
        .result(0)
        .expect("stream_from_pool has a result")
        .into()
}

fn set_current_stream<'c>(
    context: &'c Context,
    stream: Value<'c, '_>,
    location: Location<'c>,
) -> Operation<'c> {
    host::set_current_stream(context, stream, location).into()
}

fn sync_stream<'c>(
    context: &'c Context,
    stream: Value<'c, '_>,
    location: Location<'c>,
) -> Operation<'c> {
    host::sync_stream(context, stream, location).into()
}
