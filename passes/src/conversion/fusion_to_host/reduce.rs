//! A reduction across devices (a `sum`/`amax` of a `didx` or `didy` axis, a
//! contraction over a split K): the local part, then `comm.allreduce`, or
//! `comm.reduce_scatter` along the result's axis of that mesh axis.

use super::{Lowering, Tensor};
use crate::{
    builders::{self, Builder},
    diagnostics::{Emitted, error},
    ir,
    ops::Op,
};
use hir_dialects::{OpKind, dist::ParallelType, fusion};
use melior::ir::{
    OperationRef, Value, attribute::DenseI64ArrayAttribute, operation::OperationLike,
};

impl<'c, 'm> Lowering<'c, 'm> {
    /// A reduction of a `didx` (`didy`) axis: the local part, then the
    /// collective within the teams of that mesh axis.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn across_devices(
        &self,
        builder: &Builder<'c, 'm>,
        op: OperationRef<'c, 'm>,
        operands: &[Value<'c, 'm>],
        inputs: &[Tensor<'c>],
        destination: Value<'c, 'm>,
        output: &Tensor<'c>,
        parallel_type: ParallelType,
    ) -> Result<(), Emitted> {
        let location = op.location();
        let name = ir::name(&op);
        let (partial, kind) = match OpKind::of(&op) {
            OpKind::Reduction => {
                let axes =
                    DenseI64ArrayAttribute::try_from(op.attribute("axes").expect("verified"))
                        .expect("verified");
                let sharded = inputs[0]
                    .device_axis(parallel_type)
                    .expect("a reduction across devices");
                if axes.len() != 1 {
                    return error(
                        location,
                        format!(
                            "'{name}' reduces {} axis {sharded} with other axes: run fusion-insert-resharding first",
                            parallel_type.keyword()
                        ),
                    );
                }
                let kind = if name == fusion::SumOperation::name() {
                    0
                } else {
                    2
                };
                if inputs[0].local_shape()[sharded] == 1 {
                    // Reducing the extent-1 local axis is the identity: view it away.
                    let zero = builder.index(0, location);
                    (builder.select(operands[0], sharded, zero, location), kind)
                } else {
                    // The device's slice of the axis first, at the result's
                    // global shape where the collective scatters.
                    let partial = builder.alloc(
                        builders::buffer_type(
                            &partial_shape(output, parallel_type),
                            output.element,
                        ),
                        location,
                    );
                    let local = self.compute(builder, op, operands, partial);
                    if let Some(axis) = output.stream() {
                        self.stream_loop(&[local], axis)?;
                    }
                    (partial, kind)
                }
            }
            OpKind::Contraction => {
                // Each rank's product over its part of K, at the result's global
                // shape where the collective scatters.
                let partial = builder.alloc(
                    builders::buffer_type(&partial_shape(output, parallel_type), output.element),
                    location,
                );
                let local = self.compute(builder, op, operands, partial);
                if let Some(axis) = output.stream() {
                    self.stream_loop(&[local], axis)?;
                }
                (partial, 0)
            }
            _ => unreachable!("only reductions and contractions reduce axes"),
        };
        let mut attributes = self.team_attributes(&output.mesh, parallel_type);
        attributes.push(("kind", builders::i32_attribute(self.context, kind)));
        let request = builders::request_type(self.context);
        let collective = match output.device_axis(parallel_type) {
            None => builder.op(
                Op::CommAllreduce.name(),
                location,
                &[partial, destination],
                &attributes,
                &[request],
            ),
            Some(axis) => {
                attributes.push(("axis", builders::i64_attribute(self.context, axis as i64)));
                builder.op(
                    Op::CommReduceScatter.name(),
                    location,
                    &[partial, destination],
                    &attributes,
                    &[request],
                )
            }
        };
        self.wait(builder, collective, output.stream(), location)
    }
}

/// The shape of a rank's partial result of a reduction across the devices of
/// `parallel_type`'s mesh axis: `output`'s local shape, whole along its axis
/// of that type, which the collective scatters.
fn partial_shape(output: &Tensor, parallel_type: ParallelType) -> Vec<i64> {
    let mut shape = output.local_shape();
    if let Some(axis) = output.device_axis(parallel_type) {
        shape[axis] = output.shape[axis];
    }
    shape
}
