//! In-place changes to an op, made through a rewriter: each is bracketed by
//! the rewriter's start/finalize of an op modification, as MLIR's
//! `modifyOpInPlace` does, so that the driver and its listeners see it. The
//! passes change IR only through a rewriter: these, and `RewriterBase`'s own
//! `erase_op`, `move_op_before`, `replace_all_uses_with`...
//!
//! A pass outside a pattern takes [`rewriter`] for its op.

use melior::{
    IrRewriter, RewriterBase,
    ir::{
        Attribute, AttributeLike, OperationRef, Value, ValueLike,
        operation::{OperationLike, OperationResult},
    },
};
use mlir_sys::{
    mlirOperationRemoveAttributeByName, mlirOperationSetAttributeByName, mlirOperationSetOperand,
    mlirOperationSetOperands,
};

/// A rewriter for a pass to change the IR under `op` with.
pub fn rewriter<'c>(op: OperationRef<'c, '_>) -> IrRewriter<'c> {
    IrRewriter::from_op(op)
}

/// Makes operand `index` of `op` be `value`.
pub fn set_operand(rewriter: &RewriterBase, op: OperationRef, index: usize, value: Value) {
    rewriter.start_op_modification(op);
    // SAFETY: `op` and `value` are live, and `index` is one of `op`'s operands.
    unsafe { mlirOperationSetOperand(op.to_raw(), index as isize, value.to_raw()) };
    rewriter.finalize_op_modification(op);
}

/// Makes `values` the operands of `op` (their number may change, for an op
/// whose last operand is optional).
pub fn set_operands(rewriter: &RewriterBase, op: OperationRef, values: &[Value]) {
    let values: Vec<_> = values.iter().map(|value| value.to_raw()).collect();
    rewriter.start_op_modification(op);
    // SAFETY: `op` and `values` are live through the call.
    unsafe { mlirOperationSetOperands(op.to_raw(), values.len() as isize, values.as_ptr()) };
    rewriter.finalize_op_modification(op);
}

/// Makes every use of `from` a use of `to`, but in the ops `kept` says to leave.
pub fn replace_uses<'c: 'a, 'a>(
    rewriter: &RewriterBase,
    from: Value<'c, 'a>,
    to: Value<'c, 'a>,
    kept: impl Fn(OperationRef<'c, 'a>) -> bool,
) {
    for user in crate::ir::users(from)
        .into_iter()
        .filter(|&user| !kept(user))
    {
        for index in 0..user.operand_count() {
            if crate::ir::operand(&user, index) == Some(from) {
                set_operand(rewriter, user, index, to);
            }
        }
    }
}

/// Sets the attribute `name` of `op` (inherent or discardable) to `value`.
pub fn set_attribute(rewriter: &RewriterBase, op: OperationRef, name: &str, value: Attribute) {
    rewriter.start_op_modification(op);
    // SAFETY: `op` and `value` are live.
    unsafe {
        mlirOperationSetAttributeByName(
            op.to_raw(),
            melior::StringRef::new(name).to_raw(),
            value.to_raw(),
        )
    };
    rewriter.finalize_op_modification(op);
}

/// Removes the attribute `name` of `op`, if it has one.
pub fn remove_attribute(rewriter: &RewriterBase, op: OperationRef, name: &str) {
    rewriter.start_op_modification(op);
    // SAFETY: `op` is live.
    unsafe {
        mlirOperationRemoveAttributeByName(op.to_raw(), melior::StringRef::new(name).to_raw())
    };
    rewriter.finalize_op_modification(op);
}

/// Whether `op` could go without changing what the program does: its results
/// are unused and its only memory effects are reads (MLIR's
/// `isOpTriviallyDead`, through the C API).
pub fn is_trivially_dead(op: OperationRef) -> bool {
    // SAFETY: `op` is live for the call.
    unsafe { hir_dialects::ffi::hirIsOpTriviallyDead(op.to_raw()) }
}

/// Erases `op` (trivially dead), then each op that defined one of its
/// operands and is trivially dead once `op` is gone, and so on.
pub fn erase_with_dead_operands<'c, 'a>(rewriter: &RewriterBase, op: OperationRef<'c, 'a>) {
    // An op joins the list only when it has no users, so no op still in the
    // IR names one that is erased.
    let mut dead = vec![op];
    while let Some(op) = dead.pop() {
        let mut producers: Vec<OperationRef> = op
            .operands()
            .filter_map(|value| OperationResult::try_from(value).ok())
            .map(|result| result.owner())
            .collect();
        producers.dedup();
        rewriter.erase_op(op);
        for producer in producers {
            if !dead.contains(&producer) && is_trivially_dead(producer) {
                dead.push(producer);
            }
        }
    }
}
