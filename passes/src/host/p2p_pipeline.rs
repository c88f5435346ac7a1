//! `host-p2p-pipeline{backend=nccl|cuda}`: turns a collective whose
//! communicated axis is the axis of a stream loop into a ring of
//! point-to-point transfers fused into that loop.
//!
//! A stream loop (`scf.for %i` whose body takes `host.stream_from_pool %i`
//! and switches to it) cannot run a collective slice by slice along the axis
//! the collective communicates over: slice `j` of an allgather's output is
//! rank `j`'s shard, and slice `j` of a reduce-scatter's input goes to rank
//! `j` alone. Such a collective therefore stays whole next to the loop, on
//! the caller's stream, and the loop does not overlap it. This pass splits it
//! into one transfer per step of the loop, overlapping the steps' compute:
//!
//! - an **allgather** before a stream loop that reads its output slice by
//!   slice along the gathered axis (DIDx -> Stream on one axis, seed 000);
//! - a **reduce-scatter** after a stream loop that writes its input slice by
//!   slice along the scattered axis (the partial products of a GEMM); by
//!   `sum`, with a `host.matmul` writing the partials, as a chain of
//!   accumulating GEMMs ([`chain`]).
//!
//! The sliced operand may also be a whole view `host.select %b[u][0]` that
//! drops an axis `u` of extent 1, the loop slicing `%b` along the matching
//! axis: convert-fusion-to-host reduce-scatters the partial products of
//! GEMM+RS through such a view of their local `didx` axis. The ring then
//! moves the loop's slices of `%b` with that axis viewed away too.
//!
//! # The ring
//!
//! Positions are ranks in the team, which must be the whole mesh in order
//! (`team [0, 1, ..., D-1]`), so a position is also the global rank that
//! `host.rank` returns and that `comm.send`/`comm.recv` take as their peer.
//! The loop runs `D` steps; at step `i` (the loop index, or the index plus
//! one in a loop whose rings are all reduce-scatters, so that their local step
//! comes last: see [`local_step_last`]) the rank at position `r` works on
//!
//! - slice `(r + i) mod D` ([`slice`]), whose owner is that position, and
//! - its partner `(D + r - i) mod D` ([`partner`]), the rank whose slice at
//!   step `i` is `r`'s own: `slice(partner(r, i), i) = r`.
//!
//! Every `host.select` the loop takes at its index now takes the slice, so
//! step `i` computes slice `(r + i) mod D`; the index only picks the step's
//! stream. At step 0 (mod `D`) the slice is the rank's own (`slice = r`, a local
//! copy; for an allgather into a buffer of the function's own that only the
//! step's slice reads, no copy: an `scf.if` yields the buffer the step computes
//! on, the local shard or the received slice); at each other step the rank receives from one rank and sends to
//! another, and over the `D` steps it meets every rank once each way.
//!
//! - allgather: receive slice `s` of the output from its owner `s`, send the
//!   local shard (the input at index 0 of the gathered axis) to the partner.
//! - reduce-scatter: send the partial block `s` (the input's slice) to its
//!   owner `s`, receive the partner's partial of this rank's block into slot
//!   `partner` of a buffer shaped as the input; after the loop, `host.sum`
//!   (`host.amax` for `max`) of that buffer over the scattered axis is the
//!   output. Slots are distinct per step, so steps on different streams never
//!   write the same memory.
//!
//! With `chunks=c` each step goes in `c` parts along the rows of its slices
//! (see [`chunks`]); by default the pass chooses.
//!
//! # Streams
//!
//! The loop must end each step by joining the step's stream into a stream
//! defined before it (`host.set_current_stream %main`, `host.sync_stream
//! %step`), as host-stream-parallelize leaves it. The ring's transfers run on
//! `%main`, one step after the other, so that step `i`'s data arrives after
//! `i` transfers' time instead of all steps' data arriving together; the
//! step's stream waits only for what it computes on (the allgather's
//! received slice), and a reduce-scatter's transfer waits for the partial
//! the step's stream computed. For `%main` to be free during the loop, the
//! joins move to a loop of their own after it. The step's stream may be the
//! index rotated over fewer pool streams (`stream_from_pool (%i mod %n)`).
//!
//! # Backends
//!
//! - `nccl`: each step's receive and send are one coalescing group
//!   (`ncclGroupStart`/`ncclGroupEnd`), whose request the step waits for.
//!   NCCL matches the group's pair whatever the order of the peers' posts;
//!   every rank posts the groups in step order.
//! - `cuda`: the buffers are shared once before the loop
//!   (`comm.share_mem_handles`, cached by the runtime per buffer). A `cuda`
//!   receive only marks its slot free and never blocks the stream; its request
//!   completes when the data is there. A `cuda` send makes the stream wait
//!   until the receiver's slot is free, then copies. Each step posts the
//!   receive, then the send, on `%main`. It cannot deadlock: on every rank
//!   `%main` runs step `i`'s receive (which waits for nothing) before its
//!   send, and a send waits only for the receive of the same step on its
//!   receiver's `%main`, which follows nothing but that rank's earlier steps;
//!   by induction over the steps every send starts. The steps' streams wait
//!   for `%main`'s transfers, never the other way, and the host never blocks.
//!
//! # What is an error and what is left alone
//!
//! A collective whose communicated buffer no stream loop slices along the
//! communicated axis is left alone: either it is already a stream-sliced
//! collective of a pipeline (the slices are along another axis), or there is
//! no pipeline. Once a stream loop slices along that axis the ring is what
//! was asked for, and what prevents it is a located error: a collective
//! other than allgather or reduce-scatter (gather, scatter, all-to-all), a
//! team that is not the whole mesh in order, a loop that does not run `D`
//! steps from 0 by 1, a buffer with more than one slice per rank, a
//! reduce-scatter kind with no host combination (`prod`, `min`, `avg`), a
//! collective not next to its loop or whose request is used otherwise than
//! by one `comm.wait`, buffers used between the two, a loop that uses the
//! index for anything but the stream and slices, slices used off the
//! step's stream, or a loop whose steps do not end by joining into a stream
//! defined before it.
//!
//! ```mlir
//! %r = comm.allgather %a into %g team [0, 1, 2, 3]
//!     : memref<1x128x64xbf16> into memref<4x128x64xbf16>
//! comm.wait %r
//! scf.for %i = %c0 to %c4 step %c1 {                  // the stream loop
//!   %s = host.stream_from_pool %i : !host.stream
//!   host.set_current_stream %s
//!   %gi = host.select %g[0][%i] : ...
//!   host.matmul ins(%gi, %b : ...) outs(...)
//!   ...
//! }
//! ```
//! becomes, with `backend=nccl`,
//! ```mlir
//! %rank = host.rank : index
//! %own = host.select %a[0][%c0] : ...
//! scf.for %i = %c0 to %c4 step %c1 {
//!   %0 = arith.addi %rank, %i : index
//!   %slice = arith.remui %0, %c4 : index               // (rank + i) mod 4
//!   %1 = arith.addi %c4, %rank : index
//!   %2 = arith.subi %1, %i : index
//!   %partner = arith.remui %2, %c4 : index             // (4 + rank - i) mod 4
//!   %local = arith.cmpi eq, %slice, %rank : index
//!   %s = host.stream_from_pool %i : !host.stream
//!   host.set_current_stream %s
//!   %gi = host.select %g[0][%slice] : ...
//!   scf.if %local {
//!     host.copy ins(%own : ...) outs(%gi : ...)
//!   } else {
//!     host.set_current_stream %main                    // the transfers' stream
//!     comm.start_coalescing
//!     %3 = comm.recv %gi from %slice team [0, 1, 2, 3] : ...
//!     %4 = comm.send %own to %partner team [0, 1, 2, 3] : ...
//!     %5 = comm.end_coalescing
//!     host.set_current_stream %s
//!     comm.wait %5                                     // the step's stream waits
//!   }
//!   host.matmul ins(%gi, %b : ...) outs(...)
//!   host.set_current_stream %main
//! }
//! scf.for %i = %c0 to %c4 step %c1 {                  // the joins, after the ring
//!   %s = host.stream_from_pool %i : !host.stream
//!   host.sync_stream %s
//! }
//! ```

mod chain;
mod chunks;
mod receive_ahead;

