//! `host-fuse-epilogue`: folds an activation (`host.gelu`) into the GEMM
//! that writes its input, as the GEMM's epilogue (`host.linear activation
//! gelu`, `host.matmul activation gelu`: cuBLASLt's `GELU_BIAS` and `GELU`
//! epilogues on the cuda backend), so that the activation is no kernel of
//! its own and its input is never written.
//!
//! A pattern rooted at each activation's op (`hir_abi::Activation::ALL`,
//! whose names are the host ops'), applied by one walk of the function
//! ([`crate::patterns`]), so it works in every block, `host.stream_for`
//! bodies included. The activation `act ins(%x) outs(%y)` folds into the
//! GEMM `g` when:
//!
//! - `%x` is a view of an allocation (`host.alloc`) that nothing else uses:
//!   every op that reaches it (through `host.select`, `memref.subview` and
//!   `memref.expand_shape`) is `g`, writing it as its output, or the
//!   activation, reading it; `g` writes the same view the activation reads
//!   (the same value, or views taken alike, of offsets computed alike: a
//!   stream loop's body takes the slice once for each op, a ring computes
//!   a chunk's offset once for each);
//! - `g` is a `host.linear` or `host.matmul` that does not accumulate,
//!   with no activation yet, in the activation's block before it; its output
//!   has the element type of `%x` and `%y` (the activation's verifier makes
//!   them one), so the product is rounded once, to that type, after the
//!   activation;
//! - writing `%y` at `g` instead of at the activation changes nothing else:
//!   the ops between them are views, `arith` ops, allocations and host
//!   compute ops that do not touch `%y`'s buffer (no stream switch, sync,
//!   wait, communication or loop: the write moves in stream order only),
//!   and `g` reads no view of `%y`'s buffer;
//! - `%y` is defined before `g`, or by views, `arith` ops and allocations
//!   between them (of operands defined before `g` or so defined), which
//!   move before `g`.
//!
//! Then `g` writes `%y` with the activation, the activation goes, and so do
//! the views and the allocation that only it and `g` used.
//!
//! ```mlir
//! %t = host.alloc : memref<8x32xbf16>
//! host.linear ins(%x, %w, %b : memref<8x64xbf16>, memref<32x64xbf16>, memref<32xbf16>)
//!     outs(%t : memref<8x32xbf16>)
//! host.gelu ins(%t : memref<8x32xbf16>) outs(%y : memref<8x32xbf16>)
//! ```
//! becomes
//! ```mlir
//! host.linear activation gelu ins(%x, %w, %b : memref<8x64xbf16>, memref<32x64xbf16>,
//!     memref<32xbf16>) outs(%y : memref<8x32xbf16>)
//! ```

use crate::{HirPass, ir, ops::Op, patterns, rewrite};
use hir_abi::Activation;
use hir_dialects::{OpKind, destination};
use melior::{
    RewriterBase,
    ir::{
        OperationRef, Value, ValueLike,
        attribute::IntegerAttribute,
        operation::OperationLike,
        r#type::{IntegerType, MemRefType, ShapedTypeLike},
    },
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-fuse-epilogue";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(FuseEpilogue)
}

struct FuseEpilogue;

impl HirPass for FuseEpilogue {
    fn run(&mut self, function: OperationRef) -> bool {
        patterns::walk(function, |context, set| {
            for activation in Activation::ALL {
                let root = Op::HostCopy.sibling(activation.name());
                patterns::add(
                    set,
                    context,
                    &root,
                    &[],
                    move |op, rewriter| match Fold::of(op) {
                        Some(fold) => {
                            fold.apply(rewriter, activation);
                            true
                        }
                        None => false,
                    },
                );
            }
        });
        true
    }
}

/// A fold the pattern found: the activation, its GEMM and the values each
/// reaches the intermediate buffer by.
struct Fold<'c, 'a> {
    activation: OperationRef<'c, 'a>,
    gemm: OperationRef<'c, 'a>,
    /// The view the GEMM writes and the one the activation reads.
    written: Value<'c, 'a>,
    read: Value<'c, 'a>,
    /// The activation's output.
    output: Value<'c, 'a>,
    /// The views, `arith` ops and allocations that define the output
    /// between the GEMM and the activation, each after its operands.
    hoisted: Vec<OperationRef<'c, 'a>>,
}

impl<'c, 'a> Fold<'c, 'a> {
    /// The fold of `activation` into the GEMM that writes its input, if the
    /// module's conditions hold.
    fn of(activation: OperationRef<'c, 'a>) -> Option<Self> {
        // A unary op: `ins(%x) outs(%y)`.
        if destination(&activation) != Some(1) {
            return None;
        }
        let read = ir::operand(&activation, 0)?;
        let output = ir::operand(&activation, 1)?;
        let buffer = ir::view_root(read);
        if !ir::producer(buffer).is_some_and(|alloc| Op::HostAlloc.is(&alloc))
            || ir::view_root(output) == buffer
        {
            return None;
        }
        // Every op that reaches the buffer: the GEMM and the activation.
        let accesses = ir::accesses(buffer);
        let [first, second] = accesses[..] else {
            return None;
        };
        let (gemm, written) = match (first, second) {
            ((op, value), other) | (other, (op, value)) if op == activation && value == read => {
                other
            }
            _ => return None,
        };
        if gemm.block() != activation.block()
            || !gemm.is_before_in_block(activation)
            || !is_plain_gemm(gemm)
            || destination(&gemm).and_then(|index| ir::operand(&gemm, index)) != Some(written)
            || gemm.operands().filter(|&value| value == written).count() != 1
            || !same_value(written, read)
            || !same_element_type(written, output)
            || gemm
                .operands()
                .any(|value| ir::view_root(value) == ir::view_root(output))
        {
            return None;
        }
        let hoisted = hoistable(output, gemm)?;
        let between = std::iter::successors(gemm.next_in_block(), |op| op.next_in_block())
            .take_while(|&op| op != activation);
        for op in between {
            if !hoisted.contains(&op) && !harmless(op, ir::view_root(output)) {
                return None;
            }
        }
        Some(Fold {
            activation,
            gemm,
            written,
            read,
            output,
            hoisted,
        })
    }

