//! `host-fold-transpose`: a transposed copy that only GEMMs or attention
//! read becomes a transposed view of its source (`memref.transpose`), so
//! that they read the source in place (cuBLASLt's `op = T`, attention's
//! strides) and the copy, its kernel and its buffer go. A backward program
//! is full of them (`dW = dy^T x`, `dx = dy W` of a weight stored `[out,
//! in]`), and a transformer block has three (Q, K and V, `[S, heads, dh]`
//! to `[heads, S, dh]`).
//!
//! A pattern rooted at each `host.transpose`, applied by one walk of the
//! function ([`crate::patterns`]). `host.transpose [p] ins(%x) outs(%t)`
//! folds when:
//!
//! - `%t` is a `host.alloc` that only the transpose writes and that only
//!   readers able to read the permuted view read, directly as inputs, after
//!   it in its block (or in ops nested there: a stream loop, a ring): a
//!   contraction (the `Contraction` trait's ops: `host.matmul`,
//!   `host.linear`) where `p` swaps the last two axes and keeps the others
//!   (a matrix's or a batch of matrices' transpose, which a GEMM reads
//!   through its strides), `host.attention` where `p` keeps the last axis
//!   (rows stay contiguous; the kernels take the other strides);
//! - nothing writes `%x`'s buffer between the transpose and the last read:
//!   every op that reaches it (through views) there reads it as an input
//!   (an operand before its destination), so the view sees what the copy
//!   would have held.
//!
//! ```mlir
//! %t = host.alloc : memref<64x32xbf16>
//! host.transpose [1, 0] ins(%x : memref<32x64xbf16>) outs(%t : memref<64x32xbf16>)
//! host.matmul ins(%t, %w : memref<64x32xbf16>, memref<32x16xbf16>) outs(%y : memref<64x16xbf16>)
//! ```
//! becomes
//! ```mlir
//! %t = memref.transpose %x (d0, d1) -> (d1, d0)
//!     : memref<32x64xbf16> to memref<64x32xbf16, strided<[1, 64]>>
//! host.matmul ins(%t, %w : memref<64x32xbf16, strided<[1, 64]>>, memref<32x16xbf16>)
//!     outs(%y : memref<64x16xbf16>)
//! ```

use crate::{HirPass, ir, ops::Op, patterns, rewrite};
use hir_dialects::{OpKind, destination};
use melior::{
    RewriterBase,
    ir::{
        Attribute, Identifier, OperationRef, Value, ValueLike,
        attribute::StridedLayoutAttribute,
        operation::{OperationBuilder, OperationLike},
        r#type::{MemRefType, ShapedTypeLike},
    },
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-fold-transpose";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(FoldTranspose)
}

struct FoldTranspose;

impl HirPass for FoldTranspose {
    fn run(&mut self, function: OperationRef) -> bool {
        patterns::walk(function, |context, set| {
            patterns::add(
                set,
                context,
                Op::HostTranspose.name(),
                &[Op::MemrefTranspose.name()],
                |op, rewriter| {
                    if let Some(fold) = Fold::of(op) {
                        fold.apply(rewriter);
                    } else if let Some(fold) = OutputFold::of(op) {
                        fold.apply(rewriter);
                    } else {
                        return false;
                    }
                    true
                },
            );
        });
        true
    }
}

/// A fold the pattern found.
struct Fold<'c, 'a> {
    transpose: OperationRef<'c, 'a>,
    source: Value<'c, 'a>,
    copy: Value<'c, 'a>,
    permutation: Vec<i64>,
}

