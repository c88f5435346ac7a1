//! A resharding `fusion.set`: a copy where input and output are placed
//! alike, a broadcast between meshes, otherwise an allgather of each mesh
//! axis the data leaves, then the local slice of each it moves onto.

use super::{Lowering, Tensor, tensor::Stream};
use crate::{
    builders::{self, Builder},
    diagnostics::{Emitted, error},
    ops::Op,
};
use hir_dialects::dist::ParallelType;
use melior::ir::{Location, OperationRef, Value};

impl<'c, 'm> Lowering<'c, 'm> {
    /// A resharding `set` from `input` (held in `source`) to `output`.
    pub(super) fn set(
        &self,
        builder: &Builder<'c, 'm>,
        location: Location<'c>,
        source: Value<'c, 'm>,
        input: &Tensor<'c>,
        destination: Value<'c, 'm>,
        output: &Tensor<'c>,
    ) -> Result<(), Emitted> {
        let stream = output.stream();
        if input.dist.mesh != output.dist.mesh {
            if input.is_sharded() || output.is_sharded() {
                return error(
                    location,
                    format!(
                        "resharding from @{} to @{} moves sharded data between meshes, which is not supported",
                        input.dist.mesh, output.dist.mesh
                    ),
                );
            }
            let from = &input.mesh.devices;
            let to = &output.mesh.devices;
            let root = from[0];
            let mut team = vec![root];
            team.extend(to.iter().copied().filter(|&rank| rank != root));
            let broadcast = builder.op(
                Op::CommBroadcast.name(),
                location,
                &[source, destination],
                &[
                    ("team", builders::team(self.context, &team)),
                    ("root", builders::i64_attribute(self.context, root)),
                ],
                &[builders::request_type(self.context)],
            );
            return self.wait(builder, broadcast, stream, location);
        }

        // Each mesh axis on its own: gather what moves off it, then slice
        // what moves onto it; the last step writes `destination`.
        let mut steps: Vec<(ParallelType, Tensor<'c>)> = Vec::new();
        let mut state = input.clone();
        for parallel_type in ParallelType::DEVICE {
            if input.device_axis(parallel_type).is_some()
                && input.device_axis(parallel_type) != output.device_axis(parallel_type)
            {
                state = state.with_device_axis(parallel_type, None);
                steps.push((parallel_type, state.clone()));
            }
        }
        for parallel_type in ParallelType::DEVICE {
            if let Some(axis) = output.device_axis(parallel_type)
                && state.device_axis(parallel_type) != Some(axis)
            {
                state = state.with_device_axis(parallel_type, Some(axis));
                steps.push((parallel_type, state.clone()));
            }
        }
        if steps.is_empty() {
            let copy = builder.copy(source, destination, location);
            if let Some(axis) = stream {
                self.stream_loop(&[copy], axis)?;
            }
            return Ok(());
        }
        let (mut current, mut held) = (source, input.clone());
        let last = steps.len() - 1;
        for (index, (parallel_type, next)) in steps.into_iter().enumerate() {
            let target = if index == last {
                destination
            } else {
                builder.alloc(
                    builders::buffer_type(&next.local_shape(), next.element),
                    location,
                )
            };
            match held.device_axis(parallel_type) {
                Some(axis) if next.device_axis(parallel_type).is_none() => {
                    let gather = self.allgather(
                        builder,
                        current,
                        target,
                        axis,
                        &held,
                        parallel_type,
                        location,
                    );
                    self.wait(builder, gather, stream, location)?;
                }
                _ => self.local_slice(
                    builder,
                    current,
                    target,
                    &next,
                    parallel_type,
                    stream,
                    location,
                )?,
            }
            (current, held) = (target, next);
        }
        Ok(())
    }

    /// Gathers `input`'s `parallel_type` axis `axis` (held in `source`).
    #[allow(clippy::too_many_arguments)]
    fn allgather(
        &self,
        builder: &Builder<'c, 'm>,
        source: Value<'c, 'm>,
        destination: Value<'c, 'm>,
        axis: usize,
        input: &Tensor<'c>,
        parallel_type: ParallelType,
        location: Location<'c>,
    ) -> OperationRef<'c, 'm> {
        let mut attributes = self.team_attributes(&input.mesh, parallel_type);
        attributes.push(("axis", builders::i64_attribute(self.context, axis as i64)));
        builder.op(
            Op::CommAllgather.name(),
            location,
            &[source, destination],
            &attributes,
            &[builders::request_type(self.context)],
        )
    }

    /// Each rank copies its own slice along the `parallel_type` axis of
    /// `output` from `source`, whole along it, into its shard `destination`.
    #[allow(clippy::too_many_arguments)]
    fn local_slice(
        &self,
        builder: &Builder<'c, 'm>,
        source: Value<'c, 'm>,
        destination: Value<'c, 'm>,
        output: &Tensor<'c>,
        parallel_type: ParallelType,
        stream: Option<Stream>,
        location: Location<'c>,
    ) -> Result<(), Emitted> {
        let axis = output
            .device_axis(parallel_type)
            .expect("the output is sharded");
        let (team, team_size) = output.mesh.teams(parallel_type);
        let position = self.team_position(builder, &team, team_size, location);
        if output.local_shape()[axis] > 1 {
            let parts = output.mesh.parts(parallel_type).expect("a device axis");
            let part = builder.part(source, axis, position, parts, location);
            let copy = builder.copy(part, destination, location);
            if let Some(stream) = stream {
                self.stream_loop(&[copy], stream)?;
            }
            return Ok(());
        }
        let zero = builder.index(0, location);
        let slice = builder.select(source, axis, position, location);
        let shard = builder.select(destination, axis, zero, location);
        let copy = builder.copy(slice, shard, location);
        match stream {
            // The slices have lost `axis`.
            Some(stream) => self.stream_loop(
                &[copy],
                Stream {
                    axis: stream.axis - usize::from(stream.axis > axis),
                    ..stream
                },
            ),
            None => Ok(()),
        }
    }
}
