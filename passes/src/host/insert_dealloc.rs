//! `host-insert-dealloc`: frees every `host.alloc` after its last use.
//!
//! A use is a use of the buffer or of any view of it (`host.select`, taken
//! transitively). The last use is found among the ops of the allocation's
//! block: a use nested in a loop counts as the loop. `host.dealloc` is
//! ordered on the current stream like the work before it, so freeing after
//! the loop that ends by syncing the caller's stream is safe. A buffer that
//! escapes (returned, or passed to an op that is not a HIR op) or that is
//! already freed is left alone.
//!
//! ```mlir
//! %g = host.alloc : memref<4x8xf32>
//! scf.for %i = %c0 to %c4 step %c1 {
//!   %gi = host.select %g[0][%i] : ...
//!   host.neg ins(%gi : ...) outs(%gi : ...)
//! }
//! return
//! ```
//! becomes
//! ```mlir
//! %g = host.alloc : memref<4x8xf32>
//! scf.for %i = %c0 to %c4 step %c1 { ... }
//! host.dealloc %g : memref<4x8xf32>
//! return
//! ```

use melior::{
    ir::{
        BlockLike, OperationRef, Value, ValueLike,
        operation::{OperationLike, WalkOrder, WalkResult},
    },
    pass::{ExternalPass, Pass, RunExternalPass},
};
use mlir_sys::{
    MlirOperation, MlirValue, mlirOpOperandGetNextUse, mlirOpOperandGetOwner, mlirOpOperandIsNull,
    mlirValueGetFirstUse,
};

/// The op the pass runs on.
pub const ANCHOR: &str = "func.func";
pub const ARGUMENT: &str = "host-insert-dealloc";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Pass {
    external_pass!(
        InsertDealloc,
        "InsertDealloc",
        ARGUMENT,
        "Free every host.alloc after its last use",
        ANCHOR,
        &[],
    )
}

#[derive(Clone)]
struct InsertDealloc;

impl<'c> RunExternalPass<'c> for InsertDealloc {
    fn initialize(&mut self, _context: melior::ContextRef<'c>) {}

    fn run(&mut self, function: OperationRef<'c, '_>, _pass: ExternalPass<'_>) {
        let mut allocs = Vec::new();
        function.walk(WalkOrder::PreOrder, |op| {
            if op.name().as_string_ref().as_str() == Ok("host.alloc") {
                allocs.push(op.to_raw());
            }
            WalkResult::Advance
        });
        for alloc in allocs {
            // SAFETY: the walk collected live ops of this function, and inserting
            // deallocs does not erase any of them.
            insert_dealloc(unsafe { OperationRef::from_raw(alloc) });
        }
    }
}

/// Every op that uses `value` or a view of it.
fn users_through_views(value: MlirValue, users: &mut Vec<MlirOperation>) {
    // SAFETY: `value` is a live value; use lists are walked read-only.
    unsafe {
        let mut operand = mlirValueGetFirstUse(value);
        while !mlirOpOperandIsNull(operand) {
            let owner = mlirOpOperandGetOwner(operand);
            users.push(owner);
            let owner_ref = OperationRef::from_raw(owner);
            if owner_ref.name().as_string_ref().as_str() == Ok("host.select") {
                users_through_views(
                    owner_ref.result(0).expect("select has a result").to_raw(),
                    users,
                );
            }
            operand = mlirOpOperandGetNextUse(operand);
        }
    }
}

/// The ancestor of `op` (or `op` itself) whose parent block is `block`.
fn ancestor_in<'c, 'a>(
    op: OperationRef<'c, 'a>,
    block: melior::ir::BlockRef<'c, 'a>,
) -> Option<OperationRef<'c, 'a>> {
    let mut current = op;
    loop {
        if current.block() == Some(block) {
            return Some(current);
        }
        current = current.parent_operation()?;
    }
}

fn insert_dealloc(alloc: OperationRef) {
    let block = alloc
        .block()
        .expect("an alloc inside a function has a block");
    let buffer: Value = alloc.result(0).expect("alloc has a result").into();
    let mut users = Vec::new();
    users_through_views(buffer.to_raw(), &mut users);
    let mut last = alloc;
    for &user in &users {
        // SAFETY: users are live ops.
        let user = unsafe { OperationRef::from_raw(user) };
        let name = user.name();
        let name = name.as_string_ref().as_str().unwrap_or_default();
        if name == "host.dealloc" || !(name.starts_with("host.") || name.starts_with("comm.")) {
            return;
        }
        let Some(ancestor) = ancestor_in(user, block) else {
            return;
        };
        if last.is_before_in_block(ancestor) {
            last = ancestor;
        }
    }
    // SAFETY: the context outlives the pass run.
    let context = unsafe { alloc.context().to_ref() };
    let dealloc = hir_dialects::host::dealloc(context, buffer, alloc.location());
    block.insert_operation_after(last, dealloc.into());
}
