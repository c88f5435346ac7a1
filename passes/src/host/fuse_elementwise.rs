//! `host-fuse-elementwise`: groups each maximal chain of elementwise host ops
//! (with the broadcasts of their inputs, and the reductions along the last
//! axis between them) into one `host.fused` op, which the backends run as
//! one kernel instead of one kernel per op: a LayerNorm, an RMSNorm or a
//! softmax becomes one kernel.
//!
//! A chain is a run of ops of one block, each `Elementwise`, a `Broadcast`,
//! a `Reduction` (the op kinds of their ODS traits) or a `host.fill`, over
//! one iteration shape: the largest shape any of them writes or reduces.
//! Each writes a buffer of that shape or of it without its last axis (a
//! row: one value per row), and each reduction reduces exactly the last
//! axis of a buffer of the iteration shape. Views, allocations and
//! constants between them (`host.select`, `memref.subview`, `host.alloc`,
//! `arith.constant`) move before the chain; any other op ends it: a
//! communication, a wait, a stream switch or sync, a contraction, a
//! reduction of another axis, a loop. An op joins a chain only where fusing
//! cannot change what it computes: it does not write a buffer the chain
//! reads or writes through another view (an in-place op, writing the value
//! it reads, starts a chain), does not read through another view a buffer
//! the chain writes, and broadcasts a buffer read from outside the chain, or
//! a row the chain computes along the last axis. A chain of more buffers
//! than the runtime's entries take (`hir_abi::fused::MAX_BUFFERS`), or one
//! whose outputs are all rows, is cut: each part is the longest prefix that
//! has a buffer of its iteration shape among its outputs and fits. A part of
//! one op (but for the fills that stay kernels) stays as it is.
//!
//! An intermediate buffer, a `host.alloc` (or a `host.select` of one) used
//! only by the chain, becomes a temporary of the body, and its allocation
//! goes; every other buffer the chain writes is an output. A fill of such a
//! temporary is a constant of the kernel (`host.fill` in the body, which
//! `convert-host-to-llvm` serializes to a constant instruction): no kernel
//! writes it, none reads it, and it counts against no buffer limit. A fill
//! of any other buffer (an argument, or read after the chain) stays a
//! kernel, moved before the fused op where it sits among the chain's ops
//! (no op of the chain before it touches its buffer), which reads its
//! buffer as an input.
//!
//! Ops on integer buffers are never fused (a fused program computes in f32,
//! `hir_abi::fused`): they end a chain and run as their own kernels.
//!
//! ```mlir
//! %1 = host.alloc : memref<4x8xf32>
//! host.broadcast [0] ins(%b : memref<8xf32>) outs(%1 : memref<4x8xf32>)
//! %2 = host.alloc : memref<4x8xf32>
//! host.add ins(%a, %1 : memref<4x8xf32>, memref<4x8xf32>) outs(%2 : memref<4x8xf32>)
//! %3 = host.alloc : memref<4x8xf32>
//! host.fill 0.5 outs(%3 : memref<4x8xf32>)
//! %4 = host.alloc : memref<4x8xf32>
//! host.mul ins(%2, %3 : memref<4x8xf32>, memref<4x8xf32>) outs(%4 : memref<4x8xf32>)
//! host.gelu ins(%4 : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
//! ```
//! becomes
//! ```mlir
//! host.fused ins(%b, %a : memref<8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
//! ^bb0(%v: memref<8xf32>, %x: memref<4x8xf32>, %o: memref<4x8xf32>, %t0: memref<4x8xf32>,
//!      %t1: memref<4x8xf32>, %t2: memref<4x8xf32>, %t3: memref<4x8xf32>):
//!   host.broadcast [0] ins(%v : memref<8xf32>) outs(%t0 : memref<4x8xf32>)
//!   host.add ins(%x, %t0 : memref<4x8xf32>, memref<4x8xf32>) outs(%t1 : memref<4x8xf32>)
//!   host.fill 0.5 outs(%t2 : memref<4x8xf32>)
//!   host.mul ins(%t1, %t2 : memref<4x8xf32>, memref<4x8xf32>) outs(%t3 : memref<4x8xf32>)
//!   host.gelu ins(%t3 : memref<4x8xf32>) outs(%o : memref<4x8xf32>)
//! }
//! ```

