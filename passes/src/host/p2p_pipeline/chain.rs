//! A reduce-scatter by `sum` whose partial blocks are GEMM outputs, as a
//! chain of accumulating GEMMs (the reduce-scatter ring of NCCL, with the
//! reduction done by the GEMMs).
//!
//! Block `b`'s partials are summed along the ring: the rank at position
//! `b + 1` computes its partial of `b` at step 0 and sends it on to the rank
//! before it, each next rank adds its own partial to what arrived
//! (`host.matmul {accumulate}`, the GEMM's `beta = 1`) and sends the sum on,
//! and `b`'s owner adds the last partial at step `D - 1`, into the output.
//! At step `i`, the rank at position `r` works on block `(r + i + 1) mod D`
//! (the split form's slice, local step last), receives from `(r + 1) mod D`
//! and sends to `(r + D - 1) mod D`. Nothing combines the partials after the
//! loop: the last GEMM writes the result.
//!
//! A step's GEMM needs the sum the previous rank computed at the previous
//! step, so a whole-step chain would wait one transfer per step; the chain
//! runs in the parts of [`super::chunks`] (`c >= 2`): part `k` of a step
//! arrives while part `k + 1` of the previous one computes. The receive for
//! iteration `j + c` is posted at iteration `j`, before its send, and its
//! wait goes on the stream of iteration `j + c` (each iteration has its own
//! pool stream, `j mod n`), so that the request never crosses iterations and
//! no host waits for a receive its peer posts later (a `cuda` send waits on
//! the host for its receive). With `n <= c` pool streams a later part's
//! wait lands before an earlier part's GEMM: still correct, but serial.

use super::{
    chunks,
    exchange::{Direction, Transfer, Transport, as_operand_slice, point_to_point, request_of},
    plan::{Collective, Combine, Ring, StreamLoop, constant, defined_before, integer_attribute},
    rewrite::{compute_in_step_order, erase_collective, move_joins_after},
    schedule::{Emitted, RingArith, partner, ring_step, slice},
};
use crate::{
    builders::{self, Builder, static_shape, view_type},
    ir,
    ops::Op,
    rewrite,
};
use hir_dialects::{comm, host};
use melior::{
    Context,
    dialect::{arith, scf},
    ir::{
        Attribute, Block, BlockLike, Operation, OperationRef, Region, RegionLike, Type, Value,
        ValueLike,
        attribute::IntegerAttribute,
        operation::{OperationLike, OperationMutLike, OperationResult},
    },
};
use mlir_sys::mlirOperationClone;

