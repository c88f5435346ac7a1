//! `fusion-differentiate`: builds the vector-Jacobian product of a fusion
//! function, in `fusion`, with distributions, so that the backward lowers
//! through the pipelines the forward does.
//!
//! Given `@f(args) -> results`, the pass keeps `@f` and adds
//!
//! - `@f_forward(args) -> (results..., saved...)`: `@f`'s body, also
//!   returning the forward values the backward reads (its saved
//!   activations), in the order the forward defines them (arguments first);
//! - `@f_backward(saved..., d_results...) -> (d_args...)`: one cotangent per
//!   floating-point result of `@f` (integer results get none), and one
//!   gradient per argument in `wrt`, in that order, each of exactly its
//!   primal's type (element type and `#fusion.dist`).
//!
//! The backward is reverse mode over the forward's ops, one rule per op
//! family (`pointwise`, `structural`, `contraction`, `attention`); a value used more than
//! once gets the sum of its uses' gradients. Only values that depend on a
//! `wrt` argument and are floating point get gradients; an op on that path
//! that has no rule is an error at the op. With `saved=recompute`, a
//! forward `fusion.set` that gathers is redone in the backward, which saves
//! its input instead of the gathered tensor.
//!
//! ```mlir
//! func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
//!   %y = fusion.exp %x : tensor<8xf32> -> tensor<8xf32>
//!   return %y : tensor<8xf32>
//! }
//! ```
//! gains
//! ```mlir
//! func.func @f_forward(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
//!   %y = fusion.exp %x : tensor<8xf32> -> tensor<8xf32>
//!   return %y, %y : tensor<8xf32>, tensor<8xf32>
//! }
//! func.func @f_backward(%y: tensor<8xf32>, %dy: tensor<8xf32>) -> tensor<8xf32> {
//!   %dx = fusion.mul %dy, %y : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
//!   return %dx : tensor<8xf32>
//! }
//! ```

mod attention;
mod contraction;
mod emit;
mod pointwise;
mod structural;

use super::propagate_sharding::update_function_type;
use crate::builders::Builder;
use crate::diagnostics::{Emitted, error};
use crate::ops::Op;
use crate::pass::PassOptions;
use crate::{HirPass, choice, ir, rewrite};
use emit::{Emit, Tensor, key};
use hir_dialects::dist::{Dist, ParallelType};
use melior::{
    Context,
    ir::{
        Block, BlockLike, BlockRef, Operation, OperationRef, Region, RegionLike, Type, TypeLike,
        Value, ValueLike,
        attribute::{FloatAttribute, StringAttribute, TypeAttribute},
        operation::{OperationBuilder, OperationLike},
        r#type::FunctionType,
    },
};
use std::collections::{HashMap, HashSet};

/// The op the pass runs on: it adds functions to the module.
pub const ANCHOR: &str = crate::ops::MODULE;
pub const ARGUMENT: &str = "fusion-differentiate";

choice! {
    /// What the backward reads of a forward `fusion.set` that gathers.
    pub enum Saved {
        /// The gathered tensor, saved by the forward.
        Gathered = "gathered",
        /// The set's input, saved; the backward gathers it again.
        Recompute = "recompute",
    }
}

/// What to differentiate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DifferentiateOptions {
    /// The function; `None` for the module's only public one.
    pub function: Option<String>,
    /// The arguments that get gradients; `None` for every floating-point one.
    pub wrt: Option<Vec<usize>>,
    pub saved: Saved,
}

impl DifferentiateOptions {
    /// The options as the registry declares them (`function`, `wrt`, `saved`).
    pub fn parse(options: &PassOptions) -> Result<Self, String> {
        let function = Some(options.text("function"))
            .filter(|name| !name.is_empty())
            .map(|name| name.trim_start_matches('@').to_owned());
        let wrt = options.text("wrt");
        let wrt = (!wrt.is_empty())
            .then(|| {
                wrt.split(',')
                    .map(|index| crate::options::count("wrt", index.trim(), 0))
                    .collect::<Result<Vec<usize>, String>>()
            })
            .transpose()?;
        Ok(Self {
            function,
            wrt,
            saved: options.choice("saved")?,
        })
    }
}

