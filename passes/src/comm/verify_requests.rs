//! `comm-verify-requests`: checks that every `!comm.request` is waited for
//! exactly once on every path through the function.
//!
//! Requests are linear values: each is consumed once, by a `comm.wait`, by
//! an `scf.yield` that passes it out of an `scf.if` branch or on to the next
//! iteration of an `scf.for`, or by an `scf.for` that takes it as the initial
//! value of an iter_arg. The check walks the structured control flow:
//! - a request consumed twice (waited twice, waited then yielded) is an
//!   error at the second consumer;
//! - one never consumed is an error at the op that made it: a request made
//!   in a loop body (or an `scf.if` branch) must be waited there or yielded;
//!   an iter_arg must be waited or yielded by every iteration;
//! - a loop body (of `scf.for`, `host.stream_for`, any region op but
//!   `scf.if`) must not wait for a request made outside it: that would be a
//!   wait per iteration; carry it in an iter_arg instead;
//! - the branches of an `scf.if` consume the same requests from outside it
//!   (an `scf.if` without `else` consumes none);
//! - the requests of sends and receives inside a coalescing group are not
//!   waited (the group's `comm.end_coalescing` request stands for them), and
//!   waiting for one is an error;
//! - a request may flow through no other op (a call, a return, `scf.while`),
//!   nor into a function as an argument.
//!
//! ```mlir
//! %r0 = comm.send %a0 to %c1 team [0, 1] : memref<8xf32>
//! %last = scf.for %i = %c1 to %c4 step %c1 iter_args(%prev = %r0) -> (!comm.request) {
//!   comm.wait %prev                     // the previous iteration's send
//!   %r = comm.send %a1 to %c1 team [0, 1] : memref<8xf32>
//!   scf.yield %r : !comm.request
//! }
//! comm.wait %last
//! ```

use crate::HirPass;
use crate::diagnostics::{Emitted, emit_error, error};
use crate::ir;
use crate::ops::Op;
use melior::ir::{
    BlockLike, BlockRef, OperationRef, RegionLike, TypeLike, Value, ValueLike,
    operation::OperationLike,
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "comm-verify-requests";

/// Creates the pass (anchored on `func.func`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(VerifyRequests)
}

struct VerifyRequests;

impl HirPass for VerifyRequests {
    fn run(&mut self, function: OperationRef) -> bool {
        let Some(region) = ir::region(&function, 0) else {
            return true;
        };
        let Some(body) = region.first_block() else {
            return true;
        };
        let takes_request = (0..body.argument_count())
            .any(|index| is_request(body.argument(index).expect("index in range").into()));
        if takes_request {
            emit_error(
                function.location(),
                "'func.func' op takes a request argument; a request is waited for in the \
                 function that posts it",
            );
            return false;
        }
        Scope::default().walk(body).is_ok()
    }
}

type Checked = Result<(), Emitted>;

