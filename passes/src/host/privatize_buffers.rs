//! `host-privatize-buffers`: an allocation that one stream loop alone uses,
//! each iteration only its own slice, becomes the iteration's own buffer of
//! one slice, allocated at the top of the loop's body. An intermediate of a
//! stream loop (a `stream<k>` GEMM's output chunk that an activation reads in
//! the same iteration; FC1's chunk that FC2 contracts) is then held one
//! chunk per iteration in flight instead of whole: the runtime keeps one
//! block per allocation site and pool stream in a loop, stream-ordered, so
//! the loop holds as many chunks as its pool streams, not its iterations.
//!
//! A `host.alloc` is privatized when every use of it is a view in the body
//! of one `host.stream_for` (nested ops included) taking the slice at the
//! loop's index along one same axis (a `host.select` at the index, or
//! chunks of one same size: the `memref.subview` at `index * size`), and
//! every user of those views is a HIR compute or communication op, not a
//! view (whose type would follow its source's) nor an op with a region (a
//! `host.fused`, whose body's arguments have its operands' types). Then no iteration touches
//! what another does, and nothing reads the buffer outside the loop.
//!
//! ```mlir
//! %h = host.alloc : memref<8x64xf32>
//! host.stream_for %c0 to %c4 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %k = arith.muli %i, %c16 : index
//!   %hi = memref.subview %h[0, %k] [8, 16] [1, 1] : memref<8x64xf32> to memref<8x16xf32, strided<[64, 1], offset: ?>>
//!   host.matmul ins(%x, %wi : ...) outs(%hi : ...)
//!   host.gelu ins(%hi : ...) outs(%ai : ...)
//! }
//! ```
//! becomes
//! ```mlir
//! host.stream_for %c0 to %c4 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %hi = host.alloc : memref<8x16xf32>
//!   host.matmul ins(%x, %wi : ...) outs(%hi : memref<8x16xf32>)
//!   host.gelu ins(%hi : memref<8x16xf32>) outs(%ai : ...)
//! }
//! ```
//! Runs after the passes that fuse the loops and their ops, and before
//! `host-insert-dealloc`, which frees each private buffer in its iteration
//! after its last use. The pass cannot fail: what it does not prove
//! private it leaves.

use crate::{
    HirPass,
    builders::{self, Builder},
    ir,
    ops::Op,
    rewrite,
};
use melior::ir::{
    BlockLike, OperationRef, RegionLike, Value, ValueLike,
    operation::OperationLike,
    r#type::{MemRefType, ShapedTypeLike},
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-privatize-buffers";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(PrivatizeBuffers)
}

struct PrivatizeBuffers;

impl HirPass for PrivatizeBuffers {
    fn run(&mut self, function: OperationRef) -> bool {
        let allocations: Vec<OperationRef> = ir::nested(function)
            .into_iter()
            .filter(|op| Op::HostAlloc.is(op))
            .collect();
        for allocation in allocations {
            if let Some(slices) = private_slices(allocation) {
                privatize(allocation, &slices);
            }
        }
        true
    }
}

/// How a view takes its iteration's slice.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Slice {
    /// `host.select` at the index along this axis.
    Index(usize),
    /// The chunk of this size at `index * size` along this axis.
    Chunk(usize, i64),
}

/// The views of `allocation`, if they are the slices of one stream loop's
/// iterations that make the buffer private to each (see the module's doc).
fn private_slices<'c, 'a>(allocation: OperationRef<'c, 'a>) -> Option<Vec<OperationRef<'c, 'a>>> {
    let buffer: Value = ir::result(&allocation, 0)?.into();
    let views = ir::users(buffer);
    let first = views.first()?;
    let stream_for = std::iter::successors(first.parent_operation(), |op| op.parent_operation())
        .find(|op| Op::HostStreamFor.is(op))?;
    let body = ir::region(&stream_for, 0)?.first_block()?;
    let index: Value = body.argument(0).ok()?.into();
    let mut taken = None;
    for view in &views {
        let slice = slice_at(view, buffer, index)?;
        let inside = std::iter::successors(view.parent_operation(), |op| op.parent_operation())
            .any(|ancestor| ancestor == stream_for);
        let used_by_compute = ir::users(ir::result(view, 0)?.into())
            .iter()
            .all(|user| is_compute_or_communication(user));
        if !inside || !used_by_compute || *taken.get_or_insert(slice) != slice {
            return None;
        }
    }
    Some(views)
}

/// How `view` takes the slice of `buffer` at `index`, if it does.
fn slice_at(view: &OperationRef, buffer: Value, index: Value) -> Option<Slice> {
    if ir::operand(view, 0) != Some(buffer) {
        return None;
    }
    match Op::of(view)? {
        Op::HostSelect if ir::operand(view, 1) == Some(index) => {
            Some(Slice::Index(ir::integer_attribute(view, "axis")? as usize))
        }
        Op::MemrefSubview => {
            builders::chunk_at(view, index).map(|(axis, size)| Slice::Chunk(axis, size))
        }
        _ => None,
    }
}

/// Whether `op` is a HIR op that computes or communicates on buffers: one
/// that takes a buffer operand whatever its layout, unlike a view, or a
/// `host.fused`, whose body's arguments have its operands' types.
fn is_compute_or_communication(op: &OperationRef) -> bool {
    (Op::HostCopy.same_dialect(op) || Op::CommWait.same_dialect(op))
        && op.region_count() == 0
        && !ir::is_view(op)
        && !matches!(Op::of(op), Some(Op::HostDealloc | Op::CommShareMemHandles))
}

/// Allocates each iteration's slice at the top of the loop's body, has the
/// views' users use it, and erases the views and `allocation`.
fn privatize(allocation: OperationRef, views: &[OperationRef]) {
    let rewriter = rewrite::rewriter(allocation);
    let rewriter = rewriter.as_rewriter_base();
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite.
    let context = unsafe { context.to_ref() };
    let first = views[0];
    let stream_for = std::iter::successors(first.parent_operation(), |op| op.parent_operation())
        .find(|op| Op::HostStreamFor.is(op))
        .expect("the views are in a stream loop");
    let top = ir::region(&stream_for, 0)
        .and_then(|region| region.first_block())
        .and_then(|body| body.first_operation())
        .expect("a stream loop's body ends with host.yield");
    let view: Value = ir::result(&first, 0).expect("a view").into();
    let shape = builders::static_shape(view.r#type()).expect("views have static shapes");
    let element = MemRefType::try_from(view.r#type())
        .expect("a view is a memref")
        .element();
    let private = Builder::before(context, top).alloc(
        builders::buffer_type(&shape, element),
        allocation.location(),
    );
    for &view in views {
        let slice: Value = ir::result(&view, 0).expect("a view").into();
        rewrite::replace_uses(&rewriter, slice, private, |_| false);
        // Its offset goes with it where nothing else uses it; the buffer
        // goes last, once no view names it.
        let offsets: Vec<OperationRef> = view.operands().skip(1).filter_map(ir::producer).collect();
        rewriter.erase_op(view);
        for offset in offsets {
            if rewrite::is_trivially_dead(offset) {
                rewrite::erase_with_dead_operands(&rewriter, offset);
            }
        }
    }
    rewriter.erase_op(allocation);
}
