//! The ring rewrite: the step's indices at the top of the loop body
//! ([`Step`]), the joins moved after the loop, the steps computed in ring
//! order (or, with `stream-sync=comm`, each step's stream waiting only for
//! the previous step's transfers), and one exchange per step and ring in
//! place of each collective;
//! also the parts of it that [`super::chain`] shares ([`move_joins_after`],
//! [`compute_in_step_order`], [`erase_collective`]).

use super::{
    StreamSync, chunks,
    exchange::{Direction, Transfer, Transport, as_operand_slice, point_to_point, request_of},
    plan::{
        Collective, Combine, Join, Ring, StreamLoop, constant, defined_before, local_step_last,
        within,
    },
    receive_ahead,
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
        Block, BlockLike, Operation, OperationRef, Region, RegionLike, Type, Value, ValueLike,
        attribute::IntegerAttribute,
        operation::{OperationLike, OperationResult},
        r#type::{MemRefType, ShapedTypeLike},
    },
};

/// The ring indices of a step, emitted at the top of the loop body.
pub(super) struct Step<'c, 'a> {
    pub(super) rank: Value<'c, 'a>,
    pub(super) slice: Value<'c, 'a>,
    pub(super) partner: Value<'c, 'a>,
    /// `slice == rank`: the step whose slice is the rank's own.
    pub(super) local: Value<'c, 'a>,
    /// The local step is the loop's last.
    pub(super) local_last: bool,
    /// With steps in parts: the iteration's part, and each slice of the loop
    /// with its part.
    pub(super) parts: Option<(chunks::Part<'c, 'a>, Vec<(Value<'c, 'a>, Value<'c, 'a>)>)>,
}

impl<'c, 'a> Step<'c, 'a> {
    /// The part of the loop's slice `view` the iteration works on.
    pub(super) fn part_of_slice(&self, view: Value<'c, 'a>) -> Value<'c, 'a> {
        self.parts
            .as_ref()
            .and_then(|(_, slices)| slices.iter().find(|(slice, _)| *slice == view))
            .map_or(view, |&(_, part)| part)
    }

    /// The iteration's part of `buffer`, a view of one rank's slice along
    /// `axis` of a ring's buffer.
    pub(super) fn part_of(
        &self,
        cursor: Builder<'c, 'a>,
        buffer: Value<'c, 'a>,
        axis: i64,
    ) -> Value<'c, 'a> {
        match self.parts {
            Some((part, _)) => cursor.part(
                buffer,
                axis as usize,
                part.index,
                part.count,
                cursor.location,
            ),
            None => buffer,
        }
    }
}

