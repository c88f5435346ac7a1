//! `host-auto-stream{collectives=rings|rooted}`: the stream loops of a
//! program written without stream axes, chosen so that each allgather into
//! a contraction and each contraction into a reduce-scatter is a pipeline.
//!
//! A natural tensor-parallel program (`[S, H]` activations with their
//! tokens split over D devices, Megatron's sequence parallelism) gathers
//! the tokens before the column-parallel GEMMs and reduce-scatters the
//! row-parallel GEMMs' partial sums back onto them. Without stream axes
//! convert-fusion-to-host runs each collective whole, next to its GEMM. This
//! pass picks what `stream<D>` on the GEMMs' token axis would have given
//! (one chunk per device: chunk `i` is device `i`'s tokens) and builds those
//! loops:
//!
//! - an **allgather** along axis `a` of D members whose output
//!   `host.linear`/`host.matmul` ops read, as their first operand, with `a`
//!   mapped to a row (or batch) axis of their output: the GEMMs go in one
//!   `host.stream_for` of D iterations in front of the first, each on chunk
//!   `i` of the gathered rows and of its output's rows (AG+GEMM); other ops
//!   may read the gathered buffer whole after the first GEMM (after the
//!   loop: a backward's weight gradient);
//! - a **reduce-scatter** along axis `a` of D members whose input is written
//!   only by one `host.linear`/`host.matmul` right before it, `a` a row (or
//!   batch) axis of its output that its first operand's rows map to: the GEMM
//!   goes in a `host.stream_for` of D iterations, on chunk `i` of its first
//!   operand's rows and of the partial sums' (GEMM+RS).
//!
//! Each loop is then written in the pre-split form by host-presplit-chunks'
//! rewrite (`memref.expand_shape` views of the collective's buffers,
//! `host.select` slices at the index), the form the pipelines work on. With
//! `collectives=rings` (the default; `hir-lower` with `p2p=nccl|cuda`) the
//! collectives stay whole next to their loops, for host-p2p-pipeline's rings
//! (the AG ring, the GEMM+RS chain or ring); with `collectives=rooted`
//! (`hir-lower` with `p2p=none`) they become one rooted broadcast or reduce
//! per iteration now (host-broadcast-pipeline's and host-reduce-pipeline's
//! rewrites), so that the program overlaps without rings.
//!
//! Only a function with no `host.stream_for` is changed: stream axes the
//! user wrote are the schedule. A collective whose buffers are not
//! contiguous, whose team is not the whole mesh in order or of one rank,
//! whose request is used otherwise than by one `comm.wait` in its block, or
//! whose buffer another op reads or writes, stays whole: the pass changes
//! what it recognises and leaves the rest, so it cannot fail.

use super::{broadcast_pipeline, presplit_chunks, reduce_pipeline};
use crate::{
    HirPass,
    builders::{self, Builder},
    ir,
    ops::Op,
    rewrite,
};
use melior::{
    Context, RewriterBase,
    ir::{BlockLike, OperationRef, RegionLike, Value, ValueLike, operation::OperationLike},
};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;
pub const ARGUMENT: &str = "host-auto-stream";

crate::choice! {
    /// How the collectives of the loops host-auto-stream makes run.
    pub enum Collectives {
        /// Whole next to their loops, for host-p2p-pipeline's rings.
        Rings = "rings",
        /// One rooted broadcast or reduce per iteration, without rings.
        Rooted = "rooted",
    }
}

/// Creates the pass (anchored on `func.func`).
pub fn create(collectives: Collectives) -> Box<dyn HirPass> {
    Box::new(AutoStream { collectives })
}

struct AutoStream {
    collectives: Collectives,
}

impl HirPass for AutoStream {
    fn run(&mut self, function: OperationRef) -> bool {
        let ops = ir::nested(function);
        if ops.iter().any(|op| Op::HostStreamFor.is(op)) {
            return true;
        }
        // The collectives only: the rooted rewrites erase waits and views
        // that a list of every op would still name.
        let collectives: Vec<OperationRef> = ops
            .into_iter()
            .filter(|op| Op::CommAllgather.is(op) || Op::CommReduceScatter.is(op))
            .collect();
        let context = function.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        let rewriter = rewrite::rewriter(function);
        let rewriter = rewriter.as_rewriter_base();
        for op in collectives {
            let made = if Op::CommAllgather.is(&op) {
                Gather::of(op).map(|gather| gather.rewrite(context, &rewriter, function))
            } else {
                Scatter::of(op).map(|scatter| scatter.rewrite(context, &rewriter, function))
            };
            let Some(stream_for) = made else { continue };
            presplit_chunks::presplit_loop(&rewriter, stream_for);
            if self.collectives == Collectives::Rooted {
                if Op::CommAllgather.is(&op) {
                    broadcast_pipeline::rewrite(context, &rewriter, op);
                } else {
                    reduce_pipeline::rewrite(context, &rewriter, op);
                }
            }
        }
        true
    }
}

