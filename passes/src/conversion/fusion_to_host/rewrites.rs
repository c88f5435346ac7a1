//! The patterns that lower a function's body, one per op family, each rooted
//! at the ops of its family (named by their generated wrappers, or for the
//! families the runtime's ABI enumerates, by the ABI's names) and applied in
//! program order by one walk of the body ([`crate::patterns::walk`]):
//!
//! - **compute** (the elementwise ops, transpose, reshape, broadcast,
//!   attention): the host op of the same name into the result's buffer
//!   (attention's scale resolved: its default is `1 / sqrt(D)`), in a
//!   stream loop where the result has a `stream` axis;
//! - **slices** (`fusion.slice`): a `host.copy` of the box, a
//!   `memref.subview` of the rank's part, likewise;
//! - **reductions** (sum, amax, matmul, linear): the same, or where the op
//!   reduces a `didx`/`didy` axis, the local part and the collective
//!   ([`Lowering::across_devices`]); a contraction over a stream axis, a
//!   loop of accumulating GEMMs ([`Lowering::accumulate`]);
//! - **resharding** (`fusion.set`, [`Lowering::set`]);
//! - **generators** (`fusion.fill`, `fusion.iota`, [`Lowering::generate`]);
//! - **`func.return`**: the copies of results not written in place, the
//!   loops over gathered slices ([`Lowering::view_loops`]), and a return of
//!   nothing.
//!
//! A fusion op's operands are tensors still: each is an
//! `unrealized_conversion_cast` of its buffer (from the signature step, or
//! from the op that made it, which the pattern replaced by such a cast of
//! the buffer it wrote). So a pattern reads the tensors' distributions and
//! the op's axis map from the IR, and finds each operand's buffer as its
//! cast's operand. A result that the function returns is written into its
//! out-argument, any other into a new `host.alloc`.

use super::{Lowering, Meshes, StreamAxis, Tensor};
use crate::{
    builders::{self, Builder},
    diagnostics::{Emitted, error},
    fusion::{axis_map, stream_contraction},
    ir,
    ops::Op,
    patterns,
};
use hir_abi::{Binary, Reduction, Unary};
use hir_dialects::fusion;
use melior::{
    Context, RewritePatternSet, RewriterBase,
    ir::{
        BlockLike, OperationRef, Value, ValueLike,
        operation::{OperationLike, OperationResult},
    },
};
use mlir_sys::{MlirOperation, MlirValue};
use std::{
    cell::{Cell, RefCell},
    rc::Rc,
};

/// What the patterns of one function share. A pattern's closure outlives
/// any borrow of the module, so it holds no typed IR: whether a pattern
/// failed (and emitted its error: the others change nothing after it), and
/// the allgathers along the stream axis that `func.return`'s pattern gives
/// loops ([`Lowering::gathered`]), and the caller's stream once a stream
/// loop took it ([`Lowering::main`]), as raw handles of ops and values that
/// stay in the function through the walk. (Kept here, not looked up: a
/// scan of the body for it at every op made the pass quadratic.)
#[derive(Default)]
pub(super) struct State {
    pub(super) failed: bool,
    gathered: Vec<(MlirOperation, MlirValue, StreamAxis)>,
    main: Option<MlirValue>,
}

/// The state one walk of a function's patterns shares.
pub(super) type Shared = Rc<RefCell<State>>;

/// How a pattern lowers its op.
type Lower = for<'c, 'm> fn(&Lowering<'c, 'm>, OperationRef<'c, 'm>) -> Result<(), Emitted>;

/// Adds the patterns to `set`.
pub(super) fn add(set: &RewritePatternSet, context: &Context, state: &Shared, meshes: &Meshes) {
    let add = |root: &str, lower: Lower| {
        let (state, meshes) = (state.clone(), meshes.clone());
        patterns::add(set, context, root, &[], move |op, rewriter| {
            apply(&state, &meshes, op, rewriter, lower)
        });
    };
    let named = [
        fusion::CastOperation::name(),
        fusion::WhereOperation::name(),
        fusion::TransposeOperation::name(),
        fusion::ReshapeOperation::name(),
        fusion::BroadcastOperation::name(),
        fusion::AttentionOperation::name(),
    ]
    .map(str::to_owned);
    let unary = Unary::ALL.map(|unary| Op::FusionSet.sibling(unary.name()));
    let binary = Binary::ALL.map(|binary| Op::FusionSet.sibling(binary.name()));
    for root in named.iter().chain(&unary).chain(&binary) {
        add(root, compute);
    }
    for reduction in Reduction::ALL {
        add(
            &Op::FusionSet.sibling(reduction.name()),
            reduction_or_contraction,
        );
    }
    add(fusion::MatmulOperation::name(), reduction_or_contraction);
    add(fusion::LinearOperation::name(), reduction_or_contraction);
    add(Op::FusionSlice.name(), slice);
    add(Op::FusionSet.name(), resharding);
    add(Op::FusionFill.name(), generator);
    add(Op::FusionIota.name(), generator);
    add(Op::FuncReturn.name(), finish);
}

