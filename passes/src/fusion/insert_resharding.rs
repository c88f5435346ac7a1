//! `fusion-insert-resharding`: isolates every resharding into its own
//! `fusion.set`, so that no compute op reads an operand distributed otherwise
//! than its result implies.
//!
//! For each compute op (not `set`) whose result and operand are annotated,
//! the distribution the op needs for the operand is read off the result
//! through the op's axis map (`axis_map`): the result's mesh, and on each
//! axis that maps to the result, the result's parallel type; an axis that the
//! op reduces keeps the operand's, and one the op broadcasts (a matmul's batch
//! axis of extent 1) is `serial`. `stream` is a schedule, not a placement:
//! it compares as `serial`, and a set inherits the result's `stream` axes so
//! that it runs in the same stream loop as the op. Where the needed
//! distribution differs from the operand's, `%r = fusion.set %operand` to it
//! is inserted before the op, which then reads `%r`.
//!
//! A reduction across devices is the op itself, not a resharding of its
//! operand (it lowers to an allreduce, or a reduce-scatter when the result is
//! `didx`-sharded): when an op reduces a `didx` axis (a reduced axis of
//! `sum`/`amax`, the contraction `K` of `matmul`/`linear`), its reduced axes
//! stay `didx` on every operand (the other side of a contraction is split to
//! match) and a `didx` axis of the result needs no `didx` in the operand. A
//! `sum`/`amax` that reduces a `didx` axis and others is split into a local
//! reduction over the others followed by the cross-device one alone.
//!
//! Runs on `builtin.module` (every function) or on one `func.func`.
//!
//! ```mlir
//! %c = fusion.matmul %a, %b : tensor<4x4x8xf32, #fusion.dist<@tp, [serial, didx, serial]>>,
//!                             tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>
//!                          -> tensor<4x4x16xf32, #fusion.dist<@tp, [stream, serial, serial]>>
//! ```
//! becomes
//! ```mlir
//! %0 = fusion.set %a : tensor<4x4x8xf32, #fusion.dist<@tp, [serial, didx, serial]>>
//!                   -> tensor<4x4x8xf32, #fusion.dist<@tp, [stream, serial, serial]>>
//! %c = fusion.matmul %0, %b : tensor<4x4x8xf32, #fusion.dist<@tp, [stream, serial, serial]>>,
//!                             tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>
//!                          -> tensor<4x4x16xf32, #fusion.dist<@tp, [stream, serial, serial]>>
//! ```
//! and `fusion.sum %x [0, 2]` of `x: [didx, serial, serial]` becomes
//! `%p = fusion.sum %x [2]` (local, `p: [didx, serial]`) then
//! `fusion.sum %p [0]` (across devices).

use super::axis_map;
use super::mesh::{self, Mesh};
use crate::HirPass;
use crate::diagnostics::emit_error;
use crate::ir;
use crate::ops::Op;
use crate::rewrite;
use hir_dialects::{
    OpKind,
    dist::{Dist, ParallelType},
    fusion,
};
use melior::{
    Context,
    ir::{
        BlockLike, Operation, OperationRef, Value, ValueLike,
        attribute::DenseI64ArrayAttribute,
        operation::OperationLike,
        r#type::{RankedTensorType, ShapedTypeLike},
    },
};
use std::collections::HashMap;

/// The op the pass is listed under; it also runs on `func.func`.
pub const ANCHOR: &str = crate::ops::MODULE;
pub const ARGUMENT: &str = "fusion-insert-resharding";

/// Creates the pass, op-agnostic so that it runs on a module or a function.
pub fn create() -> Box<dyn HirPass> {
    Box::new(InsertResharding)
}

struct InsertResharding;

impl HirPass for InsertResharding {
    fn run(&mut self, op: OperationRef) -> bool {
        let context = op.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        match Op::of(&op) {
            Some(Op::BuiltinModule) => {
                let meshes = mesh::meshes(op);
                ir::body(op)
                    .into_iter()
                    .filter(|function| Op::FuncFunc.is(function))
                    .all(|function| isolate_all(context, function, &meshes))
            }
            // Meshes are symbols of the enclosing module, which nothing changes.
            Some(Op::FuncFunc) => {
                let meshes = op.parent_operation().map(mesh::meshes);
                isolate_all(context, op, &meshes.unwrap_or_default())
            }
            _ => {
                emit_error(
                    op.location(),
                    &format!(
                        "{ARGUMENT} runs on builtin.module or func.func, not '{}'",
                        ir::name(&op)
                    ),
                );
                false
            }
        }
    }
}

