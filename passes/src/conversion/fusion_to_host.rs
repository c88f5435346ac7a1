//! `convert-fusion-to-host`: bufferizes a `fusion` program into the host
//! program every rank runs.
//!
//! - **Buffers.** A tensor becomes a memref holding the local shard: a `didx`
//!   axis of extent E over a mesh of D devices is split into D contiguous
//!   slices, each device holding E/D (extent 1 when E = D). Function
//!   arguments keep their position; each result becomes a trailing argument,
//!   preallocated by the caller, and the function returns nothing. Every
//!   other value gets a `host.alloc`.
//! - **Compute** becomes the host op of the same name in destination-passing
//!   style, writing into the value's buffer.
//! - **Resharding** (a `fusion.set` whose input and output are placed
//!   differently; `stream` places nothing) becomes communication followed by
//!   `comm.wait`:
//!
//!   | from | to | lowering |
//!   |---|---|---|
//!   | placed alike | | `host.copy` |
//!   | `didx` on axis k | not sharded | `comm.allgather` along k |
//!   | not sharded | `didx` on axis k | local: each rank copies its slice of k (`host.select` when it has extent 1, a `memref.subview` part otherwise) |
//!   | `didx` on axis k | `didx` on axis j | allgather along k, then the local slice of j |
//!   | mesh A, not sharded | mesh B, not sharded | `comm.broadcast` from A's first device to B |
//!
//! - **Reduction across devices** (an op that reduces a `didx` axis of its
//!   operand: `sum`/`amax` of that axis alone, a contraction over a `didx` K)
//!   becomes the local part (a local reduction of the device's slice of the
//!   axis when it holds more than extent 1) followed by `comm.allreduce`, or
//!   `comm.reduce_scatter` along the result's `didx` axis when it has one.
//!
//! An op whose result has a `stream` axis is marked `host.stream_axis = k`
//! (the axis of the buffer it writes) for `host-stream-parallelize`. Meshes
//! become teams; the `fusion.mesh` ops are erased. Anything else, such as
//! a mesh change of sharded data or a value with no distribution, is a
//! located error. Expects `fusion-propagate-sharding`, `fusion-verify-sharding`
//! and `fusion-insert-resharding` to have run.

use crate::{
    HirPass,
    builders::{self, Builder},
    diagnostics::{Emitted, error},
    fusion::{
        axis_map,
        mesh::{self, Mesh},
    },
    ir,
    ops::Op,
    rewrite,
};
use hir_dialects::{
    OpKind,
    dist::{Dist, ParallelType},
    fusion,
};
use melior::{
    Context, RewriterBase,
    ir::{
        Attribute, BlockLike, Location, OperationRef, RegionLike, Type, Value, ValueLike,
        attribute::{ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute, TypeAttribute},
        operation::OperationLike,
        r#type::{FunctionType, RankedTensorType, ShapedTypeLike},
    },
};
use std::collections::HashMap;

/// The op the pass runs on: meshes are symbols of the module.
pub const ANCHOR: &str = crate::ops::MODULE;
pub const ARGUMENT: &str = "convert-fusion-to-host";

/// Creates the pass (anchored on `builtin.module`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(ConvertFusionToHost)
}

struct ConvertFusionToHost;

impl HirPass for ConvertFusionToHost {
    fn run(&mut self, module: OperationRef) -> bool {
        let context = module.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        let meshes = mesh::meshes(module);
        let rewriter = rewrite::rewriter(module);
        let rewriter = rewriter.as_rewriter_base();
        let mut ok = true;
        for function in ir::body(module) {
            if Op::FuncFunc.is(&function) {
                ok &= Lowering {
                    context,
                    rewriter,
                    meshes: &meshes,
                    buffers: HashMap::new(),
                    mappings: HashMap::new(),
                }
                .function(function)
                .is_ok();
            }
        }
        if !ok {
            return false;
        }
        // No op refers to meshes any more.
        for op in ir::body(module) {
            if Op::FusionMesh.is(&op) {
                rewriter.erase_op(op);
            }
        }
        true
    }
}