/// Runs `lower` on `op` with the function's shared state, unless a pattern
/// failed before.
fn apply<'c>(
    state: &Shared,
    meshes: &Meshes,
    op: OperationRef<'c, '_>,
    rewriter: &RewriterBase<'c, '_>,
    lower: Lower,
) -> bool {
    // A fusion op nested in another op's region is not lowered: the check
    // after the walk finds it.
    let in_body = op
        .parent_operation()
        .is_some_and(|parent| Op::FuncFunc.is(&parent));
    if state.borrow().failed || !in_body {
        return false;
    }
    let entry = op.block().expect("an op of the body is in its block");
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite, the only place the reference is used.
    let context = unsafe { context.to_ref() };
    // SAFETY: the handles were taken from ops and values of this function,
    // which the pass does not erase before the walk ends.
    let gathered = state
        .borrow()
        .gathered
        .iter()
        .map(|&(wait, output, stream)| unsafe {
            (
                OperationRef::from_raw(wait),
                Value::from_raw(output),
                stream,
            )
        })
        .collect();
    // SAFETY: as `gathered`'s.
    let main = state
        .borrow()
        .main
        .map(|main| unsafe { Value::from_raw(main) });
    let lowering = Lowering {
        context,
        rewriter: *rewriter,
        meshes: meshes.clone(),
        entry: Some(entry),
        main: Cell::new(main),
        gathered: RefCell::new(gathered),
    };
    let result = lower(&lowering, op);
    let mut state = state.borrow_mut();
    state.gathered = lowering
        .gathered
        .take()
        .into_iter()
        .map(|(wait, output, stream)| (wait.to_raw(), output.to_raw(), stream))
        .collect();
    state.main = lowering.main.get().map(|main| main.to_raw());
    state.failed = result.is_err();
    result.is_ok()
}

/// What a fusion op's pattern works on: the op's result tensor and the
/// buffer it goes to, and its operands' tensors and buffers.
struct Operands<'c, 'm> {
    builder: Builder<'c, 'm>,
    output: Tensor<'c>,
    destination: Value<'c, 'm>,
    inputs: Vec<Tensor<'c>>,
    buffers: Vec<Value<'c, 'm>>,
}

