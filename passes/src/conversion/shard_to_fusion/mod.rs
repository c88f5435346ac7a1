//! `convert-shard-to-fusion`: imports a program written with upstream MLIR's
//! `shard` dialect (grids, shardings and `shard.shard` annotations on tensors
//! of global shape) over `linalg` and `arith` ops on tensors into `fusion`,
//! the form `hir-lower` lowers.
//!
//! - A `shard.grid` of D devices becomes `fusion.mesh` of the same name over
//!   devices `[0, ..., D-1]`: the grid's linear process index is the
//!   position in the mesh. A 2-D grid `R x C` is the mesh of R rows of C
//!   (shard's linear index is row-major, as fusion's rows are).
//! - A tensor's sharding becomes its `#fusion.dist` on the grid's mesh: a
//!   tensor axis split along a grid axis is distributed as
//!   [`grid_axis_type`] says (`didx` along the last grid axis, `didy` along
//!   the one before, `didz` the first of a 3-D grid), an outer split, device
//!   i along that axis holding slice i of contiguous slices; an axis not
//!   split is `serial`, so a replicated tensor (`split_axes = [[]]`) is all
//!   `serial` on the mesh.
//! - A value's sharding is that of its `shard.shard` annotation (without
//!   `annotate_for_users`), else the one its `annotate_for_users` annotations
//!   agree on; a value with none stays unannotated, for
//!   `fusion-propagate-sharding`. An annotation that changes the sharding
//!   becomes a `fusion.set` (a resharding); one that does not disappears.
//! - `linalg.matmul` becomes `fusion.matmul` (`fusion.linear` with a
//!   transposed B, `[N, K]`), `linalg.batch_matmul` a batched
//!   `fusion.matmul`; a matmul into a value (rather than a `tensor.empty`
//!   or a `linalg.fill` of zero) adds it. The elementwise named ops and
//!   `arith` ops on tensors of [`LINALG_ELEMENTWISE`] and [`ARITH`], and `linalg.elementwise` of
//!   the kinds of [`ELEMENTWISE_KINDS`], become their fusion ops.
//!   `tensor.empty` and `linalg.fill` are destinations only, and go.
//! - `linalg.transpose`, `linalg.broadcast`, `linalg.reduce`,
//!   `linalg.softmax` and `linalg.generic` become short sequences of fusion
//!   ops ([`structured`]); `softmax(Q K^T) V` of linalg's matmuls and
//!   softmax becomes one `fusion.attention` ([`attention`]).
//! - Function signatures follow their arguments and returned values.
//!
//! What fusion cannot say is a located error, and the pass changes nothing:
//! a grid of rank above 3 (see [`grid_axis_type`]) or of dynamic shape;
//! a tensor axis split along several grid axes, or into parts of different
//! sizes (`sharded_dims_offsets` other than the even split, an extent the
//! grid does not divide); halos; dynamic shapes; `shard` collectives (a
//! program after `shard-partition`); any other op.
//!
//! ```mlir
//! shard.grid @g(shape = 4)
//! func.func @f(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
//!   %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
//!   %a1 = shard.shard %a to %s : tensor<64x32xf32>
//!   %e = tensor.empty() : tensor<64x16xf32>
//!   %c = linalg.matmul ins(%a1, %b : tensor<64x32xf32>, tensor<32x16xf32>)
//!                      outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
//!   %c1 = shard.shard %c to %s : tensor<64x16xf32>
//!   return %c1 : tensor<64x16xf32>
//! }
//! ```
//! becomes
//! ```mlir
//! fusion.mesh @g = [0, 1, 2, 3]
//! func.func @f(%a: tensor<64x32xf32, #fusion.dist<@g, [didx, serial]>>, %b: tensor<32x16xf32>)
//!     -> tensor<64x16xf32, #fusion.dist<@g, [didx, serial]>> {
//!   %c = fusion.matmul %a, %b : tensor<64x32xf32, #fusion.dist<@g, [didx, serial]>>,
//!                               tensor<32x16xf32>
//!                            -> tensor<64x16xf32, #fusion.dist<@g, [didx, serial]>>
//!   return %c : tensor<64x16xf32, #fusion.dist<@g, [didx, serial]>>
//! }
//! ```

