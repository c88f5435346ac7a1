//! `host-insert-dealloc`: frees every `host.alloc` after its last use.
//!
//! A use is a use of the buffer or of any view of it (`host.select`, the
//! `memref.subview` of a ring step's part or of a `stream<k>` chunk, the
//! `memref.expand_shape` of host-presplit-chunks, taken transitively). A communication posted on the buffer runs until it is
//! waited for, so the `comm.wait` of its request (of its coalescing group's
//! request, for a send or receive inside a group) is a use too. The last use
//! is found among the ops of the allocation's block: a use nested in a loop
//! counts as the loop. `host.dealloc` is
//! ordered on the current stream like the work before it, so freeing after
//! a `host.stream_for` is safe: joining every iteration's stream into the
//! caller's is the op's semantics. Where a ring has moved the joins out of
//! its loop, the joins after the last use (`host.sync_stream`, or the loop
//! of them that host-p2p-pipeline leaves after a ring) are what order the
//! streams that used the buffer before the current one, so the dealloc
//! follows them: those right after it, and, when the last use is a loop
//! that leaves a pool stream it made current unjoined, the first join after
//! it even past other ops (the GEMM+RS ring sums its slots before its joins;
//! without a join after such a loop the buffer is not freed). The runtime
//! frees stream-ordered from there: the block is reused only behind the
//! work enqueued on it. A buffer that
//! escapes (returned, or passed to an op that is not a HIR op), whose
//! communication's request goes elsewhere than to `comm` ops, or that is
//! already freed is left alone.
//!
//! ```mlir
//! %g = host.alloc : memref<4x8xf32>
//! host.stream_for %c0 to %c4 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %gi = host.select %g[0][%i] : ...
//!   host.neg ins(%gi : ...) outs(%gi : ...)
//! }
//! return
//! ```
//! becomes
//! ```mlir
//! %g = host.alloc : memref<4x8xf32>
//! host.stream_for %c0 to %c4 step %c1 from %main { ... }
//! host.dealloc %g : memref<4x8xf32>
//! return
//! ```
//! and a buffer a collective reads is freed after the wait, not after the
//! collective:
//! ```mlir
//! %r = comm.allreduce %g into %out sum team [0, 1] : ...
//! comm.wait %r
//! host.dealloc %g : memref<4x8xf32>
//! ```

use crate::{HirPass, builders::Builder, ir, ops::Op};
use melior::ir::{
    OperationRef, Value,
    operation::{OperationLike, OperationResult},
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-insert-dealloc";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(InsertDealloc)
}

struct InsertDealloc;

impl HirPass for InsertDealloc {
    fn run(&mut self, function: OperationRef) -> bool {
        // Inserting deallocs erases nothing, so the collected ops stay live.
        for alloc in ir::nested(function) {
            if Op::HostAlloc.is(&alloc) {
                insert_dealloc(alloc);
            }
        }
        true
    }
}

/// Every op that uses `value` or a view of it (a `host.select`,
/// `memref.subview` or `memref.expand_shape`, or an
/// `scf.if` or `arith.select` result it may be), and the users of the requests that complete
/// the communications among them.
fn users_through_views<'c, 'a>(value: Value<'c, 'a>, users: &mut Vec<OperationRef<'c, 'a>>) {
    for user in ir::users(value) {
        if let Some(branch) = user
            .parent_operation()
            .filter(|parent| Op::ScfYield.is(&user) && Op::ScfIf.is(parent))
        {
            for index in 0..user.operand_count() {
                if ir::operand(&user, index) == Some(value) {
                    let result = branch.result(index).expect("scf.if yields its results");
                    users_through_views(result.into(), users);
                }
            }
            continue;
        }
        if Op::ArithSelect.is(&user) {
            // What canonicalize makes of an scf.if yielding one of two buffers.
            users_through_views(user.result(0).expect("select has a result").into(), users);
            continue;
        }
        users.push(user);
        match Op::of(&user) {
            Some(
                Op::HostSelect | Op::MemrefSubview | Op::MemrefExpandShape | Op::MemrefTranspose,
            ) => users_through_views(user.result(0).expect("a view has a result").into(), users),
            _ if ir::name(&user).starts_with("comm.") => {
                for request in [Some(user), group_end(user)].into_iter().flatten() {
                    if let Some(request) = ir::result(&request, 0) {
                        users.extend(ir::users(request.into()));
                    }
                }
            }
            _ => {}
        }
    }
}