impl<'c, 'm> Lowering<'c, 'm> {
    /// Lowers the fusion op `op` by `body`, in front of it, and replaces it
    /// by a cast of the buffer it wrote.
    fn fusion_op(
        &self,
        op: OperationRef<'c, 'm>,
        body: impl FnOnce(&Self, &Operands<'c, 'm>) -> Result<(), Emitted>,
    ) -> Result<(), Emitted> {
        let location = op.location();
        let builder = Builder::before(self.context, op);
        let result: Value = ir::result(&op, 0)
            .expect("fusion compute ops have a result")
            .into();
        let output = Tensor::of(result, location, &self.meshes)?;
        let mut inputs = Vec::new();
        let mut buffers = Vec::new();
        for operand in op.operands() {
            inputs.push(Tensor::of(operand, location, &self.meshes)?);
            buffers.push(buffer(operand));
        }
        let destination = match self.out_argument(result) {
            Some(output) => output,
            None => builder.alloc(output.buffer_type(), location),
        };
        let operands = Operands {
            builder,
            output,
            destination,
            inputs,
            buffers,
        };
        body(self, &operands)?;
        let cast = builder.op(
            Op::UnrealizedConversionCast.name(),
            location,
            &[destination],
            &[],
            &[result.r#type()],
        );
        self.rewriter
            .replace_op_with_values(op, &[builders::result(cast)]);
        Ok(())
    }

    /// The out-argument of the first result of the function that `value`
    /// is, if it is one.
    fn out_argument(&self, value: Value<'c, 'm>) -> Option<Value<'c, 'm>> {
        let entry = self.entry.expect("lowered ops are in the body");
        let returned = entry.terminator().expect("a block ends with a terminator");
        let position = returned.operands().position(|operand| operand == value)?;
        let first_output = entry.argument_count() - returned.operand_count();
        Some(entry.argument(first_output + position).ok()?.into())
    }

    /// The reduction across devices `op` is, if it reduces a `didx`
    /// (`didy`) axis of an operand: the device type of that axis.
    fn across(
        &self,
        op: &OperationRef<'c, 'm>,
        inputs: &[Tensor<'c>],
    ) -> Option<hir_dialects::dist::ParallelType> {
        let mapping = axis_map::operand_axes(op)?;
        axis_map::reduced_across(inputs.iter().map(|input| Some(&input.dist)), &mapping)
    }

    /// The host op computing `op` locally, in a stream loop where its result
    /// has a stream axis.
    fn local(&self, op: OperationRef<'c, 'm>, operands: &Operands<'c, 'm>) -> Result<(), Emitted> {
        let written = self.compute(
            &operands.builder,
            op,
            &operands.buffers,
            operands.destination,
        );
        match operands.output.stream() {
            Some(stream) => self.stream_loop(&[written], stream),
            None => Ok(()),
        }
    }
}

/// The buffer holding `tensor`: the operand of the cast that stands for it.
fn buffer<'c: 'm, 'm>(tensor: Value<'c, 'm>) -> Value<'c, 'm> {
    let cast = OperationResult::try_from(tensor)
        .ok()
        .map(|result| result.owner())
        .filter(|cast| Op::UnrealizedConversionCast.is(cast))
        .expect("a lowered op's operand is a cast of its buffer");
    ir::operand(&cast, 0).expect("a cast has its operand")
}

/// An elementwise op, transpose, reshape, broadcast or attention: the host
/// op (their verifiers keep every device axis: none reduces across devices).
fn compute<'c, 'm>(lowering: &Lowering<'c, 'm>, op: OperationRef<'c, 'm>) -> Result<(), Emitted> {
    lowering.fusion_op(op, |lowering, operands| lowering.local(op, operands))
}

/// A sum, amax, matmul or linear: the host op, or where it reduces a device
/// axis, the local part and the collective; a contraction over a stream
/// axis, the loop of accumulating GEMMs.
fn reduction_or_contraction<'c, 'm>(
    lowering: &Lowering<'c, 'm>,
    op: OperationRef<'c, 'm>,
) -> Result<(), Emitted> {
    lowering.fusion_op(op, |lowering, operands| {
        let streamed = match stream_contraction::of(&op) {
            Ok(streamed) => streamed,
            Err(message) => return error(op.location(), message),
        };
        if let Some(streamed) = streamed {
            return lowering.accumulate(op, &operands.buffers, operands.destination, &streamed);
        }
        match lowering.across(&op, &operands.inputs) {
            Some(parallel_type) => lowering.across_devices(
                &operands.builder,
                op,
                &operands.buffers,
                &operands.inputs,
                operands.destination,
                &operands.output,
                parallel_type,
            ),
            None => lowering.local(op, operands),
        }
    })
}

/// A `fusion.slice`: a copy of its box of the rank's part. Its verifier
/// keeps every axis it cuts serial, so the box is the same on every rank;
/// an axis it takes whole is the rank's part (offset 0, the local extent).
fn slice<'c, 'm>(lowering: &Lowering<'c, 'm>, op: OperationRef<'c, 'm>) -> Result<(), Emitted> {
    lowering.fusion_op(op, |lowering, operands| {
        let location = op.location();
        let offsets = ir::i64_array(&op, "offsets").expect("verified");
        let sizes = builders::buffer_shape(operands.destination.r#type());
        // A stride moves nothing along an axis of one index or none (and
        // may be any size there).
        let steps: Vec<i64> = ir::i64_array(&op, "strides")
            .expect("verified")
            .into_iter()
            .zip(&sizes)
            .map(|(stride, &size)| if size > 1 { stride } else { 1 })
            .collect();
        let view =
            operands
                .builder
                .strided_box(operands.buffers[0], &offsets, &sizes, &steps, location);
        let copy = operands.builder.copy(view, operands.destination, location);
        match operands.output.stream() {
            Some(stream) => lowering.stream_loop(&[copy], stream),
            None => Ok(()),
        }
    })
}

/// A `fusion.set`: a copy, communication or local slices.
fn resharding<'c, 'm>(
    lowering: &Lowering<'c, 'm>,
    op: OperationRef<'c, 'm>,
) -> Result<(), Emitted> {
    lowering.fusion_op(op, |lowering, operands| {
        lowering.set(
            &operands.builder,
            op.location(),
            operands.buffers[0],
            &operands.inputs[0],
            operands.destination,
            &operands.output,
        )
    })
}

/// A `fusion.fill` or `fusion.iota`.
fn generator<'c, 'm>(lowering: &Lowering<'c, 'm>, op: OperationRef<'c, 'm>) -> Result<(), Emitted> {
    lowering.fusion_op(op, |lowering, operands| {
        lowering.generate(
            &operands.builder,
            op,
            operands.destination,
            &operands.output,
        );
        Ok(())
    })
}

/// The function's `func.return`: each result not written in place (an
/// argument, a value returned twice) is copied to its out-argument; then the
/// loops over gathered slices, and a return of nothing.
fn finish<'c, 'm>(
    lowering: &Lowering<'c, 'm>,
    returned: OperationRef<'c, 'm>,
) -> Result<(), Emitted> {
    let location = returned.location();
    let entry = lowering.entry.expect("the return ends the body");
    let first_output = entry.argument_count() - returned.operand_count();
    let at_return = Builder::before(lowering.context, returned);
    for (position, value) in returned.operands().enumerate() {
        let output: Value = entry
            .argument(first_output + position)
            .expect("the signature step added the out-arguments")
            .into();
        let source = buffer(value);
        if source != output {
            let tensor = Tensor::of(value, location, &lowering.meshes)?;
            let copy = at_return.copy(source, output, location);
            if let Some(stream) = tensor.stream() {
                lowering.stream_loop(&[copy], stream)?;
            }
        }
    }
    lowering.view_loops();
    at_return.op(Op::FuncReturn.name(), location, &[], &[], &[]);
    lowering.rewriter.erase_op(returned);
    Ok(())
}
