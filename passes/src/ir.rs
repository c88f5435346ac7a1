//! Small IR helpers every pass (and `hir-run`) shares: names, walks, use
//! lists and integer constants. Changes to the IR go through a rewriter (`rewrite`).

use crate::ops::Op;
use melior::ir::{
    BlockLike, BlockRef, OperationRef, RegionLike, Value, ValueLike,
    attribute::IntegerAttribute,
    operation::{OperationLike, OperationResult},
};
use mlir_sys::{
    mlirOpOperandGetNextUse, mlirOpOperandGetOwner, mlirOpOperandIsNull, mlirValueGetFirstUse,
};

/// The op's name, e.g. `host.select`.
pub fn name(op: &OperationRef) -> String {
    op.name()
        .as_string_ref()
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The ops of `block`, in order.
pub fn block_ops<'c, 'a>(block: BlockRef<'c, 'a>) -> impl Iterator<Item = OperationRef<'c, 'a>> {
    std::iter::successors(block.first_operation(), |op| op.next_in_block())
}

/// The ops of the first block of `op`'s first region (a module's or a
/// function's body), in order.
pub fn body<'c, 'a>(op: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    op.region(0)
        .ok()
        .and_then(|region| region.first_block())
        .map(|block| block_ops(block).collect())
        .unwrap_or_default()
}

/// Every op nested in `op`, in program order (pre-order).
pub fn nested<'c, 'a>(op: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut ops = Vec::new();
    for region in op.regions() {
        for block in std::iter::successors(region.first_block(), |block| block.next_in_region()) {
            for nested_op in block_ops(block) {
                ops.push(nested_op);
                ops.extend(nested(nested_op));
            }
        }
    }
    ops
}

/// The ancestor of `op` (or `op` itself) whose parent block is `block`.
pub fn ancestor_in<'c, 'a>(
    op: OperationRef<'c, 'a>,
    block: BlockRef<'c, 'a>,
) -> Option<OperationRef<'c, 'a>> {
    let mut current = op;
    while current.block() != Some(block) {
        current = current.parent_operation()?;
    }
    Some(current)
}

/// The ops that use `value`, each once, in use-list order.
pub fn users<'c, 'a>(value: Value<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut users: Vec<OperationRef> = Vec::new();
    // SAFETY: `value` is live; its use list is only read.
    unsafe {
        let mut operand = mlirValueGetFirstUse(value.to_raw());
        while !mlirOpOperandIsNull(operand) {
            let user = OperationRef::from_raw(mlirOpOperandGetOwner(operand));
            if !users.contains(&user) {
                users.push(user);
            }
            operand = mlirOpOperandGetNextUse(operand);
        }
    }
    users
}

/// The value of an integer attribute of `op`.
pub fn integer_attribute(op: &OperationRef, attribute: &str) -> Option<i64> {
    let attribute = op.attribute(attribute).ok()?;
    Some(IntegerAttribute::try_from(attribute).ok()?.value())
}

/// The value of an `arith.constant` of integer type.
pub fn constant(value: Value) -> Option<i64> {
    let op = OperationResult::try_from(value).ok()?.owner();
    Op::ArithConstant
        .is(&op)
        .then(|| integer_attribute(&op, "value"))?
}
