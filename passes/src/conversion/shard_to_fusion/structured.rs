//! linalg's structured ops beyond the matmuls and the named elementwise ops:
//! `linalg.transpose`, `linalg.broadcast`, `linalg.reduce`,
//! `linalg.softmax` and `linalg.generic`, each imported as a short sequence
//! of fusion ops (an [`Expansion`]).
//!
//! A `linalg.softmax` over axis d is its definition, numerically stable as
//! linalg states it: `e = exp(x - broadcast(amax(x, d)))`, then
//! `e / broadcast(sum(e, d))` (a softmax between a `Q K^T` and a `P V`
//! matmul is imported as one `fusion.attention` instead: [`super::attention`]).
//!
//! A `linalg.generic` is read as the tensor program its body describes over
//! the iteration space: each input is brought to the iteration space's axes
//! (`fusion.transpose` to put its axes in loop order, `fusion.broadcast` for
//! the loops it does not index), each body op of [`ARITH`] and [`MATH`] becomes its fusion
//! op on whole tensors, a float constant a `fusion.fill`, and the yielded
//! value is the result. With reduction loops, the body must yield
//! `addf(out, e)` (a sum) or `maximumf`/`maxnumf(out, e)` (a maximum) of an
//! expression `e` of the inputs: `e` is reduced over those loops by
//! `fusion.sum`/`fusion.amax`. An init that is not that reduction's identity
//! (zero or `tensor.empty` for a sum, -inf or `tensor.empty` for a maximum)
//! is combined with the result by `fusion.add`/`fusion.max`. The
//! intermediate tensors carry no distribution: `fusion-propagate-sharding`
//! gives them theirs. Indexing maps must be projected permutations (every
//! result a loop index), the output's the parallel loops in order.

use super::{ARITH, Destinations, Name, Step, key, reads_no_destination};
use crate::diagnostics::{Emitted, error};
use crate::ir;
use crate::upstream::structured::linalg;
use hir_dialects::fusion;
use melior::{
    Context,
    dialect::ods::{arith, linalg as linalg_ops, math},
    ir::{
        Attribute, AttributeLike, BlockLike, OperationRef, RegionLike, Type, TypeLike, Value,
        ValueLike,
        attribute::{DenseI64ArrayAttribute, FloatAttribute, IntegerAttribute},
        operation::{OperationLike, OperationResult},
        r#type::{RankedTensorType, ShapedTypeLike},
    },
};
use std::collections::HashMap;

/// The math ops of a `linalg.generic` body imported one to one (besides
/// [`ARITH`]'s), and the fusion op each becomes on tensors.
pub const MATH: &[(Name, Name)] = &[
    (math::ExpOperation::name, fusion::ExpOperation::name),
    (math::TanhOperation::name, fusion::TanhOperation::name),
    (math::AbsFOperation::name, fusion::AbsOperation::name),
    (math::RsqrtOperation::name, fusion::RsqrtOperation::name),
];

/// The structured ops this file imports.
pub const OPS: &[Name] = &[
    linalg::GenericOperation::name,
    linalg::TransposeOperation::name,
    linalg::BroadcastOperation::name,
    linalg::ReduceOperation::name,
    linalg_ops::SoftmaxOperation::name,
];

/// Where an emitted op's operand comes from.
#[derive(Clone, Copy)]
pub enum Source {
    /// Operand `k` of the imported op.
    Operand(usize),
    /// The result of the `k`-th op of the expansion.
    Emitted(usize),
}

/// The type of an emitted op's result.
pub enum Result_<'c> {
    /// The imported op's result type, with its distribution.
    Final,
    /// A tensor of this shape and element type, without a distribution.
    Plain(Vec<i64>, Type<'c>),
}

/// One fusion op of an expansion.
pub struct Emit<'c> {
    pub target: &'static str,
    pub operands: Vec<Source>,
    pub attributes: Vec<(&'static str, Attribute<'c>)>,
    pub result: Result_<'c>,
}

/// The fusion ops an imported op becomes, in order; `value` replaces its
/// result.
pub struct Expansion<'c> {
    pub emits: Vec<Emit<'c>>,
    pub value: Source,
}

