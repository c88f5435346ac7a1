//! `host-lower-stream-for`: expands every `host.stream_for` into the stream
//! ops it stands for, `scf.for` loops over its range: the fork loop, in
//! which every pool stream the loop uses waits for the caller's stream; the
//! work loop, whose iteration switches to its pool stream and runs the body;
//! and the join, in which the caller's stream, current again, waits for the
//! pool streams.
//!
//! ```mlir
//! host.stream_for %c0 to %c4 step %c1 from %main streams %c2 {
//! ^bb0(%i: index, %s: !host.stream):
//!   host.neg ins(...) outs(...)
//! }
//! ```
//! becomes
//! ```mlir
//! %0 = arith.muli %c2, %c1 : index
//! %1 = arith.addi %c0, %0 : index
//! %forked = arith.minsi %c4, %1 : index       // the first 2 iterations
//! scf.for %i = %c0 to %forked step %c1 {      // fork
//!   %r = arith.remui %i, %c2 : index
//!   %s = host.stream_from_pool %r : !host.stream
//!   host.set_current_stream %s
//!   host.sync_stream %main
//! }
//! scf.for %i = %c0 to %c4 step %c1 {          // work
//!   %r = arith.remui %i, %c2 : index
//!   %s = host.stream_from_pool %r : !host.stream
//!   host.set_current_stream %s
//!   host.neg ins(...) outs(...)
//! }
//! host.set_current_stream %main
//! scf.for %i = %c0 to %forked step %c1 {      // join
//!   %r = arith.remui %i, %c2 : index
//!   %s = host.stream_from_pool %r : !host.stream
//!   host.sync_stream %s
//! }
//! ```
//! With `streams`, iterations past the first `streams` use the pool streams
//! of the first ones again, so the fork and the join stop there: a pool
//! stream is forked once and joined once, whatever the number of
//! iterations. Without `streams`, the pool index is the loop index (no
//! `arith.remui`) and the fork and the join run over the whole range.
//!
//! A body that uses the caller's stream `%main` (host-p2p-pipeline's rings
//! put transfers on it) must see the earlier iterations joined into it, so
//! its iterations each end with the join instead, and no join loop follows:
//! ```mlir
//! scf.for %i = %c0 to %c4 step %c1 {          // work
//!   ...
//!   host.neg ins(...) outs(...)
//!   host.set_current_stream %main             // join
//!   host.sync_stream %s
//! }
//! ```
//! A loop whose iterations do nothing (its body only takes views) is erased,
//! with the bounds and caller stream only it used.
//! A `host.stream_for` nested in another one's body is expanded first. The
//! pass cannot fail: what it needs is what the op's verifier checks.
//! [`expand`] is the rewrite with a join per iteration, which
//! host-p2p-pipeline uses: it returns what it made ([`Expanded`]), so that
//! nothing need recognise it.

