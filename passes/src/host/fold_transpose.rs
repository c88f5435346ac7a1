//! `host-fold-transpose`: a transposed copy that only GEMMs read becomes a
//! transposed view of its source (`memref.transpose`), so that the GEMM
//! reads the source in place (cuBLASLt's `op = T` on the cuda backend) and
//! the copy, its kernel and its buffer go. A backward program is full of
//! them: `dW = dy^T x`, `dx = dy W` of a weight stored `[out, in]`.
//!
//! A pattern rooted at each `host.transpose`, applied by one walk of the
//! function ([`crate::patterns`]). `host.transpose [p] ins(%x) outs(%t)`
//! folds when:
//!
//! - `p` swaps the last two axes and keeps the others (a matrix's or a
//!   batch of matrices' transpose, which a GEMM reads through its strides);
//! - `%t` is a `host.alloc` that only the transpose writes and only
//!   contractions (the `Contraction` trait's ops: `host.matmul`,
//!   `host.linear`) read, directly as inputs, after it in its block (or in
//!   ops nested there: a stream loop, a ring);
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
                |op, rewriter| match Fold::of(op) {
                    Some(fold) => {
                        fold.apply(rewriter);
                        true
                    }
                    None => false,
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
    rank: usize,
}

impl<'c, 'a> Fold<'c, 'a> {
    /// The fold of `transpose`, if the module's conditions hold.
    fn of(transpose: OperationRef<'c, 'a>) -> Option<Self> {
        let source = ir::operand(&transpose, 0)?;
        let copy = ir::operand(&transpose, 1)?;
        let rank = MemRefType::try_from(source.r#type()).ok()?.rank();
        if rank < 2 || ir::i64_array(&transpose, "permutation")? != swap_last_two(rank) {
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
            let reads_only = OpKind::of(&user) == OpKind::Contraction && reads_only(user, copy);
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
            rank,
        })
    }

    /// Replaces the copy with the view, through `rewriter`.
    fn apply(self, rewriter: &RewriterBase<'c, '_>) {
        let context = rewriter.context();
        // SAFETY: the context outlives the rewrite.
        let context = unsafe { context.to_ref() };
        let r#type = MemRefType::try_from(self.source.r#type()).expect("a buffer is a memref");
        let (strides, offset) =
            crate::builders::strides_and_offset(self.source.r#type()).expect("buffers are strided");
        let order = swap_last_two(self.rank);
        let shape = crate::builders::buffer_shape(self.source.r#type());
        let sizes: Vec<i64> = order.iter().map(|&axis| shape[axis as usize]).collect();
        let strides: Vec<i64> = order.iter().map(|&axis| strides[axis as usize]).collect();
        let layout = StridedLayoutAttribute::new(context, offset, &strides);
        let view_type = MemRefType::new(
            r#type.element(),
            &sizes,
            Some(layout.into()),
            r#type.memory_space(),
        );
        let dims: Vec<String> = (0..self.rank).map(|axis| format!("d{axis}")).collect();
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
        let view = OperationBuilder::new(Op::MemrefTranspose.name(), self.transpose.location())
            .add_operands(&[self.source])
            .add_attributes(&[(Identifier::new(context, "permutation"), map)])
            .add_results(&[view_type.into()])
            .build()
            .expect("a memref.transpose builds");
        rewriter.set_insertion_point_before(self.transpose);
        let view = rewriter.insert(view);
        let view: Value = view.result(0).expect("a view has a result").into();
        let alloc = ir::producer(self.copy).expect("the copy is allocated");
        rewriter.erase_op(self.transpose);
        rewrite::replace_uses(rewriter, self.copy, view, |_| false);
        rewriter.erase_op(alloc);
    }
}

/// `[0, 1, .., rank - 1, rank - 2]`.
fn swap_last_two(rank: usize) -> Vec<i64> {
    let mut order: Vec<i64> = (0..rank as i64).collect();
    order.swap(rank - 2, rank - 1);
    order
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