fn isolate_all<'c>(
    context: &'c Context,
    function: OperationRef<'c, '_>,
    meshes: &HashMap<String, Mesh>,
) -> bool {
    ir::nested(function)
        .into_iter()
        .all(|op| isolate(context, op, meshes))
}

/// Inserts the sets `op` needs; false after an error.
fn isolate<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    meshes: &HashMap<String, Mesh>,
) -> bool {
    let name = ir::name(&op);
    if name == fusion::SetOperation::name() {
        return true;
    }
    let Some(mapping) = axis_map::operand_axes(&op) else {
        return true;
    };
    let Some(result) = Dist::of_type(op.result(0).expect("one result").r#type()) else {
        return true;
    };
    let operands: Vec<Value<'c, 'a>> = op.operands().collect();
    let dists: Vec<Option<Dist>> = operands
        .iter()
        .map(|operand| Dist::of_type(operand.r#type()))
        .collect();

    // The reduction across devices gets an op of its own: the other reduced
    // axes are reduced locally first.
    if let (OpKind::Reduction, Some(input)) = (OpKind::of(&op), &dists[0]) {
        let reduced: Vec<usize> = axis_map::reduced(&mapping[0]).collect();
        let across: Vec<usize> = reduced
            .iter()
            .copied()
            .filter(|&axis| input.axes[axis].is_device())
            .collect();
        if across.len() > 1 {
            emit_error(
                op.location(),
                &format!(
                    "'{name}' reduces axes {across:?}, split over two mesh axes; reduce over one mesh axis at a time"
                ),
            );
            return false;
        }
        if let Some(&sharded) = across.first()
            && reduced.len() > 1
        {
            let local = split(context, op, &mapping[0], sharded, &result);
            return isolate(context, local, meshes) && isolate(context, op, meshes);
        }
    }

    // The device type of an operand axis the op reduces, if any: a reduction
    // across the devices of that mesh axis.
    let across_devices = axis_map::reduced_across(dists.iter().map(Option::as_ref), &mapping);

    let broadcast = hir_dialects::broadcast_axes(&op).expect("an op with an axis map");
    // One set per distinct (operand, distribution), shared by repeated operands.
    let mut inserted: Vec<(Value<'c, 'a>, Dist, Value<'c, 'a>)> = Vec::new();
    for (index, operand) in operands.iter().enumerate() {
        let Some(dist) = &dists[index] else {
            continue;
        };
        let axes: Vec<ParallelType> = (0..dist.axes.len())
            .map(|axis| match mapping[index][axis] {
                // A broadcast axis is read whole for every index of the
                // result's axis.
                Some(_) if broadcast[index][axis] => ParallelType::Serial,
                // A reduce-scatter shards the result, not the operand.
                Some(to) if across_devices == Some(result.axes[to]) => ParallelType::Serial,
                Some(to) => result.axes[to],
                None if let Some(reduced) = across_devices => reduced,
                None => dist.axes[axis],
            })
            .collect();
        // The operand streams as the result does (its chunks too), or keeps
        // its own schedule.
        let stream_chunks = match axes.iter().position(|&axis| axis == ParallelType::Stream) {
            Some(axis) if mapping[index][axis].is_some() => result.stream_chunks,
            Some(_) => dist.stream_chunks,
            None => None,
        };
        let needed = Dist {
            mesh: result.mesh.clone(),
            axes,
            stream_chunks,
        };
        if placement(&needed) == placement(dist) {
            continue;
        }
        for parallel_type in ParallelType::DEVICE {
            let Some(axis) = needed.find(parallel_type) else {
                continue;
            };
            let extent = axis_map::shape(operand.r#type()).expect("a tensor")[axis];
            if let Some(devices) = meshes
                .get(&needed.mesh)
                .and_then(|mesh| mesh.parts(parallel_type))
                && extent % devices != 0
            {
                emit_error(
                    op.location(),
                    &format!(
                        "cannot reshard operand #{index} of '{name}' to {}: {} axis {axis} has extent {extent}, not a multiple of the {devices} devices of mesh '@{}'",
                        needed.to_attribute(context),
                        parallel_type.keyword(),
                        needed.mesh
                    ),
                );
                return false;
            }
        }
        let resharded = match inserted
            .iter()
            .find(|(value, dist, _)| value == operand && *dist == needed)
        {
            Some(&(_, _, resharded)) => resharded,
            None => {
                let r#type = axis_map::with_dist(context, operand.r#type(), &needed);
                let set = fusion::SetOperation::builder(context, op.location())
                    .input(*operand)
                    .result(r#type)
                    .build();
                let resharded = first_result(insert_before(op, set.into()));
                inserted.push((*operand, needed, resharded));
                resharded
            }
        };
        rewrite::set_operand(
            &rewrite::rewriter(op).as_rewriter_base(),
            op,
            index,
            resharded,
        );
    }
    true
}

/// Where a distribution places data: `stream` schedules, it does not place.
fn placement(dist: &Dist) -> Dist {
    Dist {
        mesh: dist.mesh.clone(),
        axes: dist
            .axes
            .iter()
            .map(|&axis| match axis {
                ParallelType::Stream => ParallelType::Serial,
                other => other,
            })
            .collect(),
        stream_chunks: None,
    }
}

/// Inserts `new` before `op`.
fn insert_before<'c, 'a>(op: OperationRef<'c, 'a>, new: Operation<'c>) -> OperationRef<'c, 'a> {
    let block = op.block().expect("a fusion op sits in a block");
    block.insert_operation_before(op, new)
}

/// The value an op inserted here defines.
fn first_result<'c, 'a>(op: OperationRef<'c, 'a>) -> Value<'c, 'a> {
    op.result(0).expect("one result").into()
}

/// Splits a `sum`/`amax` that reduces its operand's `didx` axis `sharded`
/// and others into a local reduction over the others, inserted before `op`
/// and returned, and `op` reducing `sharded` alone. The partial result is
/// on the result's mesh, `didx` where the operand is and, on the kept axes,
/// as the result but never `didx` (the cross-device step scatters).
fn split<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    mapping: &[Option<usize>],
    sharded: usize,
    result: &Dist,
) -> OperationRef<'c, 'a> {
    let input = op.operand(0).expect("one operand");
    let input_type = input.r#type();
    let shape = axis_map::shape(input_type).expect("a tensor");
    let local: Vec<usize> = (0..shape.len())
        .filter(|&axis| mapping[axis].is_none() && axis != sharded)
        .collect();

    let kept: Vec<usize> = (0..shape.len())
        .filter(|axis| !local.contains(axis))
        .collect();
    let input_type_of_sharded = Dist::of_type(input_type)
        .expect("a distributed operand")
        .axes[sharded];
    let partial_axes: Vec<ParallelType> = kept
        .iter()
        .map(|&axis| match mapping[axis] {
            None => input_type_of_sharded,
            Some(to) if result.axes[to] == input_type_of_sharded => ParallelType::Serial,
            Some(to) => result.axes[to],
        })
        .collect();
    let partial = Dist {
        mesh: result.mesh.clone(),
        stream_chunks: result
            .stream_chunks
            .filter(|_| partial_axes.contains(&ParallelType::Stream)),
        axes: partial_axes,
    };
    let element = RankedTensorType::try_from(input_type)
        .expect("a tensor")
        .element();
    let partial_shape: Vec<i64> = kept.iter().map(|&axis| shape[axis]).collect();
    let partial_type = axis_map::tensor(context, &partial_shape, element, &partial);
    let local_axes: Vec<i64> = local.iter().map(|&axis| axis as i64).collect();
    let local_axes = DenseI64ArrayAttribute::new(context, &local_axes);
    let local_op: Operation = if ir::name(&op) == fusion::SumOperation::name() {
        fusion::SumOperation::builder(context, op.location())
            .input(input)
            .axes(local_axes.into())
            .result(partial_type)
            .build()
            .into()
    } else {
        fusion::AmaxOperation::builder(context, op.location())
            .input(input)
            .axes(local_axes.into())
            .result(partial_type)
            .build()
            .into()
    };
    let local = insert_before(op, local_op);

    let rewriter = rewrite::rewriter(op);
    let rewriter = rewriter.as_rewriter_base();
    rewrite::set_operand(&rewriter, op, 0, first_result(local));
    let position = kept
        .iter()
        .position(|&axis| axis == sharded)
        .expect("the didx axis is kept");
    rewrite::set_attribute(
        &rewriter,
        op,
        "axes",
        DenseI64ArrayAttribute::new(context, &[position as i64]).into(),
    );
    local
}