use crate::{HirPass, builders, ir, ops::Op, rewrite};
use hir_abi::fused::{MAX_BUFFERS, MAX_RANK};
use hir_dialects::{OpKind, destination};
use melior::{
    RewriterBase,
    ir::{
        Block, BlockLike, BlockRef, Identifier, OperationRef, Region, RegionLike, Type, Value,
        ValueLike,
        attribute::DenseI32ArrayAttribute,
        operation::{OperationBuilder, OperationLike},
        r#type::{MemRefType, ShapedTypeLike, TypeLike},
    },
};
use std::collections::HashMap;

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-fuse-elementwise";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(FuseElementwise)
}

struct FuseElementwise;

impl HirPass for FuseElementwise {
    fn run(&mut self, function: OperationRef) -> bool {
        let rewriter = rewrite::rewriter(function);
        let rewriter = rewriter.as_rewriter_base();
        let mut blocks = Vec::new();
        collect_blocks(function, &mut blocks);
        for block in blocks {
            let order = Order::of(block);
            for chain in chains(block) {
                for part in split(&chain.members) {
                    fuse(&rewriter, part, &chain.between, &order);
                }
            }
        }
        true
    }
}

/// Every block nested in `op`, outer ones first.
fn collect_blocks<'c, 'a>(op: OperationRef<'c, 'a>, blocks: &mut Vec<BlockRef<'c, 'a>>) {
    for region in op.regions() {
        let mut block = region.first_block();
        while let Some(current) = block {
            blocks.push(current);
            for nested in ir::block_ops(current) {
                if !Op::HostFused.is(&nested) {
                    collect_blocks(nested, blocks);
                }
            }
            block = current.next_in_region();
        }
    }
}

/// The ops of a block by their place before any part was fused. Fusing a
/// part moves only ops from between its first and last op to before its
/// first, so for the later parts' ops this order is the block's still; it
/// answers without `is_before_in_block`, which after each fusion renumbered
/// the whole block (a quadratic pass).
struct Order(HashMap<usize, usize>);

impl Order {
    fn of(block: BlockRef) -> Order {
        let places = ir::block_ops(block).enumerate();
        Order(places.map(|(place, op)| (key(op), place)).collect())
    }

    /// Whether `op` lies strictly between `first` and `last`.
    fn between(&self, first: OperationRef, op: OperationRef, last: OperationRef) -> bool {
        let place = |op| self.0[&key(op)];
        place(first) < place(op) && place(op) < place(last)
    }
}

fn key(op: OperationRef) -> usize {
    op.to_raw().ptr as usize
}

/// A maximal chain of fusable ops of one block, and the ops between them
/// that move before it.
struct Chain<'c, 'a> {
    members: Vec<OperationRef<'c, 'a>>,
    between: Vec<OperationRef<'c, 'a>>,
}

/// The buffer an elementwise op or broadcast writes and the ones it reads.
fn buffers<'c, 'a>(op: OperationRef<'c, 'a>) -> (Value<'c, 'a>, Vec<Value<'c, 'a>>) {
    let written = destination(&op).expect("fusable ops are in destination-passing style");
    let reads = (0..op.operand_count())
        .filter(|&index| index != written)
        .map(|index| operand(op, index))
        .collect();
    (operand(op, written), reads)
}