/// A GEMM of a loop: its position, and for each operand the axis chunk `i`
/// is taken along (`None`: whole).
struct Gemm<'c, 'a> {
    op: OperationRef<'c, 'a>,
    chunked: Vec<Option<usize>>,
}

impl<'c, 'a> Gemm<'c, 'a> {
    /// `op` as a GEMM of a loop over `chunks` chunks of its output's axis
    /// `output_axis`, if it is a `host.linear` or `host.matmul` whose
    /// operands are sliced only where a contiguous buffer's axis of the
    /// output's extent (a multiple of `chunks`) maps to it.
    fn of(op: OperationRef<'c, 'a>, output_axis: usize, chunks: i64) -> Option<Self> {
        if !(Op::HostLinear.is(&op) || Op::HostMatmul.is(&op)) {
            return None;
        }
        let maps = hir_dialects::axis_map(&op)?;
        let broadcast = hir_dialects::broadcast_axes(&op)?;
        let output = ir::operand(&op, hir_dialects::destination(&op)?)?;
        let extent = *builders::static_shape(output.r#type())?.get(output_axis)?;
        if extent % chunks != 0 {
            return None;
        }
        // The output's last axis is N: chunks of rows or batches only.
        if output_axis + 1 == builders::static_shape(output.r#type())?.len() {
            return None;
        }
        let mut chunked = Vec::new();
        for (position, (map, broadcast)) in maps.iter().zip(&broadcast).enumerate() {
            let axis = map
                .iter()
                .position(|&mapped| mapped == Some(output_axis))
                .filter(|&axis| !broadcast[axis]);
            if let Some(axis) = axis {
                let operand = ir::operand(&op, position)?;
                if !builders::is_contiguous(operand.r#type())
                    || builders::static_shape(operand.r#type())?[axis] != extent
                {
                    return None;
                }
            }
            chunked.push(axis);
        }
        Some(Gemm { op, chunked })
    }

    /// Moves the GEMM before `terminator`, in a loop over `iterations`
    /// chunks at `index`, and takes its chunks.
    fn chunk(
        &self,
        context: &'c Context,
        rewriter: &RewriterBase,
        terminator: OperationRef<'c, 'a>,
        index: Value<'c, 'a>,
        iterations: i64,
    ) {
        rewriter.move_op_before(self.op, terminator);
        let at = Builder::before(context, self.op);
        let location = self.op.location();
        for (position, axis) in self.chunked.iter().enumerate() {
            let Some(axis) = *axis else { continue };
            let operand = ir::operand(&self.op, position).expect("an operand");
            let chunk = at.part(operand, axis, index, iterations, location);
            rewrite::set_operand(rewriter, self.op, position, chunk);
        }
    }
}

/// An allgather whose output only GEMMs read, along their rows.
struct Gather<'c, 'a> {
    members: i64,
    gemms: Vec<Gemm<'c, 'a>>,
}

impl<'c, 'a> Gather<'c, 'a> {
    fn of(allgather: OperationRef<'c, 'a>) -> Option<Self> {
        let (members, axis) = collective(allgather)?;
        let output = ir::operand(&allgather, 1)?;
        let wait = ir::sole_wait(allgather)?;
        let mut gemms: Vec<Gemm> = Vec::new();
        // Ops that read the whole gathered buffer: they must follow the loop.
        let mut later_readers: Vec<OperationRef> = Vec::new();
        for user in ir::users(output) {
            if user == allgather {
                continue;
            }
            if user.block() != allgather.block() || !wait.is_before_in_block(user) {
                return None;
            }
            // Reads the rows as its first operand.
            let gemm = Some(user)
                .filter(|user| {
                    ir::operand(user, 0) == Some(output)
                        && user.operands().skip(1).all(|operand| operand != output)
                })
                .and_then(|user| {
                    let maps = hir_dialects::axis_map(&user)?;
                    Gemm::of(user, maps.first()?.get(axis).copied().flatten()?, members)
                });
            match gemm {
                Some(gemm) => gemms.push(gemm),
                None if hir_dialects::destination(&user)
                    .is_some_and(|written| ir::operand(&user, written) != Some(output)) =>
                {
                    later_readers.push(user);
                }
                None => return None,
            }
        }
        gemms.sort_by(|a, b| {
            if a.op.is_before_in_block(b.op) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        });
        let first = gemms.first()?.op;
        // A backward's weight gradient reads the gathered rows whole, after
        // the loop has gathered them all.
        if later_readers
            .iter()
            .any(|reader| !first.is_before_in_block(*reader))
        {
            return None;
        }
        // Each later GEMM moves up to the first: what it reads is there
        // already, and nothing between reads or writes its buffers.
        for gemm in &gemms[1..] {
            let between: Vec<OperationRef> =
                std::iter::successors(first.next_in_block(), |op| op.next_in_block())
                    .take_while(|&op| op != gemm.op)
                    .filter(|op| gemms.iter().all(|other| other.op != *op))
                    .collect();
            for operand in gemm.op.operands() {
                if operand != output && rewrite::definitions_after(operand, first).is_none() {
                    return None;
                }
                let touched = between.iter().any(|op| {
                    op.operands().any(|used| used == operand)
                        && !rewrite::definitions_after(operand, first)
                            .is_some_and(|moved| moved.contains(op))
                });
                if touched {
                    return None;
                }
            }
        }
        Some(Gather { members, gemms })
    }

    /// The loop of the GEMMs, in front of the first.
    fn rewrite(
        self,
        context: &'c Context,
        rewriter: &RewriterBase,
        function: OperationRef<'c, 'a>,
    ) -> OperationRef<'c, 'a> {
        let first = self.gemms[0].op;
        for gemm in &self.gemms {
            for operand in gemm.op.operands() {
                rewrite::hoist_before(rewriter, operand, first);
            }
        }
        let (stream_for, terminator, index) = new_loop(context, function, first, self.members);
        for gemm in &self.gemms {
            gemm.chunk(context, rewriter, terminator, index, self.members);
        }
        stream_for
    }
}

/// A reduce-scatter of the partial sums one GEMM writes right before it.
struct Scatter<'c, 'a> {
    members: i64,
    gemm: Gemm<'c, 'a>,
}

impl<'c, 'a> Scatter<'c, 'a> {
    fn of(reduce_scatter: OperationRef<'c, 'a>) -> Option<Self> {
        let (members, axis) = collective(reduce_scatter)?;
        let input = ir::operand(&reduce_scatter, 0)?;
        let output = ir::operand(&reduce_scatter, 1)?;
        ir::sole_wait(reduce_scatter)?;
        if !builders::is_contiguous(output.r#type()) {
            return None;
        }
        // The partial sums: one GEMM writes them, and only the reduce-scatter
        // reads them, right after it (nothing between does work).
        let mut writers = ir::users(input)
            .into_iter()
            .filter(|&user| user != reduce_scatter);
        let (Some(writer), None) = (writers.next(), writers.next()) else {
            return None;
        };
        let position = hir_dialects::destination(&writer)?;
        if writer.block() != reduce_scatter.block()
            || ir::operand(&writer, position) != Some(input)
            || writer
                .operands()
                .filter(|&operand| operand == input)
                .count()
                != 1
        {
            return None;
        }
        let idle = std::iter::successors(writer.next_in_block(), |op| op.next_in_block())
            .take_while(|&op| op != reduce_scatter)
            .all(|op| {
                matches!(
                    Op::of(&op),
                    Some(Op::ArithConstant | Op::HostAlloc | Op::HostSelect)
                )
            });
        if !idle {
            return None;
        }
        let gemm = Gemm::of(writer, axis, members)?;
        // The rows of the partial sums come from the first operand's rows.
        gemm.chunked[0]?;
        Some(Scatter { members, gemm })
    }

    /// The GEMM in a loop of its own, where it was.
    fn rewrite(
        self,
        context: &'c Context,
        rewriter: &RewriterBase,
        function: OperationRef<'c, 'a>,
    ) -> OperationRef<'c, 'a> {
        let (stream_for, terminator, index) =
            new_loop(context, function, self.gemm.op, self.members);
        self.gemm
            .chunk(context, rewriter, terminator, index, self.members);
        stream_for
    }
}

/// The team size and axis of a collective that a loop of one chunk per
/// member can take: a team of two or more, the whole mesh in order, and
/// contiguous buffers.
fn collective(op: OperationRef) -> Option<(i64, usize)> {
    let members = ir::whole_mesh_size(&op).filter(|&members| members >= 2)?;
    let axis = usize::try_from(ir::integer_attribute(&op, "axis").unwrap_or(0)).ok()?;
    let contiguous = (0..2).all(|position| {
        ir::operand(&op, position).is_some_and(|buffer| builders::is_contiguous(buffer.r#type()))
    });
    contiguous.then_some((members, axis))
}

/// A `host.stream_for` of `iterations` iterations in front of `next`, from
/// the function's caller stream (read at its entry, once): the loop, its
/// body's terminator and its index.
fn new_loop<'c, 'a>(
    context: &'c Context,
    function: OperationRef<'c, 'a>,
    next: OperationRef<'c, 'a>,
    iterations: i64,
) -> (OperationRef<'c, 'a>, OperationRef<'c, 'a>, Value<'c, 'a>) {
    let location = next.location();
    let entry = function
        .region(0)
        .expect("a function has a body")
        .first_block()
        .expect("with a block");
    let existing = ir::block_ops(entry).find(|op| Op::HostGetCurrentStream.is(op));
    let caller = match existing {
        Some(op) => builders::result(op),
        None => {
            let first = entry.first_operation().expect("the body has ops");
            Builder::before(context, first).current_stream(location)
        }
    };
    Builder::before(context, next).stream_for(iterations, caller, location)
}
