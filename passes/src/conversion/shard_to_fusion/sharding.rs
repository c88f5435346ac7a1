//! How `convert-shard-to-fusion` reads shard's grids and shardings: a grid
//! as the shape of its mesh, a sharding as the `#fusion.dist` of the tensor
//! it annotates, and the distribution of every value of a function.

use super::{is, key, symbol};
use crate::diagnostics::{Emitted, error};
use crate::fusion::axis_map;
use crate::upstream::shard;
use hir_dialects::dist::{Dist, ParallelType};
use melior::{
    Context,
    ir::{
        Attribute, OperationRef, Value, ValueLike,
        attribute::{DenseI64ArrayAttribute, FlatSymbolRefAttribute},
        operation::{OperationLike, OperationResult},
    },
};
use std::collections::HashMap;

/// The parallel type of the tensor axes split along axis `axis` of a grid
/// of rank `rank`: the one place that says how grid axes become mesh axes.
/// Fusion meshes have one to three axes: `didx` splits over the last (the
/// columns), `didy` over the one before (the rows), `didz` over the one
/// before that (the planes of a 3-D mesh); a grid of higher rank does not
/// import.
pub fn grid_axis_type(rank: usize, axis: usize) -> Option<ParallelType> {
    let from_last = rank.checked_sub(axis + 1)?;
    match (rank, from_last) {
        (1..=3, 0) => Some(ParallelType::DIDx),
        (2..=3, 1) => Some(ParallelType::DIDy),
        (3, 2) => Some(ParallelType::DIDz),
        _ => None,
    }
}

/// The most devices a grid may have: its mesh lists each of them in the IR
/// (hir-run runs at most 1024 ranks).
const MAX_DEVICES: i64 = 1 << 16;

/// A grid as fusion sees it: the size of each of its axes.
pub(super) type Grids = HashMap<String, Vec<i64>>;