impl<'c> Expansion<'c> {
    fn push(&mut self, emit: Emit<'c>) -> Source {
        self.emits.push(emit);
        Source::Emitted(self.emits.len() - 1)
    }
}

fn is(op: &OperationRef, name: Name) -> bool {
    op.name().as_string_ref().as_str() == Ok(name())
}

fn shape_of(value: Value) -> Vec<i64> {
    crate::fusion::axis_map::shape(value.r#type()).unwrap_or_default()
}

fn element_of<'c>(value: Value<'c, '_>) -> Type<'c> {
    RankedTensorType::try_from(value.r#type())
        .expect("checked: a tensor")
        .element()
}

fn i64s<'c>(context: &'c Context, values: &[i64]) -> Attribute<'c> {
    DenseI64ArrayAttribute::new(context, values).into()
}

/// The step of one of [`OPS`], `None` for any other op.
pub fn step<'c>(
    op: &OperationRef<'c, '_>,
    destinations: &Destinations,
) -> Result<Option<Step<'c>>, Emitted> {
    if !OPS.iter().any(|&name| is(op, name)) {
        return Ok(None);
    }
    let name = ir::name(op);
    if op.result_count() != 1 {
        return error(
            op.location(),
            format!(
                "'{name}' with {} results is not imported: on tensors with one output only",
                op.result_count()
            ),
        );
    }
    let expansion = if is(op, linalg::GenericOperation::name) {
        generic(op, destinations)?
    } else if is(op, linalg_ops::SoftmaxOperation::name) {
        reads_no_destination(op, &[0], destinations)?;
        softmax(op)?
    } else {
        reads_no_destination(op, &[0], destinations)?;
        let attribute = |attribute: &str| {
            op.attribute(attribute)
                .expect("verified: linalg's structured ops carry it")
        };
        let mut expansion = Expansion {
            emits: Vec::new(),
            value: Source::Operand(0),
        };
        let (target, attributes) = if is(op, linalg::TransposeOperation::name) {
            (
                fusion::TransposeOperation::name(),
                vec![("permutation", attribute("permutation"))],
            )
        } else if is(op, linalg::BroadcastOperation::name) {
            (
                fusion::BroadcastOperation::name(),
                vec![("axes", attribute("dimensions"))],
            )
        } else {
            return reduce(op, destinations).map(Some);
        };
        expansion.value = expansion.push(Emit {
            target,
            operands: vec![Source::Operand(0)],
            attributes,
            result: Result_::Final,
        });
        expansion
    };
    Ok(Some(Step::Expand(expansion)))
}

/// `linalg.softmax dimension(d) ins(x) outs(init)`: amax over d, broadcast
/// back, sub, exp, sum over d, broadcast back, div (the init is only
/// written).
fn softmax<'c>(op: &OperationRef<'c, '_>) -> Result<Expansion<'c>, Emitted> {
    let context = op.context();
    // SAFETY: `context` lives through this function, the only place the
    // reference is used.
    let context = unsafe { context.to_ref() };
    let input = op.operand(0).expect("verified: an input");
    let element = element_of(input);
    if !element.is_float() {
        return error(
            op.location(),
            format!(
                "'linalg.softmax' of {element} is not imported: fusion's exp and div take floats"
            ),
        );
    }
    let shape = shape_of(input);
    let axis = op
        .attribute("dimension")
        .ok()
        .and_then(|axis| IntegerAttribute::try_from(axis).ok())
        .expect("verified: linalg.softmax carries its dimension")
        .value();
    let mut reduced = shape.clone();
    reduced.remove(axis as usize);
    let plain = |shape: &Vec<i64>| Result_::Plain(shape.clone(), element);
    let axes = || vec![("axes", i64s(context, &[axis]))];
    let mut expansion = Expansion {
        emits: Vec::new(),
        value: Source::Operand(0),
    };
    let mut emit = |target: &'static str, operands: Vec<Source>, attributes, result| {
        expansion.push(Emit {
            target,
            operands,
            attributes,
            result,
        })
    };
    let x = Source::Operand(0);
    let max = emit(
        fusion::AmaxOperation::name(),
        vec![x],
        axes(),
        plain(&reduced),
    );
    let max = emit(
        fusion::BroadcastOperation::name(),
        vec![max],
        axes(),
        plain(&shape),
    );
    let shifted = emit(
        fusion::SubOperation::name(),
        vec![x, max],
        vec![],
        plain(&shape),
    );
    let exp = emit(
        fusion::ExpOperation::name(),
        vec![shifted],
        vec![],
        plain(&shape),
    );
    let total = emit(
        fusion::SumOperation::name(),
        vec![exp],
        axes(),
        plain(&reduced),
    );
    let total = emit(
        fusion::BroadcastOperation::name(),
        vec![total],
        axes(),
        plain(&shape),
    );
    let value = emit(
        fusion::DivOperation::name(),
        vec![exp, total],
        vec![],
        Result_::Final,
    );
    expansion.value = value;
    Ok(expansion)
}