/// Creates the pass.
pub fn create(options: DifferentiateOptions) -> Box<dyn HirPass> {
    Box::new(Differentiate { options })
}

struct Differentiate {
    options: DifferentiateOptions,
}

impl HirPass for Differentiate {
    fn run(&mut self, module: OperationRef) -> bool {
        let context = module.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        differentiate(context, module, &self.options).is_ok()
    }
}

fn symbol(function: &OperationRef) -> String {
    function
        .attribute("sym_name")
        .ok()
        .and_then(|name| StringAttribute::try_from(name).ok())
        .map(|name| name.value().to_owned())
        .unwrap_or_default()
}

fn is_public(function: &OperationRef) -> bool {
    function
        .attribute("sym_visibility")
        .ok()
        .and_then(|visibility| StringAttribute::try_from(visibility).ok())
        .is_none_or(|visibility| visibility.value() == "public")
}

/// The function the options name, or the module's only public one.
fn chosen<'c, 'a>(
    module: OperationRef<'c, 'a>,
    name: Option<&str>,
) -> Result<OperationRef<'c, 'a>, Emitted> {
    let functions: Vec<OperationRef> = ir::body(module)
        .into_iter()
        .filter(|op| Op::FuncFunc.is(op))
        .collect();
    match name {
        Some(name) => match functions.iter().find(|function| symbol(function) == name) {
            Some(&function) => Ok(function),
            None => error(
                module.location(),
                format!("{ARGUMENT}: no function '@{name}' in the module"),
            ),
        },
        None => match functions
            .iter()
            .filter(|function| is_public(function))
            .collect::<Vec<_>>()[..]
        {
            [&function] => Ok(function),
            ref public => error(
                module.location(),
                format!(
                    "{ARGUMENT}: the module has {} public functions; name one with function=NAME",
                    public.len()
                ),
            ),
        },
    }
}