/// The name and shape of a `shard.grid` fusion can hold, or an error.
pub(super) fn grid(op: &OperationRef) -> Result<(String, Vec<i64>), Emitted> {
    let name = symbol(op);
    let shape = dense_i64(op.attribute("shape").ok());
    let written = shape
        .iter()
        .map(|&extent| {
            if extent < 0 {
                "?".to_owned()
            } else {
                extent.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("x");
    if shape.iter().any(|&extent| extent < 0) {
        return error(
            op.location(),
            format!(
                "grid '@{name}' has a dynamic shape ({written}); fusion meshes have a fixed number of devices"
            ),
        );
    }
    let devices = shape
        .iter()
        .try_fold(1i64, |devices, &extent| devices.checked_mul(extent))
        .filter(|&devices| devices <= MAX_DEVICES);
    if !matches!(devices, Some(1..)) {
        return error(
            op.location(),
            format!(
                "grid '@{name}' of shape {written} is not imported: a fusion mesh lists between 1 and {MAX_DEVICES} devices"
            ),
        );
    }
    if (0..shape.len()).any(|axis| grid_axis_type(shape.len(), axis).is_none()) {
        return error(
            op.location(),
            format!(
                "grid '@{name}' has rank {} (shape {written}); only grids of rank 1 to 3 import, as fusion meshes have one to three axes",
                shape.len()
            ),
        );
    }
    Ok((name, shape))
}

/// The values of a dense i64 array attribute (empty if absent).
fn dense_i64(attribute: Option<Attribute>) -> Vec<i64> {
    attribute
        .and_then(|attribute| DenseI64ArrayAttribute::try_from(attribute).ok())
        .map(|array| {
            (0..array.len())
                .map(|index| array.element(index).expect("in range"))
                .collect()
        })
        .unwrap_or_default()
}

/// The distribution of each value of `ops` that has one: a `shard.shard`
/// result has its sharding; another value, that of its annotation, else
/// the one its annotations for users agree on.
pub(super) fn dists<'c>(
    context: &'c Context,
    ops: &[OperationRef<'c, '_>],
    grids: &Grids,
) -> Result<HashMap<usize, Dist>, Emitted> {
    let mut dists = HashMap::new();
    let mut own: HashMap<usize, (Dist, OperationRef)> = HashMap::new();
    let mut for_users: HashMap<usize, (Vec<Dist>, OperationRef)> = HashMap::new();
    let mut failed = false;
    for op in ops.iter().filter(|op| is(op, shard::ShardOperation::name)) {
        let input = op.operand(0).expect("an input");
        let result: Value = op.result(0).expect("a result").into();
        let dist = match sharding_dist(op, grids) {
            Ok(dist) => dist,
            Err(Emitted) => {
                failed = true;
                continue;
            }
        };
        dists.insert(key(result), dist.clone());
        let annotated = OperationResult::try_from(input)
            .is_ok_and(|input| is(&input.owner(), shard::ShardOperation::name));
        if annotated {
            continue;
        }
        if op.attribute("annotate_for_users").is_ok() {
            for_users
                .entry(key(input))
                .or_insert_with(|| (Vec::new(), *op))
                .0
                .push(dist);
        } else if let Some((first, _)) = own.get(&key(input)) {
            if *first != dist {
                return error(
                    op.location(),
                    format!(
                        "the value is annotated with two shardings, {} and {}; shard leaves this undefined",
                        first.to_attribute(context),
                        dist.to_attribute(context)
                    ),
                );
            }
        } else {
            own.insert(key(input), (dist, *op));
        }
    }
    if failed {
        return Err(Emitted);
    }
    for (value, (users, first)) in for_users {
        if own.contains_key(&value) {
            continue;
        }
        if let Some(other) = users.iter().find(|dist| **dist != users[0]) {
            return error(
                first.location(),
                format!(
                    "the value has no sharding of its own and its users want two, {} and {}: annotate it (shard.shard without annotate_for_users), or run sharding-propagation first",
                    users[0].to_attribute(context),
                    other.to_attribute(context)
                ),
            );
        }
        dists.insert(value, users[0].clone());
    }
    dists.extend(own.into_iter().map(|(value, (dist, _))| (value, dist)));
    Ok(dists)
}

/// The distribution a `shard.shard` gives its tensor, or an error.
fn sharding_dist(op: &OperationRef, grids: &Grids) -> Result<Dist, Emitted> {
    let input = op.operand(0).expect("an input");
    let Some(shape) = axis_map::shape(input.r#type()) else {
        return error(
            op.location(),
            format!(
                "a tensor of dynamic shape ({}) is not imported: fusion tensors have static shapes",
                input.r#type()
            ),
        );
    };
    let sharding = crate::ir::operand(op, 1)
        .and_then(|value| OperationResult::try_from(value).ok())
        .map(|result| result.owner())
        .filter(|owner| is(owner, shard::ShardingOperation::name));
    let Some(sharding) = sharding else {
        return error(
            op.location(),
            "the sharding is not a shard.sharding op of the function, which is all that imports",
        );
    };
    let grid = sharding
        .attribute("grid")
        .ok()
        .and_then(|attr| FlatSymbolRefAttribute::try_from(attr).ok())
        .map(|attr| attr.value().to_owned())
        .unwrap_or_default();
    // Grids that do not import have had their error.
    let Some(grid_shape) = grids.get(&grid) else {
        return Err(Emitted);
    };
    if sharding.operand_count() > 0 {
        return error(
            sharding.location(),
            "a sharding with dynamic halo sizes or offsets is not imported",
        );
    }
    if dense_i64(sharding.attribute("static_halo_sizes").ok())
        .iter()
        .any(|&size| size != 0)
    {
        return error(
            sharding.location(),
            "a sharding with halos is not imported: fusion's shards do not overlap",
        );
    }
    let split_axes = hir_dialects::shard::split_axes(&sharding).expect("a shard.sharding");
    if split_axes.len() > shape.len() {
        return error(
            op.location(),
            format!(
                "the sharding splits {} axes of a tensor of rank {}",
                split_axes.len(),
                shape.len()
            ),
        );
    }
    let mut axes = vec![ParallelType::Serial; shape.len()];
    let mut split_extents = Vec::new();
    for (axis, grid_axes) in split_axes.iter().enumerate() {
        let parallel_type = match grid_axes[..] {
            [] => continue,
            [grid_axis] => grid_axis_type(grid_shape.len(), grid_axis as usize),
            _ => None,
        };
        let Some(parallel_type) = parallel_type else {
            return error(
                sharding.location(),
                format!(
                    "tensor axis {axis} is split along grid axes {grid_axes:?}: fusion splits an axis along one grid axis"
                ),
            );
        };
        let parts: i64 = grid_axes
            .iter()
            .map(|&grid_axis| grid_shape[grid_axis as usize])
            .product();
        if shape[axis] % parts != 0 {
            return error(
                op.location(),
                format!(
                    "tensor axis {axis} of extent {} does not split evenly over the {parts} devices of grid '@{grid}': fusion's shards have one size",
                    shape[axis]
                ),
            );
        }
        axes[axis] = parallel_type;
        split_extents.push((shape[axis], parts));
    }
    let offsets = dense_i64(sharding.attribute("static_sharded_dims_offsets").ok());
    if !offsets.is_empty() {
        let even: Vec<i64> = split_extents
            .iter()
            .flat_map(|&(extent, parts)| {
                (0..=parts).map(move |part| (part as i128 * extent as i128 / parts as i128) as i64)
            })
            .collect();
        if offsets != even {
            return error(
                op.location(),
                format!(
                    "sharded_dims_offsets {offsets:?} split the tensor unevenly: fusion's shards have one size (the even split is {even:?})"
                ),
            );
        }
    }
    Ok(Dist {
        mesh: grid,
        axes,
        stream_chunks: None,
    })
}
