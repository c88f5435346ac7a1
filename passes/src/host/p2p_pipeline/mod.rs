//! `host-p2p-pipeline{backend=nccl|cuda}`: turns a collective whose
//! communicated axis is the axis of a stream loop into a ring of
//! point-to-point transfers fused into that loop.
//!
//! The stream loops come as `host.stream_for` ops from
//! convert-fusion-to-host, fused by host-stream-parallelize. The pass reads
//! each loop a collective is sliced by along its communicated axis from the
//! op itself ([`plan`]): its range, its caller stream, its `streams`
//! rotation, its body's index and stream arguments, selects and compute, as
//! the op's verifier guarantees them. It then expands the loops with a ring
//! with host-lower-stream-for's [`lower_stream_for::expand`], which returns
//! the work loop, the step's stream and the join it made, and builds the
//! ring's loops from those (the joins move out of the loop, so the ring's
//! output is `scf.for` loops with explicit stream ops). Nothing recognises
//! the expanded form.
//!
//! A stream loop cannot run a collective slice by slice along the axis
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
//!   `sum`, with a `host.matmul` or a bias-free `host.linear` writing the
//!   partials, as a chain of accumulating GEMMs ([`chain`]);
//! - with `allreduce=ring`, an **allreduce** after a stream loop that writes
//!   its input block by block (GEMM+AR): a reduce-scatter into the rank's
//!   block of the output, whose ring the pass then makes, and an allgather
//!   ring of the blocks after it ([`allreduce`]).
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
//! comes last: see [`plan::local_step_last`]) the rank at position `r` works on
//!
//! - slice `(r + i) mod D` ([`schedule::slice`]), whose owner is that position, and
//! - its partner `(D + r - i) mod D` ([`schedule::partner`]), the rank whose slice at
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
//! Each step of a `host.stream_for` joins the step's stream back into the
//! caller's, `%main` (expanded: `host.set_current_stream %main`,
//! `host.sync_stream %step`). The ring's transfers run on `%main`, one step after the other, so that step `i`'s data arrives after
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
//! index for anything but the stream and slices, or slices used off the
//! step's stream.
//!
//! ```mlir
//! %r = comm.allgather %a into %g team [0, 1, 2, 3]
//!     : memref<1x128x64xbf16> into memref<4x128x64xbf16>
//! comm.wait %r
//! host.stream_for %c0 to %c4 step %c1 from %main {    // the stream loop
//! ^bb0(%i: index, %s: !host.stream):
//!   %gi = host.select %g[0][%i] : ...
//!   host.matmul ins(%gi, %b : ...) outs(...)
//!   ...
//! }
//! ```
//! becomes, with `backend=nccl`,
//! ```mlir
//! scf.for %i = %c0 to %c4 step %c1 { ... }            // the fork: each pool stream syncs %main
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
//!
//! # Modules
//!
//! Each module uses only those listed before it (no cycle):
//!
//! - [`schedule`]: the ring formulas (`ring_step`, `slice`, `partner`) over
//!   `RingArith`, emitted as `arith` ops or evaluated by the schedule tests;
//! - [`plan`]: reading the stream loops from their `host.stream_for` and
//!   finding their collectives (`Ring`, `match_collective`), and the IR
//!   queries the others share;
//! - [`chunks`]: steps in parts (uses `plan`);
//! - [`exchange`]: the backends and the point-to-point transfers (`plan`);
//! - [`receive_ahead`]: the receives posted a part ahead (`schedule`,
//!   `plan`, `chunks`, `exchange`);
//! - [`rewrite`]: the ring rewrite (all of the above);
//! - [`chain`]: the chain of accumulating GEMMs (all of the above);
//! - [`allreduce`]: GEMM+AR's allreduce split into a reduce-scatter and an
//!   allgather ring, before the others run (`schedule`, `plan`, `exchange`);
//! - this module: the pass, its options, and the choice of parts.
//!
//! Ops are inserted with [`crate::builders::Builder`], as in every pass.

