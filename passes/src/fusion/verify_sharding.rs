//! `fusion-verify-sharding`: checks every distribution against its mesh and
//! every op's operand and result distributions against each other.
//!
//! The rules that need the module (mesh symbols) or more than one op live
//! here rather than in the op verifiers:
//! - a `#fusion.dist` names a `fusion.mesh` of the module;
//! - a `didx` axis has a multiple of its mesh's size as extent: it is split
//!   into one contiguous slice per device (extent 1 when it equals the size);
//! - the distributed tensors of an op live on one mesh: only `fusion.set`
//!   moves a tensor between meshes;
//! - a function argument has no `stream` axis: stream schedules how an op
//!   computes its result, and an argument is computed already;
//! - an axis that `sum`/`amax` reduces is not `stream`: a stream axis
//!   schedules independent slices, and a reduction's slices are not;
//! - a contracted axis of `matmul`/`linear` may be `stream` in the form that
//!   sums the loop's partial products ([`super::stream_contraction`]): every
//!   operand's K that stream axis or serial, and no stream axis in the
//!   result;
//! - an operand axis that maps to the result's `stream` axis is not a split
//!   `didx` axis (extent a multiple > 1 of the mesh size): the stream loop
//!   slices the axis one index per iteration, which such a shard does not
//!   hold (a `didx` axis of the mesh's extent, one index per device, is the
//!   gather-per-iteration pipeline); a `stream<k>` axis takes chunks and
//!   may map to any split.
//!
//! ```mlir
//! fusion.mesh @tp = [0, 1, 2, 3]
//! // error: didx axis 0 has extent 2, not a multiple of the 4 devices of mesh '@tp'
//! func.func @f(%a: tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>>) { ... }
//! ```

use super::axis_map;
use super::mesh::{self, Mesh};
use super::stream_contraction;
use crate::HirPass;
use crate::diagnostics::emit_error;
use crate::ir;
use crate::ops::Op;
use hir_dialects::dist::{Dist, ParallelType};
use melior::ir::{
    BlockLike, Location, OperationRef, RegionLike, Type, ValueLike,
    operation::{OperationLike, WalkOrder, WalkResult},
};
use std::collections::HashMap;

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::MODULE;
pub const ARGUMENT: &str = "fusion-verify-sharding";

/// Creates the pass (anchored on `builtin.module`, where meshes live).
pub fn create() -> Box<dyn HirPass> {
    Box::new(VerifySharding)
}

struct VerifySharding;

impl HirPass for VerifySharding {
    fn run(&mut self, module: OperationRef) -> bool {
        verify_module(module)
    }
}

type Meshes = HashMap<String, Mesh>;

fn verify_module(module: OperationRef) -> bool {
    let meshes = mesh::meshes(module);
    let mut ok = true;
    module.walk(WalkOrder::PreOrder, |op| {
        ok &= verify_op(&op, &meshes);
        WalkResult::Advance
    });
    ok
}

/// Checks one distributed value's type against the meshes; `what` names the
/// value in the diagnostic.
fn verify_value_type(r#type: Type, what: &str, location: Location, meshes: &Meshes) -> bool {
    let Some(dist) = Dist::of_type(r#type) else {
        return true;
    };
    if what.starts_with("function argument")
        && let Some(axis) = dist.find(ParallelType::Stream)
    {
        emit_error(
            location,
            &format!(
                "{what} has stream axis {axis}; stream schedules how an op computes its result, and an argument is computed already"
            ),
        );
        return false;
    }
    let Some(mesh) = meshes.get(&dist.mesh) else {
        emit_error(
            location,
            &format!(
                "{what} is distributed over '@{}', which is not a fusion.mesh of the module",
                dist.mesh
            ),
        );
        return false;
    };
    for parallel_type in ParallelType::DEVICE {
        let Some(axis) = dist.find(parallel_type) else {
            continue;
        };
        let keyword = parallel_type.keyword();
        let Some(parts) = mesh.parts(parallel_type) else {
            let needs = if parallel_type == ParallelType::DIDz {
                3
            } else {
                2
            };
            let has = mesh.shape.len();
            let axes = if has == 1 { "axis" } else { "axes" };
            emit_error(
                location,
                &format!(
                    "{what}: {keyword} axis {axis} needs a {needs}-D mesh, and mesh '@{}' has {has} {axes}",
                    dist.mesh
                ),
            );
            return false;
        };
        let extent = axis_map::shape(r#type).map_or(-1, |shape| shape[axis]);
        if extent <= 0 || extent % parts != 0 {
            let along = if mesh.shape.len() > 1 {
                format!(" along its {keyword} axis")
            } else {
                String::new()
            };
            emit_error(
                location,
                &format!(
                    "{what}: {keyword} axis {axis} has extent {extent}, not a multiple of the {parts} devices of mesh '@{}'{along}",
                    dist.mesh
                ),
            );
            return false;
        }
    }
    true
}

fn verify_op(op: &OperationRef, meshes: &Meshes) -> bool {
    let mut ok = true;
    for (index, result) in op.results().enumerate() {
        ok &= verify_value_type(
            result.r#type(),
            &format!("result #{index}"),
            op.location(),
            meshes,
        );
    }
    let is_function = Op::FuncFunc.is(op);
    for region in op.regions() {
        let mut block = region.first_block();
        let mut entry = true;
        while let Some(current) = block {
            let kind = if is_function && entry {
                "function argument"
            } else {
                "argument"
            };
            entry = false;
            for index in 0..current.argument_count() {
                let argument = current.argument(index).expect("index is in range");
                // SAFETY: the value is valid.
                let location = unsafe {
                    Location::from_raw(mlir_sys::mlirValueGetLocation(argument.to_raw()))
                };
                ok &= verify_value_type(
                    argument.r#type(),
                    &format!("{kind} #{index}"),
                    location,
                    meshes,
                );
            }
            block = current.next_in_region();
        }
    }
    if !ok {
        return false;
    }
    verify_single_mesh(op) && verify_reduced_axes(op) && verify_stream_slices(op, meshes)
}

fn dists<'c>(types: impl Iterator<Item = Type<'c>>) -> Vec<Dist> {
    types.filter_map(Dist::of_type).collect()
}