/// Which reduction a combiner op is: the fusion reduction, the fusion op
/// that adds an init, and whether a fill of `value` is its identity.
struct Reduction {
    reduce: &'static str,
    combine: &'static str,
    identity: fn(f64) -> bool,
}

fn reduction_of(op: &OperationRef) -> Option<Reduction> {
    if is(op, arith::AddFOperation::name) {
        Some(Reduction {
            reduce: fusion::SumOperation::name(),
            combine: fusion::AddOperation::name(),
            identity: |value| value == 0.0,
        })
    } else if is(op, arith::MaximumFOperation::name) || is(op, arith::MaxNumFOperation::name) {
        Some(Reduction {
            reduce: fusion::AmaxOperation::name(),
            combine: fusion::MaxOperation::name(),
            identity: |value| value == f64::NEG_INFINITY,
        })
    } else {
        None
    }
}

/// Whether the init operand `init` holds the identity of `reduction` (and is
/// not read), or is a value the result must be combined with; an error for a
/// fill of another value.
fn combines_init(
    op: &OperationRef,
    init: usize,
    reduction: &Reduction,
    destinations: &Destinations,
) -> Result<bool, Emitted> {
    let value = key(op.operand(init).expect("in range"));
    if !destinations.all.contains(&value) {
        return Ok(true);
    }
    match destinations.fills.get(&value) {
        Some(&fill) if !(reduction.identity)(fill) => error(
            op.location(),
            format!(
                "'{}' reduces into a linalg.fill of {fill}, which is not the identity of its reduction: not imported",
                ir::name(op)
            ),
        ),
        _ => Ok(false),
    }
}

/// `linalg.reduce ins(x) outs(init) dimensions = [...]` with a body of one
/// `addf` or `maximumf`/`maxnumf` of its two arguments.
fn reduce<'c>(op: &OperationRef<'c, '_>, destinations: &Destinations) -> Result<Step<'c>, Emitted> {
    if op.operand_count() != 2 {
        return error(
            op.location(),
            "a 'linalg.reduce' of several inputs is not imported: fusion reduces one tensor",
        );
    }
    reads_no_destination(op, &[0], destinations)?;
    let body: Vec<OperationRef> = ir::body(*op);
    let reduction = match &body[..] {
        [combiner, _yield] if combiner.operand_count() == 2 => reduction_of(combiner),
        _ => None,
    };
    let Some(reduction) = reduction else {
        return error(
            op.location(),
            "a 'linalg.reduce' is imported when its body is one arith.addf (a sum) or arith.maximumf/maxnumf (a maximum) of its two arguments",
        );
    };
    let mut expansion = Expansion {
        emits: Vec::new(),
        value: Source::Operand(0),
    };
    let dimensions = op
        .attribute("dimensions")
        .expect("verified: linalg.reduce carries it");
    let reduced = expansion.push(Emit {
        target: reduction.reduce,
        operands: vec![Source::Operand(0)],
        attributes: vec![("axes", dimensions)],
        result: Result_::Final,
    });
    expansion.value = if combines_init(op, 1, &reduction, destinations)? {
        expansion.push(Emit {
            target: reduction.combine,
            operands: vec![Source::Operand(1), reduced],
            attributes: Vec::new(),
            result: Result_::Final,
        })
    } else {
        reduced
    };
    Ok(Step::Expand(expansion))
}

