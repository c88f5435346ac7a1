//! The transfers of a ring step: the backend they run on, `comm.send` and
//! `comm.recv` of a [`Transfer`] ([`point_to_point`]), and the slices they
//! move ([`as_operand_slice`]).

use super::plan::Ring;
use crate::builders::{self, Builder, view_type};
pub use hir_abi::Transport;
use hir_dialects::comm;
use melior::{
    Context,
    ir::{
        Attribute, Location, Operation, OperationRef, Value, ValueLike,
        attribute::IntegerAttribute, r#type::IntegerType,
    },
};

/// A buffer and the rank it goes to or comes from.
pub(super) struct Transfer<'c, 'a> {
    pub(super) buffer: Value<'c, 'a>,
    pub(super) peer: Value<'c, 'a>,
}

/// Which way a transfer goes, for [`point_to_point`].
#[derive(Clone, Copy)]
pub(super) enum Direction {
    Receive,
    Send,
}

/// `comm.recv` or `comm.send` of `transfer` on `team` over `backend`.
pub(super) fn point_to_point<'c>(
    context: &'c Context,
    location: Location<'c>,
    backend: Transport,
    team: Attribute<'c>,
    direction: Direction,
    transfer: &Transfer<'c, '_>,
) -> Operation<'c> {
    let request = builders::request_type(context);
    let on: Attribute =
        IntegerAttribute::new(IntegerType::new(context, 32).into(), backend as i64).into();
    match direction {
        Direction::Receive => comm::RecvOperation::builder(context, location)
            .request(request)
            .buffer(transfer.buffer)
            .peer(transfer.peer)
            .team(team)
            .backend(on)
            .build()
            .into(),
        Direction::Send => comm::SendOperation::builder(context, location)
            .request(request)
            .buffer(transfer.buffer)
            .peer(transfer.peer)
            .team(team)
            .backend(on)
            .build()
            .into(),
    }
}

/// The request a transfer returns.
pub(super) fn request_of<'c, 'b>(op: OperationRef<'c, 'b>) -> Value<'c, 'b> {
    op.result(0).expect("a transfer has a request").into()
}

/// `view`, a slice of the buffer the loop slices, shaped as a slice of the
/// collective's operand: where that operand is a whole view, with its unit
/// axis viewed away at `zero`.
pub(super) fn as_operand_slice<'c, 'a>(
    cursor: Builder<'c, 'a>,
    ring: &Ring<'c, 'a>,
    view: Value<'c, 'a>,
    zero: Value<'c, 'a>,
) -> Value<'c, 'a> {
    match ring.whole_view {
        Some((_, unit)) => cursor.select_as(
            view,
            unit,
            zero,
            view_type(view.r#type(), unit).expect("a view is strided"),
            cursor.location,
        ),
        None => view,
    }
}
