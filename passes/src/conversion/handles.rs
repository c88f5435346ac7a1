//! The `!host.stream` and `!comm.request` values of a host program, which
//! `convert-host-to-llvm` and `convert-comm-to-llvm` lower to `i64`
//! handles: the rule of where they may flow, checked before anything
//! changes, and the in-place retyping of the `scf` values that carry
//! requests.
//!
//! A handle flows from the op of its dialect that makes it to ops of that
//! dialect only; requests may also flow through `scf.for` iter_args and
//! `scf.if` results ([`Handles::through_scf`]), so that a wait can be
//! posted one iteration later:
//! ```mlir
//! %r0 = comm.allreduce ... : memref<8xf32> into memref<8xf32>
//! %r = scf.for %i = %c0 to %n step %c1 iter_args(%p = %r0) -> (!comm.request) {
//!   comm.wait %p
//!   %q = comm.allreduce ...
//!   scf.yield %q : !comm.request
//! }
//! ```
//! Each maker's pattern replaces its handle by the `i64` of its call, so
//! the loop's init operand and yield take `i64`s; [`Handles::retype`] then
//! makes the loop's block argument and result `i64` as well.

use super::runtime_calls::{Failure, Result, i64_type};
use crate::ir;
use crate::ops::Op;
use melior::{
    RewriterBase,
    ir::{
        BlockLike, OperationRef, RegionLike, Type, TypeLike, ValueLike, attribute::TypeAttribute,
        operation::OperationLike, r#type::FunctionType,
    },
};

/// Where the handles of one dialect may flow. Holds no IR: the patterns
/// that need it outlive any borrow of the module.
#[derive(Clone, Copy)]
pub struct Handles {
    /// An op of the dialect whose ops make and take the handles.
    dialect: Op,
    /// How diagnostics spell the handle type.
    spelling: &'static str,
    is_handle: fn(Type) -> bool,
    /// Whether handles may flow through `scf.for` iter_args and `scf.if`
    /// results ([`Handles::through_scf`]).
    through_scf: bool,
}

impl Handles {
    /// The handles `is_handle` recognises, made and taken by ops of the
    /// dialect of `dialect`.
    pub fn new(dialect: Op, spelling: &'static str, is_handle: fn(Type) -> bool) -> Self {
        Self {
            dialect,
            spelling,
            is_handle,
            through_scf: false,
        }
    }

    /// Lets handles flow through `scf.for` iter_args (block arguments, init
    /// operands, results) and `scf.if` results, their `scf.yield`s included:
    /// [`Handles::retype`] makes those values `i64`s.
    pub fn through_scf(mut self) -> Self {
        self.through_scf = true;
        self
    }

    /// Whether `op` may take or give handles without being of the dialect.
    fn carries(&self, op: &OperationRef) -> bool {
        self.through_scf
            && match Op::of(op) {
                Some(Op::ScfFor | Op::ScfIf) => true,
                Some(Op::ScfYield) => op
                    .parent_operation()
                    .is_some_and(|parent| Op::ScfFor.is(&parent) || Op::ScfIf.is(&parent)),
                _ => false,
            }
    }

    /// Makes the handles `op` (an `scf.for` or `scf.if`) carries, its
    /// results and its bodies' block arguments, `i64`s in place; false if it
    /// carries none.
    pub fn retype<'c>(&self, rewriter: &RewriterBase<'c, '_>, op: OperationRef<'c, '_>) -> bool {
        let results = op
            .results()
            .map(Into::into)
            .filter(|value: &melior::ir::Value| (self.is_handle)(value.r#type()));
        let arguments = op
            .regions()
            .filter_map(|region| region.first_block())
            .flat_map(|block| {
                (0..block.argument_count())
                    .map(move |index| block.argument(index).expect("index in range").into())
            })
            .filter(|value: &melior::ir::Value| (self.is_handle)(value.r#type()));
        let handles: Vec<_> = results.chain(arguments).collect();
        if handles.is_empty() {
            return false;
        }
        let context = op.context();
        // SAFETY: the context outlives the rewrite.
        let i64 = i64_type(unsafe { context.to_ref() });
        rewriter.start_op_modification(op);
        for handle in handles {
            handle.set_type(i64);
        }
        rewriter.finalize_op_modification(op);
        true
    }

    /// Checks, before anything changes, that every handle in `module` is a
    /// result of an op of the dialect used only by ops of the dialect: not
    /// a block argument, not in a function type, not through another op
    /// (but `scf`'s, [`Handles::through_scf`]).
    pub fn check<'c>(&self, module: OperationRef<'c, '_>, pass: &str) -> Result<'c, ()> {
        ir::nested(module)
            .iter()
            .try_for_each(|op| self.check_op(op, pass))
    }

    fn check_op<'c>(&self, op: &OperationRef<'c, '_>, pass: &str) -> Result<'c, ()> {
        let name = ir::name(op);
        let fail = |what: String| {
            Err(Failure::new(
                op.location(),
                format!(
                    "'{name}' op {what}; {pass} lowers {} values only from one {} op to others",
                    self.spelling,
                    self.dialect.dialect()
                ),
            ))
        };
        if let Some(r#type) = op
            .attribute("function_type")
            .ok()
            .and_then(|attribute| TypeAttribute::try_from(attribute).ok())
            .and_then(|attribute| FunctionType::try_from(attribute.value()).ok())
        {
            let inputs = (0..r#type.input_count()).map(|index| r#type.input(index));
            let results = (0..r#type.result_count()).map(|index| r#type.result(index));
            if inputs
                .chain(results)
                .any(|r#type| r#type.is_ok_and(self.is_handle))
            {
                return fail(format!("has a {} in its type", self.spelling));
            }
        }
        for region in op.regions() {
            let mut block = region.first_block();
            while let Some(current) = block {
                for index in 0..current.argument_count() {
                    let argument = current.argument(index).expect("index in range");
                    if (self.is_handle)(argument.r#type())
                        && !(Op::ScfFor.is(op) && self.carries(op))
                    {
                        return fail(format!("has a block argument of type {}", self.spelling));
                    }
                }
                block = current.next_in_region();
            }
        }
        if !self.dialect.same_dialect(op) && !self.carries(op) {
            if op.operands().any(|value| (self.is_handle)(value.r#type())) {
                return fail(format!("takes a {} operand", self.spelling));
            }
            if op.results().any(|value| (self.is_handle)(value.r#type())) {
                return fail(format!("returns a {}", self.spelling));
            }
        }
        Ok(())
    }
}

/// Whether `r#type` is `!host.stream`.
pub fn is_stream(r#type: Type) -> bool {
    // SAFETY: `r#type` is a valid type.
    unsafe { hir_dialects::ffi::hirTypeIsAHostStream(r#type.to_raw()) }
}

/// Whether `r#type` is `!comm.request`.
pub fn is_request(r#type: Type) -> bool {
    // SAFETY: `r#type` is a valid type.
    unsafe { hir_dialects::ffi::hirTypeIsACommRequest(r#type.to_raw()) }
}
