//! What a fusion tensor is to the lowering: its global shape, element type,
//! distribution and mesh, and the local shard a rank holds of it.

use crate::{
    builders,
    diagnostics::{Emitted, error},
    fusion::{axis_map, mesh::Mesh},
};
use hir_dialects::dist::{Dist, ParallelType};
use melior::ir::{
    Location, Type, Value, ValueLike,
    r#type::{RankedTensorType, ShapedTypeLike},
};
use std::collections::HashMap;

/// What a fusion tensor is: its global shape, element type and distribution,
/// and its mesh.
#[derive(Clone)]
pub(super) struct Tensor<'c> {
    pub(super) shape: Vec<i64>,
    pub(super) element: Type<'c>,
    pub(super) dist: Dist,
    pub(super) mesh: Mesh,
}

impl<'c> Tensor<'c> {
    pub(super) fn of(
        value: Value<'c, '_>,
        location: Location<'c>,
        meshes: &HashMap<String, Mesh>,
    ) -> Result<Self, Emitted> {
        let r#type = value.r#type();
        let Ok(tensor) = RankedTensorType::try_from(r#type) else {
            return error(location, format!("expected a tensor, got {type}"));
        };
        let Some(shape) = axis_map::shape(r#type) else {
            return error(location, format!("tensor {type} must have a static shape"));
        };
        let Some(dist) = Dist::of_type(r#type) else {
            return error(
                location,
                format!("tensor {type} has no #fusion.dist: run fusion-propagate-sharding first"),
            );
        };
        let Some(mesh) = meshes.get(&dist.mesh) else {
            return error(location, format!("mesh '@{}' is not defined", dist.mesh));
        };
        Ok(Self {
            shape,
            element: tensor.element(),
            mesh: mesh.clone(),
            dist,
        })
    }

    /// The shape of the local shard: one of the mesh's equal slices of each
    /// `didx`/`didy` axis.
    pub(super) fn local_shape(&self) -> Vec<i64> {
        self.shape
            .iter()
            .zip(&self.dist.axes)
            .map(|(&extent, &axis)| extent / self.mesh.parts(axis).unwrap_or(1))
            .collect()
    }

    /// This tensor with `parallel_type`'s axis moved to `axis` (or dropped).
    pub(super) fn with_device_axis(
        &self,
        parallel_type: ParallelType,
        axis: Option<usize>,
    ) -> Self {
        let mut moved = self.clone();
        for (index, current) in moved.dist.axes.iter_mut().enumerate() {
            if *current == parallel_type {
                *current = ParallelType::Serial;
            }
            if Some(index) == axis {
                *current = parallel_type;
            }
        }
        moved
    }

    pub(super) fn buffer_type(&self) -> Type<'c> {
        builders::buffer_type(&self.local_shape(), self.element)
    }

    pub(super) fn device_axis(&self, parallel_type: ParallelType) -> Option<usize> {
        self.dist.find(parallel_type)
    }

    pub(super) fn is_sharded(&self) -> bool {
        self.dist.axes.iter().any(|axis| axis.is_device())
    }

    pub(super) fn stream(&self) -> Option<Stream> {
        let (axis, iterations) = self.dist.stream(&self.shape)?;
        Some(Stream {
            axis,
            iterations,
            chunked: self.dist.stream_chunks.is_some(),
        })
    }
}

/// The stream axis of an op's output and how many iterations its loop runs:
/// one per index (`stream`; each iteration takes a rank-reducing
/// `host.select`), or one per chunk (`stream<k>`; a `memref.subview` part
/// of the same rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stream {
    pub axis: usize,
    pub iterations: i64,
    /// Whether the axis is `stream<k>`: chunks, even where k is the
    /// axis's extent (chunks of one index, which keep the axis).
    pub chunked: bool,
}
