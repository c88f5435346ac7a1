//! The function-signature step, before the patterns: each argument becomes
//! the memref of its local shard, in place, and each result a trailing
//! out-argument; the function returns nothing. The body keeps its tensors
//! for the patterns to read: each argument's uses take an
//! `unrealized_conversion_cast` of its buffer back to the tensor it was,
//! as each lowered op's result will (a tensor's buffer is the cast's
//! operand). Also checks what no pattern lowers: one block, no op on
//! tensors but fusion ops.

use super::{Meshes, Tensor, is_tensor};
use crate::{
    builders::{self, Builder},
    diagnostics::{Emitted, error},
    ir,
    ops::Op,
    rewrite,
};
use melior::{
    Context, RewriterBase,
    ir::{
        Attribute, BlockLike, OperationRef, RegionLike, Type, Value, ValueLike,
        attribute::{ArrayAttribute, TypeAttribute},
        operation::OperationLike,
        r#type::FunctionType,
    },
};

/// Bufferizes the signature of `function`; false where it has nothing to
/// lower (a declaration, a function with no tensor and no fusion op).
pub(super) fn bufferize<'c>(
    context: &'c Context,
    rewriter: &RewriterBase<'c, '_>,
    function: OperationRef<'c, '_>,
    meshes: &Meshes,
) -> Result<bool, Emitted> {
    let location = function.location();
    let Some(entry) = ir::region(&function, 0).and_then(|region| region.first_block()) else {
        return Ok(false); // a declaration
    };
    if entry.next_in_region().is_some() {
        return error(location, "functions with several blocks are not supported");
    }
    let ops = ir::body(function);
    let returned = *ops.last().expect("a block ends with a terminator");
    let has_tensors = (0..entry.argument_count())
        .any(|index| is_tensor(entry.argument(index).expect("in range").r#type()))
        || returned.operands().any(|value| is_tensor(value.r#type()));
    if !has_tensors && !ops.iter().any(|op| Op::FusionSet.same_dialect(op)) {
        return Ok(false);
    }

    // Arguments hold their local shard in place.
    let at_entry = Builder::before(context, ops[0]);
    rewriter.start_op_modification(function);
    for index in 0..entry.argument_count() {
        let argument: Value = entry.argument(index).expect("in range").into();
        let tensor = match Tensor::of(argument, location, meshes) {
            Ok(tensor) => tensor,
            Err(emitted) => {
                rewriter.cancel_op_modification(function);
                return Err(emitted);
            }
        };
        let r#type = argument.r#type();
        entry
            .argument(index)
            .expect("in range")
            .set_type(tensor.buffer_type());
        let cast = at_entry.op(
            Op::UnrealizedConversionCast.name(),
            location,
            &[argument],
            &[],
            &[r#type],
        );
        rewriter.replace_all_uses_except(argument, builders::result(cast), cast);
    }
    // Results become out-arguments.
    for value in returned.operands() {
        let tensor = match Tensor::of(value, returned.location(), meshes) {
            Ok(tensor) => tensor,
            Err(emitted) => {
                rewriter.cancel_op_modification(function);
                return Err(emitted);
            }
        };
        entry.add_argument(tensor.buffer_type(), location);
    }
    rewriter.finalize_op_modification(function);
    for &op in &ops[..ops.len() - 1] {
        let on_tensors = op.operands().any(|value| is_tensor(value.r#type()))
            || op.results().any(|value| is_tensor(value.r#type()));
        if on_tensors && !Op::FusionSet.same_dialect(&op) {
            return error(
                op.location(),
                format!(
                    "'{}' on tensors cannot be bufferized: only fusion ops can",
                    ir::name(&op)
                ),
            );
        }
    }

    let inputs: Vec<Type> = (0..entry.argument_count())
        .map(|index| entry.argument(index).expect("in range").r#type())
        .collect();
    let function_type = FunctionType::new(context, &inputs, &[]);
    rewrite::set_attribute(
        rewriter,
        function,
        "function_type",
        TypeAttribute::new(function_type.into()).into(),
    );
    // Result attributes described results that are now arguments.
    rewrite::remove_attribute(rewriter, function, "res_attrs");
    if function.has_attribute("arg_attrs") {
        let mut attrs: Vec<Attribute> = Vec::new();
        let existing = ArrayAttribute::try_from(function.attribute("arg_attrs").expect("has"))
            .expect("arg_attrs is an array");
        for index in 0..existing.len() {
            attrs.push(existing.element(index).expect("in range"));
        }
        let empty = Attribute::parse(context, "{}").expect("an empty dictionary");
        attrs.resize(inputs.len(), empty);
        rewrite::set_attribute(
            rewriter,
            function,
            "arg_attrs",
            ArrayAttribute::new(context, &attrs).into(),
        );
    }
    Ok(true)
}
