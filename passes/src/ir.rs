//! Small IR helpers every pass (and `hir-run`) shares: names, walks, use
//! lists and integer constants. Changes to the IR go through a rewriter (`rewrite`).

use crate::ops::Op;
use melior::ir::{
    BlockLike, BlockRef, OperationRef, RegionLike, RegionRef, Value, ValueLike,
    attribute::{DenseI64ArrayAttribute, IntegerAttribute},
    operation::{OperationLike, OperationResult},
};
use mlir_sys::{
    mlirOpOperandGetNextUse, mlirOpOperandGetOwner, mlirOpOperandIsNull, mlirValueGetFirstUse,
};

// The lookups below check the index first: melior's `operand`, `result` and
// `region` print the op into their out-of-range error, and printing an op
// reads the module around it, which other threads rewrite while a function
// pass runs (a crash seen once in a golden run).

/// The op whose result `value` is (none for a block argument).
pub fn producer<'c: 'a, 'a>(value: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    OperationResult::try_from(value)
        .ok()
        .map(|result| result.owner())
}

/// Whether `op` takes a view of its first operand: `host.select`,
/// `memref.subview`, `memref.expand_shape` (the pre-split layout
/// `host-presplit-chunks` views a loop's chunks in) or `memref.transpose`
/// (a transposed GEMM operand, `host-fold-transpose`).
pub fn is_view(op: &OperationRef) -> bool {
    matches!(
        Op::of(op),
        Some(Op::HostSelect | Op::MemrefSubview | Op::MemrefExpandShape | Op::MemrefTranspose)
    )
}

/// Whether `op`'s body runs once per iteration (a `LoopLikeOpInterface` op
/// or a `host.stream_for`).
pub fn is_loop(op: &OperationRef) -> bool {
    // SAFETY: the op is live; the query only reads it.
    unsafe { hir_dialects::ffi::hirOpIsLoop(op.to_raw()) }
}

/// The buffer a view is of (through the views of [`is_view`]).
pub fn view_root<'c: 'a, 'a>(mut value: Value<'c, 'a>) -> Value<'c, 'a> {
    while let Some(source) = producer(value)
        .filter(is_view)
        .and_then(|view| operand(&view, 0))
    {
        value = source;
    }
    value
}

/// Every op that uses `buffer` or a view of it, but the views, each with the
/// value it uses (an op using two views of it appears twice).
pub fn accesses<'c: 'a, 'a>(buffer: Value<'c, 'a>) -> Vec<(OperationRef<'c, 'a>, Value<'c, 'a>)> {
    let mut found = Vec::new();
    for user in users(buffer) {
        match result(&user, 0) {
            Some(view) if is_view(&user) && operand(&user, 0) == Some(buffer) => {
                found.extend(accesses(view.into()));
            }
            _ => found.push((user, buffer)),
        }
    }
    found
}

/// Operand `index` of `op`, if it has that many. Probe with this, never
/// with melior's `operand(index).ok()`: out of range, that prints the whole
/// module into its error (verifying it), which races with the passes other
/// threads run on the module's other functions.
pub fn operand<'c, 'a>(op: &OperationRef<'c, 'a>, index: usize) -> Option<Value<'c, 'a>> {
    (index < op.operand_count()).then(|| op.operand(index).expect("in range"))
}

/// Result `index` of `op`, if it has that many.
pub fn result<'c, 'a>(op: &OperationRef<'c, 'a>, index: usize) -> Option<OperationResult<'c, 'a>> {
    (index < op.result_count()).then(|| op.result(index).expect("in range"))
}

/// Region `index` of `op`, if it has that many.
pub fn region<'c, 'a>(op: &OperationRef<'c, 'a>, index: usize) -> Option<RegionRef<'c, 'a>> {
    (index < op.region_count()).then(|| op.region(index).expect("in range"))
}

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
    region(&op, 0)
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
    // A set, not `users.contains`: a constant or a stream may have thousands
    // of users in a large program.
    let mut seen = std::collections::HashSet::new();
    // SAFETY: `value` is live; its use list is only read.
    unsafe {
        let mut operand = mlirValueGetFirstUse(value.to_raw());
        while !mlirOpOperandIsNull(operand) {
            let owner = mlirOpOperandGetOwner(operand);
            if seen.insert(owner.ptr as usize) {
                users.push(OperationRef::from_raw(owner));
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

/// The values of `op`'s `DenseI64ArrayAttr` named `attribute`, if it has one.
pub fn i64_array(op: &OperationRef, attribute: &str) -> Option<Vec<i64>> {
    let array = DenseI64ArrayAttribute::try_from(op.attribute(attribute).ok()?).ok()?;
    (0..array.len())
        .map(|index| array.element(index).ok())
        .collect()
}

/// The size of the team of collective `op` when it is the whole mesh in
/// order, `[0, 1, ..., D-1]`, where a position in the team is the rank
/// `host.rank` returns; `None` for any other team, and for several teams
/// (`team_size`).
pub fn whole_mesh_size(op: &OperationRef) -> Option<i64> {
    if op.has_attribute("team_size") {
        return None;
    }
    let team = DenseI64ArrayAttribute::try_from(op.attribute("team").ok()?).ok()?;
    let size = team.len() as i64;
    (0..team.len())
        .map(|index| team.element(index).ok())
        .eq((0..size).map(Some))
        .then_some(size)
}

/// Whether a loop (`scf.for` or `host.stream_for`: lower, upper and step
/// first) runs `steps` iterations from 0 by 1, its bounds constants.
pub fn runs_from_zero(loop_op: &OperationRef, steps: i64) -> bool {
    let bound = |position| operand(loop_op, position).and_then(constant);
    (bound(0), bound(1), bound(2)) == (Some(0), Some(steps), Some(1))
}

/// The one `comm.wait` on the request of `op`, in `op`'s block, if that wait
/// is the request's only use.
pub fn sole_wait<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    match users(result(&op, 0)?.into())[..] {
        [wait] if Op::CommWait.is(&wait) && wait.block() == op.block() => Some(wait),
        _ => None,
    }
}
