//! `host-verify-loops`: checks that every counted loop whose step is a
//! constant steps forward, so that it ends.
//!
//! MLIR 22 accepts an `scf.for` whose step is zero or negative: it never
//! leaves its first iteration (zero) or counts down from the lower bound
//! past the upper one (negative), so a program that verifies runs forever.
//! HIR's pipeline to LLVM starts with this pass, so `hir-run`, `hir-bench`
//! and Python refuse such a program, at the loop, before any rank starts.
//! `scf.for` and `host.stream_for` (whose step is its third operand too)
//! are checked; a step computed at run time is the program's to get right.
//!
//! ```mlir
//! %c0 = arith.constant 0 : index
//! // error: 'scf.for' op step 0 is not positive: the loop would never end
//! scf.for %i = %c0 to %c4 step %c0 { ... }
//! ```

use crate::HirPass;
use crate::diagnostics::emit_error;
use crate::ir;
use crate::ops::Op;
use melior::ir::operation::OperationLike;

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-verify-loops";

/// The operand of a counted loop that is its step.
const STEP: usize = 2;

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(VerifyLoops)
}

struct VerifyLoops;

impl HirPass for VerifyLoops {
    fn run(&mut self, function: melior::ir::OperationRef) -> bool {
        let mut ok = true;
        for op in ir::nested(function) {
            if !(Op::ScfFor.is(&op) || Op::HostStreamFor.is(&op)) {
                continue;
            }
            let Some(step) = ir::operand(&op, STEP).and_then(ir::constant) else {
                continue;
            };
            if step <= 0 {
                emit_error(
                    op.location(),
                    &format!(
                        "'{}' op step {step} is not positive: the loop would never end",
                        ir::name(&op)
                    ),
                );
                ok = false;
            }
        }
        ok
    }
}