/// The loop indices of an indexing map's results, or `None` unless each
/// result is one loop index (a projected permutation).
fn map_dims(map: Attribute) -> Option<(usize, Vec<usize>)> {
    // SAFETY: reads a live attribute; the C API checks its kind first.
    unsafe {
        let raw = map.to_raw();
        if !mlir_sys::mlirAttributeIsAAffineMap(raw) {
            return None;
        }
        let map = mlir_sys::mlirAffineMapAttrGetValue(raw);
        let loops = mlir_sys::mlirAffineMapGetNumDims(map) as usize;
        let mut dims = Vec::new();
        for index in 0..mlir_sys::mlirAffineMapGetNumResults(map) {
            let expr = mlir_sys::mlirAffineMapGetResult(map, index);
            if !mlir_sys::mlirAffineExprIsADim(expr) {
                return None;
            }
            let dim = mlir_sys::mlirAffineDimExprGetPosition(expr) as usize;
            if dims.contains(&dim) {
                return None;
            }
            dims.push(dim);
        }
        Some((loops, dims))
    }
}

fn array_elements(attribute: Attribute) -> Vec<Attribute> {
    // SAFETY: reads a live array attribute.
    unsafe {
        let raw = attribute.to_raw();
        if !mlir_sys::mlirAttributeIsAArray(raw) {
            return Vec::new();
        }
        (0..mlir_sys::mlirArrayAttrGetNumElements(raw))
            .map(|index| Attribute::from_raw(mlir_sys::mlirArrayAttrGetElement(raw, index)))
            .collect()
    }
}

const REDUCTION_FORM: &str = "a 'linalg.generic' with reduction loops is imported when its body ends with arith.addf (a sum) or arith.maximumf/maxnumf (a maximum) of the output's argument and one value, yielded";

/// What a value of the generic's body stands for.
#[derive(Clone, Copy)]
enum Scalar {
    /// A tensor of the iteration space.
    Tensor(Source),
    /// The output's block argument (the accumulator).
    Accumulator,
}

