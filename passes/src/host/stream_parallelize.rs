//! `host-stream-parallelize{num-streams=N}`: fuses the stream loops of a
//! function. `convert-fusion-to-host` puts each stream-parallel op in its own
//! `host.stream_for`, whose body works on iteration i's slices; this pass
//! fuses a loop into the next one when they run the same range from the same
//! caller stream, only ops that do no work (views, allocations, constants,
//! ranks) lie between them, and fusing keeps every dependence inside one
//! iteration. The fused loop is the later one: its body is the earlier
//! body, then its own, and the ops between stay in front of it, so the
//! iterations of both overlap instead of the second loop waiting for all of
//! the first. Any other op, or a loop that only takes views (the slices of a
//! collective that stays whole, kept for `host-p2p-pipeline`), closes the
//! run of loops.
//!
//! Fusing is legal when every buffer one loop writes and the other touches
//! is taken, in both, only as slices at the loop index along one same axis
//! (through `host.select`, or as chunks of one same size: the
//! `memref.subview` of `stream<k>` loops at `index * size`; also of views
//! made before the loops: a `host.select` or `memref.subview` part of it
//! along another axis); then iteration i of the second loop reads only what
//! iteration i of the first wrote. A buffer both only read is no dependence.
//!
//! Then, in each loop left, the views and constants that are the same in
//! every iteration (a matmul operand's batch axis of extent 1 taken at 0) are
//! hoisted in front of it, and `num-streams=N` (N > 0) rotates its
//! iterations over the first N streams of the pool (`streams %cN`:
//! `stream_from_pool (i mod N)`); 0, the default, leaves the rotation to the
//! pool's size.
//!
//! ```mlir
//! host.stream_for %c0 to %c4 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %ai = host.select %a[0][%i] : ...
//!   %ti = host.select %t[0][%i] : ...
//!   host.neg ins(%ai : ...) outs(%ti : ...)
//! }
//! %u = host.alloc : memref<4x8xf32>
//! host.stream_for %c0_0 to %c4_1 step %c1_2 from %main {
//! ^bb0(%j: index, %s2: !host.stream):
//!   %tj = host.select %t[0][%j] : ...
//!   %oj = host.select %out[0][%j] : ...
//!   host.exp ins(%tj : ...) outs(%oj : ...)
//! }
//! ```
//! becomes
//! ```mlir
//! %u = host.alloc : memref<4x8xf32>
//! host.stream_for %c0_0 to %c4_1 step %c1_2 from %main {
//! ^bb0(%j: index, %s2: !host.stream):
//!   %ai = host.select %a[0][%j] : ...
//!   %ti = host.select %t[0][%j] : ...
//!   host.neg ins(%ai : ...) outs(%ti : ...)
//!   %tj = host.select %t[0][%j] : ...
//!   %oj = host.select %out[0][%j] : ...
//!   host.exp ins(%tj : ...) outs(%oj : ...)
//! }
//! ```
//! A `host.stream_for` nested in another op is left as it is. The pass
//! cannot fail.

