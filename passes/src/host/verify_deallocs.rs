//! `host-verify-deallocs`: checks that no memory is used or freed again
//! after a `memref.dealloc` or `host.dealloc` frees it.
//!
//! A free is the last op to touch its buffer: every op that reads, writes,
//! views or frees the buffer (or a view of it, [`ir::accesses`]) and runs
//! after the free is an error at that op. "After" is the ops that follow the
//! free in its block and those that follow each op around it (so a free in
//! an `scf.if` branch makes the ops after the `scf.if` suspect, even when
//! they are guarded by the opposite condition). A free in a loop body of a
//! buffer from outside the loop is an error at the free: its second
//! iteration would use, and free, memory already freed.
//!
//! Without the check, such a program reached the runtime's checked heap
//! (`runtime/src/ffi/heap.rs`) at best, and a load from unmapped memory,
//! a segfault, at worst. HIR's pipeline to LLVM runs it before any rank
//! starts. What only the run knows (a free of a function argument, a free
//! under a condition computed at run time) the runtime's heap checks.
//!
//! ```mlir
//! %m = memref.alloc() : memref<4xf32>
//! memref.dealloc %m : memref<4xf32>
//! // error: 'memref.store' op uses a memref after 'memref.dealloc' freed it
//! memref.store %v, %m[%c0] : memref<4xf32>
//! ```

use crate::HirPass;
use crate::diagnostics::emit_error;
use crate::ir;
use crate::ops::Op;
use melior::ir::{
    BlockRef, OperationRef, Value, ValueLike, block::BlockArgument, operation::OperationLike,
};
use mlir_sys::mlirBlockArgumentGetOwner;

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-verify-deallocs";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(VerifyDeallocs)
}

struct VerifyDeallocs;

impl HirPass for VerifyDeallocs {
    fn run(&mut self, function: OperationRef) -> bool {
        // Each op is reported once, by the first free before it; a free that
        // is itself an error frees nothing more.
        let mut reported: Vec<OperationRef> = Vec::new();
        for free in ir::nested(function) {
            if !is_free(&free) || reported.contains(&free) {
                continue;
            }
            let Some(buffer) = ir::operand(&free, 0).map(ir::view_root) else {
                continue;
            };
            if let Some(looped) = loop_around(free, buffer) {
                emit_error(
                    free.location(),
                    &format!(
                        "'{}' op frees, in every iteration of the enclosing '{}', a memref \
                         from outside it: the second iteration would use freed memory",
                        ir::name(&free),
                        ir::name(&looped)
                    ),
                );
                reported.push(free);
                continue;
            }
            for (access, _) in ir::accesses(buffer) {
                if access == free || reported.contains(&access) || !runs_after(free, access) {
                    continue;
                }
                let message = if is_free(&access) {
                    format!(
                        "'{}' op frees a memref that '{}' already freed",
                        ir::name(&access),
                        ir::name(&free)
                    )
                } else {
                    format!(
                        "'{}' op uses a memref after '{}' freed it",
                        ir::name(&access),
                        ir::name(&free)
                    )
                };
                emit_error(access.location(), &message);
                reported.push(access);
            }
        }
        reported.is_empty()
    }
}

fn is_free(op: &OperationRef) -> bool {
    Op::MemrefDealloc.is(op) || Op::HostDealloc.is(op)
}

/// The block `value` is defined in.
fn defining_block<'c, 'a>(value: Value<'c, 'a>) -> Option<BlockRef<'c, 'a>> {
    match ir::producer(value) {
        Some(op) => op.block(),
        // SAFETY: a value no op produces is a live block's argument; the
        // block outlives it. (melior's `owner` borrows the argument.)
        None => BlockArgument::try_from(value)
            .is_ok()
            .then(|| unsafe { BlockRef::from_raw(mlirBlockArgumentGetOwner(value.to_raw())) }),
    }
}

/// The innermost loop around `free` that `buffer` is defined outside of.
fn loop_around<'c, 'a>(
    free: OperationRef<'c, 'a>,
    buffer: Value<'c, 'a>,
) -> Option<OperationRef<'c, 'a>> {
    let home = defining_block(buffer)?;
    let mut current = free;
    while current.block() != Some(home) {
        current = current.parent_operation()?;
        if ir::is_loop(&current) {
            return Some(current);
        }
    }
    None
}

/// Whether `access` follows `free` in the block of `free` or of an op
/// around it.
fn runs_after(free: OperationRef, access: OperationRef) -> bool {
    let mut current = Some(free);
    while let Some(op) = current {
        let Some(block) = op.block() else {
            return false;
        };
        match ir::ancestor_in(access, block) {
            Some(ancestor) if ancestor == op => return false,
            Some(ancestor) => {
                return std::iter::successors(op.next_in_block(), |next| next.next_in_block())
                    .any(|next| next == ancestor);
            }
            None => current = op.parent_operation(),
        }
    }
    false
}
