//! What the sharding passes share: how each fusion compute op maps the axes of
//! its operands to the axes of its result, and small IR helpers.
//!
//! | op | operand axis -> result axis |
//! |---|---|
//! | `set`, `neg`, `cast`, `add`, `sub`, `mul`, `div`, `max`, `min` | identity |
//! | `sum`, `amax` | kept axes in order; reduced axes map nowhere |
//! | `broadcast` | input axis `i` -> the `i`-th result axis that is not new |
//! | `matmul` `[B..,M,K] x [K,N]` or `[B..,K,N]` | lhs `B..,M` and rhs `B..` -> the same; rhs `N` -> last; `K` nowhere |
//! | `linear` `[B..,K] x [N,K] (+ [N])` | input `B..`; weight and bias `N` -> last; `K` nowhere |
//!
//! An operand axis that maps nowhere is one the op reduces.

use crate::ir;
use crate::ops::Op;
use hir_dialects::{OpKind, dist::Dist, fusion};
use melior::{
    Context,
    ir::{
        OperationRef, Type, ValueLike,
        attribute::{DenseI64ArrayAttribute, StringAttribute},
        operation::OperationLike,
        r#type::{DimSize, RankedTensorType, ShapedTypeLike},
    },
};
use std::collections::HashMap;

/// For each operand of a fusion compute op, the result axis each of its axes
/// maps to, `None` for the axes the op reduces. `None` for any other op
/// (what kind of op it is comes from its ODS traits, `OpKind`).
pub fn operand_axes(op: &OperationRef) -> Option<Vec<Vec<Option<usize>>>> {
    let ranks = op
        .operands()
        .map(|operand| shape(operand.r#type()).map(|shape| shape.len()))
        .collect::<Option<Vec<_>>>()?;
    let result_rank = shape(op.result(0).ok()?.r#type())?.len();
    let identity = |rank: usize| (0..rank).map(Some).collect::<Vec<_>>();
    Some(match OpKind::of(op) {
        OpKind::Elementwise => ranks.iter().map(|&rank| identity(rank)).collect(),
        OpKind::Reduction => {
            let reduced = axes_attribute(op)?;
            let mut next = 0;
            vec![
                (0..ranks[0])
                    .map(|axis| {
                        (!reduced.contains(&axis)).then(|| {
                            next += 1;
                            next - 1
                        })
                    })
                    .collect(),
            ]
        }
        OpKind::Broadcast => {
            let new = axes_attribute(op)?;
            vec![
                (0..result_rank)
                    .filter(|axis| !new.contains(axis))
                    .map(Some)
                    .collect(),
            ]
        }
        OpKind::Contraction if ir::name(op) == fusion::MatmulOperation::name() => {
            let mut lhs = identity(ranks[0]);
            lhs[ranks[0] - 1] = None;
            // A rank-2 rhs is shared by every batch; a batched one maps its batch axes.
            let mut rhs: Vec<_> = (0..ranks[1]).map(Some).collect();
            rhs[ranks[1] - 2] = None;
            rhs[ranks[1] - 1] = Some(result_rank - 1);
            vec![lhs, rhs]
        }
        OpKind::Contraction if ir::name(op) == fusion::LinearOperation::name() => {
            let mut input = identity(ranks[0]);
            input[ranks[0] - 1] = None;
            let n = Some(result_rank - 1);
            let mut operands = vec![input, vec![n, None]];
            if ranks.len() == 3 {
                operands.push(vec![n]);
            }
            operands
        }
        _ => return None,
    })
}

/// The axes an operand's map sends nowhere: those the op reduces.
pub fn reduced(axes: &[Option<usize>]) -> impl Iterator<Item = usize> + '_ {
    (0..axes.len()).filter(|&axis| axes[axis].is_none())
}

/// The `axes` attribute of a reduction or a broadcast.
fn axes_attribute(op: &OperationRef) -> Option<Vec<usize>> {
    let axes = DenseI64ArrayAttribute::try_from(op.attribute("axes").ok()?).ok()?;
    (0..axes.len())
        .map(|index| axes.element(index).ok().map(|axis| axis as usize))
        .collect()
}

/// The static shape of a ranked tensor type.
pub fn shape(r#type: Type) -> Option<Vec<i64>> {
    let tensor = RankedTensorType::try_from(r#type).ok()?;
    (0..tensor.rank())
        .map(|axis| match tensor.dim_size(axis) {
            Ok(DimSize::Static(extent)) => Some(extent as i64),
            _ => None,
        })
        .collect()
}

/// `r#type`, a ranked tensor type, with `dist` as its encoding.
pub fn with_dist<'c>(context: &'c Context, r#type: Type<'c>, dist: &Dist) -> Type<'c> {
    let tensor = RankedTensorType::try_from(r#type).expect("a distributed value is a tensor");
    let shape: Vec<u64> = shape(r#type)
        .expect("fusion tensors have static shapes")
        .into_iter()
        .map(|extent| extent as u64)
        .collect();
    RankedTensorType::new(&shape, tensor.element(), Some(dist.to_attribute(context))).into()
}

/// The tensor type of `shape` and `element` with `dist` as its encoding.
pub fn tensor<'c>(context: &'c Context, shape: &[i64], element: Type<'c>, dist: &Dist) -> Type<'c> {
    let shape: Vec<u64> = shape.iter().map(|&extent| extent as u64).collect();
    RankedTensorType::new(&shape, element, Some(dist.to_attribute(context))).into()
}

/// Mesh name to number of devices, from the `fusion.mesh` ops of `module`.
pub fn meshes(module: OperationRef) -> HashMap<String, usize> {
    mesh_devices(module)
        .into_iter()
        .map(|(mesh, devices)| (mesh, devices.len()))
        .collect()
}

/// Mesh name to its devices (global ranks, in mesh order), from the
/// `fusion.mesh` ops of `module`.
pub fn mesh_devices(module: OperationRef) -> HashMap<String, Vec<i64>> {
    let mut meshes = HashMap::new();
    for op in ir::body(module) {
        if !Op::FusionMesh.is(&op) {
            continue;
        }
        let symbol = op
            .attribute("sym_name")
            .ok()
            .and_then(|attr| StringAttribute::try_from(attr).ok());
        let devices = op
            .attribute("devices")
            .ok()
            .and_then(|attr| DenseI64ArrayAttribute::try_from(attr).ok());
        if let (Some(symbol), Some(devices)) = (symbol, devices) {
            let devices = (0..devices.len())
                .map(|index| devices.element(index).expect("in range"))
                .collect();
            meshes.insert(symbol.value().to_owned(), devices);
        }
    }
    meshes
}