pub(super) fn rewrite<'c, 'a>(
    context: &'c Context,
    backend: Transport,
    chunks: i64,
    sync: StreamSync,
    stream_loop: &StreamLoop<'c, 'a>,
    rings: &[Ring<'c, 'a>],
) {
    let index = Type::index(context);
    let before_loop = Builder::before(context, stream_loop.op);
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
    let top = Builder::before(context, first);
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
    let rewriter = rewrite::rewriter(stream_loop.op);
    for user in ir::users(stream_loop.index) {
        if Op::HostSelect.is(&user) {
            rewrite::set_operand(&rewriter.as_rewriter_base(), user, 1, slice);
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
    // Transfers on the steps' own streams: only allgather rings have
    // transfers that need nothing the step computes.
    let on_step_stream = sync == StreamSync::Comm
        && rings
            .iter()
            .all(|ring| matches!(ring.collective, Collective::Allgather));
    if !on_step_stream {
        compute_in_step_order(context, stream_loop, rings[0].join, one);
    }
    let mut exchanges = Vec::new();
    for ring in rings {
        exchanges.push(ring_steps(
            context,
            backend,
            stream_loop,
            &step,
            ring,
            on_step_stream,
        ));
        erase_collective(ring);
    }
    let last = ir::block_ops(stream_loop.body)
        .filter(|op| exchanges.contains(op))
        .last();
    if let (true, Some(last)) = (on_step_stream, last) {
        sync_next_after_transfers(context, stream_loop, rings[0].join, one, last);
    }
}

/// Erases the collective the ring replaced, its wait, and the whole view it
/// took if nothing else uses it.
pub(super) fn erase_collective(ring: &Ring) {
    let rewriter = rewrite::rewriter(ring.op);
    let rewriter = rewriter.as_rewriter_base();
    // The wait has no results and was the request's only user.
    rewriter.erase_op(ring.wait);
    rewriter.erase_op(ring.op);
    if let Some((view, _)) = ring.whole_view
        && ir::users(view.result(0).expect("a view").into()).is_empty()
    {
        rewriter.erase_op(view);
    }
}

/// Moves the loop's joins after it, into a loop of their own: a join in the
/// loop would hold the next step's transfers on the main stream behind this
/// step's compute, and the transfers could no longer overlap it.
pub(super) fn move_joins_after<'c, 'a>(
    context: &'c Context,
    stream_loop: &StreamLoop<'c, 'a>,
    join: Join<'c, 'a>,
) {
    let location = join.sync.location();
    let after = stream_loop
        .op
        .next_in_block()
        .expect("a terminator follows");
    let joins = Builder::before(context, after).new_loop(
        stream_loop.lower,
        stream_loop.upper,
        stream_loop.op.operand(2).expect("scf.for has a step"),
        location,
    );
    let stream = joins.body.pool_stream(joins.index, join.streams, location);
    joins.body.sync_stream(stream, location);
    rewrite::rewriter(join.sync)
        .as_rewriter_base()
        .erase_op(join.sync);
}

/// Makes each step's stream wait for the previous step's, stream
/// `(%i + n - 1) mod n` of the `n` the steps use, before it computes: the steps then
/// compute one at a time, in ring order, so that a step's result (a partial
/// to send, a block to combine) is there after its own GEMM, not after all
/// the GEMMs that were ready shared the GPU. Step 0 waits for the last
/// stream, which has nothing of this loop yet.
pub(super) fn compute_in_step_order<'c, 'a>(
    context: &'c Context,
    stream_loop: &StreamLoop<'c, 'a>,
    join: Join<'c, 'a>,
    one: Value<'c, 'a>,
) {
    let streams = join.streams.unwrap_or(stream_loop.upper);
    if constant(streams) == Some(1) {
        return;
    }
    let switch = join.switch.expect("the ring rewrites the expanded loop");
    let after = switch.next_in_block().expect("a terminator follows");
    let location = switch.location();
    let cursor = Builder::before(context, after).located(location);
    let at = |value| Emitted { value, cursor };
    let previous = at(stream_loop.index)
        .add(at(streams))
        .sub(at(one))
        .rem(at(streams))
        .value;
    let builder = Builder::before(context, after);
    let stream = builder.pool_stream(previous, None, location);
    builder.sync_stream(stream, location);
}

/// `stream-sync=comm` (nvFuser's `inter_stream_synchronization`): right
/// after the step's transfers (`after`, on the step's stream `%s`), the
/// stream of step `%i + 1` waits for `%s`, if it is the next stream of the
/// pool (`%i + 1 < n`, `n` the streams the steps use; no stream waits at the
/// wrap, where the next step's stream already ran a whole earlier step):
///
/// ```mlir
/// %next = arith.addi %i, %c1 : index
/// %no_wrap = arith.cmpi ult, %next, %n : index
/// scf.if %no_wrap {
///   %t = host.stream_from_pool %next : !host.stream
///   host.set_current_stream %t
///   host.sync_stream %s
///   host.set_current_stream %s
/// }
/// ```
///
/// The next step's transfers then follow this step's (they do not share the
/// links), and no step waits for another's compute. With one stream there is
/// nothing to wait for.
pub(super) fn sync_next_after_transfers<'c, 'a>(
    context: &'c Context,
    stream_loop: &StreamLoop<'c, 'a>,
    join: Join<'c, 'a>,
    one: Value<'c, 'a>,
    after: OperationRef<'c, 'a>,
) {
    let streams = join.streams.unwrap_or(stream_loop.upper);
    if constant(streams) == Some(1) {
        return;
    }
    let location = after.location();
    let cursor = Builder::after(context, after).located(location);
    let next = Emitted {
        value: stream_loop.index,
        cursor,
    }
    .add(Emitted { value: one, cursor })
    .value;
    let no_wrap = cursor.value(arith::cmpi(
        context,
        arith::CmpiPredicate::Ult,
        next,
        streams,
        location,
    ));
    let then = Block::new(&[]);
    let ops = Builder::at_end(context, &then, location);
    let next_stream = ops.pool_stream(next, None, location);
    ops.set_current_stream(next_stream, location);
    ops.sync_stream(join.step_stream, location);
    ops.set_current_stream(join.step_stream, location);
    ops.insert(scf::r#yield(&[], location));
    let region = Region::new();
    region.append_block(then);
    cursor.insert(scf::r#if(no_wrap, &[], region, Region::new(), location));
}

/// Replaces `ring`'s collective by one exchange per step: the slice with its
/// owner, the rank's own part with the partner, on the caller's stream or,
/// `on_step_stream`, on the step's. For `cuda`, the two buffers the
/// transfers touch are shared once before the loop. Returns the exchange.
pub(super) fn ring_steps<'c, 'a>(
    context: &'c Context,
    backend: Transport,
    stream_loop: &StreamLoop<'c, 'a>,
    step: &Step<'c, 'a>,
    ring: &Ring<'c, 'a>,
    on_step_stream: bool,
) -> OperationRef<'c, 'a> {
    let before_loop = Builder::before(context, stream_loop.op).located(ring.op.location());
    let at_step = Builder::before(context, ring.at).located(ring.op.location());
    let view = step.part_of_slice(ring.view);
    let slice = as_operand_slice(at_step, ring, view, stream_loop.lower);
    let mut at_local = AtLocal::Copy;
    let (shared, receive, send) = match ring.collective {
        Collective::Allgather => {
            // Receive the slice from its owner, send the local shard to the partner.
            let own = before_loop.select_as(
                ring.input,
                ring.axis,
                stream_loop.lower,
                ring.own_view,
                before_loop.location,
            );
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
    if backend == Transport::Cuda {
        before_loop.share_mem_handles(&shared, ring.team, before_loop.location);
    }
    let ahead = match (backend, ring.collective) {
        (Transport::Cuda, Collective::Allgather) => receive_ahead::plan(
            at_step,
            stream_loop,
            step.parts.as_ref().map(|&(part, _)| part),
            step.slice,
            ring,
        ),
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
            on_step_stream,
        },
        at_local,
    ));
    let AtLocal::Yield(_) = at_local else {
        return exchanged;
    };
    // The step computes on the local shard itself, or on the received slice.
    let operand = exchanged.result(0).expect("the step's operand").into();
    rewrite::replace_uses(
        &rewrite::rewriter(exchanged).as_rewriter_base(),
        view,
        operand,
        |user| within(user, exchanged),
    );
    exchanged
}

/// Whether an allgather's gathered buffer is only read through the step's
/// slice: a buffer of this function that nothing after the loop reads, whose
/// one view in the loop has the type of the local shard's. Then the local
/// step need not copy the shard into it: the step computes on the shard.
pub(super) fn reads_only_the_step_slice(stream_loop: &StreamLoop, ring: &Ring) -> bool {
    if ring.whole_view.is_some() || ring.view.r#type() != ring.own_view {
        return false;
    }
    let defined_by = |value| {
        OperationResult::try_from(value)
            .ok()
            .map(|result| result.owner())
    };
    defined_by(ring.sliced).is_some_and(|alloc| Op::HostAlloc.is(&alloc))
        && defined_by(ring.view).is_some_and(|view| within(view, stream_loop.op))
        && ir::users(ring.sliced)
            .into_iter()
            .all(|user| match Op::of(&user) {
                Some(Op::HostDealloc) => true,
                Some(Op::HostSelect) => user
                    .result(0)
                    .is_ok_and(|view| Value::from(view) == ring.view),
                _ => user == ring.op,
            })
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
pub(super) fn partial_slots<'c, 'a>(
    before_loop: Builder<'c, 'a>,
    at_step: Builder<'c, 'a>,
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
    let slot_type = view_type(slots_type.into(), ring.axis).expect("an identity layout is strided");
    let slot = at_step.select_as(slots, ring.axis, slot_index, slot_type, at_step.location);

    let after_joins = Builder::before(context, ring.op).located(location);
    let combine_at = if split {
        let joins = stream_loop.op.next_in_block().expect("the joins follow");
        Builder::before(context, joins).located(location)
    } else {
        after_joins
    };
    let output = combine_at.select_as(
        ring.output,
        ring.axis,
        stream_loop.lower,
        ring.own_view,
        combine_at.location,
    );
    combine_at.insert(combine.over(context, location, ring.axis, slots, output));
    if split {
        let own_type = view_type(ring.input.r#type(), ring.axis).expect("a strided input");
        let own = after_joins.select_as(
            ring.input,
            ring.axis,
            step.rank,
            own_type,
            after_joins.location,
        );
        after_joins.insert(combine.in_place(context, location, output, own));
    }
    (slots, slot, split)
}

/// What a ring's local step does in place of its transfers.
#[derive(Clone, Copy)]
pub(super) enum AtLocal<'c, 'a> {
    /// Copies the buffer it would send into the one it would receive.
    Copy,
    /// Copies nothing; the `scf.if` yields the buffer the step computes on:
    /// this one (the local shard), or the received slice.
    Yield(Value<'c, 'a>),
    /// Nothing: a reduce-scatter whose local partial is combined where it
    /// was computed (see `partial_slots`).
    Nothing,
}

/// A step's transfers: what it receives and sends, the receives it posts
/// ahead, if it does, and whether they run on the step's stream (else on the
/// caller's).
pub(super) struct Exchange<'c, 'a> {
    pub(super) receive: Transfer<'c, 'a>,
    pub(super) send: Transfer<'c, 'a>,
    pub(super) ahead: Option<receive_ahead::Ahead<'c, 'a>>,
    pub(super) on_step_stream: bool,
}

/// `scf.if %local { at_local } else { receive, send, wait }`: at the local
/// step the sent buffer is the received one's content.
pub(super) fn exchange<'c, 'a>(
    cursor: Builder<'c, 'a>,
    backend: Transport,
    step: &Step<'c, 'a>,
    ring: &Ring<'c, 'a>,
    transfers_of: Exchange<'c, 'a>,
    at_local: AtLocal<'c, 'a>,
) -> Operation<'c> {
    let Exchange {
        receive,
        send,
        ahead,
        on_step_stream,
    } = transfers_of;
    let (context, location) = (cursor.context, cursor.location);
    let request = builders::request_type(context);
    let copy = Block::new(&[]);
    let local = Builder::at_end(context, &copy, location);
    match at_local {
        AtLocal::Yield(own) => {
            local.insert(scf::r#yield(&[own], location));
        }
        AtLocal::Copy => {
            local.insert(
                host::CopyOperation::builder(context, location)
                    .input(send.buffer)
                    .output(receive.buffer)
                    .build(),
            );
            local.insert(scf::r#yield(&[], location));
        }
        AtLocal::Nothing => {
            local.insert(scf::r#yield(&[], location));
        }
    }
    let (yielded, results): (Vec<Value>, Vec<Type>) = match at_local {
        AtLocal::Yield(_) => (vec![receive.buffer], vec![receive.buffer.r#type()]),
        AtLocal::Copy | AtLocal::Nothing => (Vec::new(), Vec::new()),
    };

    // The transfers run on the main stream, one step after the other, so
    // that each step's data arrives as early as the links allow; the step's
    // stream waits only for what it computes on. On the step's stream
    // (allgathers only), the next step's stream waits for them instead
    // (`sync_next_after_transfers`).
    let transfers = Block::new(&[]);
    let ops = Builder::at_end(context, &transfers, location);
    if !on_step_stream {
        ops.set_current_stream(ring.join.main, location);
    }
    if let Collective::ReduceScatter(_) = ring.collective {
        // The partial the step sends was computed on the step's stream.
        ops.sync_stream(ring.join.step_stream, location);
    }
    if backend == Transport::Nccl {
        ops.insert(comm::StartCoalescingOperation::builder(context, location).build());
    }
    let received = match &ahead {
        Some(ahead) => {
            for op in receive_ahead::receives(context, location, ring, &receive, ahead) {
                ops.insert(op);
            }
            None
        }
        None => Some(request_of(ops.insert(point_to_point(
            context,
            location,
            backend,
            ring.team,
            Direction::Receive,
            &receive,
        )))),
    };
    let sent = request_of(ops.insert(point_to_point(
        context,
        location,
        backend,
        ring.team,
        Direction::Send,
        &send,
    )));
    let received = match backend {
        Transport::Nccl => Some(request_of(
            ops.insert(
                comm::EndCoalescingOperation::builder(context, location)
                    .request(request)
                    .build(),
            ),
        )),
        Transport::Cuda => received,
    };
    if backend == Transport::Cuda {
        ops.wait(sent, location);
    }
    match ring.collective {
        // The step's stream computes on the received slice (waited for
        // already where it was received ahead).
        Collective::Allgather => {
            if !on_step_stream {
                ops.set_current_stream(ring.join.step_stream, location);
            }
            if let Some(received) = received {
                ops.wait(received, location);
            }
        }
        // The received partials are combined after the loop, on the main stream.
        Collective::ReduceScatter(_) => {
            if let Some(received) = received {
                ops.wait(received, location);
            }
            ops.set_current_stream(ring.join.step_stream, location);
        }
    }
    ops.insert(scf::r#yield(&yielded, location));

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