use crate::{
    HirPass,
    builders::{self, Builder},
    diagnostics::emit_error,
    ir,
};
use hir_dialects::{comm, host};
use melior::{
    Context,
    dialect::{arith, scf},
    ir::{
        Attribute, Block, BlockLike, BlockRef, Location, Operation, OperationRef, Region,
        RegionLike, Type, Value, ValueLike,
        attribute::{DenseI64ArrayAttribute, IntegerAttribute, StridedLayoutAttribute},
        operation::{OperationLike, OperationMutLike, OperationResult},
        r#type::{DimSize, IntegerType, MemRefType, ShapedTypeLike, TypeLike},
    },
};
use mlir_sys::{
    mlirMemRefTypeGetStridesAndOffset, mlirOperationDestroy, mlirShapedTypeGetDynamicSize,
};

/// The op the pass runs on.
pub const ANCHOR: &str = "func.func";
pub const ARGUMENT: &str = "host-p2p-pipeline";

/// How the ring's transfers move data (the `backend` option).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// NCCL send/recv, coalesced per step.
    Nccl,
    /// CUDA-IPC copies between buffers shared before the loop.
    Cuda,
}

impl Backend {
    /// The option's values, as the option and `comm`'s `on` spell them.
    pub const NAMES: [&'static str; 2] = ["nccl", "cuda"];

    /// The backend the option spells `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "nccl" => Some(Backend::Nccl),
            "cuda" => Some(Backend::Cuda),
            _ => None,
        }
    }

    /// The value of `comm`'s `Comm_Backend` enum attribute.
    const fn code(self) -> i64 {
        match self {
            Backend::Nccl => 0,
            Backend::Cuda => 1,
        }
    }
}

/// Creates the pass (anchored on `func.func`): rings over `backend`, each
/// step in `chunks` parts, or in the parts the pass chooses where `chunks` is
/// 0 (see [`chunks`]).
pub fn create(backend: Backend, chunks: usize) -> Box<dyn HirPass> {
    Box::new(P2pPipeline {
        backend,
        chunks: chunks as i64,
    })
}

struct P2pPipeline {
    backend: Backend,
    chunks: i64,
}

impl HirPass for P2pPipeline {
    fn run(&mut self, function: OperationRef) -> bool {
        let context = function.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        match plan(context, function, self.chunks) {
            Ok(loops) => {
                for (stream_loop, rings, chunks) in loops {
                    match chain::gemm(context, &stream_loop, &rings, chunks) {
                        Some(gemm) => chain::rewrite(
                            context,
                            self.backend,
                            chunks,
                            &stream_loop,
                            &rings[0],
                            gemm,
                        ),
                        None => rewrite(context, self.backend, chunks, &stream_loop, &rings),
                    }
                }
                true
            }
            Err(Reported) => false,
        }
    }
}

//===----------------------------------------------------------------------===//
// The ring schedule
//===----------------------------------------------------------------------===//

/// The index arithmetic the ring's formulas are written in: emitted as
/// `arith` ops on `index` values by the pass, evaluated on integers by the
/// schedule test, so that both read the same formulas.
trait RingArith: Copy {
    /// `arith.addi`.
    fn add(self, other: Self) -> Self;
    /// `arith.subi`; the formulas only subtract where the result is not negative.
    fn sub(self, other: Self) -> Self;
    /// `arith.remui`.
    fn rem(self, other: Self) -> Self;
}

/// Whether a loop's rings run their local step last: when they are all
/// reduce-scatters. Then the first step's partial leaves as soon as it is
/// computed and the local partial is computed while the last one travels;
/// an allgather's local step comes first, as it needs nothing to arrive.
/// (One loop's rings share their steps' slices, so an allgather decides.)
fn local_step_last(collectives: impl IntoIterator<Item = Collective>) -> bool {
    collectives
        .into_iter()
        .all(|collective| matches!(collective, Collective::ReduceScatter(_)))
}

/// The ring step of loop iteration `index`: the index itself, or, with the
/// local step last, `index + 1` (step `size` is step 0 mod `size`).
fn ring_step<T: RingArith>(index: T, one: T, local_last: bool) -> T {
    if local_last { index.add(one) } else { index }
}

/// The slice the rank at `position` works on at `step` of a ring of `size`,
/// which is also the position of the slice's owner: `(position + step) mod size`.
fn slice<T: RingArith>(position: T, step: T, size: T) -> T {
    position.add(step).rem(size)
}

/// The rank whose slice at `step` is `position`'s own, the one `position`
/// sends its shard to (allgather) or receives its block from
/// (reduce-scatter): `(size + position - step) mod size`, with
/// `step <= size` so that the difference is not negative.
fn partner<T: RingArith>(position: T, step: T, size: T) -> T {
    size.add(position).sub(step).rem(size)
}

//===----------------------------------------------------------------------===//
// Matching
//===----------------------------------------------------------------------===//

/// An error was emitted.
struct Reported;

/// A loop over a stream axis, `scf.for %i = %c0 to %cD step %c1`.
#[derive(Clone, Copy)]
struct StreamLoop<'c, 'a> {
    op: OperationRef<'c, 'a>,
    body: BlockRef<'c, 'a>,
    index: Value<'c, 'a>,
    lower: Value<'c, 'a>,
    upper: Value<'c, 'a>,
}

/// How a stream loop's step ends: `host.set_current_stream %main` then
/// `host.sync_stream %step`, `%main` defined before the loop. The ring's
/// transfers run on `%main`, and the joins move after the loop.
#[derive(Clone, Copy)]
struct Join<'c, 'a> {
    main: Value<'c, 'a>,
    step_stream: Value<'c, 'a>,
    sync: OperationRef<'c, 'a>,
}

impl<'c, 'a> Join<'c, 'a> {
    /// `%n` where the step's stream is rotated, `stream_from_pool (%i mod %n)`.
    fn step_stream_index(&self) -> Option<Value<'c, 'a>> {
        let pool = OperationResult::try_from(self.step_stream).ok()?.owner();
        rotation(pool.operand(0).ok()?).map(|(_, streams)| streams)
    }
}

/// How a reduce-scatter's ring combines the partial blocks it received.
#[derive(Clone, Copy)]
enum Combine {
    Sum,
    Max,
}

impl Combine {
    /// `output` = the combine of `input` over `axis`.
    fn over<'c>(
        self,
        context: &'c Context,
        location: Location<'c>,
        axis: i64,
        input: Value<'c, '_>,
        output: Value<'c, '_>,
    ) -> Operation<'c> {
        let axes: Attribute = DenseI64ArrayAttribute::new(context, &[axis]).into();
        match self {
            Combine::Sum => host::SumOperation::builder(context, location)
                .axes(axes)
                .input(input)
                .output(output)
                .build()
                .into(),
            Combine::Max => host::AmaxOperation::builder(context, location)
                .axes(axes)
                .input(input)
                .output(output)
                .build()
                .into(),
        }
    }

    /// `output` = the combine of `output` and `other`, elementwise.
    fn in_place<'c>(
        self,
        context: &'c Context,
        location: Location<'c>,
        output: Value<'c, '_>,
        other: Value<'c, '_>,
    ) -> Operation<'c> {
        match self {
            Combine::Sum => host::AddOperation::builder(context, location)
                .lhs(output)
                .rhs(other)
                .output(output)
                .build()
                .into(),
            Combine::Max => host::MaxOperation::builder(context, location)
                .lhs(output)
                .rhs(other)
                .output(output)
                .build()
                .into(),
        }
    }
}

/// The collectives that have a ring.
#[derive(Clone, Copy)]
enum Collective {
    Allgather,
    ReduceScatter(Combine),
}

impl Collective {
    /// The operand the stream loop slices.
    const fn sliced_name(self) -> &'static str {
        match self {
            Collective::Allgather => "output",
            Collective::ReduceScatter(_) => "input",
        }
    }
}

/// A collective the pass replaces by a ring in a stream loop.
struct Ring<'c, 'a> {
    collective: Collective,
    op: OperationRef<'c, 'a>,
    wait: OperationRef<'c, 'a>,
    input: Value<'c, 'a>,
    output: Value<'c, 'a>,
    axis: i64,
    team: Attribute<'c>,
    /// The buffer the stream loop slices: the collective's sliced operand, or
    /// the buffer that operand is a whole view of.
    sliced: Value<'c, 'a>,
    /// Where the sliced operand is a whole view: the view, erased with the
    /// collective, and the unit axis it drops, as an axis of `view`.
    whole_view: Option<(OperationRef<'c, 'a>, i64)>,
    /// The loop's view of the sliced buffer the ring moves: the first select.
    view: Value<'c, 'a>,
    /// The type of the view of the rank's own slice of the other buffer.
    own_view: Type<'c>,
    /// The ring's step goes right before this op of the loop's body.
    at: OperationRef<'c, 'a>,
    join: Join<'c, 'a>,
}