fn is_float(r#type: Type) -> bool {
    Tensor::is_tensor(r#type) && Tensor::of(r#type).element.is_float()
}

/// The arguments that get gradients, checked against `function`'s.
fn wrt_arguments(
    function: OperationRef,
    entry: BlockRef,
    wrt: Option<&[usize]>,
) -> Result<Vec<usize>, Emitted> {
    let count = entry.argument_count();
    let float = |index: usize| is_float(entry.argument(index).expect("in range").r#type());
    let Some(wrt) = wrt else {
        return Ok((0..count).filter(|&index| float(index)).collect());
    };
    let name = symbol(&function);
    for (position, &index) in wrt.iter().enumerate() {
        if index >= count {
            return error(
                function.location(),
                format!("wrt argument {index} is out of range: '@{name}' has {count} arguments"),
            );
        }
        if !float(index) {
            let r#type = entry.argument(index).expect("in range").r#type();
            return error(
                function.location(),
                format!(
                    "wrt argument {index} of '@{name}' is {type}; only floating-point tensors get gradients"
                ),
            );
        }
        if wrt[..position].contains(&index) {
            return error(
                function.location(),
                format!("wrt lists argument {index} twice"),
            );
        }
    }
    Ok(wrt.to_vec())
}

fn differentiate<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &DifferentiateOptions,
) -> Result<(), Emitted> {
    let function = chosen(module, options.function.as_deref())?;
    let name = symbol(&function);
    let entry = ir::region(&function, 0)
        .and_then(|region| region.first_block())
        .filter(|block| block.next_in_region().is_none());
    let Some(entry) = entry else {
        return error(
            function.location(),
            format!("{ARGUMENT}: '@{name}' must have a body of one block"),
        );
    };
    let wrt = wrt_arguments(function, entry, options.wrt.as_deref())?;
    let taken: HashSet<String> = ir::body(module).iter().map(symbol).collect();
    for suffix in ["forward", "backward"] {
        if taken.contains(&format!("{name}_{suffix}")) {
            return error(
                function.location(),
                format!("{ARGUMENT}: the module already has a function '@{name}_{suffix}'"),
            );
        }
    }

    let module_body = module
        .region(0)
        .expect("a module has a body")
        .first_block()
        .expect("a module has a block");
    // SAFETY: the clone is a new op, owned by the `Operation` until inserted.
    let copy = unsafe { Operation::from_raw(mlir_sys::mlirOperationClone(function.to_raw())) };
    let forward = module_body.insert_operation_after(function, copy);
    rename(context, forward, &format!("{name}_forward"));
    let forward_entry = ir::region(&forward, 0)
        .and_then(|region| region.first_block())
        .expect("a copy of the body");
    let ops = ir::block_ops(forward_entry).collect::<Vec<_>>();
    let (&ret, ops) = ops.split_last().expect("a function ends in a return");

    let d_results: Vec<Type> = ret
        .operands()
        .map(|value| value.r#type())
        .filter(|&r#type| is_float(r#type))
        .collect();
    let backward = module_body.insert_operation_after(
        forward,
        new_function(context, &format!("{name}_backward"), &d_results, function),
    );
    let backward_entry = ir::region(&backward, 0)
        .and_then(|region| region.first_block())
        .expect("built with a block");

    let mut tape = Tape::new(
        context,
        Builder::at_end_of(context, backward_entry, function.location()),
        backward_entry,
        forward_entry,
        options.saved,
    );
    let active = active_values(forward_entry, &wrt);
    let mut next_d_result = 0;
    for value in ret.operands() {
        if is_float(value.r#type()) {
            let d_result = backward_entry
                .argument(next_d_result)
                .expect("one argument per float result")
                .into();
            next_d_result += 1;
            if active.contains(&key(value.to_raw().ptr)) {
                tape.accumulate(value, d_result);
            }
        }
    }
    for &op in ops.iter().rev() {
        tape.differentiate(op, &active)?;
    }

    let gradients: Vec<Value> = wrt
        .iter()
        .map(|&index| {
            let argument: Value = forward_entry.argument(index).expect("in range").into();
            match tape.cotangent(argument) {
                Some(gradient) => gradient,
                None => tape.emit.fill(0.0, argument.r#type()),
            }
        })
        .collect();
    tape.emit.locate(function.location());
    let returned = OperationBuilder::new(Op::FuncReturn.name(), tape.emit.location())
        .add_operands(&gradients)
        .build()
        .expect("a valid func.return");
    backward_entry.append_operation(returned);
    unstream(context, backward_entry);
    update_function_type(context, backward);

    let mut results: Vec<Value> = ret.operands().collect();
    results.extend(tape.saved.iter().map(|&(_, value)| value));
    rewrite::set_operands(&rewrite::rewriter(ret).as_rewriter_base(), ret, &results);
    update_function_type(context, forward);
    Ok(())
}

/// Makes every `stream` axis of the backward's values `serial`: a stream
/// axis schedules the op that computes a forward value, but the backward
/// takes that value as an argument, and contracts or reduces its
/// gradient along the axis. (A natural program gets its loops back from
/// `host-auto-stream`.)
fn unstream(context: &Context, block: BlockRef) {
    let arguments = (0..block.argument_count()).map(|index| block.argument(index).unwrap().into());
    let results =
        ir::block_ops(block).flat_map(|op| op.results().map(Value::from).collect::<Vec<_>>());
    for value in arguments.chain(results).collect::<Vec<Value>>() {
        if let Some(mut dist) = Dist::of_type(value.r#type())
            && dist.find(ParallelType::Stream).is_some()
        {
            for axis in &mut dist.axes {
                if *axis == ParallelType::Stream {
                    *axis = ParallelType::Serial;
                }
            }
            dist.stream_chunks = None;
            value.set_type(super::axis_map::with_dist(context, value.r#type(), &dist));
        }
    }
}

fn rename(context: &Context, function: OperationRef, name: &str) {
    rewrite::set_attribute(
        &rewrite::rewriter(function).as_rewriter_base(),
        function,
        "sym_name",
        StringAttribute::new(context, name).into(),
    );
}

/// An empty `func.func @name(arguments)`, visible as `like` is; the pass
/// sets its type once its body is built.
fn new_function<'c>(
    context: &'c Context,
    name: &str,
    arguments: &[Type<'c>],
    like: OperationRef<'c, '_>,
) -> melior::ir::Operation<'c> {
    let location = like.location();
    let block = Block::new(
        &arguments
            .iter()
            .map(|&r#type| (r#type, location))
            .collect::<Vec<_>>(),
    );
    let region = Region::new();
    region.append_block(block);
    let r#type = FunctionType::new(context, arguments, &[]);
    let mut builder = OperationBuilder::new(Op::FuncFunc.name(), location)
        .add_attributes(&[
            (
                melior::ir::Identifier::new(context, "sym_name"),
                StringAttribute::new(context, name).into(),
            ),
            (
                melior::ir::Identifier::new(context, "function_type"),
                TypeAttribute::new(r#type.into()).into(),
            ),
        ])
        .add_regions([region]);
    if let Ok(visibility) = like.attribute("sym_visibility") {
        builder = builder.add_attributes(&[(
            melior::ir::Identifier::new(context, "sym_visibility"),
            visibility,
        )]);
    }
    builder.build().expect("a valid func.func")
}

/// The values (keys) that depend on a `wrt` argument and are floating point.
fn active_values(entry: BlockRef, wrt: &[usize]) -> HashSet<usize> {
    let mut active: HashSet<usize> = wrt
        .iter()
        .map(|&index| key(entry.argument(index).expect("in range").to_raw().ptr))
        .collect();
    for op in ir::block_ops(entry) {
        let reads_active = op
            .operands()
            .any(|operand| active.contains(&key(operand.to_raw().ptr)));
        if reads_active {
            for result in op.results() {
                let result: Value = result.into();
                if is_float(result.r#type()) {
                    active.insert(key(result.to_raw().ptr));
                }
            }
        }
    }
    active
}

/// The backward being built: gradients so far (cotangents of forward
/// values), and the forward values it reads, each saved once.
struct Tape<'c, 'a> {
    emit: Emit<'c, 'a>,
    block: BlockRef<'c, 'a>,
    /// Where each forward value is defined: arguments first, then results in order.
    order: HashMap<usize, usize>,
    /// The saved forward values, by definition order.
    saved: Vec<(usize, Value<'c, 'a>)>,
    /// Each forward value the backward has read, as the backward has it.
    primals: HashMap<usize, Value<'c, 'a>>,
    cotangents: HashMap<usize, Value<'c, 'a>>,
    mode: Saved,
}

impl<'c, 'a> Tape<'c, 'a> {
    fn new(
        context: &'c Context,
        builder: Builder<'c, 'a>,
        block: BlockRef<'c, 'a>,
        forward: BlockRef<'c, 'a>,
        mode: Saved,
    ) -> Self {
        let arguments =
            (0..forward.argument_count()).map(|index| forward.argument(index).unwrap().into());
        let results =
            ir::block_ops(forward).flat_map(|op| op.results().map(Value::from).collect::<Vec<_>>());
        let order = arguments
            .chain(results)
            .enumerate()
            .map(|(position, value): (usize, Value)| (key(value.to_raw().ptr), position))
            .collect();
        Self {
            emit: Emit::new(context, builder),
            block,
            order,
            saved: Vec::new(),
            primals: HashMap::new(),
            cotangents: HashMap::new(),
            mode,
        }
    }

    /// The gradient of forward value `value` so far.
    fn cotangent(&self, value: Value<'c, 'a>) -> Option<Value<'c, 'a>> {
        self.cotangents.get(&key(value.to_raw().ptr)).copied()
    }

    /// Adds `gradient` to forward value `value`'s.
    fn accumulate(&mut self, value: Value<'c, 'a>, gradient: Value<'c, 'a>) {
        let gradient = self.emit.convert(gradient, value.r#type());
        let sum = match self.cotangent(value) {
            Some(sum) => self.emit.binary(Op::FusionAdd, sum, gradient),
            None => gradient,
        };
        self.cotangents.insert(key(value.to_raw().ptr), sum);
    }

    /// Forward value `value` in the backward: an argument of the backward
    /// (a saved activation), or a gathering set redone from a saved input.
    fn primal(&mut self, value: Value<'c, 'a>) -> Value<'c, 'a> {
        let value_key = key(value.to_raw().ptr);
        if let Some(&primal) = self.primals.get(&value_key) {
            return primal;
        }
        let producer = ir::producer(value);
        let primal = match producer.and_then(|op| Op::of(&op).map(|kind| (op, kind))) {
            Some((set, Op::FusionSet)) if self.mode == Saved::Recompute && gathers(set) => {
                let input = self.primal(set.operand(0).expect("a set has an input"));
                self.emit.op(Op::FusionSet, &[input], &[], value.r#type())
            }
            // Constants are made again, not saved.
            Some((fill, Op::FusionFill)) => {
                let filled = fill.attribute("value").ok();
                let filled = filled.and_then(|value| FloatAttribute::try_from(value).ok());
                self.emit.fill(
                    filled.expect("checked by the op's verifier").value(),
                    value.r#type(),
                )
            }
            Some((iota, Op::FusionIota)) => {
                let axis =
                    ir::integer_attribute(&iota, "axis").expect("checked by the op's verifier");
                self.emit.iota(axis as usize, value.r#type())
            }
            _ => {
                let position = self.order[&value_key];
                let index = self.saved.partition_point(|&(other, _)| other < position);
                self.saved.insert(index, (position, value));
                self.block
                    .insert_argument(index, value.r#type(), value.location())
            }
        };
        self.primals.insert(value_key, primal);
        primal
    }

    /// Adds the gradients of `op`'s active operands, if its result has one.
    fn differentiate(
        &mut self,
        op: OperationRef<'c, 'a>,
        active: &HashSet<usize>,
    ) -> Result<(), Emitted> {
        let Some(dy) = ir::result(&op, 0).and_then(|result| self.cotangent(result.into())) else {
            return Ok(());
        };
        let operands: Vec<Value<'c, 'a>> = op.operands().collect();
        let needs: Vec<bool> = operands
            .iter()
            .map(|operand| active.contains(&key(operand.to_raw().ptr)))
            .collect();
        if !needs.contains(&true) {
            return Ok(());
        }
        self.emit.locate(op.location());
        let gradients = match Op::of(&op) {
            Some(
                Op::FusionTranspose
                | Op::FusionReshape
                | Op::FusionSlice
                | Op::FusionBroadcast
                | Op::FusionSum
                | Op::FusionAmax,
            ) => structural::gradients(self, op, dy, &needs)?,
            Some(Op::FusionMatmul | Op::FusionLinear) => {
                contraction::gradients(self, op, dy, &needs)?
            }
            Some(Op::FusionAttention) => attention::gradients(self, op, dy, &needs),
            _ => match pointwise::gradients(self, op, dy, &needs) {
                Some(gradients) => gradients,
                None => {
                    return error(
                        op.location(),
                        format!(
                            "{ARGUMENT}: cannot differentiate '{}': it has no differentiation rule",
                            ir::name(&op)
                        ),
                    );
                }
            },
        };
        for (index, gradient) in gradients {
            self.accumulate(operands[index], gradient);
        }
        Ok(())
    }
}

/// Whether a `fusion.set` gathers: its input is split over devices on an
/// axis where its result is not (on the same mesh).
fn gathers(set: OperationRef) -> bool {
    let input = set.operand(0).map(|input| Dist::of_type(input.r#type()));
    let result = ir::result(&set, 0).map(|result| Dist::of_type(result.r#type()));
    match (input, result) {
        (Ok(Some(input)), Some(Some(result))) => {
            input.mesh == result.mesh
                && input
                    .axes
                    .iter()
                    .zip(&result.axes)
                    .any(|(from, to)| from.is_device() && from != to)
        }
        _ => false,
    }
}