impl<'c, 'a> Fold<'c, 'a> {
    /// The fold of `transpose`, if the module's conditions hold.
    fn of(transpose: OperationRef<'c, 'a>) -> Option<Self> {
        let source = ir::operand(&transpose, 0)?;
        let copy = ir::operand(&transpose, 1)?;
        let rank = MemRefType::try_from(source.r#type()).ok()?.rank();
        let permutation = ir::i64_array(&transpose, "permutation")?;
        if rank < 2 {
            return None;
        }
        if !ir::producer(copy).is_some_and(|alloc| Op::HostAlloc.is(&alloc)) {
            return None;
        }
        let block = transpose.block()?;
        // The copy's readers, each as its ancestor in the transpose's block.
        let mut last = transpose;
        for user in ir::users(copy) {
            if user == transpose {
                continue;
            }
            let reads_only = reads_permuted(&user, &permutation) && reads_only(user, copy);
            let at = ir::ancestor_in(user, block)?;
            if !reads_only || !transpose.is_before_in_block(at) {
                return None;
            }
            if last.is_before_in_block(at) {
                last = at;
            }
        }
        if last == transpose || written_between(ir::view_root(source), transpose, last) {
            return None;
        }
        Some(Fold {
            transpose,
            source,
            copy,
            permutation,
        })
    }

    /// Replaces the copy with the view, through `rewriter`.
    fn apply(self, rewriter: &RewriterBase<'c, '_>) {
        rewriter.set_insertion_point_before(self.transpose);
        let view = transposed_view(
            rewriter,
            self.source,
            &self.permutation,
            self.transpose.location(),
        );
        let view: Value = view.result(0).expect("a view has a result").into();
        let alloc = ir::producer(self.copy).expect("the copy is allocated");
        rewriter.erase_op(self.transpose);
        rewrite::replace_uses(rewriter, self.copy, view, |_| false);
        rewriter.erase_op(alloc);
    }
}

/// A fold of attention's output: `host.attention ... outs(%o)` whose `%o`
/// (a `host.alloc`) only `host.transpose [p] ins(%o) outs(%t)` reads, `p`
/// keeping the last axis, writes `%t` through the inverse permutation's
/// view instead (a block's `[heads, S, dh]` output straight into `[S,
/// heads, dh]`), when nothing touches `%t` from the attention to the
/// transpose and the attention reads none of it; `%t`'s allocation moves
/// before the attention if it came after.
struct OutputFold<'c, 'a> {
    transpose: OperationRef<'c, 'a>,
    attention: OperationRef<'c, 'a>,
    written: Value<'c, 'a>,
    target: Value<'c, 'a>,
    inverse: Vec<i64>,
}

impl<'c, 'a> OutputFold<'c, 'a> {
    fn of(transpose: OperationRef<'c, 'a>) -> Option<Self> {
        let written = ir::operand(&transpose, 0)?;
        let target = ir::operand(&transpose, 1)?;
        let permutation = ir::i64_array(&transpose, "permutation")?;
        let last = permutation.len().checked_sub(1)?;
        if permutation.last() != Some(&(last as i64)) {
            return None;
        }
        let alloc = ir::producer(written)?;
        if !Op::HostAlloc.is(&alloc) {
            return None;
        }
        let block = transpose.block()?;
        let mut attention = None;
        for user in ir::users(written) {
            if user == transpose {
                continue;
            }
            let writes_only = Op::HostAttention.is(&user)
                && (0..user.operand_count()).all(|index| {
                    ir::operand(&user, index) != Some(written) || Some(index) == destination(&user)
                });
            let before = user.block() == Some(block) && user.is_before_in_block(transpose);
            if !writes_only || !before || attention.replace(user).is_some() {
                return None;
            }
        }
        let attention = attention?;
        // `%t` must be there before the attention: an argument, an op before
        // it, or an allocation of a static shape (moved there).
        if let Some(definition) = ir::producer(target)
            && !(definition.block() == Some(block) && definition.is_before_in_block(attention))
            && !(Op::HostAlloc.is(&definition) && definition.operand_count() == 0)
        {
            return None;
        }
        // Nothing touches `%t` from the attention (its inputs included) to
        // the transpose.
        let touched = ir::accesses(ir::view_root(target))
            .into_iter()
            .any(|(user, _)| {
                user != transpose
                    && ir::ancestor_in(user, block).is_none_or(|at| {
                        at == attention
                            || (attention.is_before_in_block(at)
                                && at.is_before_in_block(transpose))
                    })
            });
        if touched {
            return None;
        }
        let mut inverse = vec![0; permutation.len()];
        for (axis, &from) in permutation.iter().enumerate() {
            inverse[usize::try_from(from).ok()?] = axis as i64;
        }
        Some(OutputFold {
            transpose,
            attention,
            written,
            target,
            inverse,
        })
    }