/// The GEMM that writes a chain's partial blocks, if the loop's steps in
/// `parts` parts can run as one: the loop's rings are one reduce-scatter by
/// `sum` over two ranks or more, whose output exists before the loop and has
/// blocks of the partials' layout, and whose partial block the loop takes
/// once and only a `host.matmul` or a bias-free `host.linear` writes (its
/// output, not an input, and not yet accumulating); `parts` is 2 or more,
/// and fewer than the pool streams
/// the steps rotate over, if they do: with `n <= parts` streams the wait for
/// iteration `j + parts` would land on a stream an earlier iteration's GEMM
/// waits for (on 4 × H200, 4 parts over 4 streams ran GEMM+RS at 0.674 of
/// the GEMM alone, against 0.966 in 2 parts).
pub(super) fn gemm<'c, 'a>(
    stream_loop: &StreamLoop<'c, 'a>,
    rings: &[Ring<'c, 'a>],
    parts: i64,
) -> Option<OperationRef<'c, 'a>> {
    let [ring] = rings else { return None };
    let Collective::ReduceScatter(Combine::Sum) = ring.collective else {
        return None;
    };
    let streams = ring.join.streams.map(constant);
    if parts < 2
        || streams.is_some_and(|streams| streams.is_none_or(|streams| streams <= parts))
        || constant(stream_loop.upper)? < 2
        || !defined_before(ring.output, stream_loop.op)
        || view_type(ring.input.r#type(), ring.axis) != Some(ring.own_view)
        || static_shape(output_as_view(ring))? != static_shape(ring.view.r#type())?
    {
        return None;
    }
    let in_loop = ir::users(ring.sliced)
        .into_iter()
        .filter(|user| ir::ancestor_in(*user, stream_loop.body).is_some())
        .count();
    let [gemm] = *ir::users(ring.view).as_slice() else {
        return None;
    };
    // A matmul, or a linear without a bias (added once per accumulation).
    let operands: Vec<Value> = gemm.operands().collect();
    let accumulates = Op::HostMatmul.is(&gemm) || Op::HostLinear.is(&gemm) && operands.len() == 3;
    (in_loop == 1
        && accumulates
        && gemm.attribute("accumulate").is_err()
        && operands[..2].iter().all(|&operand| operand != ring.view)
        && operands[2] == ring.view)
        .then_some(gemm)
}

/// The type of the output with the shape of the loop's slice: the output
/// itself where the loop slices a buffer the collective's input is a whole
/// view of (its unit axis is the output's), else its block.
fn output_as_view<'c>(ring: &Ring<'c, '_>) -> Type<'c> {
    match ring.whole_view {
        Some(_) => ring.output.r#type(),
        None => ring.own_view,
    }
}

/// Rewrites the loop of `ring` into the chain, each step in `parts` parts;
/// `gemm` is what [`gemm`] found for them.
pub(super) fn rewrite<'c, 'a>(
    context: &'c Context,
    backend: Transport,
    parts: i64,
    stream_loop: &StreamLoop<'c, 'a>,
    ring: &Ring<'c, 'a>,
    gemm: OperationRef<'c, 'a>,
) {
    let location = ring.op.location();
    let index = Type::index(context);
    let before_loop = Builder::before(context, stream_loop.op).located(location);
    let first = stream_loop
        .body
        .first_operation()
        .expect("scf.for has a body");
    let (steps, part) = chunks::split_loop(context, stream_loop, parts);
    let one = stream_loop.op.operand(2).expect("scf.for has a step");
    // The loop as its iterations see it: `%j`, `D * parts` of them.
    let iterations = StreamLoop {
        upper: stream_loop
            .op
            .operand(1)
            .expect("scf.for has an upper bound"),
        ..*stream_loop
    };
    per_iteration_streams(ring, iterations.index);
    move_joins_after(context, &iterations, ring.join);
    compute_in_step_order(context, &iterations, ring.join, one);

    let rank = before_loop.value(
        host::RankOperation::builder(context, location)
            .rank(index)
            .build(),
    );
    let outside = |value| Emitted {
        value,
        cursor: before_loop,
    };
    let size = steps.upper;
    let from = slice(outside(rank), outside(one), outside(size)).value;
    let to = partner(outside(rank), outside(one), outside(size)).value;
    let output = match ring.whole_view {
        Some(_) => ring.output,
        None => before_loop.select_as(
            ring.output,
            ring.axis,
            stream_loop.lower,
            ring.own_view,
            before_loop.location,
        ),
    };
    if backend == Transport::Cuda {
        before_loop.share_mem_handles(&[ring.sliced, ring.output], ring.team, before_loop.location);
    }

    let top = Builder::before(context, first).located(location);
    let at = |value| Emitted { value, cursor: top };
    let step = ring_step(at(steps.index), at(one), true);
    let block = slice(at(rank), step, at(size)).value;
    let next_block = slice(at(rank), step.add(at(one)), at(size)).value;
    let equal = |lhs, rhs| {
        top.value(arith::cmpi(
            context,
            arith::CmpiPredicate::Eq,
            lhs,
            rhs,
            location,
        ))
    };
    let first_step = equal(steps.index, stream_loop.lower);
    let last_step = equal(block, rank);
    let next_is_last = equal(next_block, rank);

    let slices = chunks::narrow_slices(context, &steps, part);
    let rewriter = rewrite::rewriter(gemm);
    let rewriter = rewriter.as_rewriter_base();
    for user in ir::users(steps.index) {
        if Op::HostSelect.is(&user) {
            rewrite::set_operand(&rewriter, user, 1, block);
        }
    }
    let view_select = OperationResult::try_from(ring.view)
        .expect("a select's result")
        .owner();
    let axis = integer_attribute(&view_select, "axis").expect("a select has an axis");
    let (_, partial) = *slices
        .iter()
        .find(|(slice, _)| *slice == ring.view)
        .expect("the partial block is a slice of the loop");

    // The GEMM: from scratch at step 0, onto what arrived after, into the
    // output at the last step.
    let at_gemm = Builder::before(context, gemm).located(location);
    let output_part = at_gemm.part(
        output,
        axis as usize,
        part.index,
        part.count,
        at_gemm.location,
    );
    let variant = |output: Option<Value<'c, 'a>>, accumulate: bool| {
        // SAFETY: `gemm` is live; the clone is owned until appended.
        let mut clone = unsafe { Operation::from_raw(mlirOperationClone(gemm.to_raw())) };
        if let Some(output) = output {
            clone.set_operand(2, output);
        }
        if accumulate {
            clone.set_attribute("accumulate", Attribute::unit(context));
        }
        clone
    };
    let region = |ops: Vec<Operation<'c>>| {
        let block = Block::new(&[]);
        for op in ops {
            block.append_operation(op);
        }
        block.append_operation(scf::r#yield(&[], location));
        let region = Region::new();
        region.append_block(block);
        region
    };
    let onto = scf::r#if(
        last_step,
        &[],
        region(vec![variant(Some(output_part), true)]),
        region(vec![variant(None, true)]),
        location,
    );
    at_gemm.insert(scf::r#if(
        first_step,
        &[],
        region(vec![variant(None, false)]),
        region(vec![onto]),
        location,
    ));
    // The GEMM has no results; its clones replace it.
    rewriter.erase_op(gemm);

    // The exchange, after the GEMM: receive the next step's part (into the
    // output's at the last step), send this one's sum on.
    let at_step = Builder::before(context, ring.at).located(location);
    let as_transfer = |view| as_operand_slice(at_step, ring, view, stream_loop.lower);
    let sent = as_transfer(partial);
    let next_partial = at_step.select_as(
        ring.sliced,
        axis,
        next_block,
        ring.view.r#type(),
        at_step.location,
    );
    let next_partial = as_transfer(at_step.part(
        next_partial,
        axis as usize,
        part.index,
        part.count,
        at_step.location,
    ));
    // The output's part of the next step is this step's: the same rows.
    let next_output = as_transfer(output_part);
    let target = at_step.value(arith::select(
        next_is_last,
        next_output,
        next_partial,
        location,
    ));
    let ahead = top.value(arith::constant(
        context,
        IntegerAttribute::new(index, parts).into(),
        location,
    ));
    let later = at(iterations.index).add(at(ahead)).value;
    let later_stream =
        Builder::before(context, first).pool_stream(later, ring.join.streams, location);
    let transfers = exchange(
        context,
        backend,
        ring,
        Transfer {
            buffer: target,
            peer: from,
        },
        Transfer {
            buffer: sent,
            peer: to,
        },
        later_stream,
    );
    at_step.insert(scf::r#if(
        last_step,
        &[],
        region(Vec::new()),
        transfers,
        location,
    ));
    erase_collective(ring);
}