/// Every stream loop with a ring, its rings, and the parts of its steps.
type Plan<'c, 'a> = Vec<(StreamLoop<'c, 'a>, Vec<Ring<'c, 'a>>, i64)>;

/// The rings of `function`, grouped by loop; nothing when an error was
/// emitted (then the function is left as it is).
fn plan<'c, 'a>(
    context: &'c Context,
    function: OperationRef<'c, 'a>,
    chunks: i64,
) -> Result<Plan<'c, 'a>, Reported> {
    let mut loops: Vec<(StreamLoop, Vec<Ring>)> = Vec::new();
    let mut failed = false;
    for op in ir::nested(function) {
        match match_collective(context, op) {
            Ok(Some((stream_loop, ring))) => {
                match loops
                    .iter_mut()
                    .find(|(known, _)| known.op == stream_loop.op)
                {
                    Some((_, rings)) => rings.push(ring),
                    None => loops.push((stream_loop, vec![ring])),
                }
            }
            Ok(None) => {}
            Err(Reported) => failed = true,
        }
    }
    let mut planned = Vec::new();
    for (stream_loop, rings) in loops {
        failed |= check_index_uses(&stream_loop).is_err();
        let parts = if chunks == chunks::CHOSEN {
            chunks::chosen(context, &stream_loop, &rings)
        } else {
            failed |= chunks > 1 && chunks::check(&stream_loop, chunks).is_err();
            chunks
        };
        planned.push((stream_loop, rings, parts));
    }
    if failed { Err(Reported) } else { Ok(planned) }
}

/// The ring `op` becomes, `None` if it is not a collective over a stream
/// loop's axis.
fn match_collective<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
) -> Result<Option<(StreamLoop<'c, 'a>, Ring<'c, 'a>)>, Reported> {
    let op_name = ir::name(&op);
    // The operands a stream loop could slice along the communicated axis.
    let operands: &[usize] = match op_name.as_str() {
        "comm.allgather" | "comm.gather" => &[1],
        "comm.reduce_scatter" | "comm.scatter" => &[0],
        "comm.alltoall" => &[0, 1],
        _ => return Ok(None),
    };
    // `axis` is absent where it has its default, 0.
    let axis = integer_attribute(&op, "axis").unwrap_or(0);
    let mut loops: Vec<(StreamLoop, Sliced)> = Vec::new();
    for &operand in operands {
        let operand = op.operand(operand).expect("a collective has two operands");
        for sliced in Sliced::forms(operand, axis) {
            for user in ir::users(sliced.buffer) {
                if let Some(stream_loop) = slicing_loop(user, sliced.axis)
                    && !loops.iter().any(|(known, _)| known.op == stream_loop.op)
                {
                    loops.push((stream_loop, sliced));
                }
            }
        }
    }
    let Some((stream_loop, sliced)) = loops.pop() else {
        return Ok(None);
    };

    let error = |message: String| {
        emit_error(op.location(), &message);
        Reported
    };
    let collective = collective_of(&op, &op_name, axis).map_err(error)?;
    if !loops.is_empty() {
        return Err(error(format!(
            "'{op_name}' is sliced along axis {axis} by {} stream loops; a ring runs in one",
            loops.len() + 1
        )));
    }
    let (input, output) = (
        op.operand(0).expect("a collective has an input"),
        op.operand(1).expect("a collective has an output"),
    );
    let (operand, own) = match collective {
        Collective::Allgather => (output, input),
        Collective::ReduceScatter(_) => (input, output),
    };
    let what = collective.sliced_name();
    let (first, last) = match collective {
        Collective::Allgather => (op, stream_loop.op),
        Collective::ReduceScatter(_) => (stream_loop.op, op),
    };
    if op.block() != stream_loop.op.block() || !first.is_before_in_block(last) {
        return Err(error(format!(
            "'{op_name}' must come {} its {what} along axis {axis}, in the same block",
            match collective {
                Collective::Allgather => "before the stream loop that reads",
                Collective::ReduceScatter(_) => "after the stream loop that writes",
            }
        )));
    }
    let team = op.attribute("team").expect("a collective has a team");
    let size = whole_mesh(team).map_err(error)?;
    let bounds = (
        constant(stream_loop.lower),
        constant(stream_loop.upper),
        constant(stream_loop.op.operand(2).expect("scf.for has a step")),
    );
    if bounds != (Some(0), Some(size), Some(1)) {
        return Err(error(format!(
            "the stream loop must run from 0 to {size} step 1, one step per rank of the team"
        )));
    }
    if static_shape(operand.r#type()).and_then(|shape| shape.get(axis as usize).copied())
        != Some(size)
    {
        return Err(error(format!(
            "axis {axis} of the {what} must have extent {size}, one slice per rank of the team"
        )));
    }
    let own_view = view_type(context, own.r#type(), axis).ok_or_else(|| {
        error(format!(
            "the buffers of '{op_name}' need strided layouts for the ring to take views of them"
        ))
    })?;
    let request = op.result(0).expect("a collective has a request");
    let wait = match ir::users(request.into()).as_slice() {
        [wait] if ir::name(wait) == "comm.wait" && wait.block() == op.block() => *wait,
        _ => {
            return Err(error(format!(
                "the request of '{op_name}' must be waited for by one comm.wait in its block and \
                 used nowhere else"
            )));
        }
    };

    // Between the collective and the loop the ring has not run: nothing may
    // use its buffers there (but the whole view the collective takes). In the
    // loop, the slices are the ring's.
    let block = op.block().expect("a collective is in a block");
    let whole_view = sliced.whole_view.map(|(view, _)| view);
    let mut buffers = vec![sliced.buffer, own];
    buffers.extend(whole_view.map(|view| Value::from(view.result(0).expect("a view"))));
    buffers.dedup();
    let mut views = Vec::new();
    for buffer in buffers {
        for user in ir::users(buffer) {
            let in_loop = ir::ancestor_in(user, stream_loop.body);
            let between = ir::ancestor_in(user, block)
                .is_some_and(|at| first.is_before_in_block(at) && at.is_before_in_block(last));
            let message = if buffer == sliced.buffer && in_loop.is_some() {
                if is_select_of(user, sliced.axis, stream_loop.index) && in_loop == Some(user) {
                    views.push(user);
                    continue;
                }
                format!(
                    "uses the {what} of '{op_name}' in its stream loop otherwise than as a \
                     host.select along axis {} at the loop index in the loop body; the ring \
                     moves those slices",
                    sliced.axis
                )
            } else if user != op && Some(user) != whole_view && (in_loop.is_some() || between) {
                format!(
                    "uses a buffer of '{op_name}' {}, where the ring moves it",
                    if in_loop.is_some() {
                        "in its stream loop"
                    } else {
                        "between it and its stream loop"
                    }
                )
            } else {
                continue;
            };
            emit_error(user.location(), &format!("'{}' {message}", ir::name(&user)));
            return Err(Reported);
        }
    }
    let views: Vec<_> = ir::block_ops(stream_loop.body)
        .filter(|op| views.contains(op))
        .collect();
    let at = step_position(&stream_loop, &views, collective, &op_name)?;
    let join = trailing_join(&stream_loop).ok_or_else(|| {
        emit_error(
            stream_loop.op.location(),
            "the stream loop of a ring must end each step by joining the step's stream into a \
             stream defined before the loop (host.set_current_stream %main, then \
             host.sync_stream of the step's stream): the ring's transfers run on that stream",
        );
        Reported
    })?;

    Ok(Some((
        stream_loop,
        Ring {
            collective,
            op,
            wait,
            input,
            output,
            axis,
            team,
            sliced: sliced.buffer,
            whole_view: sliced.whole_view.map(|(view, unit)| {
                // As an axis of the loop's slice, which drops `sliced.axis`.
                (view, if unit < sliced.axis { unit } else { unit - 1 })
            }),
            view: views[0].result(0).expect("a view").into(),
            own_view,
            at,
            join,
        },
    )))
}

/// A buffer a stream loop may slice for a collective's operand, and along
/// which axis.
#[derive(Clone, Copy)]
struct Sliced<'c, 'a> {
    buffer: Value<'c, 'a>,
    axis: i64,
    /// Where `buffer` is not the operand: the whole view the operand is, and
    /// the unit axis of `buffer` it drops.
    whole_view: Option<(OperationRef<'c, 'a>, i64)>,
}

