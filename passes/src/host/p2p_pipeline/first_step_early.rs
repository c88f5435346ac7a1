//! An allgather ring over `cuda` whose steps go in parts posts the first
//! remote step's transfers in the local step's iterations, part for part,
//! so that its copies start with the local step's compute.
//!
//! The local step (step 0) computes on the rank's own shard and moves
//! nothing. Posted in step 1's own iterations, step 1's first copy waited
//! until the host had launched the local step's compute: 120–135 µs after
//! that compute started on rank 0 of AG+GEMM 16384×8192×2048 on 4 × H200
//! (a trace, `hir-run --trace`), the first GEMM launch of a run alone taking
//! 64–82 µs of host time. The whole ring of copies started that late, and its
//! last part's compute ended that much later.
//!
//! Part `k` of step 1 is received on the main stream in the local step's
//! part `k` and waited for on its own arrival stream, pool stream `1 + k`:
//! the local step computes on pool stream 0, which must not wait, and
//! step 1's part `k` syncs with that stream before it computes, so each
//! part waits for its own data only. Hence the parts need `c + 1` pool
//! streams; with fewer, step 1 posts its own transfers. Step 1 then moves
//! nothing, and step 2 posts as before (after step 1's last send on the main
//! stream, so two senders never copy into a rank at once).

use super::{
    Backend, Cursor, Direction, Emitted, Ring, RingArith, Step, StreamLoop, Transfer,
    as_operand_slice, chunks, constant, integer_attribute, partner, point_to_point, request_of,
    select, slice,
};
use crate::builders::{self, Builder};
use hir_dialects::{comm, host};
use melior::{
    Context,
    dialect::arith,
    ir::{
        Block, BlockLike, Location, Type, Value, ValueLike,
        attribute::IntegerAttribute,
        operation::{OperationLike, OperationResult},
    },
};

/// Step 1's part, posted by the local step's part of the same index.
pub(super) struct Early<'c, 'a> {
    /// The iteration is step 1's: its part arrives on `arrivals`.
    pub first_remote: Value<'c, 'a>,
    /// Step 1's part from its owner, rank `r + 1`.
    pub receive: Transfer<'c, 'a>,
    /// The rank's own part to step 1's partner, rank `r - 1`.
    pub send: Transfer<'c, 'a>,
    /// Where the part's receive is waited for: pool stream `1 + k`.
    pub arrivals: Value<'c, 'a>,
}

/// Step 1's parts to post at the local step, emitted at `cursor`; `None`
/// where the local step is not first, the steps are whole, or the pool has
/// fewer than `c + 1` streams. `own` is the iteration's part of the rank's
/// shard.
pub(super) fn plan<'c, 'a>(
    cursor: Cursor<'c, 'a>,
    stream_loop: &StreamLoop<'c, 'a>,
    step: &Step<'c, 'a>,
    ring: &Ring<'c, 'a>,
    own: Value<'c, 'a>,
) -> Option<Early<'c, 'a>> {
    let (part, _) = step.parts.as_ref()?;
    let streams = ring.join.step_stream_index().unwrap_or(stream_loop.upper);
    if step.local_last || constant(streams)? < part.count + 1 || constant(stream_loop.upper)? < 2 {
        return None;
    }
    let (context, location) = (cursor.context, cursor.location);
    let index = Type::index(context);
    let at = |value| Emitted { value, cursor };
    let one = at(cursor.value(arith::constant(
        context,
        IntegerAttribute::new(index, 1).into(),
        location,
    )));
    let size = at(stream_loop.upper);
    let owner = slice(at(step.rank), one, size).value;
    let first_remote = cursor.value(arith::cmpi(
        context,
        arith::CmpiPredicate::Eq,
        stream_loop.index,
        one.value,
        location,
    ));
    let view = OperationResult::try_from(ring.view)
        .expect("a select's result")
        .owner();
    let axis = integer_attribute(&view, "axis").expect("a select has an axis");
    let source = view.operand(0).expect("a select has a source");
    let owners = cursor.value(select(cursor, source, axis, owner, ring.view.r#type()));
    let received = chunks::part_of(cursor, owners, axis, *part);
    let arrivals = builders::pool_stream(
        context,
        &Builder::before(context, cursor.anchor),
        at(part.index).add(one).value,
        Some(streams),
        location,
    );
    Some(Early {
        first_remote,
        receive: Transfer {
            buffer: as_operand_slice(cursor, ring, received, stream_loop.lower),
            peer: owner,
        },
        send: Transfer {
            buffer: own,
            peer: partner(at(step.rank), one, size).value,
        },
        arrivals,
    })
}

/// Appends to the local step's `block` the posting of step 1's part: the
/// receive and the send on the main stream, the receive waited for on the
/// part's arrival stream; the block ends on the step's stream.
pub(super) fn post(
    context: &Context,
    location: Location,
    block: &Block,
    ring: &Ring,
    early: &Early,
) {
    let switch_to = |stream| {
        block.append_operation(
            host::SetCurrentStreamOperation::builder(context, location)
                .stream(stream)
                .build()
                .into(),
        );
    };
    let wait = |request| {
        block.append_operation(
            comm::WaitOperation::builder(context, location)
                .request(request)
                .build()
                .into(),
        );
    };
    let transfer = |direction, transfer| {
        request_of(block.append_operation(point_to_point(
            context,
            location,
            Backend::Cuda,
            ring,
            direction,
            transfer,
        )))
    };
    switch_to(ring.join.main);
    let received = transfer(Direction::Receive, &early.receive);
    switch_to(early.arrivals);
    wait(received);
    switch_to(ring.join.main);
    let sent = transfer(Direction::Send, &early.send);
    wait(sent);
    switch_to(ring.join.step_stream);
}

/// Appends to step 1's `block` what replaces its transfers: its stream syncs
/// with the part's arrival stream.
pub(super) fn arrived(
    context: &Context,
    location: Location,
    block: &Block,
    ring: &Ring,
    early: &Early,
) {
    block.append_operation(
        host::SetCurrentStreamOperation::builder(context, location)
            .stream(ring.join.step_stream)
            .build()
            .into(),
    );
    block.append_operation(
        host::SyncStreamOperation::builder(context, location)
            .stream(early.arrivals)
            .build()
            .into(),
    );
}