fn is_request(value: Value) -> bool {
    // SAFETY: the value's type is valid.
    unsafe { hir_dialects::ffi::hirTypeIsACommRequest(value.r#type().to_raw()) }
}

/// The requests of one block being walked.
#[derive(Default)]
struct Scope<'c, 'a> {
    /// Made (or carried in) and not consumed yet.
    open: Vec<Value<'c, 'a>>,
    /// Requests from outside the block that it may consume (an `scf.if`
    /// branch's): those it did, in order.
    outer: Vec<Value<'c, 'a>>,
    consumed_outer: Vec<Value<'c, 'a>>,
    /// Consumed already, for "twice" errors.
    consumed: Vec<Value<'c, 'a>>,
    /// Requests of a coalescing group's sends and receives.
    grouped: Vec<Value<'c, 'a>>,
}

impl<'c, 'a> Scope<'c, 'a> {
    /// Walks `block`; every request still open at its end is an error.
    fn walk(mut self, block: BlockRef<'c, 'a>) -> Result<Self, Emitted> {
        let mut in_group = false;
        for op in ir::block_ops(block) {
            match Op::of(&op) {
                Some(Op::CommStartCoalescing) => in_group = true,
                Some(Op::CommEndCoalescing) => in_group = false,
                _ => {}
            }
            self.consume_operands(op)?;
            match Op::of(&op) {
                Some(Op::ScfIf) => self.walk_if(op)?,
                Some(Op::ScfFor) => self.walk_loop(op, true)?,
                _ if op.region_count() > 0 => self.walk_loop(op, false)?,
                _ => {}
            }
            for result in op.results().map(Value::from).filter(|&r| is_request(r)) {
                let name = ir::name(&op);
                if !name.starts_with("comm.")
                    && !matches!(Op::of(&op), Some(Op::ScfIf | Op::ScfFor))
                {
                    return error(
                        op.location(),
                        format!(
                            "'{name}' op gives a request; requests flow only through scf.for \
                             iter_args and scf.if results"
                        ),
                    );
                }
                if in_group && name.starts_with("comm.") && !Op::CommEndCoalescing.is(&op) {
                    self.grouped.push(result);
                } else {
                    self.open.push(result);
                }
            }
        }
        if let Some(&open) = self.open.first() {
            never_waited(open)?;
        }
        Ok(self)
    }

    /// Consumes the request operands of `op`: a wait's, a yield's, a loop's
    /// initial values.
    fn consume_operands(&mut self, op: OperationRef<'c, 'a>) -> Checked {
        let name = ir::name(&op);
        let requests: Vec<Value> = op.operands().filter(|&value| is_request(value)).collect();
        if requests.is_empty() {
            return Ok(());
        }
        if !matches!(Op::of(&op), Some(Op::CommWait | Op::ScfYield | Op::ScfFor)) {
            return error(
                op.location(),
                format!(
                    "'{name}' op takes a request; only comm.wait, scf.yield and scf.for's \
                     iter_args consume one"
                ),
            );
        }
        for request in requests {
            if self.grouped.contains(&request) {
                return error(
                    op.location(),
                    format!(
                        "'{name}' op consumes the request of a send or receive inside a \
                         coalescing group; wait for the group's end_coalescing request"
                    ),
                );
            }
            if self.consumed.contains(&request) {
                return error(
                    op.location(),
                    format!(
                        "'{name}' op consumes a request that is already waited for or passed on"
                    ),
                );
            }
            if let Some(index) = self.open.iter().position(|&open| open == request) {
                self.open.remove(index);
            } else if self.outer.contains(&request) {
                self.consumed_outer.push(request);
            } else {
                return error(
                    op.location(),
                    format!(
                        "'{name}' op consumes a request made outside the loop it is in, once \
                         per iteration; carry it through an scf.for iter_arg"
                    ),
                );
            }
            self.consumed.push(request);
        }
        Ok(())
    }

    /// An `scf.if`: each branch may consume requests open here, and both
    /// must consume the same ones.
    fn walk_if(&mut self, op: OperationRef<'c, 'a>) -> Checked {
        let mut consumed: Vec<Vec<Value>> = Vec::new();
        for region in op.regions() {
            let Some(block) = region.first_block() else {
                consumed.push(Vec::new());
                continue;
            };
            let mut outer = self.open.clone();
            outer.extend(self.outer.iter().copied());
            let branch = Scope {
                outer,
                consumed: self.consumed.clone(),
                grouped: self.grouped.clone(),
                ..Scope::default()
            }
            .walk(block)?;
            let mut taken = branch.consumed_outer;
            taken.sort_by_key(|value| value.to_raw().ptr as usize);
            consumed.push(taken);
        }
        if consumed.len() < 2 {
            consumed.push(Vec::new());
        }
        if consumed[0] != consumed[1] {
            return error(
                op.location(),
                "'scf.if' op consumes a request in one branch and not in the other",
            );
        }
        for request in consumed.swap_remove(0) {
            if let Some(index) = self.open.iter().position(|&open| open == request) {
                self.open.remove(index);
            } else {
                self.consumed_outer.push(request);
            }
            self.consumed.push(request);
        }
        Ok(())
    }

    /// A loop body (or any region but an `scf.if` branch): consumes nothing
    /// from outside; an `scf.for`'s request iter_args are open in it.
    fn walk_loop(&mut self, op: OperationRef<'c, 'a>, carries: bool) -> Checked {
        for region in op.regions() {
            let Some(block) = region.first_block() else {
                continue;
            };
            let arguments: Vec<Value> = (0..block.argument_count())
                .map(|index| block.argument(index).expect("index in range").into())
                .filter(|&argument| is_request(argument))
                .collect();
            if !carries && !arguments.is_empty() {
                return error(
                    op.location(),
                    format!(
                        "'{}' op carries a request in a block argument; requests flow only \
                         through scf.for iter_args and scf.if results",
                        ir::name(&op)
                    ),
                );
            }
            Scope {
                open: arguments,
                consumed: self.consumed.clone(),
                ..Scope::default()
            }
            .walk(block)?;
        }
        Ok(())
    }
}

/// The error for a request still open at the end of its block.
fn never_waited(request: Value) -> Checked {
    if let Ok(result) = melior::ir::operation::OperationResult::try_from(request) {
        let maker = result.owner();
        return error(
            maker.location(),
            format!(
                "'{}' op request (result #{}) is not waited for on every path: wait for it \
                 or yield it before the end of its block",
                ir::name(&maker),
                result.result_number()
            ),
        );
    }
    let argument = melior::ir::block::BlockArgument::try_from(request)
        .expect("a request is a result or an argument");
    let owner = argument
        .owner()
        .parent_operation()
        .expect("a block argument's block is in an op");
    error(
        owner.location(),
        format!(
            "'{}' op iter_arg request (block argument #{}) is not waited for nor yielded by \
             every iteration",
            ir::name(&owner),
            argument.argument_number()
        ),
    )
}
