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

/// The ops after `op` in its block that define `value`, directly or through
/// their operands, in program order, if each does no work (an allocation,
/// a view, a constant: moving it changes nothing but where it is), so that
/// [`hoist_before`] can make `value` dominate `op`; `None` if one does work.
pub fn definitions_after<'c, 'a>(
    value: Value<'c, 'a>,
    op: OperationRef<'c, 'a>,
) -> Option<Vec<OperationRef<'c, 'a>>> {
    let Ok(result) = OperationResult::try_from(value) else {
        return Some(Vec::new());
    };
    let owner = result.owner();
    if owner.block() != op.block() || owner.is_before_in_block(op) {
        return Some(Vec::new());
    }
    use crate::ops::Op;
    if !matches!(
        Op::of(&owner),
        Some(Op::HostAlloc | Op::MemrefExpandShape | Op::HostSelect | Op::ArithConstant)
    ) {
        return None;
    }
    let mut ops = Vec::new();
    for operand in owner.operands() {
        for definition in definitions_after(operand, op)? {
            if !ops.contains(&definition) {
                ops.push(definition);
            }
        }
    }
    ops.push(owner);
    Some(ops)
}

/// Moves the ops [`definitions_after`] found for `value` in front of `op`,
/// in order; whether it could (`value` then dominates `op`).
pub fn hoist_before<'c, 'a>(
    rewriter: &RewriterBase,
    value: Value<'c, 'a>,
    op: OperationRef<'c, 'a>,
) -> bool {
    let Some(definitions) = definitions_after(value, op) else {
        return false;
    };
    for definition in definitions {
        rewriter.move_op_before(definition, op);
    }
    true
}