use crate::{
    HirPass,
    builders::Builder,
    ir,
    ops::{self, Op},
    patterns, rewrite,
};
use hir_dialects::host;
use melior::{
    RewriterBase,
    ir::{
        BlockLike, BlockRef, OperationRef, RegionLike, Value, ValueLike,
        operation::{OperationLike, OperationResult},
        r#type::MemRefType,
    },
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-stream-parallelize";

/// Creates the pass; `num_streams` is 0 for the pool's size.
pub fn create(num_streams: i64) -> Box<dyn HirPass> {
    Box::new(StreamParallelize { num_streams })
}

struct StreamParallelize {
    num_streams: i64,
}

impl HirPass for StreamParallelize {
    fn run(&mut self, function: OperationRef) -> bool {
        let num_streams = self.num_streams;
        // In program order: a loop fused into the next is visited before it.
        patterns::walk(function, |context, set| {
            patterns::add(
                set,
                context,
                host::StreamForOperation::name(),
                &[ops::Op::ArithConstant.name()],
                move |stream_for, rewriter| {
                    // The loops of the function, not those nested in others.
                    if !stream_for
                        .parent_operation()
                        .is_some_and(|parent| Op::FuncFunc.is(&parent))
                    {
                        return false;
                    }
                    match fused_with(stream_for) {
                        Some(next) => fuse(rewriter, stream_for, next),
                        None => finish(rewriter, stream_for, num_streams),
                    }
                    true
                },
            );
        });
        // The loops fused into others are empty: they go with the bounds
        // only they used.
        let rewriter = rewrite::rewriter(function);
        let rewriter = rewriter.as_rewriter_base();
        for stream_for in ir::body(function) {
            if Op::HostStreamFor.is(&stream_for) && work(stream_for).is_empty() {
                rewrite::erase_with_dead_operands(&rewriter, stream_for);
            }
        }
        true
    }
}

/// The body of `stream_for`.
fn body<'c, 'a>(stream_for: OperationRef<'c, 'a>) -> BlockRef<'c, 'a> {
    stream_for
        .region(0)
        .expect("host.stream_for has a body")
        .first_block()
        .expect("verified: one block")
}

/// The ops of `stream_for`'s body, but its terminator.
fn work<'c, 'a>(stream_for: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut ops: Vec<_> = ir::block_ops(body(stream_for)).collect();
    ops.pop();
    ops
}

/// Whether the loop only takes views: the slices of a collective that
/// stayed whole, which is never fused.
fn takes_views_only(stream_for: OperationRef) -> bool {
    work(stream_for).iter().all(|op| {
        matches!(
            Op::of(op),
            Some(Op::HostSelect | Op::MemrefSubview | Op::ArithMuli | Op::ArithConstant)
        )
    })
}

/// Ops that do no work (views, allocations, constants, ranks): they may sit
/// between two loops that are fused, and stay in front of the fused one.
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

/// The loop `stream_for` fuses into: the next op of its block but for
/// setup ops, when it is a loop of the same range and caller and fusing is
/// legal.
fn fused_with<'c, 'a>(stream_for: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let next = std::iter::successors(stream_for.next_in_block(), |op| op.next_in_block())
        .find(|op| !is_setup(op))?;
    let same_operands = stream_for.operand_count() == next.operand_count()
        && (0..stream_for.operand_count()).all(|position| {
            let (a, b) = (stream_for.operand(position), next.operand(position));
            // Bounds as constants (each loop has its own), the caller as a value.
            a == b
                || a.ok()
                    .and_then(ir::constant)
                    .is_some_and(|a| b.ok().and_then(ir::constant) == Some(a))
        });
    (Op::HostStreamFor.is(&next)
        && same_operands
        && !takes_views_only(stream_for)
        && !takes_views_only(next)
        // One iteration runs the two bodies in order on one stream: every
        // dependence stays in it (two `stream<1>` loops).
        && (ir::runs_from_zero(&stream_for, 1) || independent(stream_for, next)))
    .then_some(next)
}

/// Moves the work of `stream_for` to the front of `next`'s body, on
/// `next`'s index and stream.
fn fuse<'c>(
    rewriter: &RewriterBase<'c, '_>,
    stream_for: OperationRef<'c, '_>,
    next: OperationRef<'c, '_>,
) {
    let (from, to) = (body(stream_for), body(next));
    for position in 0..2 {
        let old: Value = from.argument(position).expect("index and stream").into();
        let new: Value = to.argument(position).expect("index and stream").into();
        rewrite::replace_uses(rewriter, old, new, |_| false);
    }
    let front = to.first_operation().expect("the body ends with host.yield");
    for op in work(stream_for) {
        rewriter.move_op_before(op, front);
    }
}

/// A loop left after fusing: hoists what is the same in every iteration and
/// sets the rotation over `num_streams` streams.
fn finish<'c>(rewriter: &RewriterBase<'c, '_>, stream_for: OperationRef<'c, '_>, num_streams: i64) {
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite.
    let context = unsafe { context.to_ref() };
    let location = stream_for.location();
    if num_streams > 0 && stream_for.operand_count() == 4 {
        let streams = Builder::before(context, stream_for).index(num_streams, location);
        let mut operands: Vec<Value> = stream_for.operands().collect();
        operands.push(streams);
        rewrite::set_operands(rewriter, stream_for, &operands);
    }
    for op in work(stream_for) {
        let invariant = op.operands().all(|value| !defined_in(value, stream_for));
        if matches!(Op::of(&op), Some(Op::HostSelect | Op::ArithConstant)) && invariant {
            rewriter.move_op_before(op, stream_for);
        }
    }
}

/// Whether `value` is defined in `stream_for`'s body (or nested deeper).
fn defined_in(value: Value, stream_for: OperationRef) -> bool {
    std::iter::once(stream_for)
        .chain(ir::nested(stream_for))
        .any(|op| {
            op.results().any(|result| Value::from(result) == value) && op != stream_for
                || op.regions().any(|region| {
                    region.first_block().is_some_and(|block| {
                        (0..block.argument_count()).any(|position| {
                            block.argument(position).map(Value::from).ok() == Some(value)
                        })
                    })
                })
        })
}