use crate::HirPass;
use crate::builders::Builder;
use crate::diagnostics::{Emitted, error};
use crate::fusion::axis_map;
use crate::ir;
use crate::ops::Op;
use crate::rewrite;
use crate::upstream::{shard, structured::linalg};
use hir_dialects::{dist::Dist, fusion};
use melior::{
    Context,
    dialect::ods::tensor,
    ir::{
        Attribute, BlockLike, OperationRef, RegionLike, Type, Value, ValueLike,
        attribute::{DenseI64ArrayAttribute, FloatAttribute, StringAttribute, TypeAttribute},
        operation::{OperationLike, OperationResult},
        r#type::{FunctionType, RankedTensorType, ShapedTypeLike},
    },
};
use std::collections::{HashMap, HashSet};

mod attention;
mod sharding;
mod structured;
mod tables;

pub use sharding::grid_axis_type;
use sharding::{Grids, dists, grid};
pub use tables::{ARITH, ELEMENTWISE_KINDS, LINALG_ELEMENTWISE};
use tables::{
    BATCH_MATMUL_MAPS, COLLECTIVES, MATMUL_MAPS, MATMUL_TRANSPOSED_B_MAPS, Name, elementwise,
};

/// The op the pass runs on: grids and meshes are symbols of the module.
pub const ANCHOR: &str = crate::ops::MODULE;
pub const ARGUMENT: &str = "convert-shard-to-fusion";

/// Creates the pass (anchored on `builtin.module`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(ConvertShardToFusion)
}

/// Whether `module` holds anything the pass imports: a grid, or a function
/// with an op it converts (a fusion program and host IR hold none).
pub fn imports(module: OperationRef) -> bool {
    ir::body(module).iter().any(|op| {
        is(op, shard::GridOperation::name)
            || (Op::FuncFunc.is(op) && ir::nested(*op).iter().any(imported))
    })
}

struct ConvertShardToFusion;

impl HirPass for ConvertShardToFusion {
    fn run(&mut self, module: OperationRef) -> bool {
        let context = module.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        convert_module(context, module).is_ok()
    }
}

fn convert_module<'c>(context: &'c Context, module: OperationRef<'c, '_>) -> Result<(), Emitted> {
    let mut grids = Grids::new();
    let mut failed = false;
    for op in ir::body(module) {
        if is(&op, shard::GridOperation::name) {
            match grid(&op) {
                Ok((name, shape)) => {
                    grids.insert(name, shape);
                }
                Err(Emitted) => failed = true,
            }
        }
    }
    let mut plans = Vec::new();
    for function in ir::body(module) {
        if Op::FuncFunc.is(&function) {
            match plan_function(context, function, &grids) {
                Ok(Some(plan)) => plans.push((function, plan)),
                Ok(None) => {}
                Err(Emitted) => failed = true,
            }
        }
    }
    if failed {
        return Err(Emitted);
    }
    // Nothing has changed so far; from here on nothing fails.
    for op in ir::body(module) {
        if is(&op, shard::GridOperation::name) {
            let name = symbol(&op);
            let shape = &grids[&name];
            let devices: Vec<i64> = (0..shape.iter().product()).collect();
            let mesh = fusion::MeshOperation::builder(context, op.location())
                .sym_name(StringAttribute::new(context, &name))
                .devices(DenseI64ArrayAttribute::new(context, &devices).into());
            // A 1-D mesh is its list of devices; a 2-D one has rows.
            let mesh = match shape[..] {
                [_] => mesh.build(),
                _ => mesh
                    .shape(DenseI64ArrayAttribute::new(context, shape).into())
                    .build(),
            };
            Builder::before(context, op).insert(mesh);
            rewrite::rewriter(op).as_rewriter_base().erase_op(op);
        }
    }
    for (function, plan) in plans {
        convert_function(context, function, plan);
    }
    Ok(())
}