fn generic<'c>(
    op: &OperationRef<'c, '_>,
    destinations: &Destinations,
) -> Result<Expansion<'c>, Emitted> {
    let context = op.context();
    // SAFETY: `context` lives through this function, the only place the
    // reference is used (the attributes built keep the context's raw handle).
    let context = unsafe { context.to_ref() };
    let location = op.location();
    let operands = op.operand_count();
    let inputs = operands - 1;
    let maps: Vec<Attribute> = array_elements(
        op.attribute("indexing_maps")
            .expect("verified: linalg.generic carries it"),
    );
    // Compared by their text: parsing an attribute inside a pass would load
    // dialects, which a running pass may not.
    let iterators: Vec<bool> = array_elements(
        op.attribute("iterator_types")
            .expect("verified: linalg.generic carries it"),
    )
    .into_iter()
    .map(|iterator| iterator.to_string() == "#linalg.iterator_type<parallel>")
    .collect();
    let loops = iterators.len();
    let mut dims = Vec::new();
    for (operand, &map) in maps.iter().enumerate() {
        match map_dims(map) {
            Some((count, results)) if count == loops => dims.push(results),
            _ => {
                return error(
                    location,
                    format!(
                        "indexing map #{operand} of a 'linalg.generic' is {map}: only maps whose results are loop indices, each once, are imported"
                    ),
                );
            }
        }
    }
    let output: Vec<usize> = (0..loops).filter(|&dim| iterators[dim]).collect();
    if dims[inputs] != output {
        return error(
            location,
            "a 'linalg.generic' is imported when its output's indexing map lists its parallel loops in order (no transposed or broadcast output)",
        );
    }
    let mut extents = vec![0i64; loops];
    for (operand, dims) in dims.iter().enumerate() {
        for (axis, &dim) in dims.iter().enumerate() {
            extents[dim] = shape_of(op.operand(operand).expect("in range"))[axis];
        }
    }
    let body = ir::region(op, 0)
        .and_then(|region| region.first_block())
        .expect("verified: linalg.generic has a body");
    let mut expansion = Expansion {
        emits: Vec::new(),
        value: Source::Operand(0),
    };
    // Each input brought to the iteration space: its axes put in loop order,
    // then the loops it does not index inserted.
    reads_no_destination(op, &(0..inputs).collect::<Vec<_>>(), destinations)?;
    let mut arguments = Vec::new();
    for (input, indexed) in dims.iter().enumerate().take(inputs) {
        let value = op.operand(input).expect("in range");
        let element = element_of(value);
        let mut source = Source::Operand(input);
        let mut order: Vec<usize> = (0..indexed.len()).collect();
        order.sort_by_key(|&axis| indexed[axis]);
        let mut sorted: Vec<usize> = order.iter().map(|&axis| indexed[axis]).collect();
        if order.iter().enumerate().any(|(index, &axis)| index != axis) {
            let permutation: Vec<i64> = order.iter().map(|&axis| axis as i64).collect();
            source = expansion.push(Emit {
                target: fusion::TransposeOperation::name(),
                operands: vec![source],
                attributes: vec![("permutation", i64s(context, &permutation))],
                result: Result_::Plain(sorted.iter().map(|&dim| extents[dim]).collect(), element),
            });
        }
        let missing: Vec<i64> = (0..loops)
            .filter(|dim| !sorted.contains(dim))
            .map(|dim| dim as i64)
            .collect();
        if !missing.is_empty() {
            sorted = (0..loops).collect();
            source = expansion.push(Emit {
                target: fusion::BroadcastOperation::name(),
                operands: vec![source],
                attributes: vec![("axes", i64s(context, &missing))],
                result: Result_::Plain(extents.clone(), element),
            });
        }
        arguments.push(Scalar::Tensor(source));
    }
    arguments.push(Scalar::Accumulator);
    let reduced: Vec<i64> = (0..loops)
        .filter(|&dim| !iterators[dim])
        .map(|dim| dim as i64)
        .collect();
    let mut values: HashMap<usize, Scalar> = HashMap::new();
    for (index, &argument) in arguments.iter().enumerate() {
        let value: Value = body.argument(index).expect("one per operand").into();
        values.insert(key(value), argument);
    }
    let lookup = |values: &HashMap<usize, Scalar>, value: Value<'c, '_>, user: &OperationRef| {
        if let Some(&scalar) = values.get(&key(value)) {
            return Ok(Ok(scalar));
        }
        // A float constant from outside the body: a fill, built by the caller.
        let constant = OperationResult::try_from(value)
            .ok()
            .filter(|result| crate::ops::Op::ArithConstant.is(&result.owner()))
            .and_then(|result| result.owner().attribute("value").ok())
            .and_then(|value| FloatAttribute::try_from(value).ok());
        match constant {
            Some(constant) => Ok(Err(constant.value())),
            None => error(
                user.location(),
                format!(
                    "'{}' in a 'linalg.generic' reads a value that is neither an argument of the body, a result of its ops, nor a float constant: not imported",
                    ir::name(user)
                ),
            ),
        }
    };
    let mut combiner: Option<(Reduction, usize)> = None;
    let mut yielded = None;
    let body_ops: Vec<OperationRef> = ir::block_ops(body).collect();
    for (position, body_op) in body_ops.iter().enumerate() {
        if is(body_op, linalg_ops::YieldOperation::name) {
            let operand = body_op.operand(0).expect("one output");
            if combiner
                .as_ref()
                .is_some_and(|&(_, result)| result != key(operand))
            {
                combiner = None;
            }
            yielded = Some(lookup(&values, operand, body_op)?);
            continue;
        }
        if crate::ops::Op::ArithConstant.is(body_op) {
            let result: Value = body_op.result(0).expect("one").into();
            let Ok(constant) =
                FloatAttribute::try_from(body_op.attribute("value").expect("a value"))
            else {
                return error(
                    body_op.location(),
                    "a constant in a 'linalg.generic' body is imported when it is a float",
                );
            };
            let source = fill(&mut expansion, context, constant.value(), &extents, result);
            values.insert(key(result), Scalar::Tensor(source));
            continue;
        }
        let Some(&(_, target)) = ARITH
            .iter()
            .chain(MATH)
            .find(|(source, _)| is(body_op, *source))
        else {
            return error(
                body_op.location(),
                format!(
                    "'{}' in a 'linalg.generic' body is not imported: the body may hold the ops of convert-shard-to-fusion's ARITH and MATH tables, float constants and linalg.yield",
                    ir::name(body_op)
                ),
            );
        };
        let result: Value = body_op.result(0).expect("one").into();
        let mut sources = Vec::new();
        let mut accumulates = false;
        for operand in body_op.operands() {
            match lookup(&values, operand, body_op)? {
                Ok(Scalar::Tensor(source)) => sources.push(source),
                Ok(Scalar::Accumulator) if reduced.is_empty() => {
                    // No reduction: the output's argument is the init's value.
                    reads_no_destination(op, &[inputs], destinations)?;
                    sources.push(Source::Operand(inputs));
                }
                Ok(Scalar::Accumulator) => accumulates = true,
                Err(constant) => {
                    sources.push(fill(&mut expansion, context, constant, &extents, operand))
                }
            }
        }
        if accumulates {
            // The combiner of a reduction: the last op before the yield, of
            // the output's argument and one value.
            let reduction = reduction_of(body_op)
                .filter(|_| sources.len() == 1 && position + 2 == body_ops.len());
            let Some(reduction) = reduction else {
                return error(body_op.location(), REDUCTION_FORM);
            };
            values.insert(key(result), Scalar::Tensor(sources[0]));
            combiner = Some((reduction, key(result)));
            continue;
        }
        let element = result.r#type();
        let source = expansion.push(Emit {
            target: target(),
            operands: sources,
            attributes: Vec::new(),
            result: Result_::Plain(extents.clone(), element),
        });
        values.insert(key(result), Scalar::Tensor(source));
    }
    let yielded = match yielded {
        Some(Ok(Scalar::Tensor(source))) => source,
        Some(Ok(Scalar::Accumulator)) => {
            return error(
                location,
                "a 'linalg.generic' that yields its output's argument is not imported",
            );
        }
        Some(Err(constant)) => fill(
            &mut expansion,
            context,
            constant,
            &extents,
            op.result(0).expect("one").into(),
        ),
        None => unreachable!("verified: a linalg.generic body ends with linalg.yield"),
    };
    if !reduced.is_empty() && combiner.is_none() {
        return error(location, REDUCTION_FORM);
    }
    expansion.value = match combiner {
        None => finish(&mut expansion, yielded),
        Some((reduction, _)) => {
            let sum = expansion.push(Emit {
                target: reduction.reduce,
                operands: vec![yielded],
                attributes: vec![("axes", i64s(context, &reduced))],
                result: Result_::Final,
            });
            if combines_init(op, inputs, &reduction, destinations)? {
                expansion.push(Emit {
                    target: reduction.combine,
                    operands: vec![Source::Operand(inputs), sum],
                    attributes: Vec::new(),
                    result: Result_::Final,
                })
            } else {
                sum
            }
        }
    };
    Ok(expansion)
}