/// How a loop takes a buffer defined outside it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Only slices at the loop index along this axis: the index itself
    /// (`None`), or the chunk of this many indices that starts at
    /// `index * size`.
    Slice(usize, Option<i64>),
    /// Otherwise.
    Whole,
}

/// The buffers defined outside `stream_for` that its body takes, as the
/// buffers they are views of (through `host.select` and `memref.subview`),
/// with how, and whether it writes them.
fn accesses<'c, 'a>(stream_for: OperationRef<'c, 'a>) -> Vec<(Value<'c, 'a>, Access, bool)> {
    let index: Value = body(stream_for).argument(0).expect("the index").into();
    let mut found = Vec::new();
    for op in ir::nested(stream_for) {
        for (position, value) in op.operands().enumerate() {
            if MemRefType::try_from(value.r#type()).is_err() || defined_in(value, stream_for) {
                continue;
            }
            let (access, writes) = if Op::HostSelect.is(&op) {
                let axis = ir::integer_attribute(&op, "axis").expect("verified") as usize;
                let at_index = ir::operand(&op, 1) == Some(index);
                (
                    if at_index {
                        Access::Slice(axis, None)
                    } else {
                        Access::Whole
                    },
                    view_written(op.result(0).expect("a view").into()),
                )
            } else if Op::MemrefSubview.is(&op) {
                (
                    crate::builders::chunk_at(&op, index).map_or(Access::Whole, |(axis, size)| {
                        Access::Slice(axis, Some(size))
                    }),
                    view_written(op.result(0).expect("a view").into()),
                )
            } else {
                (Access::Whole, writes(&op, position))
            };
            let (root, access) = root(value, access);
            found.push((root, access, writes));
        }
    }
    found
}

/// The buffer `value` is a view of, made outside the loops, and how an
/// access of the view accesses it: a slice at the index along `k` of a
/// `host.select` along `a` is within the slice along `k + (k >= a)` of its
/// source; of a `memref.subview` part along another axis, within the same
/// slice of its source.
fn root<'c: 'a, 'a>(value: Value<'c, 'a>, access: Access) -> (Value<'c, 'a>, Access) {
    let Ok(result) = OperationResult::try_from(value) else {
        return (value, access);
    };
    let op = result.owner();
    let Some(source) = ir::operand(&op, 0) else {
        return (value, access);
    };
    match Op::of(&op) {
        Some(Op::HostSelect) => {
            let axis = ir::integer_attribute(&op, "axis").expect("verified") as usize;
            let access = match access {
                Access::Slice(k, size) => Access::Slice(k + usize::from(k >= axis), size),
                Access::Whole => Access::Whole,
            };
            root(source, access)
        }
        Some(Op::MemrefSubview) => {
            let source_shape = crate::builders::static_shape(source.r#type());
            let shape = crate::builders::static_shape(value.r#type());
            let access = match access {
                Access::Slice(k, size)
                    if source_shape
                        .is_some_and(|source| shape.is_some_and(|shape| source[k] == shape[k])) =>
                {
                    Access::Slice(k, size)
                }
                _ => Access::Whole,
            };
            root(source, access)
        }
        _ => (value, access),
    }
}

/// Whether `op` writes its operand `position`: its destination, or any
/// buffer of an op that names none.
fn writes(op: &OperationRef, position: usize) -> bool {
    hir_dialects::destination(op).is_none_or(|destination| destination == position)
}

/// Whether an op writes the view `view` (or a view of it).
fn view_written(view: Value) -> bool {
    ir::users(view).into_iter().any(|user| {
        if matches!(Op::of(&user), Some(Op::HostSelect | Op::MemrefSubview)) {
            return view_written(user.result(0).expect("a view").into());
        }
        user.operands()
            .enumerate()
            .any(|(position, value)| value == view && writes(&user, position))
    })
}

/// Whether fusing `first` into `second` keeps every dependence between them
/// inside one iteration.
fn independent(first: OperationRef, second: OperationRef) -> bool {
    let (a, b) = (accesses(first), accesses(second));
    a.iter().chain(&b).all(|&(buffer, _, _)| {
        let of = |accesses: &[(Value, Access, bool)]| -> Vec<(Access, bool)> {
            accesses
                .iter()
                .filter(|(other, _, _)| *other == buffer)
                .map(|&(_, access, writes)| (access, writes))
                .collect()
        };
        let (in_a, in_b) = (of(&a), of(&b));
        if in_a.is_empty()
            || in_b.is_empty()
            || !in_a.iter().chain(&in_b).any(|&(_, writes)| writes)
        {
            return true;
        }
        let first = in_a[0].0;
        matches!(first, Access::Slice(..))
            && in_a.iter().chain(&in_b).all(|&(access, _)| access == first)
    })
}