/// The static shape of buffer `value`.
fn shape(value: Value) -> Option<Vec<i64>> {
    builders::static_shape(value.r#type())
}

/// Whether `op` can be in a chain: an elementwise host op, broadcast,
/// reduction of the last axis, or fill (a constant of the kernel where its
/// buffer is a temporary, `absorbed`), on statically shaped float buffers
/// of at most `MAX_RANK` axes (a fused program computes in f32; integer ops
/// stay unfused).
fn fusable(op: OperationRef) -> bool {
    let kind = OpKind::of(&op);
    let reduces_last = || {
        let (_, reads) = buffers(op);
        let rank = shape(reads[0]).map_or(0, |shape| shape.len() as i64);
        rank > 0 && ir::i64_array(&op, "axes") == Some(vec![rank - 1])
    };
    (matches!(
        kind,
        OpKind::Elementwise | OpKind::Broadcast | OpKind::Reduction
    ) || Op::HostFill.is(&op))
        && destination(&op).is_some()
        && (kind != OpKind::Reduction || reduces_last())
        && op.operands().all(|value| {
            builders::static_shape(value.r#type()).is_some_and(|shape| shape.len() <= MAX_RANK)
                && MemRefType::try_from(value.r#type())
                    .is_ok_and(|memref| !memref.element().is_integer())
        })
}

/// Whether `op` may move before a chain it sits in: it computes a view, a
/// fresh buffer or a constant, none of which a member of the chain defines.
fn movable(op: OperationRef) -> bool {
    matches!(
        Op::of(&op),
        Some(Op::HostSelect | Op::HostAlloc | Op::ArithConstant | Op::MemrefSubview)
    )
}

/// Operand `index` of `op`, as long-lived as `op`.
fn operand<'c: 'a, 'a>(op: OperationRef<'c, 'a>, index: usize) -> Value<'c, 'a> {
    assert!(index < op.operand_count(), "operand {index} of {op}");
    // SAFETY: `op` is live and has the operand.
    unsafe {
        Value::from_raw(mlir_sys::mlirOperationGetOperand(
            op.to_raw(),
            index as isize,
        ))
    }
}

/// The chains of `block`, in order.
fn chains<'c, 'a>(block: BlockRef<'c, 'a>) -> Vec<Chain<'c, 'a>> {
    let mut chains = Vec::new();
    let mut current = Chain {
        members: Vec::new(),
        between: Vec::new(),
    };
    for op in ir::block_ops(block) {
        if fusable(op) && admits(&current.members, op) {
            current.members.push(op);
        } else if movable(op) && !current.members.is_empty() {
            current.between.push(op);
        } else {
            let next = Chain {
                members: match fusable(op) && admits(&[], op) {
                    true => vec![op],
                    false => Vec::new(),
                },
                between: Vec::new(),
            };
            chains.push(std::mem::replace(&mut current, next));
        }
    }
    chains.push(current);
    chains.retain(|chain| chain.members.len() > 1);
    chains
}

/// The shape `op` asks of its chain's iteration shape: the one it reduces,
/// or the one it writes.
fn extent(op: OperationRef) -> Vec<i64> {
    let (written, reads) = buffers(op);
    let value = match OpKind::of(&op) {
        OpKind::Reduction => reads[0],
        _ => written,
    };
    shape(value).expect("fusable ops have static shapes")
}

/// The iteration shape of `ops`: the largest of their extents.
fn iteration_shape(ops: &[OperationRef]) -> Vec<i64> {
    ops.iter()
        .map(|&op| extent(op))
        .max_by_key(Vec::len)
        .unwrap_or_default()
}

/// Whether `op`, a member of a chain of iteration shape `full` whose
/// members write `chain_written`, computes over that shape: it writes a
/// buffer of the shape or a row of it, reduces the last axis of one of the
/// shape, and broadcasts along the last axis any row the chain computes.
fn over(op: OperationRef, full: &[i64], chain_written: &[Value]) -> bool {
    let (written, reads) = buffers(op);
    let row = full.split_last().map(|(_, row)| row);
    let written = shape(written).expect("fusable ops have static shapes");
    let is_row = row == Some(&written[..]);
    match OpKind::of(&op) {
        OpKind::Reduction => is_row && shape(reads[0]).as_deref() == Some(full),
        OpKind::Broadcast if chain_written.contains(&reads[0]) => {
            written == full
                && shape(reads[0]).as_deref() == row
                && ir::i64_array(&op, "axes") == Some(vec![full.len() as i64 - 1])
        }
        _ => written == full || is_row,
    }
}

/// Whether `op` can join the chain `members` without changing what the ops
/// compute (see the module's documentation).
fn admits(members: &[OperationRef], op: OperationRef) -> bool {
    let (written, reads) = buffers(op);
    // A broadcast or a reduction writes elements its input may hold at
    // other places.
    let in_place = matches!(OpKind::of(&op), OpKind::Broadcast | OpKind::Reduction)
        && reads
            .iter()
            .any(|&read| ir::view_root(read) == ir::view_root(written));
    if members.is_empty() || in_place {
        return !in_place;
    }
    let mut chain_written = Vec::new();
    let mut chain_read = Vec::new();
    for &member in members {
        let (out, ins) = buffers(member);
        chain_read.extend(ins.into_iter().filter(|read| !chain_written.contains(read)));
        chain_written.push(out);
    }
    let touched = chain_written.iter().chain(&chain_read);
    if chain_written.contains(&written)
        || chain_read.contains(&written)
        || touched
            .clone()
            .any(|&value| ir::view_root(value) == ir::view_root(written))
    {
        return false;
    }
    let reads_apart = reads.iter().all(|read| {
        chain_written.contains(read)
            || chain_written
                .iter()
                .all(|&value| ir::view_root(value) != ir::view_root(*read))
    });
    let mut all = members.to_vec();
    all.push(op);
    chain_written.push(written);
    let full = iteration_shape(&all);
    reads_apart
        && all
            .iter()
            .all(|&member| over(member, &full, &chain_written))
}

/// The buffers of `members` as a `host.fused` op takes them: the inputs
/// (read before the chain writes them), the outputs and the temporaries
/// (written, and used by nothing else, through the allocation's view).
struct Operands<'c, 'a> {
    inputs: Vec<Value<'c, 'a>>,
    outputs: Vec<Value<'c, 'a>>,
    temporaries: Vec<Value<'c, 'a>>,
}

fn operands<'c, 'a>(members: &[OperationRef<'c, 'a>]) -> Operands<'c, 'a> {
    let mut operands = Operands {
        inputs: Vec::new(),
        outputs: Vec::new(),
        temporaries: Vec::new(),
    };
    let mut written = Vec::new();
    for &member in members {
        let (out, ins) = buffers(member);
        for read in ins {
            if !written.contains(&read) && !operands.inputs.contains(&read) {
                operands.inputs.push(read);
            }
        }
        written.push(out);
    }
    for value in written {
        if temporary(value, members) {
            operands.temporaries.push(value);
        } else {
            operands.outputs.push(value);
        }
    }
    operands
}

/// Whether `value` is an allocation, or the one view of one, that only
/// `members` use.
fn temporary(value: Value, members: &[OperationRef]) -> bool {
    if !ir::users(value).iter().all(|user| members.contains(user)) {
        return false;
    }
    let Some(owner) = ir::producer(value) else {
        return false;
    };
    match Op::of(&owner) {
        Some(Op::HostAlloc) => true,
        Some(Op::HostSelect) => {
            let source = operand(owner, 0);
            ir::producer(source).is_some_and(|source| Op::HostAlloc.is(&source))
                && ir::users(source) == [owner]
        }
        _ => false,
    }
}

/// `part` as one kernel takes it: its ops but the fills whose buffer is not
/// one of its temporaries (an argument, or a buffer used after the part: a
/// constant only where nothing else sees the buffer), then those fills,
/// which stay kernels, run before it.
fn absorbed<'c, 'a>(
    part: &[OperationRef<'c, 'a>],
) -> (Vec<OperationRef<'c, 'a>>, Vec<OperationRef<'c, 'a>>) {
    part.iter()
        .partition(|&&op| !Op::HostFill.is(&op) || temporary(buffers(op).0, part))
}

/// Whether `part` can be one `host.fused` op: two ops or more once its
/// fills that stay kernels are out, at most `MAX_BUFFERS` buffers, one of
/// its outputs of its iteration shape (the others of it or rows of it).
fn one_kernel(part: &[OperationRef]) -> bool {
    let (members, _) = absorbed(part);
    let operands = operands(&members);
    let full = iteration_shape(&members);
    members.len() > 1
        && operands.inputs.len() + operands.outputs.len() <= MAX_BUFFERS
        && operands
            .outputs
            .iter()
            .any(|&output| shape(output).as_deref() == Some(&full[..]))
}

/// `chain` cut into parts that are one kernel each, each longest first;
/// an op that starts no such part stays as it is.
fn split<'c, 'a>(chain: &[OperationRef<'c, 'a>]) -> Vec<Vec<OperationRef<'c, 'a>>> {
    let mut parts = Vec::new();
    let mut rest = chain;
    while !rest.is_empty() {
        let fits = (2..=rest.len())
            .rev()
            .find(|&length| one_kernel(&rest[..length]))
            .unwrap_or(1);
        if fits > 1 {
            parts.push(rest[..fits].to_vec());
        }
        rest = &rest[fits..];
    }
    parts
}

/// Replaces `part` by one `host.fused` op, through `rewriter`, after
/// moving the ops of `between` and the fills that stay kernels that sit
/// among its other ops before the first of them (no op of the part before
/// such a fill touches its buffer: `admits`).
fn fuse<'c, 'a>(
    rewriter: &RewriterBase<'c, '_>,
    part: Vec<OperationRef<'c, 'a>>,
    between: &[OperationRef<'c, 'a>],
    order: &Order,
) {
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite.
    let context = unsafe { context.to_ref() };
    let (members, fills) = absorbed(&part);
    let (first, last) = (members[0], *members.last().expect("a chain has ops"));
    // The views and allocations first: a fill's allocation may be one.
    for &op in between.iter().chain(&fills) {
        if order.between(first, op, last) {
            rewriter.move_op_before(op, first);
        }
    }
    let Operands {
        inputs,
        outputs,
        temporaries,
    } = operands(&members);
    let location = first.location();
    let types: Vec<(Type, _)> = inputs
        .iter()
        .chain(&outputs)
        .map(|value| (value.r#type(), location))
        .chain(temporaries.iter().map(|value| {
            let shape = builders::buffer_shape(value.r#type());
            let element = MemRefType::try_from(value.r#type())
                .expect("buffers are memrefs")
                .element();
            (builders::buffer_type(&shape, element), location)
        }))
        .collect();
    let body = Block::new(&types);
    let region = Region::new();
    region.append_block(body);
    let segments = [inputs.len() as i32, outputs.len() as i32];
    let fused = OperationBuilder::new(Op::HostFused.name(), location)
        .add_operands(&inputs)
        .add_operands(&outputs)
        .add_attributes(&[(
            Identifier::new(context, "operandSegmentSizes"),
            DenseI32ArrayAttribute::new(context, &segments).into(),
        )])
        .add_regions([region])
        .build()
        .expect("a fused op of buffers and one block is valid");
    rewriter.set_insertion_point_before(first);
    let fused = rewriter.insert(fused);
    let body = fused
        .region(0)
        .expect("host.fused has a body")
        .first_block()
        .expect("with a block");
    let values: Vec<Value> = inputs
        .iter()
        .chain(&outputs)
        .chain(&temporaries)
        .copied()
        .collect();
    // The body's argument of each value; a read of a value the chain wrote
    // reads the written argument (its output or temporary), not the input.
    let argument = |value: Value<'c, 'a>, written: bool| {
        let position = if written {
            inputs.len()
                + values[inputs.len()..]
                    .iter()
                    .position(|&other| other == value)
                    .expect("every written value has its argument")
        } else {
            inputs
                .iter()
                .position(|&other| other == value)
                .expect("every input has its argument")
        };
        body.argument(position).expect("position in range").into()
    };
    rewriter.set_insertion_point_to_end(body);
    let mut written: Vec<Value> = Vec::new();
    for &member in &members {
        let copy = rewriter.clone_op(member);
        let target = destination(&copy).expect("fusable ops have a destination");
        for index in 0..copy.operand_count() {
            let value = copy.operand(index).expect("index in range");
            let replacement = if index == target {
                argument(value, true)
            } else {
                argument(value, written.contains(&value))
            };
            rewrite::set_operand(rewriter, copy, index, replacement);
        }
        written.push(buffers(member).0);
    }
    for member in members {
        rewriter.erase_op(member);
    }
    for temporary in temporaries {
        if let Some(owner) =
            ir::producer(temporary).filter(|&owner| rewrite::is_trivially_dead(owner))
        {
            rewrite::erase_with_dead_operands(rewriter, owner);
        }
    }
}