fn verify_single_mesh(op: &OperationRef) -> bool {
    let name = ir::name(op);
    if !name.starts_with("fusion.") || Op::FusionSet.is(op) {
        return true;
    }
    let all = dists(
        op.operands()
            .map(|v| v.r#type())
            .chain(op.results().map(|v| v.r#type())),
    );
    if let Some(other) = all.iter().find(|dist| dist.mesh != all[0].mesh) {
        emit_error(
            op.location(),
            &format!(
                "'{name}' mixes meshes '@{}' and '@{}'; only fusion.set moves a tensor between meshes",
                all[0].mesh, other.mesh
            ),
        );
        return false;
    }
    true
}

fn verify_reduced_axes(op: &OperationRef) -> bool {
    let Some(operand_axes) = axis_map::operand_axes(op) else {
        return true;
    };
    // A contraction over a stream axis sums its iterations' products.
    match stream_contraction::of(op) {
        Ok(Some(_)) => return true,
        Ok(None) => {}
        Err(message) => {
            emit_error(op.location(), &message);
            return false;
        }
    }
    let name = ir::name(op);
    let reduced = operand_axes
        .iter()
        .enumerate()
        .flat_map(|(operand, axes)| axis_map::reduced(axes).map(move |axis| (operand, axis)));
    for (operand, axis) in reduced {
        let Some(dist) = ir::operand(op, operand).and_then(|value| Dist::of_type(value.r#type()))
        else {
            continue;
        };
        if dist.axes.get(axis) == Some(&ParallelType::Stream) {
            emit_error(
                op.location(),
                &format!(
                    "'{name}' reduces axis {axis} of operand #{operand}, which is a stream axis; \
                     a stream axis must index independent slices (only a matmul or linear \
                     sums a loop's iterations, over its contracted axis)"
                ),
            );
            return false;
        }
    }
    true
}

fn verify_stream_slices(op: &OperationRef, meshes: &Meshes) -> bool {
    let Some(operand_axes) = axis_map::operand_axes(op) else {
        return true;
    };
    let Some(result) = ir::result(op, 0).and_then(|result| Dist::of_type(result.r#type())) else {
        return true;
    };
    // A `stream<k>` loop takes chunks of the gathered operand, whatever its
    // split.
    let (Some(stream), None) = (result.find(ParallelType::Stream), result.stream_chunks) else {
        return true;
    };
    for (index, axes) in operand_axes.iter().enumerate() {
        let Some(operand) = ir::operand(op, index) else {
            continue;
        };
        let Some(dist) = Dist::of_type(operand.r#type()) else {
            continue;
        };
        let Some(axis) = (0..dist.axes.len()).find(|&axis| dist.axes[axis].is_device()) else {
            continue;
        };
        let extent = axis_map::shape(operand.r#type()).map_or(0, |shape| shape[axis]);
        let devices = meshes
            .get(&dist.mesh)
            .and_then(|mesh| mesh.parts(dist.axes[axis]))
            .unwrap_or(0);
        if axes[axis] == Some(stream) && extent != devices {
            emit_error(
                op.location(),
                &format!(
                    "'{}' streams result axis {stream} over operand #{index}'s {keyword} axis {axis}, which is split ({extent} over {devices} devices); \
                     a stream axis slices one index per iteration, so a {keyword} axis it maps to must have the mesh's extent",
                    ir::name(op),
                    keyword = dist.axes[axis].keyword()
                ),
            );
            return false;
        }
    }
    true
}