mod allreduce;
mod chain;
mod chunks;
mod exchange;
mod plan;
mod receive_ahead;
mod rewrite;
mod schedule;

pub use exchange::Transport;

use crate::{HirPass, host::lower_stream_for};
use melior::{
    IrRewriter, RewriterBase,
    ir::{OperationRef, operation::OperationLike},
};
use plan::{Collective, Reported, Ring, StreamLoop};

/// The op the pass runs on.
pub const ANCHOR: &str = crate::ops::FUNCTION;

pub const ARGUMENT: &str = "host-p2p-pipeline";

crate::choice! {
    /// What becomes of an allreduce that a stream loop writes the input of
    /// (the `allreduce` option).
    pub enum Allreduce {
        /// It stays whole after its loop.
        Whole = "whole",
        /// A reduce-scatter ring, then an allgather ring ([`allreduce`]).
        Ring = "ring",
    }
}

crate::choice! {
    /// How a ring step's stream waits for the previous step's (the
    /// `stream-sync` option).
    pub enum StreamSync {
        /// Before it computes, for the whole previous step (its compute too);
        /// the transfers run on the caller's stream, in step order
        /// ([`rewrite::compute_in_step_order`]).
        Step = "step",
        /// nvFuser's `inter_stream_synchronization`, for loops whose rings are
        /// all allgathers: each step's transfers run on the step's own stream,
        /// and right after them the next step's stream waits for it, where that
        /// stream is the next of the pool (`i + 1 < n`: guarded at the wrap), so
        /// the next transfer follows this one's but no step waits for another's
        /// compute ([`rewrite::sync_next_after_transfers`]).
        Comm = "comm",
    }
}

/// [`StreamSync::Comm`] runs whole ring steps: `chunks` must be 0 or 1. The
/// options' names are the caller's (the pass's or `hir-lower`'s).
pub fn check_chunks(
    sync: StreamSync,
    chunks: usize,
    sync_option: &str,
    chunks_option: &str,
) -> Result<(), String> {
    if sync == StreamSync::Comm && chunks > 1 {
        return Err(format!(
            "{sync_option}=comm runs whole ring steps; it needs {chunks_option}=0 or {chunks_option}=1, not {chunks_option}={chunks}"
        ));
    }
    Ok(())
}

/// Creates the pass (anchored on `func.func`): rings over `backend`, each
/// step in `chunks` parts, or in the parts the pass chooses where `chunks` is
/// 0 (see [`chunks`]); with [`Allreduce::Ring`], GEMM+AR's allreduce as
/// rings too; the steps' streams synchronized as `sync` says. With
/// [`StreamSync::Comm`], `chunks` is 0 or 1 (the caller checks it): the
/// allgather rings it applies to run whole steps.
pub fn create(
    backend: Transport,
    chunks: i64,
    allreduce: Allreduce,
    sync: StreamSync,
) -> Box<dyn HirPass> {
    Box::new(P2pPipeline {
        backend,
        chunks,
        allreduce,
        sync,
    })
}

struct P2pPipeline {
    backend: Transport,
    chunks: i64,
    allreduce: Allreduce,
    sync: StreamSync,
}

impl HirPass for P2pPipeline {
    fn run(&mut self, function: OperationRef) -> bool {
        let context = function.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        // GEMM+AR's allreduce as a reduce-scatter (whose ring the plan finds) and an allgather ring.
        if self.allreduce == Allreduce::Ring
            && allreduce::split(context, self.backend, function).is_err()
        {
            return false;
        }
        let rewriter = IrRewriter::from_op(function);
        match plan(function, self.chunks, self.sync) {
            Ok(loops) => {
                for (stream_for, rings, chunks) in loops {
                    let gemm = chain::gemm(&stream_for, &rings, chunks);
                    let (stream_loop, rings) =
                        expand(&rewriter.as_rewriter_base(), &stream_for, rings);
                    match gemm {
                        Some(gemm) => chain::rewrite(
                            context,
                            self.backend,
                            chunks,
                            &stream_loop,
                            &rings[0],
                            gemm,
                        ),
                        None => rewrite::rewrite(
                            context,
                            self.backend,
                            chunks,
                            self.sync,
                            &stream_loop,
                            &rings,
                        ),
                    }
                }
                true
            }
            Err(Reported) => false,
        }
    }
}

