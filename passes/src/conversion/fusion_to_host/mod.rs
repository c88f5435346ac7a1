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
//! a contraction whose contracted axis is `stream` in a loop over that axis
//! whose iterations add their products into the result (`accumulate`);
//! `host-stream-parallelize` then fuses adjacent loops. Meshes
//! become teams; the `fusion.mesh` ops are erased. Anything else, such as
//! a mesh change of sharded data or a value with no distribution, is a
//! located error. Expects `fusion-propagate-sharding`, `fusion-verify-sharding`
//! and `fusion-insert-resharding` to have run.
//!
//! Each function is lowered in three steps, the IR changing only through
//! the rewriter: the signature step (`signature`: arguments become their
//! local shards in place, results trailing out-arguments), then a set of
//! typed patterns, one per op family (`rewrites`: compute, reductions,
//! resharding, fill/iota, `func.return`), applied in program order by one
//! walk of the body, then the check that no fusion op is left, a located
//! error (`'fusion.x' op has no lowering to host ops`). Until its op is
//! lowered, a tensor stands as an `unrealized_conversion_cast` of its
//! buffer, so that the patterns read distributions and axis maps from the
//! IR and share no typed state; the casts are erased at the end.
//!
//! This file holds the pass, the function's three steps and the host op of
//! a compute op; `signature` the signature step, `rewrites` the patterns,
//! `tensor` what a fusion tensor is and its local shard, `reshard` the
//! lowering of `fusion.set`, `reduce` reductions across devices, `teams` a
//! collective's teams and a rank's position in them, `stream` the stream
//! loops.

use crate::{
    HirPass,
    builders::{self, Builder},
    diagnostics::{Emitted, error},
    fusion::mesh::{self, Mesh},
    ir,
    ops::Op,
    patterns, rewrite,
};
use hir_dialects::OpKind;
use melior::{
    Context, RewriterBase,
    ir::{
        Attribute, BlockRef, Location, OperationRef, Type, Value, ValueLike,
        attribute::{FloatAttribute, IntegerAttribute},
        operation::OperationLike,
        r#type::RankedTensorType,
    },
};
use std::{
    cell::{Cell, RefCell},
    collections::HashMap,
    rc::Rc,
};
use tensor::Tensor;

mod accumulate;
mod reduce;
mod reshard;
mod rewrites;
mod signature;
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
        let meshes = Rc::new(mesh::meshes(module));
        let rewriter = rewrite::rewriter(module);
        let rewriter = rewriter.as_rewriter_base();
        let mut ok = true;
        for function in ir::body(module) {
            if Op::FuncFunc.is(&function) {
                ok &= lower(context, &rewriter, function, &meshes).is_ok();
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

/// The meshes of the module by name, shared by the patterns.
type Meshes = Rc<HashMap<String, Mesh>>;

/// The stream axis of an op's result, as its stream loop takes it.
type StreamAxis = tensor::Stream;

/// Lowers `function`: its signature, then its body by the patterns, then the
/// check that no fusion op is left.
fn lower<'c>(
    context: &'c Context,
    rewriter: &RewriterBase<'c, '_>,
    function: OperationRef<'c, '_>,
    meshes: &Meshes,
) -> Result<(), Emitted> {
    if !signature::bufferize(context, rewriter, function, meshes)? {
        return Ok(());
    }
    let state = rewrites::Shared::default();
    patterns::walk(function, |context, set| {
        rewrites::add(set, context, &state, meshes);
    });
    if state.borrow().failed {
        return Err(Emitted);
    }
    let leftover = ir::nested(function)
        .into_iter()
        .find(|op| Op::FusionSet.same_dialect(op));
    if let Some(op) = leftover {
        return error(
            op.location(),
            format!("'{}' op has no lowering to host ops", ir::name(&op)),
        );
    }
    // The casts that stood for tensors (the only ops left with a tensor
    // result) are used no more; users first.
    for op in ir::body(function).into_iter().rev() {
        let stands_for_tensor = ir::result(&op, 0).is_some_and(|result| is_tensor(result.r#type()));
        if Op::UnrealizedConversionCast.is(&op) && stands_for_tensor {
            rewriter.erase_op(op);
        }
    }
    Ok(())
}

struct Lowering<'c, 'm> {
    context: &'c Context,
    rewriter: RewriterBase<'c, 'm>,
    meshes: Meshes,
    /// The function's body.
    entry: Option<BlockRef<'c, 'm>>,
    /// The caller's stream of its stream loops, once one is made.
    main: Cell<Option<Value<'c, 'm>>>,
    /// The wait, output and stream axis of each allgather along the stream
    /// axis (see [`Self::view_loops`]).
    gathered: RefCell<Vec<(OperationRef<'c, 'm>, Value<'c, 'm>, StreamAxis)>>,
}

impl<'c, 'm> Lowering<'c, 'm> {
    /// The host op computing `op` on local buffers into `output`.
    fn compute(
        &self,
        builder: &Builder<'c, 'm>,
        op: OperationRef<'c, 'm>,
        operands: &[Value<'c, 'm>],
        output: Value<'c, 'm>,
    ) -> OperationRef<'c, 'm> {
        // The host op of the same mnemonic.
        let name = ir::name(&op);
        let mnemonic = name.split_once('.').map_or("", |(_, mnemonic)| mnemonic);
        let host_name = Op::HostCopy.sibling(mnemonic);
        let mut buffers = operands.to_vec();
        buffers.push(output);
        let attributes: Vec<(&str, Attribute)> = match OpKind::of(&op) {
            OpKind::Elementwise | OpKind::Contraction => Vec::new(),
            OpKind::Reduction | OpKind::Broadcast => {
                vec![("axes", op.attribute("axes").expect("verified"))]
            }
            OpKind::None if Op::FusionAttention.is(&op) => self.attention_attributes(op, operands),
            // A transpose's permutation; a reshape has no attribute (fill and
            // iota, the other ops of no kind, are generated elsewhere).
            OpKind::None => op
                .attribute("permutation")
                .map(|permutation| vec![("permutation", permutation)])
                .unwrap_or_default(),
        };
        builder.op(&host_name, op.location(), &buffers, &attributes, &[])
    }

    /// `host.attention`'s attributes for `op`, a `fusion.attention` of
    /// local buffers `operands`: its `scale`, or the default `1 / sqrt(D)`
    /// of q's last axis (serial, so whole on every device), and `causal`.
    fn attention_attributes(
        &self,
        op: OperationRef<'c, 'm>,
        operands: &[Value<'c, 'm>],
    ) -> Vec<(&'static str, Attribute<'c>)> {
        let scale = op.attribute("scale").unwrap_or_else(|_| {
            let d = *builders::buffer_shape(operands[0].r#type())
                .last()
                .expect("verified: q has rank 2 or more");
            let scale = 1.0 / (d as f64).sqrt();
            FloatAttribute::new(self.context, Type::float64(self.context), scale).into()
        });
        let mut attributes = vec![("scale", scale)];
        if op.has_attribute("causal") {
            attributes.push(("causal", Attribute::unit(self.context)));
        }
        attributes
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
        stream: Option<StreamAxis>,
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
