//! `hir-scope-loop-allocas`: bounds the stack a loop uses by its body, not
//! its trip count.
//!
//! The calls of the runtime's C ABI take buffers as unranked memrefs, and
//! `finalize-memref-to-llvm` lowers each cast to an unranked memref to an
//! `llvm.alloca` of the ranked descriptor where the cast is. Inside a loop
//! body that alloca is dynamic: nothing frees it until the function returns,
//! so a loop of a million runtime calls overflows a rank's stack. This pass
//! brackets each loop body (of `scf.for`, and both regions of `scf.while`)
//! that allocates stack (a cast to an unranked memref or a `memref.alloca`,
//! not counting nested loops, which are bracketed on their own) with
//! `llvm.intr.stacksave` at its start and `llvm.intr.stackrestore` before its
//! terminator: each iteration gives back what it took. (Not
//! `memref.alloca_scope`: its region must stay one block, and
//! `convert-scf-to-cf` turns an `scf.if` in it into several.) Runs after
//! `convert-host-to-llvm` and `convert-comm-to-llvm`, which make those casts.
//!
//! ```mlir
//! scf.for %i = %c0 to %n step %c1 {
//!   %0 = memref.cast %a : memref<4xf32> to memref<*xf32>
//!   func.call @hir_rt_neg_f32(%0, %0) : (memref<*xf32>, memref<*xf32>) -> ()
//! }
//! ```
//! becomes
//! ```mlir
//! scf.for %i = %c0 to %n step %c1 {
//!   %sp = llvm.intr.stacksave : !llvm.ptr
//!   %0 = memref.cast %a : memref<4xf32> to memref<*xf32>
//!   func.call @hir_rt_neg_f32(%0, %0) : (memref<*xf32>, memref<*xf32>) -> ()
//!   llvm.intr.stackrestore %sp : !llvm.ptr
//! }
//! ```
//! Values an iteration yields must not be its own stack allocations (the
//! runtime calls' descriptors never are). A parallel loop (`scf.parallel`,
//! `scf.forall`) whose body takes stack is an error: its iterations are not
//! bracketed, and it would grow the stack.

use crate::diagnostics::emit_error;
use crate::{HirPass, patterns};
use melior::{
    RewriterBase,
    dialect::{
        llvm::r#type::pointer,
        ods::{llvm, memref, scf},
    },
    ir::{
        BlockLike, BlockRef, OperationRef, RegionLike, RegionRef, ValueLike,
        operation::OperationLike, r#type::MemRefType,
    },
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "hir-scope-loop-allocas";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(ScopeLoopAllocas)
}

struct ScopeLoopAllocas;

impl HirPass for ScopeLoopAllocas {
    fn run(&mut self, function: OperationRef) -> bool {
        patterns::walk(function, |context, set| {
            // One pattern per loop op: each of its per-iteration regions.
            for root in [scf::ForOperation::name(), scf::WhileOperation::name()] {
                patterns::add(
                    set,
                    context,
                    root,
                    &[
                        llvm::StackSaveOperation::name(),
                        llvm::StackRestoreOperation::name(),
                    ],
                    |loop_op, rewriter| {
                        let mut changed = false;
                        for region in loop_op.regions() {
                            if let Some(body) = region.first_block() {
                                changed |= scope_body(rewriter, body);
                            }
                        }
                        changed
                    },
                );
            }
        });
        if let Some(parallel) = unscoped_parallel_loop(function) {
            emit_error(
                parallel.location(),
                &format!(
                    "'{}' op body takes stack in every iteration, and {ARGUMENT} scopes only \
                     scf.for and scf.while bodies",
                    parallel.name().as_string_ref().as_str().unwrap_or_default()
                ),
            );
            return false;
        }
        true
    }
}

/// Saves the stack pointer at the start of `body` and restores it before
/// its terminator; false if `body` takes no stack or is already scoped.
fn scope_body<'c>(rewriter: &RewriterBase<'c, '_>, body: BlockRef<'c, '_>) -> bool {
    let Some(terminator) = body.terminator() else {
        return false;
    };
    let mut ops: Vec<OperationRef> =
        std::iter::successors(body.first_operation(), |op| op.next_in_block()).collect();
    ops.pop();
    let is = |op: Option<&OperationRef>, name: &str| {
        op.is_some_and(|op| op.name().as_string_ref().as_str() == Ok(name))
    };
    let scoped = is(ops.first(), llvm::StackSaveOperation::name())
        && is(ops.last(), llvm::StackRestoreOperation::name());
    if scoped || !ops.iter().any(|&op| allocates_stack(op)) {
        return false;
    }
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite this callback makes.
    let context = unsafe { context.to_ref() };
    let location = terminator.location();
    rewriter.set_insertion_point_to_start(body);
    let pointer = pointer(context, 0);
    let saved = rewriter.insert(llvm::intr_stacksave(context, pointer, location).into());
    rewriter.set_insertion_point_before(terminator);
    let saved = saved.result(0).expect("stacksave has one result").into();
    rewriter.insert(llvm::intr_stackrestore(context, saved, location).into());
    true
}

/// A parallel loop (`scf.parallel`, `scf.forall`) nested in `op`, whose
/// iterations the pass cannot scope, with a body that takes stack.
fn unscoped_parallel_loop<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    op.regions().flat_map(block_ops_of).find_map(|nested| {
        let name = nested.name();
        let name = name.as_string_ref().as_str().unwrap_or_default();
        let parallel =
            name == scf::ParallelOperation::name() || name == scf::ForallOperation::name();
        if parallel && nested.regions().flat_map(block_ops_of).any(allocates_stack) {
            Some(nested)
        } else {
            unscoped_parallel_loop(nested)
        }
    })
}

/// Whether `op`, or an op nested in it but not in a nested loop (which is
/// scoped on its own), takes stack when lowered to LLVM.
fn allocates_stack(op: OperationRef) -> bool {
    let name = op.name();
    let name = name.as_string_ref().as_str().unwrap_or_default();
    if name == scf::ForOperation::name() || name == scf::WhileOperation::name() {
        return false;
    }
    if name == memref::AllocaOperation::name() {
        return true;
    }
    if name == memref::CastOperation::name()
        && op
            .result(0)
            .is_ok_and(|result| MemRefType::try_from(result.r#type()).is_err())
    {
        return true;
    }
    op.regions()
        .any(|region| block_ops_of(region).any(allocates_stack))
}

/// The ops of every block of `region`, in order.
fn block_ops_of<'c, 'a>(region: RegionRef<'c, 'a>) -> impl Iterator<Item = OperationRef<'c, 'a>> {
    std::iter::successors(region.first_block(), |block| block.next_in_region())
        .flat_map(|block| std::iter::successors(block.first_operation(), |op| op.next_in_block()))
}