/// Points the step's pool stream at the iteration instead of the step that
/// [`chunks::split_loop`] made it: each part computes on its own stream.
fn per_iteration_streams<'c, 'a>(ring: &Ring<'c, 'a>, iteration: Value<'c, 'a>) {
    let pick = ring
        .join
        .pick
        .expect("the chain rewrites the expanded loop");
    rewrite::set_operand(
        &rewrite::rewriter(pick).as_rewriter_base(),
        pick,
        0,
        iteration,
    );
}

/// The region of the transfers, on the main stream: `receive`, then (once
/// the step's stream computed it) `send`; the stream of the iteration that
/// accumulates onto what is received waits for it.
fn exchange<'c, 'a>(
    context: &'c Context,
    backend: Transport,
    ring: &Ring<'c, 'a>,
    receive: Transfer<'c, 'a>,
    send: Transfer<'c, 'a>,
    later_stream: Value<'c, 'a>,
) -> Region<'c> {
    let location = ring.op.location();
    let request = builders::request_type(context);
    let block = Block::new(&[]);
    let ops = Builder::at_end(context, &block, location);
    let recv = || {
        point_to_point(
            context,
            location,
            backend,
            ring.team,
            Direction::Receive,
            &receive,
        )
    };
    let send = || {
        point_to_point(
            context,
            location,
            backend,
            ring.team,
            Direction::Send,
            &send,
        )
    };
    ops.set_current_stream(ring.join.main, location);
    let arrived = match backend {
        // The receive first frees its slot for the sender as early as the
        // main stream allows; the send waits for the step's GEMM.
        Transport::Cuda => {
            let received = request_of(ops.insert(recv()));
            ops.sync_stream(ring.join.step_stream, location);
            let sent = request_of(ops.insert(send()));
            ops.wait(sent, location);
            received
        }
        Transport::Nccl => {
            ops.sync_stream(ring.join.step_stream, location);
            ops.insert(comm::StartCoalescingOperation::builder(context, location).build());
            ops.insert(recv());
            ops.insert(send());
            request_of(
                ops.insert(
                    comm::EndCoalescingOperation::builder(context, location)
                        .request(request)
                        .build(),
                ),
            )
        }
    };
    ops.set_current_stream(later_stream, location);
    ops.wait(arrived, location);
    ops.set_current_stream(ring.join.step_stream, location);
    ops.insert(scf::r#yield(&[], location));
    let region = Region::new();
    region.append_block(block);
    region
}