/// The `comm.end_coalescing` closing the group `op` is posted in, if any: the
/// next coalescing op after `op` in its block (groups do not nest and close
/// in their block).
fn group_end<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    std::iter::successors(op.next_in_block(), |next| next.next_in_block())
        .find(|next| {
            matches!(
                Op::of(next),
                Some(Op::CommStartCoalescing | Op::CommEndCoalescing)
            )
        })
        .filter(|next| Op::CommEndCoalescing.is(next))
}

fn insert_dealloc(alloc: OperationRef) {
    let block = alloc
        .block()
        .expect("an alloc inside a function has a block");
    let buffer: Value = alloc.result(0).expect("alloc has a result").into();
    let mut users = Vec::new();
    users_through_views(buffer, &mut users);
    let mut last = alloc;
    for user in users {
        let name = ir::name(&user);
        let hir = name.starts_with("host.")
            || name.starts_with("comm.")
            || matches!(
                Op::of(&user),
                Some(Op::MemrefSubview | Op::MemrefExpandShape | Op::MemrefTranspose)
            );
        if Op::HostDealloc.is(&user) || !hir {
            return;
        }
        let Some(ancestor) = ir::ancestor_in(user, block) else {
            return;
        };
        if last.is_before_in_block(ancestor) {
            last = ancestor;
        }
    }
    if leaves_streams_unjoined(last) {
        // A ring that moved its joins out of its loop: the streams that used
        // the buffer are ordered before the current one only at the joins
        // after it, which need not follow at once (the RS ring sums its
        // slots on the caller's stream first).
        let Some(join) =
            std::iter::successors(last.next_in_block(), |op| op.next_in_block()).find(is_join)
        else {
            return;
        };
        last = join;
    }
    while let Some(next) = last.next_in_block().filter(is_join) {
        last = next;
    }
    let context = alloc.context();
    // SAFETY: `context` lives through the call, the only place the reference is used.
    let context = unsafe { context.to_ref() };
    Builder::after(context, last).insert(hir_dialects::host::dealloc(
        context,
        buffer,
        alloc.location(),
    ));
}

/// Whether the loop `op` leaves work on a pool stream it made current that
/// its body does not join back: a pool stream is pending from its
/// `host.set_current_stream` (one nested in an `scf.if` too) until a later
/// `host.sync_stream` of it in the body.
fn leaves_streams_unjoined(op: OperationRef) -> bool {
    let mut pending: Vec<Value> = Vec::new();
    for op in ir::body(op) {
        if Op::HostSyncStream.is(&op) {
            let synced = ir::operand(&op, 0);
            pending.retain(|stream| Some(*stream) != synced);
            continue;
        }
        for op in std::iter::once(op).chain(ir::nested(op)) {
            if let Some(stream) = Op::HostSetCurrentStream
                .is(&op)
                .then(|| ir::operand(&op, 0))
                .flatten()
                .filter(|&stream| is_pool_stream(stream) && !pending.contains(&stream))
            {
                pending.push(stream);
            }
        }
    }
    !pending.is_empty()
}

fn is_pool_stream(stream: Value) -> bool {
    OperationResult::try_from(stream).is_ok_and(|result| Op::HostStreamFromPool.is(&result.owner()))
}

/// `host.sync_stream`, or a loop that only joins pool streams into the
/// current one (host-p2p-pipeline's joins after a ring; a `host.stream_for`
/// joins its iterations itself).
fn is_join(op: &OperationRef) -> bool {
    match Op::of(op) {
        Some(Op::HostSyncStream) => true,
        Some(Op::ScfFor) => ir::body(*op).iter().all(|op| {
            matches!(
                Op::of(op),
                Some(Op::HostStreamFromPool | Op::HostSyncStream | Op::ArithRemui | Op::ScfYield)
            )
        }),
        _ => false,
    }
}