/// Whether `op` is the op `name` names.
fn is(op: &OperationRef, name: Name) -> bool {
    op.name().as_string_ref().as_str() == Ok(name())
}

/// The symbol an op defines (`sym_name`).
fn symbol(op: &OperationRef) -> String {
    op.attribute("sym_name")
        .ok()
        .and_then(|attr| StringAttribute::try_from(attr).ok())
        .map(|attr| attr.value().to_owned())
        .unwrap_or_default()
}

/// A value's key in the maps of a plan.
fn key(value: Value) -> usize {
    value.to_raw().ptr as usize
}

/// What the conversion does with one op of a function.
enum Step<'c> {
    /// Kept as is (`func.return`, scalar `arith.constant`).
    Keep,
    /// Erased once its users are converted: `shard.sharding`, destinations
    /// (`tensor.empty`, `linalg.fill` and their annotations).
    Drop,
    /// A `shard.shard` of a value: the value, resharded if the sharding changes.
    Annotation,
    /// The fusion op `target` of the operands `inputs`; with `accumulate`,
    /// plus that operand (a matmul into a value).
    Compute {
        target: &'static str,
        inputs: Vec<usize>,
        accumulate: Option<usize>,
    },
    /// The fusion ops a structured op (`linalg.generic`, ...) becomes.
    Expand(structured::Expansion<'c>),
    /// The `fusion.attention` of the attention pattern whose `P V` matmul
    /// this is ([`attention`]); the pattern's other ops are dropped.
    Attention,
}