    fn apply(self, rewriter: &RewriterBase<'c, '_>) {
        if let Some(definition) = ir::producer(self.target)
            && self.attention.is_before_in_block(definition)
        {
            rewriter.move_op_before(definition, self.attention);
        }
        rewriter.set_insertion_point_before(self.attention);
        let view = transposed_view(
            rewriter,
            self.target,
            &self.inverse,
            self.attention.location(),
        );
        let view: Value = view.result(0).expect("a view has a result").into();
        let index = destination(&self.attention).expect("attention has an output");
        rewrite::set_operand(rewriter, self.attention, index, view);
        let alloc = ir::producer(self.written).expect("the output is allocated");
        rewriter.erase_op(self.transpose);
        rewriter.erase_op(alloc);
    }
}

/// `memref.transpose` of `source` by `order` (result axis `i` is source
/// axis `order[i]`), inserted at the rewriter's insertion point.
fn transposed_view<'c, 'r>(
    rewriter: &'r RewriterBase<'c, '_>,
    source: Value<'c, '_>,
    order: &[i64],
    location: melior::ir::Location<'c>,
) -> OperationRef<'c, 'r> {
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite.
    let context = unsafe { context.to_ref() };
    let r#type = MemRefType::try_from(source.r#type()).expect("a buffer is a memref");
    let (strides, offset) =
        crate::builders::strides_and_offset(source.r#type()).expect("buffers are strided");
    let shape = crate::builders::buffer_shape(source.r#type());
    let sizes: Vec<i64> = order.iter().map(|&axis| shape[axis as usize]).collect();
    let strides: Vec<i64> = order.iter().map(|&axis| strides[axis as usize]).collect();
    let layout = StridedLayoutAttribute::new(context, offset, &strides);
    let view_type = MemRefType::new(
        r#type.element(),
        &sizes,
        Some(layout.into()),
        r#type.memory_space(),
    );
    let dims: Vec<String> = (0..order.len()).map(|axis| format!("d{axis}")).collect();
    let permuted: Vec<&str> = order
        .iter()
        .map(|&axis| dims[axis as usize].as_str())
        .collect();
    let map = format!(
        "affine_map<({}) -> ({})>",
        dims.join(", "),
        permuted.join(", ")
    );
    let map = Attribute::parse(context, &map).expect("a permutation map parses");
    let view = OperationBuilder::new(Op::MemrefTranspose.name(), location)
        .add_operands(&[source])
        .add_attributes(&[(Identifier::new(context, "permutation"), map)])
        .add_results(&[view_type.into()])
        .build()
        .expect("a memref.transpose builds");
    rewriter.insert(view)
}

/// Whether `reader` reads a view permuted by `permutation` in place of the
/// copy: a contraction a swap of the last two axes (through its strides,
/// op = T), attention any permutation that keeps the last axis.
fn reads_permuted(reader: &OperationRef, permutation: &[i64]) -> bool {
    let last = permutation.len() as i64 - 1;
    if OpKind::of(reader) == OpKind::Contraction {
        let mut swapped: Vec<i64> = (0..=last).collect();
        swapped.swap(last as usize - 1, last as usize);
        return permutation == swapped;
    }
    Op::HostAttention.is(reader) && permutation.last() == Some(&last)
}

/// Whether `op` uses `value` only as an input (an operand before its
/// destination).
fn reads_only(op: OperationRef, value: Value) -> bool {
    let Some(written) = destination(&op) else {
        return false;
    };
    (0..op.operand_count()).all(|index| index < written || ir::operand(&op, index) != Some(value))
}

/// Whether an op that reaches `buffer` (through views) after `from` and up
/// to `to` in their block (or nested there) may write it.
fn written_between<'c: 'a, 'a>(
    buffer: Value<'c, 'a>,
    from: OperationRef<'c, 'a>,
    to: OperationRef<'c, 'a>,
) -> bool {
    let block = from.block().expect("an op in a function has a block");
    ir::accesses(buffer).into_iter().any(|(user, value)| {
        ir::ancestor_in(user, block).is_some_and(|at| {
            let between = from.is_before_in_block(at) && (at == to || at.is_before_in_block(to));
            between && !reads_only(user, value)
        })
    })
}