/// A `fusion.fill` of `value` over the iteration space, of `scalar`'s type.
fn fill<'c>(
    expansion: &mut Expansion<'c>,
    context: &'c Context,
    value: f64,
    extents: &[i64],
    scalar: Value<'c, '_>,
) -> Source {
    let element = RankedTensorType::try_from(scalar.r#type())
        .map(|tensor| tensor.element())
        .unwrap_or(scalar.r#type());
    let attribute = FloatAttribute::new(context, Type::float64(context), value).into();
    expansion.push(Emit {
        target: fusion::FillOperation::name(),
        operands: Vec::new(),
        attributes: vec![("value", attribute)],
        result: Result_::Plain(extents.to_vec(), element),
    })
}

/// The yielded tensor as the op's result: the last emitted op takes the
/// result's type; an input yielded as is becomes a copy by `fusion.set`.
fn finish(expansion: &mut Expansion, yielded: Source) -> Source {
    match yielded {
        Source::Emitted(index) if index + 1 == expansion.emits.len() => {
            expansion.emits[index].result = Result_::Final;
            yielded
        }
        _ => expansion.push(Emit {
            target: fusion::SetOperation::name(),
            operands: vec![yielded],
            attributes: Vec::new(),
            result: Result_::Final,
        }),
    }
}