/// What the conversion of one function does: the distribution of each
/// value that has one, and a step for each op of the body.
struct Plan<'c, 'a> {
    dists: HashMap<usize, Dist>,
    steps: Vec<(OperationRef<'c, 'a>, Step<'c>)>,
}

/// Reads a function and says how it converts, or emits why it cannot;
/// `None` for a function with nothing to import (a fusion program).
fn plan_function<'c, 'a>(
    context: &'c Context,
    function: OperationRef<'c, 'a>,
    grids: &Grids,
) -> Result<Option<Plan<'c, 'a>>, Emitted> {
    let Some(entry) = ir::region(&function, 0).and_then(|region| region.first_block()) else {
        return Ok(None);
    };
    if !ir::nested(function).iter().any(imported) {
        return Ok(None);
    }
    let ops: Vec<_> = ir::block_ops(entry).collect();
    let mut failed = false;
    let dists = match dists(context, &ops, grids) {
        Ok(dists) => dists,
        Err(Emitted) => {
            failed = true;
            HashMap::new()
        }
    };
    if entry.next_in_region().is_some() {
        return error(
            function.location(),
            "a function of several blocks is not imported: fusion functions have one",
        );
    }
    let mut destinations = Destinations::default();
    let mut steps = Vec::new();
    for op in ops {
        match step(&op, &mut destinations) {
            Ok(step) => {
                let step = match attention::parts(&op) {
                    Some(parts) if parts.fuses(&op, &destinations, &dists) => {
                        for (fused, step) in &mut steps {
                            if parts.fused.contains(fused) {
                                *step = Step::Drop;
                            }
                        }
                        Step::Attention
                    }
                    _ => step,
                };
                steps.push((op, step));
            }
            Err(Emitted) => failed = true,
        }
    }
    if failed {
        return Err(Emitted);
    }
    Ok(Some(Plan { dists, steps }))
}

/// Whether `op` is one the pass imports (not `func.return` or a constant,
/// which fusion functions hold too).
fn imported(op: &OperationRef) -> bool {
    [
        shard::ShardingOperation::name,
        shard::ShardOperation::name,
        tensor::EmptyOperation::name,
        linalg::FillOperation::name,
        linalg::MatmulOperation::name,
        linalg::BatchMatmulOperation::name,
        linalg::ElementwiseOperation::name,
    ]
    .iter()
    .chain(COLLECTIVES)
    .chain(structured::OPS)
    .chain(elementwise().map(|(source, _)| source))
    .any(|&name| is(op, name))
        && (op.result_count() != 1 || is_tensor(op.result(0).expect("one result").r#type()))
}

/// Values that hold no data the program computed: `tensor.empty`,
/// `linalg.fill` and their annotations, read only as destinations; `zero`
/// those known to be zero (a fill of 0.0), or undefined (empty), into which a
/// matmul is a product.
#[derive(Default)]
struct Destinations {
    all: HashSet<usize>,
    zero: HashSet<usize>,
    /// The value of each `linalg.fill` (and its annotations).
    fills: HashMap<usize, f64>,
}

/// The step of one op, or an error.
fn step<'c>(
    op: &OperationRef<'c, '_>,
    destinations: &mut Destinations,
) -> Result<Step<'c>, Emitted> {
    let name = ir::name(op);
    let result_is_destination = |destinations: &mut Destinations, zero: bool, fill: Option<f64>| {
        let result = key(op.result(0).expect("one result").into());
        destinations.all.insert(result);
        if zero {
            destinations.zero.insert(result);
        }
        if let Some(fill) = fill {
            destinations.fills.insert(result, fill);
        }
    };
    if is(op, shard::ShardingOperation::name) {
        return Ok(Step::Drop);
    }
    if is(op, shard::ShardOperation::name) {
        let input = key(op.operand(0).expect("an input"));
        if destinations.all.contains(&input) {
            let zero = destinations.zero.contains(&input);
            let fill = destinations.fills.get(&input).copied();
            result_is_destination(destinations, zero, fill);
            return Ok(Step::Drop);
        }
        return Ok(Step::Annotation);
    }
    if is(op, tensor::EmptyOperation::name) {
        result_is_destination(destinations, true, None);
        return Ok(Step::Drop);
    }
    if is(op, linalg::FillOperation::name) {
        let fill = ir::operand(op, 0)
            .and_then(|value| OperationResult::try_from(value).ok())
            .filter(|result| Op::ArithConstant.is(&result.owner()))
            .and_then(|result| result.owner().attribute("value").ok())
            .and_then(|value| FloatAttribute::try_from(value).ok())
            .map(|value| value.value());
        result_is_destination(destinations, fill == Some(0.0), fill);
        return Ok(Step::Drop);
    }
    if COLLECTIVES.iter().any(|&collective| is(op, collective)) {
        return error(
            op.location(),
            format!(
                "'{name}' is an op of a partitioned program: import the program of global tensors, before shard-partition"
            ),
        );
    }
    if Op::FuncReturn.is(op) {
        reads_no_destination(
            op,
            &(0..op.operand_count()).collect::<Vec<_>>(),
            destinations,
        )?;
        return Ok(Step::Keep);
    }
    if Op::ArithConstant.is(op) {
        if is_tensor(op.result(0).expect("one result").r#type()) {
            return error(
                op.location(),
                "a tensor constant is not imported: fusion has no op that makes a tensor",
            );
        }
        return Ok(Step::Keep);
    }
    let on_tensors =
        op.result_count() == 1 && is_tensor(op.result(0).expect("one result").r#type());
    if is(op, linalg::MatmulOperation::name) || is(op, linalg::BatchMatmulOperation::name) {
        if !on_tensors {
            return error(
                op.location(),
                format!("'{name}' on buffers is not imported: fusion ops take and make tensors"),
            );
        }
        return matmul(op, destinations);
    }
    let target = if is(op, linalg::ElementwiseOperation::name) {
        Some(elementwise_kind(op)?)
    } else {
        elementwise()
            .find(|(source, _)| is(op, *source))
            .map(|(_, target)| target())
    };
    if let Some(target) = target {
        let inputs: Vec<usize> = match hir_dialects::destination(op) {
            Some(destination) => (0..op.operand_count())
                .filter(|&operand| operand != destination)
                .collect(),
            None => (0..op.operand_count()).collect(),
        };
        if !on_tensors {
            return error(
                op.location(),
                format!(
                    "'{name}' on scalars or buffers is not imported: fusion ops take and make tensors"
                ),
            );
        }
        reads_no_destination(op, &inputs, destinations)?;
        return Ok(Step::Compute {
            target,
            inputs,
            accumulate: None,
        });
    }
    if let Some(step) = structured::step(op, destinations)? {
        return Ok(step);
    }
    error(
        op.location(),
        format!(
            "'{name}' is not imported: convert-shard-to-fusion takes shard annotations, linalg.matmul, linalg.batch_matmul, linalg.generic, linalg.transpose, linalg.broadcast, linalg.reduce, linalg.softmax, the elementwise linalg and arith ops with a fusion counterpart, tensor.empty and linalg.fill as destinations"
        ),
    )
}

/// The fusion op a `linalg.elementwise` becomes: the one of its `kind` in
/// [`ELEMENTWISE_KINDS`], on operands of the result's shape (identity
/// indexing maps, the default), or an error.
fn elementwise_kind(op: &OperationRef) -> Result<&'static str, Emitted> {
    let context = op.context();
    // SAFETY: the context outlives this call, the only place it is used.
    let context = unsafe { context.to_ref() };
    let kind = op.attribute("kind").ok();
    let Some(&(_, target)) = ELEMENTWISE_KINDS.iter().find(|(name, _)| {
        kind == Attribute::parse(context, &format!("#linalg.elementwise_kind<{name}>"))
    }) else {
        let kind = kind.map(|kind| kind.to_string()).unwrap_or_default();
        return error(
            op.location(),
            format!("'linalg.elementwise' of kind {kind} is not imported: fusion has no such op"),
        );
    };
    let rank = axis_map::shape(op.result(0).expect("one result").r#type())
        .map(|shape| shape.len())
        .unwrap_or_default();
    let dims: Vec<String> = (0..rank).map(|axis| format!("d{axis}")).collect();
    let identity = format!("affine_map<({0}) -> ({0})>", dims.join(", "));
    let identities = format!("[{}]", vec![identity; op.operand_count()].join(", "));
    let maps = op.attribute("indexing_maps").ok();
    if maps.is_some()
        && maps != Attribute::parse(context, "[]")
        && maps != Attribute::parse(context, &identities)
    {
        return error(
            op.location(),
            "a 'linalg.elementwise' that transposes or broadcasts (indexing maps other than identities) is not imported",
        );
    }
    Ok(target())
}

fn is_tensor(r#type: Type) -> bool {
    RankedTensorType::try_from(r#type).is_ok()
}

/// An error if one of `operands` of `op` is a destination (its value is
/// nothing the program computed, so there is nothing to read).
fn reads_no_destination(
    op: &OperationRef,
    operands: &[usize],
    destinations: &Destinations,
) -> Result<(), Emitted> {
    for &operand in operands {
        let value = op.operand(operand).expect("in range");
        if destinations.all.contains(&key(value)) {
            return error(
                op.location(),
                format!(
                    "operand #{operand} of '{}' is the value of a tensor.empty or linalg.fill, which import only as destinations: fusion has no op that makes a tensor",
                    ir::name(op)
                ),
            );
        }
    }
    Ok(())
}

/// The step of a `linalg.matmul` or `linalg.batch_matmul`.
fn matmul<'c>(op: &OperationRef<'c, '_>, destinations: &Destinations) -> Result<Step<'c>, Emitted> {
    let name = ir::name(op);
    let context = op.context();
    // SAFETY: the context outlives this call, the only place it is used.
    let context = unsafe { context.to_ref() };
    let maps = op.attribute("indexing_maps").ok();
    let parse = |text: &str| Attribute::parse(context, text);
    let target = if is(op, linalg::MatmulOperation::name) {
        let plain = parse(MATMUL_MAPS);
        let transposed = parse(MATMUL_TRANSPOSED_B_MAPS);
        match maps {
            None => fusion::MatmulOperation::name(),
            Some(maps) if Some(maps) == plain => fusion::MatmulOperation::name(),
            Some(maps) if Some(maps) == transposed => fusion::LinearOperation::name(),
            Some(maps) => {
                return error(
                    op.location(),
                    format!(
                        "'{name}' with indexing maps {maps} is not imported: only A[M, K] @ B[K, N] and A[M, K] @ B[N, K]^T"
                    ),
                );
            }
        }
    } else {
        let plain = parse(BATCH_MATMUL_MAPS);
        if let Some(maps) = maps
            && Some(maps) != plain
        {
            return error(
                op.location(),
                format!(
                    "'{name}' with indexing maps {maps} is not imported: only A[B, M, K] @ B[B, K, N]"
                ),
            );
        }
        fusion::MatmulOperation::name()
    };
    let destination = hir_dialects::destination(op).expect("linalg's matmuls have one init");
    let inputs: Vec<usize> = (0..op.operand_count())
        .filter(|&operand| operand != destination)
        .collect();
    reads_no_destination(op, &inputs, destinations)?;
    let elements: Vec<Type> = op.operands().map(|value| element(value.r#type())).collect();
    if elements.iter().any(|&other| other != elements[0]) {
        return error(
            op.location(),
            format!(
                "'{name}' mixes element types: fusion's matmul reads and writes one element type"
            ),
        );
    }
    let init = key(op.operand(destination).expect("in range"));
    let accumulate = if destinations.zero.contains(&init) {
        None
    } else if destinations.all.contains(&init) {
        return error(
            op.location(),
            format!(
                "'{name}' accumulates into a linalg.fill of a value other than 0.0, which is not imported"
            ),
        );
    } else {
        Some(destination)
    };
    Ok(Step::Compute {
        target,
        inputs,
        accumulate,
    })
}

/// Builds the fusion ops of `expansion` before `op`, whose result has type
/// `result`, and returns the value that replaces it.
fn expand<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    expansion: structured::Expansion<'c>,
    result: Type<'c>,
) -> Value<'c, 'a> {
    let builder = Builder::before(context, op);
    let mut built: Vec<Value<'c, 'a>> = Vec::new();
    let source = |built: &[Value<'c, 'a>], source| match source {
        structured::Source::Operand(operand) => op.operand(operand).expect("in range"),
        structured::Source::Emitted(index) => built[index],
    };
    for emit in expansion.emits {
        let operands: Vec<Value> = emit
            .operands
            .iter()
            .map(|&from| source(&built, from))
            .collect();
        let r#type = match emit.result {
            structured::Result_::Final => result,
            structured::Result_::Plain(shape, element) => {
                let shape: Vec<u64> = shape.iter().map(|&extent| extent as u64).collect();
                RankedTensorType::new(&shape, element, None).into()
            }
        };
        built.push(crate::builders::result(builder.op(
            emit.target,
            op.location(),
            &operands,
            &emit.attributes,
            &[r#type],
        )));
    }
    source(&built, expansion.value)
}

fn element(r#type: Type) -> Type {
    RankedTensorType::try_from(r#type)
        .expect("linalg's operands here are tensors")
        .element()
}

/// Converts one function as `plan` says (nothing fails any more).
fn convert_function<'c>(context: &'c Context, function: OperationRef<'c, '_>, plan: Plan<'c, '_>) {
    let rewriter = rewrite::rewriter(function);
    let rewriter = rewriter.as_rewriter_base();
    let typed = |value: Value<'c, '_>| match plan.dists.get(&key(value)) {
        Some(dist) => axis_map::with_dist(context, value.r#type(), dist),
        None => value.r#type(),
    };
    let entry = ir::region(&function, 0)
        .and_then(|region| region.first_block())
        .expect("a planned function has a body");
    for index in 0..entry.argument_count() {
        let argument = entry.argument(index).expect("in range");
        argument.set_type(typed(argument.into()));
    }
    let mut dropped = Vec::new();
    let mut dropped_reads = Vec::new();
    for (op, step) in plan.steps {
        match step {
            Step::Keep => {}
            Step::Drop => dropped.push(op),
            Step::Annotation => {
                let input = op.operand(0).expect("an input");
                let r#type = typed(op.result(0).expect("a result").into());
                let value = if input.r#type() == r#type {
                    input
                } else {
                    Builder::before(context, op).value(
                        fusion::SetOperation::builder(context, op.location())
                            .input(input)
                            .result(r#type)
                            .build(),
                    )
                };
                rewriter.replace_op_with_values(op, &[value]);
            }
            Step::Compute {
                target,
                inputs,
                accumulate,
            } => {
                let r#type = typed(op.result(0).expect("a result").into());
                let builder = Builder::before(context, op);
                let operands: Vec<Value> = inputs
                    .iter()
                    .map(|&operand| op.operand(operand).expect("in range"))
                    .collect();
                let mut value = crate::builders::result(builder.op(
                    target,
                    op.location(),
                    &operands,
                    &[],
                    &[r#type],
                ));
                if let Some(init) = accumulate {
                    let init = op.operand(init).expect("in range");
                    value = crate::builders::result(builder.op(
                        fusion::AddOperation::name(),
                        op.location(),
                        &[init, value],
                        &[],
                        &[r#type],
                    ));
                }
                rewriter.replace_op_with_values(op, &[value]);
            }
            Step::Attention => {
                let value =
                    attention::build(context, op, typed(op.result(0).expect("a result").into()));
                rewriter.replace_op_with_values(op, &[value]);
            }
            Step::Expand(expansion) => {
                // Constants its body read from outside go too, if unused.
                dropped_reads.extend(
                    ir::nested(op)
                        .iter()
                        .flat_map(|inner| inner.operands())
                        .filter_map(|value| OperationResult::try_from(value).ok())
                        .map(|result| result.owner())
                        .filter(|owner| owner.block() == Some(entry)),
                );
                let value = expand(
                    context,
                    op,
                    expansion,
                    typed(op.result(0).expect("a result").into()),
                );
                rewriter.replace_op_with_values(op, &[value]);
            }
        }
    }
    // The scalar constants that only the dropped fills (or the bodies of
    // expanded ops) read go with them.
    let mut constants: Vec<OperationRef> = dropped
        .iter()
        .flat_map(|op| op.operands())
        .filter_map(|value| OperationResult::try_from(value).ok())
        .map(|result| result.owner())
        .chain(dropped_reads)
        .filter(|owner| Op::ArithConstant.is(owner))
        .collect();
    constants.sort_by_key(|constant| constant.to_raw().ptr as usize);
    constants.dedup_by_key(|constant| constant.to_raw().ptr as usize);
    for op in dropped.into_iter().rev() {
        rewriter.erase_op(op);
    }
    for constant in constants {
        if rewrite::is_trivially_dead(constant) {
            rewriter.erase_op(constant);
        }
    }
    let results: Vec<Type> = ir::block_ops(entry)
        .find(|op| Op::FuncReturn.is(op))
        .map(|ret| ret.operands().map(|value| value.r#type()).collect())
        .unwrap_or_default();
    let inputs: Vec<Type> = (0..entry.argument_count())
        .map(|index| entry.argument(index).expect("in range").r#type())
        .collect();
    rewrite::set_attribute(
        &rewriter,
        function,
        "function_type",
        TypeAttribute::new(FunctionType::new(context, &inputs, &results).into()).into(),
    );
}