use crate::{HirPass, ir, ops::Op, patterns, rewrite};
use hir_dialects::host;
use melior::{
    Context, RewriterBase,
    dialect::{arith, ods, scf},
    ir::{
        Block, BlockLike, BlockRef, Location, Operation, OperationRef, Region, RegionLike, Type,
        Value, operation::OperationLike,
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
                    ods::arith::MulIOperation::name(),
                    ods::arith::AddIOperation::name(),
                    ods::arith::MinSIOperation::name(),
                ],
                |stream_for, rewriter| {
                    let stream_for = StreamFor::of(stream_for);
                    if stream_for.body_uses_caller() {
                        expand_loop(rewriter, &stream_for);
                    } else {
                        expand_joined_after(rewriter, &stream_for);
                    }
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

/// A `host.stream_for`'s operands and body, as its verifier guarantees them.
struct StreamFor<'c, 'a> {
    op: OperationRef<'c, 'a>,
    lower: Value<'c, 'a>,
    upper: Value<'c, 'a>,
    step: Value<'c, 'a>,
    caller: Value<'c, 'a>,
    streams: Option<Value<'c, 'a>>,
    body: BlockRef<'c, 'a>,
    location: Location<'c>,
}

impl<'c, 'a> StreamFor<'c, 'a> {
    fn of(op: OperationRef<'c, 'a>) -> Self {
        let operand = |position| {
            op.operand(position)
                .expect("verified: host.stream_for has its range and caller")
        };
        StreamFor {
            op,
            lower: operand(0),
            upper: operand(1),
            step: operand(2),
            caller: operand(3),
            // Counted, not asked for: melior prints the op into the error of
            // an absent operand, and printing verifies the module, which
            // other threads rewrite (function passes run in parallel).
            streams: (op.operand_count() > 4).then(|| operand(4)),
            body: op
                .region(0)
                .expect("host.stream_for has a body")
                .first_block()
                .expect("verified: one block"),
            location: op.location(),
        }
    }

    /// Whether an op in the body (nested regions included) uses the caller's
    /// stream: then the caller's stream must have joined the iterations
    /// before each next one, as the op's semantics say (host-p2p-pipeline's
    /// rings put their transfers on it).
    fn body_uses_caller(&self) -> bool {
        ir::users(self.caller).into_iter().any(|user| {
            std::iter::successors(user.parent_operation(), |op| op.parent_operation())
                .any(|ancestor| ancestor == self.op)
        })
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
/// loop whose iterations each end with the join, through `rewriter`: the
/// body's ops move into the work loop, between the switch to the iteration's
/// stream and the join. Returns the work loop's parts that host-p2p-pipeline
/// rewrites (it moves the joins itself, after its ring's transfers).
pub fn expand<'c, 'a>(
    rewriter: &RewriterBase<'c, '_>,
    stream_for: OperationRef<'c, 'a>,
) -> Expanded<'c, 'a> {
    expand_loop(rewriter, &StreamFor::of(stream_for))
}

/// [`expand`], of the parts of the `host.stream_for` it reads.
fn expand_loop<'c, 'a>(
    rewriter: &RewriterBase<'c, '_>,
    stream_for: &StreamFor<'c, 'a>,
) -> Expanded<'c, 'a> {
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite.
    let context = unsafe { context.to_ref() };
    let StreamFor {
        lower,
        upper,
        step,
        caller,
        streams,
        location,
        ..
    } = *stream_for;
    rewriter.set_insertion_point_before(stream_for.op);
    insert_fork(rewriter, context, stream_for);
    // Work: the iteration's stream, the body, the join.
    let work = new_loop(context, [lower, upper, step], location, |block, index| {
        let stream = pool_stream(context, block, index, streams, location);
        block.append_operation(set_current_stream(context, stream, location));
        block.append_operation(set_current_stream(context, caller, location));
        block.append_operation(sync_stream(context, stream, location));
    });
    rewriter.insert(work);
    // Found again rather than kept from `insert`, whose reference lives only
    // as long as the rewriter's borrow.
    let work = ir::block_ops(
        stream_for
            .op
            .block()
            .expect("host.stream_for is in a block"),
    )
    .take_while(|op| *op != stream_for.op)
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
    inline_body(rewriter, stream_for, join, index, stream);
    Expanded {
        work,
        pick,
        stream,
        switch,
        join,
        sync,
    }
}

/// Replaces `stream_for`, whose body does not use the caller's stream, by
/// its fork loop, its work loop with no join in its iterations, and one join
/// after it: the caller's stream current again, then a loop over the same
/// iterations as the fork's in which it waits for each pool stream. The
/// same order as a join per iteration, one wait per pool stream instead of
/// one per iteration: each pool stream runs its iterations in order, so
/// waiting for its last covers its earlier ones, and the caller's stream,
/// which nothing in the loop uses, gets no work between the joins.
fn expand_joined_after<'c>(rewriter: &RewriterBase<'c, '_>, stream_for: &StreamFor<'c, '_>) {
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite.
    let context = unsafe { context.to_ref() };
    let StreamFor {
        lower,
        upper,
        step,
        caller,
        streams,
        location,
        ..
    } = *stream_for;
    rewriter.set_insertion_point_before(stream_for.op);
    let forked = insert_fork(rewriter, context, stream_for);
    let work = rewriter.insert(new_loop(
        context,
        [lower, upper, step],
        location,
        |block, index| {
            let stream = pool_stream(context, block, index, streams, location);
            block.append_operation(set_current_stream(context, stream, location));
        },
    ));
    rewriter.insert(set_current_stream(context, caller, location));
    rewriter.insert(new_loop(
        context,
        [lower, forked, step],
        location,
        |block, index| {
            let stream = pool_stream(context, block, index, streams, location);
            block.append_operation(sync_stream(context, stream, location));
        },
    ));
    let work_body = work
        .region(0)
        .expect("a loop has a body")
        .first_block()
        .expect("with a block");
    // [remui,] stream_from_pool, set_current_stream, scf.yield (read in
    // order: melior has no previous op).
    let ops: Vec<OperationRef> = ir::block_ops(work_body).collect();
    let (switch, end) = (ops[ops.len() - 2], ops[ops.len() - 1]);
    let index: Value = work_body.argument(0).expect("the loop index").into();
    let stream = switch
        .operand(0)
        .expect("set_current_stream has its stream");
    inline_body(rewriter, stream_for, end, index, stream);
}

/// Inserts, through `rewriter`, the fork loop of `stream_for`, in which
/// every pool stream it uses waits for the caller's stream, and returns the
/// loop's upper bound. With `streams` the pool index `i mod streams` of
/// iteration `k` is periodic in `k` with a period dividing `streams`, so the
/// first `streams` iterations use every pool stream the loop uses, and later
/// ones would only fork the same streams again from the same state of the
/// caller's: the fork stops at `min(upper, lower + streams * step)`, signed
/// as `scf.for` compares its bounds. Without it, every iteration has a
/// stream of its own.
fn insert_fork<'c, 'r>(
    rewriter: &'r RewriterBase<'c, '_>,
    context: &'c Context,
    stream_for: &StreamFor<'c, 'r>,
) -> Value<'c, 'r> {
    let StreamFor {
        lower,
        upper,
        step,
        caller,
        streams,
        location,
        ..
    } = *stream_for;
    let forked = match streams {
        Some(streams) => {
            let value = |op: OperationRef<'c, 'r>| -> Value<'c, 'r> {
                op.result(0).expect("arith ops have a result").into()
            };
            let span = value(rewriter.insert(arith::muli(streams, step, location)));
            let end = value(rewriter.insert(arith::addi(lower, span, location)));
            value(rewriter.insert(arith::minsi(upper, end, location)))
        }
        None => upper,
    };
    rewriter.insert(new_loop(
        context,
        [lower, forked, step],
        location,
        |block, index| {
            let stream = pool_stream(context, block, index, streams, location);
            block.append_operation(set_current_stream(context, stream, location));
            block.append_operation(sync_stream(context, caller, location));
        },
    ));
    forked
}

/// Moves the body of `stream_for` before `before`, in the work loop whose
/// index and iteration's stream are `index` and `stream`, and erases the op.
fn inline_body<'c>(
    rewriter: &RewriterBase<'c, '_>,
    stream_for: &StreamFor<'c, '_>,
    before: OperationRef<'c, '_>,
    index: Value<'c, '_>,
    stream: Value<'c, '_>,
) {
    let host_yield = stream_for
        .body
        .terminator()
        .expect("verified: the body ends with host.yield");
    rewriter.inline_block_before(stream_for.body, before, &[index, stream]);
    rewriter.erase_op(host_yield);
    rewriter.erase_op(stream_for.op);
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