/// Expands the `host.stream_for` of `stream_loop` into its fork loop and
/// its work loop, the scf.for form the ring's loops are made of; returns the
/// work loop and the rings in it.
fn expand<'c, 'a>(
    rewriter: &RewriterBase<'c, '_>,
    stream_loop: &StreamLoop<'c, 'a>,
    rings: Vec<Ring<'c, 'a>>,
) -> (StreamLoop<'c, 'a>, Vec<Ring<'c, 'a>>) {
    let expanded = lower_stream_for::expand(rewriter, stream_loop.op);
    let rings = rings
        .into_iter()
        .map(|ring| Ring {
            // A step that went at the body's end goes before the join.
            at: if ring.at == ring.join.sync {
                expanded.join
            } else {
                ring.at
            },
            join: ring.join.expanded(&expanded),
            ..ring
        })
        .collect();
    (StreamLoop::expanded(&expanded), rings)
}

/// Every stream loop with a ring, its rings, and the parts of its steps.
type Plan<'c, 'a> = Vec<(StreamLoop<'c, 'a>, Vec<Ring<'c, 'a>>, i64)>;

/// The rings of `function`, grouped by loop, each loop with the parts of
/// its steps; nothing when an error was emitted (then the function is left
/// as it is).
fn plan<'c, 'a>(
    function: OperationRef<'c, 'a>,
    chunks: i64,
    sync: StreamSync,
) -> Result<Plan<'c, 'a>, Reported> {
    let (loops, mut failed) = plan::rings(function);
    let mut planned = Vec::new();
    for (stream_loop, rings) in loops {
        failed |= plan::check_index_uses(&stream_loop).is_err();
        let parts = if chunks == CHOSEN {
            chosen(&stream_loop, &rings, sync)
        } else {
            failed |= chunks > 1 && chunks::check(&stream_loop, chunks).is_err();
            chunks
        };
        planned.push((stream_loop, rings, parts));
    }
    if failed { Err(Reported) } else { Ok(planned) }
}

/// The `chunks` option that lets the pass choose the parts.
const CHOSEN: i64 = 0;

/// The parts the pass chooses for a loop's steps: 2 where its rings are all
/// allgathers, or one reduce-scatter that runs as a chain of accumulating
/// GEMMs ([`chain`]), and its steps split in two; else 1. An
/// allgather step's compute waits for its whole slice, so the last
/// transfer's time is exposed; in halves, only half of it is. On 4 × H200
/// (hir-bench, p2p-cuda, D=4), 2 parts took AG+GEMM from 0.968 / 0.995 /
/// 0.872 of the GEMM alone to 1.004 / 0.998 / 0.907 at 32768×16384×8192 /
/// 8192×16384×8192 / 16384×8192×2048; 4 parts made the third 0.830, its
/// GEMMs too small to fill the GPU. A chain's step needs the previous rank's
/// sum of the same part, so whole steps would wait a transfer each. Other
/// reduce-scatters combine after all their steps whatever their parts: in
/// halves, GEMM+RS went from 0.883 / 0.887 / 0.684 to 0.891 / 0.870 / 0.617.
/// With [`StreamSync::Comm`], allgather rings run whole steps, as nvFuser's.
fn chosen<'c, 'a>(
    stream_loop: &StreamLoop<'c, 'a>,
    rings: &[Ring<'c, 'a>],
    sync: StreamSync,
) -> i64 {
    let allgathers = rings
        .iter()
        .all(|ring| matches!(ring.collective, Collective::Allgather));
    let chain = chain::gemm(stream_loop, rings, 2).is_some();
    let split = if allgathers {
        sync == StreamSync::Step
    } else {
        chain
    };
    if split && chunks::splits(stream_loop, 2) {
        2
    } else {
        1
    }
}