impl<'c, 'a> Sliced<'c, 'a> {
    /// The operand along `axis`; and, where the operand is a whole view
    /// `host.select %b[u][0]` of a buffer `%b` whose axis `u` has extent 1,
    /// `%b` along the matching axis: convert-fusion-to-host views away the
    /// local `didx` axis of a reduction's operand (GEMM+RS), while the stream
    /// loop that writes it slices the buffer.
    fn forms(operand: Value<'c, 'a>, axis: i64) -> Vec<Self> {
        let mut forms = vec![Self {
            buffer: operand,
            axis,
            whole_view: None,
        }];
        let whole_view = OperationResult::try_from(operand)
            .ok()
            .map(|result| result.owner())
            .filter(|op| ir::name(op) == "host.select")
            .and_then(|view| {
                let (buffer, unit) = (view.operand(0).ok()?, integer_attribute(&view, "axis")?);
                let extent = static_shape(buffer.r#type())?.get(unit as usize).copied();
                (extent == Some(1) && constant(view.operand(1).ok()?) == Some(0))
                    .then_some((view, buffer, unit))
            });
        if let Some((view, buffer, unit)) = whole_view {
            forms.push(Self {
                buffer,
                axis: if axis < unit { axis } else { axis + 1 },
                whole_view: Some((view, unit)),
            });
        }
        forms
    }
}

/// What a collective with a sliced operand along `axis` becomes: an error
/// for those with no ring.
fn collective_of(op: &OperationRef, op_name: &str, axis: i64) -> Result<Collective, String> {
    match op_name {
        "comm.allgather" => Ok(Collective::Allgather),
        "comm.reduce_scatter" => match integer_attribute(op, "kind") {
            // `Comm_ReduceKind` codes.
            Some(0) => Ok(Collective::ReduceScatter(Combine::Sum)),
            Some(2) => Ok(Collective::ReduceScatter(Combine::Max)),
            _ => Err(format!(
                "'{op_name}' has no ring for its reduce kind: the ring combines the partial \
                 blocks with host.sum or host.amax (kinds 'sum' and 'max')"
            )),
        },
        _ => Err(format!(
            "'{op_name}' communicates along axis {axis}, the axis a stream loop runs over; \
             host-p2p-pipeline makes rings of comm.allgather and comm.reduce_scatter only"
        )),
    }
}

/// The size of `team` if it is the whole mesh in order, `[0, 1, ..., D-1]`:
/// the ring takes a position in the team to be the rank `host.rank` returns.
fn whole_mesh(team: Attribute) -> Result<i64, String> {
    let team = DenseI64ArrayAttribute::try_from(team).expect("a team is an i64 array");
    let ranks: Vec<i64> = (0..team.len())
        .map(|index| team.element(index).expect("in range"))
        .collect();
    let size = ranks.len() as i64;
    if ranks.iter().copied().eq(0..size) {
        Ok(size)
    } else {
        Err(format!(
            "team {ranks:?} is not the whole mesh in order, ranks 0 to {}: the ring takes \
             position r in the team to be rank r",
            size - 1
        ))
    }
}

/// Where a ring step goes in the loop body, given the loop's selects of the
/// sliced buffer (`views`, in order): the allgather's slice arrives right
/// after the first select, before anything reads it; the reduce-scatter's
/// partial leaves after the last use of any select, once everything has
/// written it. The selects and their uses must all run on the step's stream,
/// the one the ring moves data on.
fn step_position<'c, 'a>(
    stream_loop: &StreamLoop<'c, 'a>,
    views: &[OperationRef<'c, 'a>],
    collective: Collective,
    op_name: &str,
) -> Result<OperationRef<'c, 'a>, Reported> {
    let Some((start, end)) = step_segment(stream_loop) else {
        emit_error(
            stream_loop.op.location(),
            "the stream loop never switches to host.stream_from_pool of its index, the stream \
             a ring step runs on",
        );
        return Err(Reported);
    };
    let mut last_use = views[0];
    for &view in views {
        for user in std::iter::once(view).chain(ir::users(view.result(0).expect("a view").into())) {
            let at = ir::ancestor_in(user, stream_loop.body).expect("a view is used where it is");
            let on_step_stream =
                start.is_before_in_block(at) && end.is_none_or(|end| at.is_before_in_block(end));
            if !on_step_stream {
                emit_error(
                    user.location(),
                    &format!(
                        "'{}' uses a slice of the {} of '{op_name}' off the step's stream: \
                         slices must be taken and used between host.set_current_stream to \
                         host.stream_from_pool of the loop index and the next stream switch",
                        ir::name(&user),
                        collective.sliced_name()
                    ),
                );
                return Err(Reported);
            }
            if last_use.is_before_in_block(at) {
                last_use = at;
            }
        }
    }
    let after = match collective {
        Collective::Allgather => views[0],
        Collective::ReduceScatter(_) => last_use,
    };
    Ok(after
        .next_in_block()
        .expect("a loop body ends with scf.yield"))
}

/// The loop index only picks the step's stream and the slices: any other use
/// would read a slice index as a step. An error for each other use.
fn check_index_uses(stream_loop: &StreamLoop) -> Result<(), Reported> {
    let mut result = Ok(());
    for user in ir::users(stream_loop.index) {
        let name = ir::name(&user);
        let picks = name == "host.stream_from_pool"
            || (name == "host.select" && user.operand(1).ok() == Some(stream_loop.index))
            || (name == "arith.remui"
                && user.operand(0).ok() == Some(stream_loop.index)
                && ir::users(user.result(0).expect("a remainder").into())
                    .iter()
                    .all(|rotated| ir::name(rotated) == "host.stream_from_pool"));
        if !picks {
            emit_error(
                user.location(),
                &format!(
                    "'{name}' uses the index of a stream loop that becomes a ring, where the index \
                     is a step and no longer a slice; only host.stream_from_pool (of the index or of \
                     arith.remui of it) and host.select may use it"
                ),
            );
            result = Err(Reported);
        }
    }
    result
}

/// The stream loop `user` is a select of at its index along `axis`, if any.
fn slicing_loop<'c, 'a>(user: OperationRef<'c, 'a>, axis: i64) -> Option<StreamLoop<'c, 'a>> {
    if ir::name(&user) != "host.select" || integer_attribute(&user, "axis") != Some(axis) {
        return None;
    }
    let index = user.operand(1).ok()?;
    let op =
        std::iter::successors(user.parent_operation(), |op| op.parent_operation()).find(|op| {
            ir::name(op) == "scf.for"
                && op
                    .region(0)
                    .ok()
                    .and_then(|region| region.first_block())
                    .and_then(|body| body.argument(0).ok())
                    .is_some_and(|argument| Value::from(argument) == index)
        })?;
    let body = op.region(0).ok()?.first_block()?;
    let stream_loop = StreamLoop {
        op,
        body,
        index,
        lower: op.operand(0).ok()?,
        upper: op.operand(1).ok()?,
    };
    ir::block_ops(body)
        .any(|op| is_stream_from_pool(&op, index))
        .then_some(stream_loop)
}

/// The `host.set_current_stream` to the step's stream, and the next switch
/// if any: the part of the body that runs on the step's stream.
fn step_segment<'c, 'a>(
    stream_loop: &StreamLoop<'c, 'a>,
) -> Option<(OperationRef<'c, 'a>, Option<OperationRef<'c, 'a>>)> {
    let mut ops = ir::block_ops(stream_loop.body).skip_while(|op| {
        !(ir::name(op) == "host.set_current_stream"
            && op
                .operand(0)
                .ok()
                .and_then(|stream| OperationResult::try_from(stream).ok())
                .is_some_and(|stream| is_stream_from_pool(&stream.owner(), stream_loop.index)))
    });
    let start = ops.next()?;
    Some((
        start,
        ops.find(|op| ir::name(op) == "host.set_current_stream"),
    ))
}

/// Whether `op` is the step's stream: `host.stream_from_pool` of the loop
/// index, or of the index rotated over fewer streams (`arith.remui %i, %n`).
fn is_stream_from_pool(op: &OperationRef, index: Value) -> bool {
    ir::name(op) == "host.stream_from_pool"
        && op
            .operand(0)
            .is_ok_and(|operand| operand == index || is_rotation_of(operand, index))
}

/// Whether `value` is `arith.remui %index, %n`.
fn is_rotation_of(value: Value, index: Value) -> bool {
    rotation(value).is_some_and(|(rotated, _)| rotated == index)
}

/// `(%i, %n)` where `value` is `arith.remui %i, %n`.
fn rotation<'c: 'a, 'a>(value: Value<'c, 'a>) -> Option<(Value<'c, 'a>, Value<'c, 'a>)> {
    let op = OperationResult::try_from(value).ok()?.owner();
    (ir::name(&op) == "arith.remui").then_some((op.operand(0).ok()?, op.operand(1).ok()?))
}

