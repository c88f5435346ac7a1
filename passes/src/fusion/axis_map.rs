//! What the sharding passes share: the axis maps of fusion compute ops (each
//! op gives its own, `hir_dialects::axis_map`: an operand axis that maps
//! nowhere is one the op reduces), shapes and distributed types; meshes are
//! in [`super::mesh`].

use crate::ir;
use hir_dialects::dist::{Dist, ParallelType};
use melior::{
    Context,
    ir::{
        OperationRef, Type, ValueLike,
        operation::OperationLike,
        r#type::{DimSize, RankedTensorType, ShapedTypeLike},
    },
};

/// For each operand of a fusion compute op, the result axis each of its axes
/// maps to, `None` for the axes the op reduces, as the op says; `None` for
/// any other op (a host op's maps are over buffers, not tensors).
pub fn operand_axes(op: &OperationRef) -> Option<Vec<Vec<Option<usize>>>> {
    if !ir::name(op).starts_with("fusion.") {
        return None;
    }
    hir_dialects::axis_map(op)
}

/// Whether `op` is a fusion op that makes a tensor from no operand
/// (`fusion.fill`, `fusion.iota`).
pub fn makes_tensor(op: &OperationRef) -> bool {
    ir::name(op).starts_with("fusion.")
        && op.operand_count() == 0
        && op.result_count() == 1
        && shape(op.result(0).expect("one result").r#type()).is_some()
}

/// The axes an operand's map sends nowhere: those the op reduces.
pub fn reduced(axes: &[Option<usize>]) -> impl Iterator<Item = usize> + '_ {
    (0..axes.len()).filter(|&axis| axes[axis].is_none())
}

/// The device type (`didx`, `didy`) of an operand axis the op reduces, if
/// any: the op is then a reduction across the devices of that mesh axis.
/// `dists` are the operands' distributions, `None` where unannotated.
pub fn reduced_across<'d>(
    dists: impl IntoIterator<Item = Option<&'d Dist>>,
    mapping: &[Vec<Option<usize>>],
) -> Option<ParallelType> {
    dists.into_iter().zip(mapping).find_map(|(dist, axes)| {
        let dist = dist?;
        reduced(axes)
            .map(|axis| dist.axes[axis])
            .find(|parallel_type| parallel_type.is_device())
    })
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