/// A key for a value in maps (values are compared by identity).
fn key(value: Value) -> usize {
    value.to_raw().ptr as usize
}

struct Lowering<'c, 'm> {
    context: &'c Context,
    rewriter: RewriterBase<'c, 'm>,
    meshes: &'m HashMap<String, Mesh>,
    /// Tensor value to the buffer holding it and what the tensor was (the
    /// arguments' types change in place).
    buffers: HashMap<usize, (Value<'c, 'm>, Tensor<'c>)>,
    /// Each fusion op's axis map, read before the arguments change type.
    mappings: HashMap<usize, Vec<Vec<Option<usize>>>>,
}

/// What a fusion tensor is: its global shape, element type and distribution,
/// and its mesh.
#[derive(Clone)]
struct Tensor<'c> {
    shape: Vec<i64>,
    element: Type<'c>,
    dist: Dist,
    mesh: Mesh,
}

impl<'c> Tensor<'c> {
    fn of(
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
    fn local_shape(&self) -> Vec<i64> {
        self.shape
            .iter()
            .zip(&self.dist.axes)
            .map(|(&extent, &axis)| extent / self.mesh.parts(axis).unwrap_or(1))
            .collect()
    }

    /// This tensor with `parallel_type`'s axis moved to `axis` (or dropped).
    fn with_device_axis(&self, parallel_type: ParallelType, axis: Option<usize>) -> Self {
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

    fn buffer_type(&self) -> Type<'c> {
        builders::buffer_type(&self.local_shape(), self.element)
    }

    fn device_axis(&self, parallel_type: ParallelType) -> Option<usize> {
        self.dist.find(parallel_type)
    }

    fn is_sharded(&self) -> bool {
        self.dist.axes.iter().any(|axis| axis.is_device())
    }

    fn stream(&self) -> Option<usize> {
        self.dist.find(ParallelType::Stream)
    }
}

impl<'c, 'm> Lowering<'c, 'm> {
    fn function(&mut self, function: OperationRef<'c, 'm>) -> Result<(), Emitted> {
        let location = function.location();
        let region = function.region(0).expect("a function has a body");
        let Some(entry) = region.first_block() else {
            return Ok(()); // a declaration
        };
        if entry.next_in_region().is_some() {
            return error(location, "functions with several blocks are not supported");
        }
        let ops = ir::body(function);
        let returned = *ops.last().expect("a block ends with a terminator");
        let has_tensors = (0..entry.argument_count())
            .any(|index| is_tensor(entry.argument(index).expect("in range").r#type()))
            || returned.operands().any(|value| is_tensor(value.r#type()));
        if !has_tensors && ops.iter().all(|op| !ir::name(op).starts_with("fusion.")) {
            return Ok(());
        }

        for op in &ops {
            if let Some(mapping) = axis_map::operand_axes(op) {
                self.mappings.insert(op.to_raw().ptr as usize, mapping);
            }
        }
        // Arguments hold their local shard in place; results become out-params.
        for index in 0..entry.argument_count() {
            let argument = entry.argument(index).expect("in range");
            let tensor = Tensor::of(argument.into(), location, self.meshes)?;
            argument.set_type(tensor.buffer_type());
            self.buffers
                .insert(key(argument.into()), (argument.into(), tensor));
        }
        let mut outputs = Vec::new();
        let mut destinations: HashMap<usize, Value<'c, 'm>> = HashMap::new();
        for value in returned.operands() {
            let tensor = match self.buffers.get(&key(value)) {
                Some((_, argument)) => argument.clone(),
                None => Tensor::of(value, returned.location(), self.meshes)?,
            };
            let output = entry.add_argument(tensor.buffer_type(), location);
            let produced_here =
                value.is_operation_result() && !destinations.contains_key(&key(value));
            if produced_here {
                destinations.insert(key(value), output);
            }
            outputs.push((value, output, tensor, produced_here));
        }

        for &op in &ops[..ops.len() - 1] {
            let name = ir::name(&op);
            if name.starts_with("fusion.") {
                self.op(op, &destinations)?;
            } else if op.operands().any(|value| is_tensor(value.r#type()))
                || op.results().any(|value| is_tensor(value.r#type()))
            {
                return error(
                    op.location(),
                    format!("'{name}' on tensors cannot be bufferized: only fusion ops can"),
                );
            }
        }

        // Results not written in place (arguments, values returned twice) are copied.
        let at_return = Builder::before(self.context, returned);
        for (value, output, tensor, produced_here) in outputs {
            if !produced_here {
                let copy = at_return.copy(self.buffers[&key(value)].0, output, returned.location());
                if let Some(axis) = tensor.stream() {
                    builders::set_stream_axis(self.context, &self.rewriter, copy, axis);
                }
            }
        }
        at_return.op(Op::FuncReturn.name(), returned.location(), &[], &[], &[]);
        // In reverse, so that an op's results are no longer used when it
        // goes: their users are fusion ops erased before it, or the old return.
        for op in ops.into_iter().rev() {
            if op == returned || ir::name(&op).starts_with("fusion.") {
                self.rewriter.erase_op(op);
            }
        }

        let inputs: Vec<Type> = (0..entry.argument_count())
            .map(|index| entry.argument(index).expect("in range").r#type())
            .collect();
        let function_type = FunctionType::new(self.context, &inputs, &[]);
        rewrite::set_attribute(
            &self.rewriter,
            function,
            "function_type",
            TypeAttribute::new(function_type.into()).into(),
        );
        // Result attributes described results that are now arguments.
        rewrite::remove_attribute(&self.rewriter, function, "res_attrs");
        if function.has_attribute("arg_attrs") {
            let mut attrs: Vec<Attribute> = Vec::new();
            let existing = ArrayAttribute::try_from(function.attribute("arg_attrs").expect("has"))
                .expect("arg_attrs is an array");
            for index in 0..existing.len() {
                attrs.push(existing.element(index).expect("in range"));
            }
            let empty = Attribute::parse(self.context, "{}").expect("an empty dictionary");
            attrs.resize(inputs.len(), empty);
            rewrite::set_attribute(
                &self.rewriter,
                function,
                "arg_attrs",
                ArrayAttribute::new(self.context, &attrs).into(),
            );
        }
        Ok(())
    }

    /// Lowers one fusion op in front of it.
    fn op(
        &mut self,
        op: OperationRef<'c, 'm>,
        destinations: &HashMap<usize, Value<'c, 'm>>,
    ) -> Result<(), Emitted> {
        let location = op.location();
        if Op::FusionMesh.is(&op) {
            return Ok(());
        }
        let builder = Builder::before(self.context, op);
        let result: Value = op
            .result(0)
            .expect("fusion compute ops have a result")
            .into();
        let output = Tensor::of(result, location, self.meshes)?;
        let mut inputs = Vec::new();
        let mut operands = Vec::new();
        for operand in op.operands() {
            let (buffer, tensor) = &self.buffers[&key(operand)];
            inputs.push(tensor.clone());
            operands.push(*buffer);
        }
        let destination = match destinations.get(&key(result)) {
            Some(&output) => output,
            None => builder.alloc(output.buffer_type(), location),
        };
        self.buffers
            .insert(key(result), (destination, output.clone()));

        let mapping = self.mappings.get(&(op.to_raw().ptr as usize));
        // The device type of an axis the op reduces: a reduction across the
        // devices of that mesh axis.
        let across_devices = mapping.and_then(|mapping| {
            axis_map::reduced_across(inputs.iter().map(|input| Some(&input.dist)), mapping)
        });
        if Op::FusionSet.is(&op) {
            return self.set(
                &builder,
                location,
                operands[0],
                &inputs[0],
                destination,
                &output,
            );
        }
        if Op::FusionFill.is(&op) || Op::FusionIota.is(&op) {
            self.generate(&builder, op, destination, &output);
            return Ok(());
        }
        if let Some(parallel_type) = across_devices {
            return self.across_devices(
                &builder,
                op,
                &operands,
                &inputs,
                destination,
                &output,
                parallel_type,
            );
        }
        let written = self.compute(&builder, op, &operands, destination)?;
        if let Some(axis) = output.stream() {
            builders::set_stream_axis(self.context, &self.rewriter, written, axis);
        }
        Ok(())
    }

    /// The host op computing `op` on local buffers into `output`.
    fn compute(
        &self,
        builder: &Builder<'c, 'm>,
        op: OperationRef<'c, 'm>,
        operands: &[Value<'c, 'm>],
        output: Value<'c, 'm>,
    ) -> Result<OperationRef<'c, 'm>, Emitted> {
        let name = ir::name(&op);
        let host_name = name.replacen("fusion.", "host.", 1);
        let mut buffers = operands.to_vec();
        buffers.push(output);
        let attributes: Vec<(&str, Attribute)> = match OpKind::of(&op) {
            OpKind::Elementwise | OpKind::Contraction => Vec::new(),
            OpKind::Reduction | OpKind::Broadcast => {
                vec![("axes", op.attribute("axes").expect("verified"))]
            }
            // A transpose's permutation; a reshape has no attribute (fill and
            // iota, the other ops of no kind, are generated elsewhere).
            OpKind::None => op
                .attribute("permutation")
                .map(|permutation| vec![("permutation", permutation)])
                .unwrap_or_default(),
        };
        Ok(builder.op(&host_name, op.location(), &buffers, &attributes, &[]))
    }

    /// A `fill` or `iota` into `destination`, the rank's part of `output`:
    /// initialisation, computed whole on the caller's stream before any
    /// stream loop (a `stream` axis of the result places nothing). An iota
    /// along a split axis starts at the global index of the rank's slice.
    fn generate(
        &self,
        builder: &Builder<'c, 'm>,
        op: OperationRef<'c, 'm>,
        destination: Value<'c, 'm>,
        output: &Tensor<'c>,
    ) {
        let location = op.location();
        if Op::FusionFill.is(&op) {
            let value = op.attribute("value").expect("verified");
            builder.op(
                Op::HostFill.name(),
                location,
                &[destination],
                &[("value", value)],
                &[],
            );
            return;
        }
        let axis_attribute = op.attribute("axis").expect("verified");
        let axis = IntegerAttribute::try_from(axis_attribute)
            .expect("verified")
            .value() as usize;
        let parallel_type = output.dist.axes[axis];
        let offset = if parallel_type.is_device() {
            let (team, team_size) = output.mesh.teams(parallel_type);
            let position = self.team_position(builder, &team, team_size, location);
            let extent = builder.index(output.local_shape()[axis], location);
            builders::result(builder.op(
                Op::ArithMuli.name(),
                location,
                &[position, extent],
                &[],
                &[Type::index(self.context)],
            ))
        } else {
            builder.index(0, location)
        };
        builder.op(
            Op::HostIota.name(),
            location,
            &[offset, destination],
            &[("axis", axis_attribute)],
            &[],
        );
    }

    /// A resharding `set` from `input` (held in `source`) to `output`.
    fn set(
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
            self.wait(builder, broadcast, stream, location);
            return Ok(());
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
                builders::set_stream_axis(self.context, &self.rewriter, copy, axis);
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
                    self.wait(builder, gather, stream, location);
                }
                _ => self.local_slice(
                    builder,
                    current,
                    target,
                    &next,
                    parallel_type,
                    stream,
                    location,
                ),
            }
            (current, held) = (target, next);
        }
        Ok(())
    }

    /// The team attributes of a collective over `parallel_type` on `mesh`:
    /// its one team, or its teams and their size.
    fn team_attributes(
        &self,
        mesh: &Mesh,
        parallel_type: ParallelType,
    ) -> Vec<(&'static str, Attribute<'c>)> {
        let (ranks, team_size) = mesh.teams(parallel_type);
        let mut attributes = vec![("team", builders::team(self.context, &ranks))];
        if let Some(size) = team_size {
            attributes.push(("team_size", builders::i64_attribute(self.context, size)));
        }
        attributes
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
        stream: Option<usize>,
        location: Location<'c>,
    ) {
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
                builders::set_stream_axis(self.context, &self.rewriter, copy, stream);
            }
            return;
        }
        let zero = builder.index(0, location);
        let slice = builder.select(source, axis, position, location);
        let shard = builder.select(destination, axis, zero, location);
        let copy = builder.copy(slice, shard, location);
        if let Some(stream) = stream {
            // The slices have lost `axis`.
            builders::set_stream_axis(
                self.context,
                &self.rewriter,
                copy,
                stream - usize::from(stream > axis),
            );
        }
    }

    /// This rank's position in its team, as an index: in `team`, or in the
    /// one of the teams of `team_size` ranks listed in `team` that holds it.
    fn team_position(
        &self,
        builder: &Builder<'c, 'm>,
        team: &[i64],
        team_size: Option<i64>,
        location: Location<'c>,
    ) -> Value<'c, 'm> {
        let index = Type::index(self.context);
        let rank = builder.rank(location);
        let size = team_size.unwrap_or(team.len() as i64);
        if team
            .iter()
            .enumerate()
            .all(|(position, &rank)| position as i64 == rank)
            && size == team.len() as i64
        {
            return rank;
        }
        // The sum over listed ranks i of (rank == team[i] ? i mod size : 0).
        let i1 = melior::ir::r#type::IntegerType::new(self.context, 1).into();
        let mut position = builder.index(0, location);
        for (index_in_team, &member) in team.iter().enumerate() {
            let member = builder.index(member, location);
            let equal = builders::result(builder.op(
                Op::ArithCmpi.name(),
                location,
                &[rank, member],
                &[("predicate", builders::i64_attribute(self.context, 0))],
                &[i1],
            ));
            let candidate = builder.index(index_in_team as i64 % size, location);
            position = builders::result(builder.op(
                Op::ArithSelect.name(),
                location,
                &[equal, candidate, position],
                &[],
                &[index],
            ));
        }
        position
    }

    /// A reduction of a `didx` (`didy`) axis: the local part, then the
    /// collective within the teams of that mesh axis.
    #[allow(clippy::too_many_arguments)]
    fn across_devices(
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
                    let local = self.compute(builder, op, operands, partial)?;
                    if let Some(axis) = output.stream() {
                        builders::set_stream_axis(self.context, &self.rewriter, local, axis);
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
                let local = self.compute(builder, op, operands, partial)?;
                if let Some(axis) = output.stream() {
                    builders::set_stream_axis(self.context, &self.rewriter, local, axis);
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
        self.wait(builder, collective, output.stream(), location);
        Ok(())
    }

    /// `comm.wait` on the request of `communication`, which is marked with
    /// the stream axis.
    fn wait(
        &self,
        builder: &Builder<'c, 'm>,
        communication: OperationRef<'c, 'm>,
        stream: Option<usize>,
        location: Location<'c>,
    ) {
        if let Some(axis) = stream {
            builders::set_stream_axis(self.context, &self.rewriter, communication, axis);
        }
        builder.wait(builders::result(communication), location);
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

fn is_tensor(r#type: Type) -> bool {
    RankedTensorType::try_from(r#type).is_ok()
}