/// The join the loop body ends with (the two ops before `scf.yield`), if it
/// has one.
fn trailing_join<'c, 'a>(stream_loop: &StreamLoop<'c, 'a>) -> Option<Join<'c, 'a>> {
    let ops: Vec<_> = ir::block_ops(stream_loop.body).collect();
    let [.., set, sync, _yield] = ops[..] else {
        return None;
    };
    if ir::name(&set) != "host.set_current_stream" || ir::name(&sync) != "host.sync_stream" {
        return None;
    }
    let main = set.operand(0).ok()?;
    let step_stream = sync.operand(0).ok()?;
    let step_stream_op = OperationResult::try_from(step_stream).ok()?.owner();
    let main_before_loop = match OperationResult::try_from(main) {
        Ok(result) => !within(result.owner(), stream_loop.op),
        // A block argument: the function's (the loop body's only one is the index).
        Err(_) => true,
    };
    (main_before_loop && is_stream_from_pool(&step_stream_op, stream_loop.index)).then_some(Join {
        main,
        step_stream,
        sync,
    })
}

fn is_select_of(op: OperationRef, axis: i64, index: Value) -> bool {
    ir::name(&op) == "host.select"
        && integer_attribute(&op, "axis") == Some(axis)
        && op.operand(1).ok() == Some(index)
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// Where new ops go: right before `anchor`, located at `location`.
#[derive(Clone, Copy)]
struct Cursor<'c, 'a> {
    context: &'c Context,
    anchor: OperationRef<'c, 'a>,
    location: Location<'c>,
}

impl<'c, 'a> Cursor<'c, 'a> {
    fn before(context: &'c Context, anchor: OperationRef<'c, 'a>) -> Self {
        Self {
            context,
            anchor,
            location: anchor.location(),
        }
    }

    /// The ops of a ring are located at the collective they replace.
    fn located(self, location: Location<'c>) -> Self {
        Self { location, ..self }
    }

    fn insert(self, op: impl Into<Operation<'c>>) -> OperationRef<'c, 'a> {
        let block = self.anchor.block().expect("an anchor is in a block");
        block.insert_operation_before(self.anchor, op.into())
    }

    fn value(self, op: impl Into<Operation<'c>>) -> Value<'c, 'a> {
        self.insert(op).result(0).expect("one result").into()
    }
}

/// An `index` value the ring formulas are emitted on.
#[derive(Clone, Copy)]
struct Emitted<'c, 'a> {
    value: Value<'c, 'a>,
    cursor: Cursor<'c, 'a>,
}

impl<'c, 'a> Emitted<'c, 'a> {
    fn binary(
        self,
        other: Self,
        build: fn(Value<'c, '_>, Value<'c, '_>, Location<'c>) -> Operation<'c>,
    ) -> Self {
        let value = self
            .cursor
            .value(build(self.value, other.value, self.cursor.location));
        Self { value, ..self }
    }
}

impl RingArith for Emitted<'_, '_> {
    fn add(self, other: Self) -> Self {
        self.binary(other, arith::addi)
    }

    fn sub(self, other: Self) -> Self {
        self.binary(other, arith::subi)
    }

    fn rem(self, other: Self) -> Self {
        self.binary(other, arith::remui)
    }
}

/// The ring indices of a step, emitted at the top of the loop body.
struct Step<'c, 'a> {
    rank: Value<'c, 'a>,
    slice: Value<'c, 'a>,
    partner: Value<'c, 'a>,
    /// `slice == rank`: the step whose slice is the rank's own.
    local: Value<'c, 'a>,
    /// The local step is the loop's last.
    local_last: bool,
    /// With steps in parts: the iteration's part, and each slice of the loop
    /// with its part.
    parts: Option<(chunks::Part<'c, 'a>, Vec<(Value<'c, 'a>, Value<'c, 'a>)>)>,
}

impl<'c, 'a> Step<'c, 'a> {
    /// The part of the loop's slice `view` the iteration works on.
    fn part_of_slice(&self, view: Value<'c, 'a>) -> Value<'c, 'a> {
        self.parts
            .as_ref()
            .and_then(|(_, slices)| slices.iter().find(|(slice, _)| *slice == view))
            .map_or(view, |&(_, part)| part)
    }

    /// The iteration's part of `buffer`, a view of one rank's slice along
    /// `axis` of a ring's buffer.
    fn part_of(&self, cursor: Cursor<'c, 'a>, buffer: Value<'c, 'a>, axis: i64) -> Value<'c, 'a> {
        match self.parts {
            Some((part, _)) => chunks::part_of(cursor, buffer, axis, part),
            None => buffer,
        }
    }
}

fn rewrite<'c, 'a>(
    context: &'c Context,
    backend: Backend,
    chunks: i64,
    stream_loop: &StreamLoop<'c, 'a>,
    rings: &[Ring<'c, 'a>],
) {
    let index = Type::index(context);
    let before_loop = Cursor::before(context, stream_loop.op);
    // The ring's ops go before the body's first op, after the split's.
    let first = stream_loop
        .body
        .first_operation()
        .expect("scf.for has a body");
    let (stream_loop, part) = if chunks > 1 {
        let (stream_loop, part) = chunks::split_loop(context, stream_loop, chunks);
        (stream_loop, Some(part))
    } else {
        (*stream_loop, None)
    };
    let stream_loop = &stream_loop;
    let rank = before_loop.value(
        host::RankOperation::builder(context, before_loop.location)
            .rank(index)
            .build(),
    );
    let top = Cursor::before(context, first);
    let at = |value| Emitted { value, cursor: top };
    let one = stream_loop
        .op
        .operand(2)
        .expect("scf.for has a step, checked to be 1");
    let local_last = local_step_last(rings.iter().map(|ring| ring.collective));
    let step = ring_step(at(stream_loop.index), at(one), local_last);
    let slice = slice(at(rank), step, at(stream_loop.upper)).value;
    let partner = partner(at(rank), step, at(stream_loop.upper)).value;
    let local = top.value(arith::cmpi(
        context,
        arith::CmpiPredicate::Eq,
        slice,
        rank,
        top.location,
    ));
    let parts = part.map(|part| (part, chunks::narrow_slices(context, stream_loop, part)));
    // Every slice the loop takes at its index, it now takes at the step's slice.
    for user in ir::users(stream_loop.index) {
        if ir::name(&user) == "host.select" {
            ir::mutable(user).set_operand(1, slice);
        }
    }
    let step = Step {
        rank,
        slice,
        partner,
        local,
        local_last,
        parts,
    };
    move_joins_after(context, stream_loop, rings[0].join);
    compute_in_step_order(context, stream_loop, rings[0].join, one);
    for ring in rings {
        ring_steps(context, backend, stream_loop, &step, ring);
        erase_collective(ring);
    }
}

/// Erases the collective the ring replaced, its wait, and the whole view it
/// took if nothing else uses it.
fn erase_collective(ring: &Ring) {
    // SAFETY: the wait and the collective are live, the wait has no
    // results, and the wait was the request's only user.
    unsafe {
        mlirOperationDestroy(ring.wait.to_raw());
        mlirOperationDestroy(ring.op.to_raw());
    }
    if let Some((view, _)) = ring.whole_view
        && ir::users(view.result(0).expect("a view").into()).is_empty()
    {
        // SAFETY: the view is live and, the collective gone, unused.
        unsafe { mlirOperationDestroy(view.to_raw()) }
    }
}

/// Moves the loop's joins after it, into a loop of their own: a join in the
/// loop would hold the next step's transfers on the main stream behind this
/// step's compute, and the transfers could no longer overlap it.
fn move_joins_after<'c, 'a>(
    context: &'c Context,
    stream_loop: &StreamLoop<'c, 'a>,
    join: Join<'c, 'a>,
) {
    let location = join.sync.location();
    let after = stream_loop
        .op
        .next_in_block()
        .expect("a terminator follows");
    let joins = builders::new_loop(
        context,
        &Builder::before(context, after),
        stream_loop.lower,
        stream_loop.upper,
        stream_loop.op.operand(2).expect("scf.for has a step"),
        location,
    );
    let stream = builders::pool_stream(
        context,
        &joins.body,
        joins.index,
        join.step_stream_index(),
        location,
    );
    joins
        .body
        .op("host.sync_stream", location, &[stream], &[], &[]);
    // SAFETY: the join is live and has no results.
    unsafe { mlirOperationDestroy(join.sync.to_raw()) }
}

/// Makes each step's stream wait for the previous step's, stream
/// `(%i + n - 1) mod n` of the `n` the steps use, before it computes: the steps then
/// compute one at a time, in ring order, so that a step's result (a partial
/// to send, a block to combine) is there after its own GEMM, not after all
/// the GEMMs that were ready shared the GPU. Step 0 waits for the last
/// stream, which has nothing of this loop yet.
fn compute_in_step_order<'c, 'a>(
    context: &'c Context,
    stream_loop: &StreamLoop<'c, 'a>,
    join: Join<'c, 'a>,
    one: Value<'c, 'a>,
) {
    let streams = join.step_stream_index().unwrap_or(stream_loop.upper);
    if constant(streams) == Some(1) {
        return;
    }
    let Some(switch) = ir::block_ops(stream_loop.body).find(|op| {
        ir::name(op) == "host.set_current_stream" && op.operand(0).ok() == Some(join.step_stream)
    }) else {
        return;
    };
    let after = switch.next_in_block().expect("a terminator follows");
    let location = switch.location();
    let cursor = Cursor::before(context, after).located(location);
    let at = |value| Emitted { value, cursor };
    let previous = at(stream_loop.index)
        .add(at(streams))
        .sub(at(one))
        .rem(at(streams))
        .value;
    let builder = Builder::before(context, after);
    let stream = builders::pool_stream(context, &builder, previous, None, location);
    builder.op("host.sync_stream", location, &[stream], &[], &[]);
}

/// Replaces `ring`'s collective by one exchange per step: the slice with its
/// owner, the rank's own part with the partner. For `cuda`, the two buffers
/// the transfers touch are shared once before the loop.
fn ring_steps<'c, 'a>(
    context: &'c Context,
    backend: Backend,
    stream_loop: &StreamLoop<'c, 'a>,
    step: &Step<'c, 'a>,
    ring: &Ring<'c, 'a>,
) {
    let before_loop = Cursor::before(context, stream_loop.op).located(ring.op.location());
    let at_step = Cursor::before(context, ring.at).located(ring.op.location());
    let view = step.part_of_slice(ring.view);
    let slice = as_operand_slice(at_step, ring, view, stream_loop.lower);
    let mut at_local = AtLocal::Copy;
    let (shared, receive, send) = match ring.collective {
        Collective::Allgather => {
            // Receive the slice from its owner, send the local shard to the partner.
            let own = before_loop.value(select(
                before_loop,
                ring.input,
                ring.axis,
                stream_loop.lower,
                ring.own_view,
            ));
            let own = step.part_of(at_step, own, ring.axis);
            if reads_only_the_step_slice(stream_loop, ring) {
                at_local = AtLocal::Yield(own);
            }
            (
                [ring.input, ring.sliced],
                Transfer {
                    buffer: slice,
                    peer: step.slice,
                },
                Transfer {
                    buffer: own,
                    peer: step.partner,
                },
            )
        }
        Collective::ReduceScatter(combine) => {
            // Send the partial block to its owner, receive the partner's
            // partial of this rank's block into the partner's slot.
            let (slots, slot, split) =
                partial_slots(before_loop, at_step, stream_loop, step, ring, combine);
            let slot = step.part_of(at_step, slot, ring.axis);
            if split {
                at_local = AtLocal::Nothing;
            }
            (
                [ring.sliced, slots],
                Transfer {
                    buffer: slot,
                    peer: step.partner,
                },
                Transfer {
                    buffer: slice,
                    peer: step.slice,
                },
            )
        }
    };
    if backend == Backend::Cuda {
        before_loop.insert(share_mem_handles(before_loop, &shared, ring));
    }
    let ahead = match (backend, ring.collective) {
        (Backend::Cuda, Collective::Allgather) => {
            receive_ahead::plan(at_step, stream_loop, step, ring)
        }
        _ => None,
    };
    let exchanged = at_step.insert(exchange(
        at_step,
        backend,
        step,
        ring,
        Exchange {
            receive,
            send,
            ahead,
        },
        at_local,
    ));
    let AtLocal::Yield(_) = at_local else {
        return;
    };
    // The step computes on the local shard itself, or on the received slice.
    let operand = exchanged.result(0).expect("the step's operand").into();
    ir::replace_uses(view, operand, |user| within(user, exchanged));
}

/// `view`, a slice of the buffer the loop slices, shaped as a slice of the
/// collective's operand: where that operand is a whole view, with its unit
/// axis viewed away at `zero`.
fn as_operand_slice<'c, 'a>(
    cursor: Cursor<'c, 'a>,
    ring: &Ring<'c, 'a>,
    view: Value<'c, 'a>,
    zero: Value<'c, 'a>,
) -> Value<'c, 'a> {
    match ring.whole_view {
        Some((_, unit)) => cursor.value(select(
            cursor,
            view,
            unit,
            zero,
            view_type(cursor.context, view.r#type(), unit).expect("a view is strided"),
        )),
        None => view,
    }
}

/// Whether an allgather's gathered buffer is only read through the step's
/// slice: a buffer of this function that nothing after the loop reads, whose
/// one view in the loop has the type of the local shard's. Then the local
/// step need not copy the shard into it: the step computes on the shard.
fn reads_only_the_step_slice(stream_loop: &StreamLoop, ring: &Ring) -> bool {
    if ring.whole_view.is_some() || ring.view.r#type() != ring.own_view {
        return false;
    }
    let defined_by = |value| {
        OperationResult::try_from(value)
            .ok()
            .map(|result| result.owner())
    };
    defined_by(ring.sliced).is_some_and(|alloc| ir::name(&alloc) == "host.alloc")
        && defined_by(ring.view).is_some_and(|view| within(view, stream_loop.op))
        && ir::users(ring.sliced)
            .into_iter()
            .all(|user| match ir::name(&user).as_str() {
                "host.dealloc" => true,
                "host.select" => user
                    .result(0)
                    .is_ok_and(|view| Value::from(view) == ring.view),
                _ => user == ring.op,
            })
}

/// Whether `op` is `ancestor` or nested in it.
fn within(op: OperationRef, ancestor: OperationRef) -> bool {
    let mut current = Some(op);
    while let Some(op) = current {
        if op == ancestor {
            return true;
        }
        current = op.parent_operation();
    }
    false
}

/// Where a reduce-scatter's ring receives the partials of this rank's block,
/// and how it combines them into the output; returns the slots, the step's
/// slot, and whether the combine is split.
///
/// - Split, when the local step is last (and there are two ranks or more,
///   and the output exists before the loop): one slot per remote step, the
///   step's by loop index (the local step's view, unused, is slot 0). The
///   slots are combined into the output on the main stream right after the
///   loop, where their receives were waited for, while the local step's
///   GEMM still runs; after the joins, the local partial is combined into
///   the output in place. Only one pass over a block follows the last GEMM,
///   and nothing copies the local partial.
/// - Otherwise one slot per rank, the step's the partner's; the local step
///   copies its partial into its own slot, and all are combined after the
///   joins.
fn partial_slots<'c, 'a>(
    before_loop: Cursor<'c, 'a>,
    at_step: Cursor<'c, 'a>,
    stream_loop: &StreamLoop<'c, 'a>,
    step: &Step<'c, 'a>,
    ring: &Ring<'c, 'a>,
    combine: Combine,
) -> (Value<'c, 'a>, Value<'c, 'a>, bool) {
    let context = before_loop.context;
    let location = before_loop.location;
    let partials = MemRefType::try_from(ring.input.r#type()).expect("a memref input");
    let mut shape =
        static_shape(ring.input.r#type()).expect("the extent along the axis was checked");
    let ranks = shape[ring.axis as usize];
    let split = step.local_last && ranks >= 2 && defined_before(ring.output, stream_loop.op);
    if split {
        shape[ring.axis as usize] = ranks - 1;
    }
    let slots_type = MemRefType::new(partials.element(), &shape, None, partials.memory_space());
    let slots = before_loop.value(
        host::AllocOperation::builder(context, location)
            .result(slots_type.into())
            .build(),
    );
    let slot_index = if split {
        let index = Type::index(context);
        let remote = before_loop.value(arith::constant(
            context,
            IntegerAttribute::new(index, ranks - 1).into(),
            location,
        ));
        at_step.value(arith::remui(stream_loop.index, remote, location))
    } else {
        step.partner
    };
    let slot_type =
        view_type(context, slots_type.into(), ring.axis).expect("an identity layout is strided");
    let slot = at_step.value(select(at_step, slots, ring.axis, slot_index, slot_type));

    let after_joins = Cursor::before(context, ring.op).located(location);
    let combine_at = if split {
        let joins = stream_loop.op.next_in_block().expect("the joins follow");
        Cursor::before(context, joins).located(location)
    } else {
        after_joins
    };
    let output = combine_at.value(select(
        combine_at,
        ring.output,
        ring.axis,
        stream_loop.lower,
        ring.own_view,
    ));
    combine_at.insert(combine.over(context, location, ring.axis, slots, output));
    if split {
        let own_type = view_type(context, ring.input.r#type(), ring.axis).expect("a strided input");
        let own = after_joins.value(select(
            after_joins,
            ring.input,
            ring.axis,
            step.rank,
            own_type,
        ));
        after_joins.insert(combine.in_place(context, location, output, own));
    }
    (slots, slot, split)
}

/// Whether `value` is available before `op`: an argument of an enclosing
/// block, or the result of an op before `op` in its block.
fn defined_before(value: Value, op: OperationRef) -> bool {
    let Ok(result) = OperationResult::try_from(value) else {
        return true;
    };
    let owner = result.owner();
    let Some(block) = op.block() else {
        return false;
    };
    ir::block_ops(block)
        .take_while(|before| *before != op)
        .any(|before| before == owner)
}

/// A buffer and the rank it goes to or comes from.
struct Transfer<'c, 'a> {
    buffer: Value<'c, 'a>,
    peer: Value<'c, 'a>,
}

/// What a ring's local step does in place of its transfers.
#[derive(Clone, Copy)]
enum AtLocal<'c, 'a> {
    /// Copies the buffer it would send into the one it would receive.
    Copy,
    /// Copies nothing; the `scf.if` yields the buffer the step computes on:
    /// this one (the local shard), or the received slice.
    Yield(Value<'c, 'a>),
    /// Nothing: a reduce-scatter whose local partial is combined where it
    /// was computed (see `partial_slots`).
    Nothing,
}

/// A step's transfers: what it receives and sends, and the receives it
/// posts ahead, if it does.
struct Exchange<'c, 'a> {
    receive: Transfer<'c, 'a>,
    send: Transfer<'c, 'a>,
    ahead: Option<receive_ahead::Ahead<'c, 'a>>,
}

/// `scf.if %local { at_local } else { receive, send, wait }`: at the local
/// step the sent buffer is the received one's content.
fn exchange<'c, 'a>(
    cursor: Cursor<'c, 'a>,
    backend: Backend,
    step: &Step<'c, 'a>,
    ring: &Ring<'c, 'a>,
    transfers_of: Exchange<'c, 'a>,
    at_local: AtLocal<'c, 'a>,
) -> Operation<'c> {
    let Exchange {
        receive,
        send,
        ahead,
    } = transfers_of;
    let (context, location) = (cursor.context, cursor.location);
    let request = builders::request_type(context);
    let copy = Block::new(&[]);
    match at_local {
        AtLocal::Yield(own) => {
            copy.append_operation(scf::r#yield(&[own], location));
        }
        AtLocal::Copy => {
            copy.append_operation(
                host::CopyOperation::builder(context, location)
                    .input(send.buffer)
                    .output(receive.buffer)
                    .build()
                    .into(),
            );
            copy.append_operation(scf::r#yield(&[], location));
        }
        AtLocal::Nothing => {
            copy.append_operation(scf::r#yield(&[], location));
        }
    }
    let (yielded, results): (Vec<Value>, Vec<Type>) = match at_local {
        AtLocal::Yield(_) => (vec![receive.buffer], vec![receive.buffer.r#type()]),
        AtLocal::Copy | AtLocal::Nothing => (Vec::new(), Vec::new()),
    };

    // The transfers run on the main stream, one step after the other, so
    // that each step's data arrives as early as the links allow; the step's
    // stream waits only for what it computes on.
    let transfers = Block::new(&[]);
    let ops = StreamOps {
        context,
        location,
        block: &transfers,
    };
    ops.switch_to(ring.join.main);
    if let Collective::ReduceScatter(_) = ring.collective {
        // The partial the step sends was computed on the step's stream.
        ops.sync_with(ring.join.step_stream);
    }
    if backend == Backend::Nccl {
        transfers.append_operation(
            comm::StartCoalescingOperation::builder(context, location)
                .build()
                .into(),
        );
    }
    let received = match &ahead {
        Some(ahead) => {
            for op in receive_ahead::receives(context, location, ring, &receive, ahead) {
                transfers.append_operation(op);
            }
            None
        }
        None => Some(request_of(transfers.append_operation(point_to_point(
            context,
            location,
            backend,
            ring,
            Direction::Receive,
            &receive,
        )))),
    };
    let sent = request_of(transfers.append_operation(point_to_point(
        context,
        location,
        backend,
        ring,
        Direction::Send,
        &send,
    )));
    let received = match backend {
        Backend::Nccl => Some(request_of(
            transfers.append_operation(
                comm::EndCoalescingOperation::builder(context, location)
                    .request(request)
                    .build()
                    .into(),
            ),
        )),
        Backend::Cuda => received,
    };
    if backend == Backend::Cuda {
        ops.wait(sent);
    }
    match ring.collective {
        // The step's stream computes on the received slice (waited for
        // already where it was received ahead).
        Collective::Allgather => {
            ops.switch_to(ring.join.step_stream);
            if let Some(received) = received {
                ops.wait(received);
            }
        }
        // The received partials are combined after the loop, on the main stream.
        Collective::ReduceScatter(_) => {
            if let Some(received) = received {
                ops.wait(received);
            }
            ops.switch_to(ring.join.step_stream);
        }
    }
    transfers.append_operation(scf::r#yield(&yielded, location));

    let region = |block| {
        let region = Region::new();
        region.append_block(block);
        region
    };
    scf::r#if(
        step.local,
        &results,
        region(copy),
        region(transfers),
        location,
    )
}

/// Appends the stream switches, syncs and waits of a ring's transfers to the
/// block being built.
#[derive(Clone, Copy)]
struct StreamOps<'c, 'b> {
    context: &'c Context,
    location: Location<'c>,
    block: &'b Block<'c>,
}

impl<'c> StreamOps<'c, '_> {
    /// `host.set_current_stream %stream`.
    fn switch_to(self, stream: Value<'c, '_>) {
        self.block.append_operation(
            host::SetCurrentStreamOperation::builder(self.context, self.location)
                .stream(stream)
                .build()
                .into(),
        );
    }

    /// `host.sync_stream %stream`: the current stream waits for its work so far.
    fn sync_with(self, stream: Value<'c, '_>) {
        self.block.append_operation(
            host::SyncStreamOperation::builder(self.context, self.location)
                .stream(stream)
                .build()
                .into(),
        );
    }

    /// `comm.wait %request` on the current stream.
    fn wait(self, request: Value<'c, '_>) {
        self.block.append_operation(
            comm::WaitOperation::builder(self.context, self.location)
                .request(request)
                .build()
                .into(),
        );
    }
}

/// Which way a transfer goes, for [`point_to_point`].
#[derive(Clone, Copy)]
enum Direction {
    Receive,
    Send,
}

/// `comm.recv` or `comm.send` of `transfer` on `ring`'s team over `backend`.
fn point_to_point<'c>(
    context: &'c Context,
    location: Location<'c>,
    backend: Backend,
    ring: &Ring<'c, '_>,
    direction: Direction,
    transfer: &Transfer<'c, '_>,
) -> Operation<'c> {
    let request = builders::request_type(context);
    let on: Attribute =
        IntegerAttribute::new(IntegerType::new(context, 32).into(), backend.code()).into();
    match direction {
        Direction::Receive => comm::RecvOperation::builder(context, location)
            .request(request)
            .buffer(transfer.buffer)
            .peer(transfer.peer)
            .team(ring.team)
            .backend(on)
            .build()
            .into(),
        Direction::Send => comm::SendOperation::builder(context, location)
            .request(request)
            .buffer(transfer.buffer)
            .peer(transfer.peer)
            .team(ring.team)
            .backend(on)
            .build()
            .into(),
    }
}

/// The request a transfer returns.
fn request_of<'c, 'b>(op: OperationRef<'c, 'b>) -> Value<'c, 'b> {
    op.result(0).expect("a transfer has a request").into()
}

fn share_mem_handles<'c>(
    cursor: Cursor<'c, '_>,
    buffers: &[Value<'c, '_>],
    ring: &Ring<'c, '_>,
) -> Operation<'c> {
    comm::ShareMemHandlesOperation::builder(cursor.context, cursor.location)
        .buffers(buffers)
        .team(ring.team)
        .build()
        .into()
}

/// `host.select %source[axis][%index]`, of type `view` (see [`view_type`]).
fn select<'c>(
    cursor: Cursor<'c, '_>,
    source: Value<'c, '_>,
    axis: i64,
    index: Value<'c, '_>,
    view: Type<'c>,
) -> Operation<'c> {
    let context = cursor.context;
    host::SelectOperation::builder(context, cursor.location)
        .result(view)
        .source(source)
        .index(index)
        .axis(IntegerAttribute::new(
            IntegerType::new(context, 64).into(),
            axis,
        ))
        .build()
        .into()
}

/// The strides of a memref type with a strided layout.
fn strides(r#type: Type) -> Option<Vec<i64>> {
    let r#type = MemRefType::try_from(r#type).ok()?;
    let mut strides = vec![0; r#type.rank()];
    let mut offset = 0;
    // SAFETY: `strides` has one element per axis.
    let strided = unsafe {
        mlirMemRefTypeGetStridesAndOffset(r#type.to_raw(), strides.as_mut_ptr(), &mut offset)
    };
    (strided.value != 0).then_some(strides)
}

/// The shape of a memref type whose extents are all static.
fn static_shape(r#type: Type) -> Option<Vec<i64>> {
    let r#type = MemRefType::try_from(r#type).ok()?;
    (0..r#type.rank())
        .map(|axis| match r#type.dim_size(axis).ok()? {
            DimSize::Static(extent) => Some(extent as i64),
            DimSize::Dynamic => None,
        })
        .collect()
}

/// The type of a `host.select` of `source` along `axis` (as
/// `SelectOp::inferResultType`): the axis dropped, the strides kept, the
/// offset dynamic.
fn view_type<'c>(context: &'c Context, source: Type<'c>, axis: i64) -> Option<Type<'c>> {
    let mut strides = strides(source)?;
    let source = MemRefType::try_from(source).ok()?;
    let mut shape: Vec<i64> = (0..source.rank())
        .map(|axis| match source.dim_size(axis) {
            Ok(DimSize::Static(extent)) => extent as i64,
            // SAFETY: a constant of MLIR's.
            _ => unsafe { mlirShapedTypeGetDynamicSize() },
        })
        .collect();
    shape.remove(axis as usize);
    strides.remove(axis as usize);
    let offset = MemRefType::dynamic_stride_or_offset();
    let layout = StridedLayoutAttribute::new(context, offset, &strides);
    Some(
        MemRefType::new(
            source.element(),
            &shape,
            Some(layout.into()),
            source.memory_space(),
        )
        .into(),
    )
}

//===----------------------------------------------------------------------===//
// IR helpers
//===----------------------------------------------------------------------===//

/// The value of an integer attribute of `op`.
fn integer_attribute(op: &OperationRef, attribute: &str) -> Option<i64> {
    let attribute = op.attribute(attribute).ok()?;
    Some(IntegerAttribute::try_from(attribute).ok()?.value())
}

/// The value of an `arith.constant` of integer type.
fn constant(value: Value) -> Option<i64> {
    let op = OperationResult::try_from(value).ok()?.owner();
    (ir::name(&op) == "arith.constant").then(|| integer_attribute(&op, "value"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The formulas on integers, with `arith.subi` on `index` checked not to
    /// go below zero (the pass emits `remui` after it).
    impl RingArith for u64 {
        fn add(self, other: Self) -> Self {
            self + other
        }

        fn sub(self, other: Self) -> Self {
            self.checked_sub(other)
                .expect("the ring formulas never subtract below zero")
        }

        fn rem(self, other: Self) -> Self {
            self % other
        }
    }

    /// A message posted at one step: from which rank to which, and what.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    struct Message {
        from: u64,
        to: u64,
    }

    /// The sends and receives every rank posts at `step`, sorted, and the
    /// ranks that copy locally; `receive_from` and `send_to` say what a rank
    /// does at a step.
    fn post(
        size: u64,
        step: u64,
        receive_from: fn(u64, u64, u64) -> u64,
        send_to: fn(u64, u64, u64) -> u64,
    ) -> (Vec<Message>, Vec<Message>, Vec<u64>) {
        let (mut sends, mut receives, mut local) = (Vec::new(), Vec::new(), Vec::new());
        for rank in 0..size {
            // The pass's local test, `slice == rank`.
            if slice(rank, step, size) == rank {
                assert_eq!(step % size, 0, "only step 0 (mod size) is local");
                assert_eq!(partner(rank, step, size), rank);
                local.push(rank);
                continue;
            }
            let (from, to) = (receive_from(rank, step, size), send_to(rank, step, size));
            assert!(from < size && to < size && from != rank && to != rank);
            receives.push(Message { from, to: rank });
            sends.push(Message { from: rank, to });
        }
        sends.sort();
        receives.sort();
        (sends, receives, local)
    }

    #[test]
    fn allgather_ring_gathers_every_slice_once() {
        for size in 1..=8 {
            // gathered[rank][slice]: whose shard is there.
            let mut gathered = vec![vec![None; size as usize]; size as usize];
            assert!(!local_step_last([Collective::Allgather]));
            for step in 0..size {
                // Receive slice `slice` from its owner, send the own shard to the partner.
                let (sends, receives, local) = post(size, step, slice, partner);
                assert_eq!(
                    sends, receives,
                    "size {size}, step {step}: unmatched transfers"
                );
                assert_eq!(local.len() as u64, if step == 0 { size } else { 0 });
                for rank in local {
                    // The copy of the own shard into the step's slice.
                    gathered[rank as usize][slice(rank, step, size) as usize] = Some(rank);
                }
                for Message { from, to } in sends {
                    // `to` stores what arrives in its slice of this step.
                    let into = slice(to, step, size);
                    assert_eq!(into, from, "the slice received is the sender's shard");
                    let slot = &mut gathered[to as usize][into as usize];
                    assert_eq!(
                        *slot, None,
                        "size {size}: rank {to} gets slice {into} twice"
                    );
                    *slot = Some(from);
                }
            }
            for (rank, slices) in gathered.iter().enumerate() {
                let expected: Vec<_> = (0..size).map(Some).collect();
                assert_eq!(slices, &expected, "size {size}: rank {rank}");
            }
        }
    }

    #[test]
    fn reduce_scatter_ring_brings_every_partial_once() {
        for size in 1..=8 {
            // slots[rank][source]: which block of which rank's partials is there.
            let mut slots = vec![vec![None; size as usize]; size as usize];
            let local_last = local_step_last([Collective::ReduceScatter(Combine::Sum)]);
            assert!(local_last);
            for index in 0..size {
                let step = ring_step(index, 1, local_last);
                // Receive from the partner into its slot, send block `slice` to its owner.
                let (sends, receives, local) = post(size, step, partner, slice);
                assert_eq!(
                    sends, receives,
                    "size {size}, step {step}: unmatched transfers"
                );
                let last = index == size - 1;
                assert_eq!(local.len() as u64, if last { size } else { 0 });
                for rank in local {
                    // The copy of the step's block into the partner's slot.
                    let slot = partner(rank, step, size) as usize;
                    slots[rank as usize][slot] = Some((rank, slice(rank, step, size)));
                }
                for Message { from, to } in sends {
                    let block = slice(from, step, size);
                    let slot = partner(to, step, size);
                    assert_eq!(slot, from, "the slot is the sender's");
                    let slot = &mut slots[to as usize][slot as usize];
                    assert_eq!(
                        *slot, None,
                        "size {size}: rank {to} gets {from}'s block twice"
                    );
                    *slot = Some((from, block));
                }
            }
            // Slot q of rank r holds rank q's partial of block r: their
            // combination over the slots is block r of the reduce-scatter.
            for (rank, slots) in slots.iter().enumerate() {
                let expected: Vec<_> = (0..size)
                    .map(|source| Some((source, rank as u64)))
                    .collect();
                assert_eq!(slots, &expected, "size {size}: rank {rank}");
            }
        }
    }
}