#[cfg(test)]
mod tests {
    use super::super::schedule::{partner, ring_step, slice};

    /// Follows every block's running sum along the ring with the pass's
    /// formulas (on integers): each rank adds its partial of the block it
    /// works on to what arrived from `slice(r, 1)` and sends the sum to
    /// `partner(r, 1)`, which must work on the same block at the next step;
    /// at the last step every rank holds its own block with every partial.
    #[test]
    fn chain_sums_every_partial_once_into_its_owner() {
        for size in 2..=8u64 {
            let block = |rank, index| slice(rank, ring_step(index, 1, true), size);
            // held[rank]: the block the rank's sum is of, and whose partials it has.
            let mut held: Vec<(u64, Vec<u64>)> = (0..size).map(|_| (0, Vec::new())).collect();
            for index in 0..size {
                let mut arrived = vec![None; size as usize];
                for rank in 0..size {
                    let (from, to) = (slice(rank, 1, size), partner(rank, 1, size));
                    assert_eq!(
                        slice(to, 1, size),
                        rank,
                        "size {size}: to sends back to from"
                    );
                    if index > 0 {
                        // What `from` sent at the previous step.
                        let (sent_block, partials) = held[from as usize].clone();
                        assert_eq!(
                            sent_block,
                            block(rank, index),
                            "size {size}: a block arrives at the rank that works on it"
                        );
                        arrived[rank as usize] = Some(partials);
                    }
                }
                for rank in 0..size {
                    let mut partials = arrived[rank as usize].take().unwrap_or_default();
                    assert!(
                        !partials.contains(&rank),
                        "size {size}: rank {rank} adds twice"
                    );
                    partials.push(rank);
                    held[rank as usize] = (block(rank, index), partials);
                }
            }
            for (rank, (block, partials)) in held.iter_mut().enumerate() {
                partials.sort();
                assert_eq!(
                    *block, rank as u64,
                    "size {size}: the last step is the own block"
                );
                assert_eq!(
                    *partials,
                    (0..size).collect::<Vec<_>>(),
                    "size {size}: rank {rank}"
                );
            }
        }
    }
}