    /// Makes the GEMM write the output with the activation, through
    /// `rewriter`, and erases the activation and what only the two used.
    fn apply(self, rewriter: &RewriterBase<'c, '_>, activation: Activation) {
        for &op in &self.hoisted {
            rewriter.move_op_before(op, self.gemm);
        }
        let index = destination(&self.gemm).expect("a GEMM has an output");
        rewrite::set_operand(rewriter, self.gemm, index, self.output);
        let context = rewriter.context();
        // SAFETY: the context outlives the rewrite.
        let context = unsafe { context.to_ref() };
        let code = IntegerAttribute::new(IntegerType::new(context, 32).into(), activation as i64);
        rewrite::set_attribute(rewriter, self.gemm, "activation", code.into());
        rewriter.erase_op(self.activation);
        // The views (and then the allocation) only the two used; each
        // erased once: the read view may be the written one.
        let mut views = vec![self.read];
        if self.written != self.read {
            views.push(self.written);
        }
        for view in views {
            if let Some(owner) =
                ir::producer(view).filter(|&owner| rewrite::is_trivially_dead(owner))
            {
                rewrite::erase_with_dead_operands(rewriter, owner);
            }
        }
    }
}

/// Whether `op` computes a value from its operands alone, so that two of
/// them of equal operands and attributes compute one value: a view
/// ([`ir::is_view`]) or an `arith` op (index arithmetic, constants).
fn computes_a_value(op: &OperationRef) -> bool {
    op.result_count() == 1 && (ir::is_view(op) || Op::ArithConstant.same_dialect(op))
}

/// Whether `a` and `b` are one value (one view, where they are buffers):
/// the same value, or the results of ops that compute a value alike (the
/// same op and attributes, of operands that are one value). A stream loop's
/// body takes the same slice once for each op, and a ring's computes its
/// offsets once for each.
fn same_value(a: Value, b: Value) -> bool {
    if a == b {
        return true;
    }
    let (Some(x), Some(y)) = (ir::producer(a), ir::producer(b)) else {
        return false;
    };
    computes_a_value(&x)
        && ir::name(&x) == ir::name(&y)
        && a.r#type() == b.r#type()
        && x.operand_count() == y.operand_count()
        && x.attribute_count() == y.attribute_count()
        && x.attributes().all(|(name, value)| {
            let name = name.as_string_ref();
            name.as_str()
                .is_ok_and(|name| y.attribute(name).ok() == Some(value))
        })
        && x.operands()
            .zip(y.operands())
            .all(|(p, q)| same_value(p, q))
}

/// Whether the buffers `a` and `b` have one element type.
fn same_element_type(a: Value, b: Value) -> bool {
    match (
        MemRefType::try_from(a.r#type()),
        MemRefType::try_from(b.r#type()),
    ) {
        (Ok(a), Ok(b)) => a.element() == b.element(),
        _ => false,
    }
}

/// Whether `op` is a GEMM that writes its output without an epilogue of its
/// own: a `host.linear` or `host.matmul` that does not accumulate, with no
/// activation.
fn is_plain_gemm(op: OperationRef) -> bool {
    OpKind::of(&op) == OpKind::Contraction
        && matches!(Op::of(&op), Some(Op::HostLinear | Op::HostMatmul))
        && !op.has_attribute("accumulate")
        && !op.has_attribute("activation")
}

/// Whether `op`, between the GEMM and the activation, lets the write of the
/// activation's output move to the GEMM: a view, an `arith` op or an
/// allocation, or a host compute op (in destination-passing style, with no
/// region) that does not touch the output's buffer `output`.
fn harmless(op: OperationRef, output: Value) -> bool {
    if computes_a_value(&op) || Op::HostAlloc.is(&op) {
        return true;
    }
    Op::HostCopy.same_dialect(&op)
        && op.region_count() == 0
        && destination(&op).is_some()
        && op.operands().all(|value| ir::view_root(value) != output)
}

/// The ops that define `value` after `gemm` in its block, operands first,
/// if they are views, `arith` ops and allocations, which may move before it
/// (no stream switch is between them); `None` if one may not.
fn hoistable<'c: 'a, 'a>(
    value: Value<'c, 'a>,
    gemm: OperationRef<'c, 'a>,
) -> Option<Vec<OperationRef<'c, 'a>>> {
    let mut ops = Vec::new();
    let Some(owner) = ir::producer(value) else {
        return Some(ops);
    };
    if owner.block() != gemm.block() || owner.is_before_in_block(gemm) {
        return Some(ops);
    }
    if !(computes_a_value(&owner) || Op::HostAlloc.is(&owner)) {
        return None;
    }
    for operand in owner.operands() {
        for op in hoistable(operand, gemm)? {
            if !ops.contains(&op) {
                ops.push(op);
            }
        }
    }
    ops.push(owner);
    Some(ops)
}
