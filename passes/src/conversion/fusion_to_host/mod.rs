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
//! An op whose result has a `stream` axis k goes in its own `host.stream_for`
//! over axis k of the buffer it writes, on iteration i's slices (`stream`);
//! `host-stream-parallelize` then fuses adjacent loops. Meshes
//! become teams; the `fusion.mesh` ops are erased. Anything else, such as
//! a mesh change of sharded data or a value with no distribution, is a
//! located error. Expects `fusion-propagate-sharding`, `fusion-verify-sharding`
//! and `fusion-insert-resharding` to have run.
//!
//! This file holds the pass and the lowering of functions and compute;
//! `tensor` what a fusion tensor is and its local shard, `reshard` the
//! lowering of `fusion.set`, `reduce` reductions across devices, `teams` a
//! collective's teams and a rank's position in them, `stream` the stream
//! loops.

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
use hir_dialects::OpKind;
use melior::{
    Context, RewriterBase,
    ir::{
        Attribute, BlockLike, BlockRef, Location, OperationRef, RegionLike, Type, Value, ValueLike,
        attribute::{ArrayAttribute, IntegerAttribute, TypeAttribute},
        operation::OperationLike,
        r#type::{FunctionType, RankedTensorType},
    },
};
use std::{
    cell::{Cell, RefCell},
    collections::HashMap,
};
use tensor::Tensor;

mod reduce;
mod reshard;
mod stream;
mod teams;
mod tensor;

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
                    entry: None,
                    main: Cell::new(None),
                    gathered: RefCell::new(Vec::new()),
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
    /// The function's body.
    entry: Option<BlockRef<'c, 'm>>,
    /// The caller's stream of its stream loops, once one is made.
    main: Cell<Option<Value<'c, 'm>>>,
    /// The wait, output and stream axis of each allgather along the stream
    /// axis (see [`Self::view_loops`]).
    gathered: RefCell<Vec<(OperationRef<'c, 'm>, Value<'c, 'm>, tensor::Stream)>>,
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
        self.entry = Some(entry);
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
                    self.stream_loop(&[copy], axis)?;
                }
            }
        }
        self.view_loops();
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
        match output.stream() {
            Some(axis) => self.stream_loop(&[written], axis),
            None => Ok(()),
        }
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

    /// `comm.wait` on the request of `communication`, which is marked with
    /// the stream axis.
    fn wait(
        &self,
        builder: &Builder<'c, 'm>,
        communication: OperationRef<'c, 'm>,
        stream: Option<tensor::Stream>,
        location: Location<'c>,
    ) -> Result<(), Emitted> {
        let wait = builder.wait(builders::result(communication), location);
        match stream {
            Some(stream) => self.stream_communication(communication, wait, stream),
            None => Ok(()),
        }
    }
}

fn is_tensor(r#type: Type) -> bool {
    RankedTensorType::try_from(r#type).is_ok()
}
