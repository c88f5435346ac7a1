//! Rewrite patterns as HIR's passes write them: a root op named by its
//! generated wrapper (`host::StreamForOperation::name()`) and a closure over
//! the matched op and the rewriter. The raw handles melior's driver passes
//! the callback are turned into typed ones here, once.

use melior::{
    Context, PatternRewriter, RewritePatternSet, RewriterBase, create_op_rewrite_pattern,
    ir::{OperationRef, operation::OperationLike},
};

/// Adds to `set` a pattern rooted at the ops named `root`; `rewrite` changes
/// the matched op through the rewriter only, and says whether it changed
/// anything. `generated` names the ops it may create.
pub fn add<F>(
    set: &RewritePatternSet,
    context: &Context,
    root: &str,
    generated: &[&str],
    rewrite: F,
) where
    F: for<'c> Fn(OperationRef<'c, '_>, &RewriterBase<'c, '_>) -> bool + 'static,
{
    set.add(create_op_rewrite_pattern(
        root,
        1,
        context,
        move |_pattern, op, rewriter| {
            // SAFETY: the driver hands the callback a live op and rewriter,
            // which the callback does not keep.
            let (op, rewriter) = unsafe {
                (
                    OperationRef::from_raw(op),
                    PatternRewriter::from_raw(rewriter),
                )
            };
            rewrite(op, &rewriter.as_rewriter_base())
        },
        generated,
    ));
}

/// Applies the patterns `build` adds, in one post-order walk of the ops
/// nested in `op` (inner ops are rewritten before the ops around them).
pub fn walk(op: OperationRef, build: impl FnOnce(&Context, &RewritePatternSet)) {
    let context = op.context();
    // SAFETY: the context outlives the walk, the only place it is used.
    let context = unsafe { context.to_ref() };
    let set = RewritePatternSet::new(context);
    build(context, &set);
    melior::walk_and_apply_patterns(op, set.freeze());
}
