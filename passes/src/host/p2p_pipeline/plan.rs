//! Finding the rings: the stream loops, read from their `host.stream_for`
//! ([`StreamLoop`], [`Join`]), the collectives they slice
//! along the communicated axis ([`match_collective`]), and the located
//! errors for those that cannot become a ring. Also the small IR queries the
//! other modules share ([`constant`], [`integer_attribute`], [`within`],
//! [`defined_before`]).

pub(super) use crate::ir::{constant, integer_attribute};
use crate::{
    builders::{static_shape, view_type},
    diagnostics::emit_error,
    host::lower_stream_for,
    ir,
    ops::Op,
};
use hir_dialects::host;
use melior::{
    Context,
    ir::{
        Attribute, BlockLike, BlockRef, Location, Operation, OperationRef, RegionLike, Type, Value,
        ValueLike,
        attribute::DenseI64ArrayAttribute,
        operation::{OperationLike, OperationResult},
    },
};

/// An error was emitted.
pub(super) struct Reported;

/// A loop over a stream axis: a `host.stream_for %c0 to %cD step %c1`,
/// whose body's first argument is the index; once expanded (see
/// [`StreamLoop::expanded`]), the work loop `scf.for` that stands for it.
#[derive(Clone, Copy)]
pub(super) struct StreamLoop<'c, 'a> {
    pub(super) op: OperationRef<'c, 'a>,
    pub(super) body: BlockRef<'c, 'a>,
    pub(super) index: Value<'c, 'a>,
    pub(super) lower: Value<'c, 'a>,
    pub(super) upper: Value<'c, 'a>,
}

/// The streams of a stream loop's steps, from the `host.stream_for`'s
/// operands and body: each step forks from the caller's stream `main` and
/// joins back into it. The ring's transfers run on `main`, and the joins
/// move after the loop.
#[derive(Clone, Copy)]
pub(super) struct Join<'c, 'a> {
    /// The caller's stream, the op's `from`.
    pub(super) main: Value<'c, 'a>,
    /// The step's stream: the body's second argument; once expanded, the
    /// work loop's `host.stream_from_pool`.
    pub(super) step_stream: Value<'c, 'a>,
    /// `%n` where the steps rotate over `%n` pool streams (the op's `streams`).
    pub(super) streams: Option<Value<'c, 'a>>,
    /// Where the step joins: the body's `host.yield`; once expanded, the
    /// work loop's `host.sync_stream` of the step's stream.
    pub(super) sync: OperationRef<'c, 'a>,
    /// Once expanded, the work loop's switch to the step's stream and the op
    /// that takes the loop index to pick that stream (see
    /// [`lower_stream_for::Expanded`]); `None` on the `host.stream_for`.
    pub(super) switch: Option<OperationRef<'c, 'a>>,
    pub(super) pick: Option<OperationRef<'c, 'a>>,
}

impl<'c, 'a> Join<'c, 'a> {
    /// The join of the `host.stream_for` `stream_loop` stands for.
    fn of(stream_loop: &StreamLoop<'c, 'a>) -> Self {
        let operand = |position| ir::operand(&stream_loop.op, position);
        Join {
            main: operand(3).expect("verified: host.stream_for has its caller stream"),
            step_stream: stream_loop
                .body
                .argument(1)
                .expect("verified: the body takes the step's stream")
                .into(),
            // Counted, not asked for (see `lower_stream_for::expand`).
            streams: (stream_loop.op.operand_count() > 4)
                .then(|| operand(4))
                .flatten(),
            sync: stream_loop
                .body
                .terminator()
                .expect("verified: the body ends with host.yield"),
            switch: None,
            pick: None,
        }
    }

    /// The join once host-lower-stream-for's `expand` made `expanded` of
    /// the loop: the work loop's step's stream, its join, its switch to the
    /// step's stream and the op that picks that stream.
    pub(super) fn expanded(self, expanded: &lower_stream_for::Expanded<'c, 'a>) -> Self {
        Join {
            step_stream: expanded.stream,
            sync: expanded.sync,
            switch: Some(expanded.switch),
            pick: Some(expanded.pick),
            ..self
        }
    }
}

impl<'c, 'a> StreamLoop<'c, 'a> {
    /// The work loop of `expanded`, the loop once host-lower-stream-for's
    /// `expand` made it.
    pub(super) fn expanded(expanded: &lower_stream_for::Expanded<'c, 'a>) -> Self {
        let work = expanded.work;
        let body = ir::region(&work, 0)
            .and_then(|region| region.first_block())
            .expect("scf.for has a body");
        StreamLoop {
            op: work,
            body,
            index: body.argument(0).expect("the loop index").into(),
            lower: ir::operand(&work, 0).expect("scf.for has a lower bound"),
            upper: ir::operand(&work, 1).expect("scf.for has an upper bound"),
        }
    }
}

/// How a reduce-scatter's ring combines the partial blocks it received.
#[derive(Clone, Copy)]
pub(super) enum Combine {
    Sum,
    Max,
}

impl Combine {
    /// `output` = the combine of `input` over `axis`.
    pub(super) fn over<'c>(
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
    pub(super) fn in_place<'c>(
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
pub(super) enum Collective {
    Allgather,
    ReduceScatter(Combine),
}

impl Collective {
    /// The operand the stream loop slices.
    pub(super) const fn sliced_name(self) -> &'static str {
        match self {
            Collective::Allgather => "output",
            Collective::ReduceScatter(_) => "input",
        }
    }
}

/// Whether a loop's rings run their local step last: when they are all
/// reduce-scatters. Then the first step's partial leaves as soon as it is
/// computed and the local partial is computed while the last one travels;
/// an allgather's local step comes first, as it needs nothing to arrive.
/// (One loop's rings share their steps' slices, so an allgather decides.)
pub(super) fn local_step_last(collectives: impl IntoIterator<Item = Collective>) -> bool {
    collectives
        .into_iter()
        .all(|collective| matches!(collective, Collective::ReduceScatter(_)))
}

/// A collective the pass replaces by a ring in a stream loop.
pub(super) struct Ring<'c, 'a> {
    pub(super) collective: Collective,
    pub(super) op: OperationRef<'c, 'a>,
    pub(super) wait: OperationRef<'c, 'a>,
    pub(super) input: Value<'c, 'a>,
    pub(super) output: Value<'c, 'a>,
    pub(super) axis: i64,
    pub(super) team: Attribute<'c>,
    /// The buffer the stream loop slices: the collective's sliced operand, or
    /// the buffer that operand is a whole view of.
    pub(super) sliced: Value<'c, 'a>,
    /// Where the sliced operand is a whole view: the view, erased with the
    /// collective, and the unit axis it drops, as an axis of `view`.
    pub(super) whole_view: Option<(OperationRef<'c, 'a>, i64)>,
    /// The loop's view of the sliced buffer the ring moves: the first select.
    pub(super) view: Value<'c, 'a>,
    /// The type of the view of the rank's own slice of the other buffer.
    pub(super) own_view: Type<'c>,
    /// The ring's step goes right before this op of the loop's body.
    pub(super) at: OperationRef<'c, 'a>,
    pub(super) join: Join<'c, 'a>,
}

/// The rings of `function`, grouped by loop, and whether an error was
/// emitted.
pub(super) fn rings<'c, 'a>(
    function: OperationRef<'c, 'a>,
) -> (Vec<(StreamLoop<'c, 'a>, Vec<Ring<'c, 'a>>)>, bool) {
    let mut loops: Vec<(StreamLoop, Vec<Ring>)> = Vec::new();
    let mut failed = false;
    for op in ir::nested(function) {
        match match_collective(op) {
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
    (loops, failed)
}

/// The operands of the collective `op` that a stream loop could slice
/// along the communicated axis; `None` for other ops.
fn communicated_operands(op: &OperationRef) -> Option<&'static [usize]> {
    match Op::of(op)? {
        Op::CommAllgather | Op::CommGather => Some(&[1]),
        Op::CommReduceScatter | Op::CommScatter => Some(&[0]),
        Op::CommAlltoall => Some(&[0, 1]),
        _ => None,
    }
}

/// The `host.stream_for` that `user` is a select of at its index along
/// `axis`, if any.
pub(super) fn slicing_stream_for<'c, 'a>(
    user: OperationRef<'c, 'a>,
    axis: i64,
) -> Option<OperationRef<'c, 'a>> {
    if ir::name(&user) != host::SelectOperation::name()
        || integer_attribute(&user, "axis") != Some(axis)
    {
        return None;
    }
    let index = ir::operand(&user, 1)?;
    std::iter::successors(user.parent_operation(), |op| op.parent_operation()).find(|op| {
        Op::HostStreamFor.is(op)
            && ir::region(op, 0)
                .and_then(|region| region.first_block())
                .and_then(|body| body.argument(0).ok())
                .is_some_and(|argument| Value::from(argument) == index)
    })
}

/// The ring `op` becomes, `None` if it is not a collective over a stream
/// loop's axis.
pub(super) fn match_collective<'c, 'a>(
    op: OperationRef<'c, 'a>,
) -> Result<Option<(StreamLoop<'c, 'a>, Ring<'c, 'a>)>, Reported> {
    let op_name = ir::name(&op);
    let Some(operands) = communicated_operands(&op) else {
        return Ok(None);
    };
    // `axis` is absent where it has its default, 0.
    let axis = integer_attribute(&op, "axis").unwrap_or(0);
    let mut loops: Vec<(StreamLoop, Sliced)> = Vec::new();
    for &operand in operands {
        let operand = op.operand(operand).expect("a collective has two operands");
        for sliced in Sliced::forms(operand, axis) {
            for user in ir::users(sliced.buffer) {
                if let Some(stream_loop) = slicing_stream_for(user, sliced.axis).map(stream_loop)
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
    let collective = collective_of(&op, axis).map_err(error)?;
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
    let size = whole_mesh(&op).map_err(error)?;
    if !ir::runs_from_zero(&stream_loop.op, size) {
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
    let own_view = view_type(own.r#type(), axis).ok_or_else(|| {
        error(format!(
            "the buffers of '{op_name}' need strided layouts for the ring to take views of them"
        ))
    })?;
    let Some(wait) = ir::sole_wait(op) else {
        return Err(error(format!(
            "the request of '{op_name}' must be waited for by one comm.wait in its block and \
             used nowhere else"
        )));
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
    let join = Join::of(&stream_loop);

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
pub(super) struct Sliced<'c, 'a> {
    pub(super) buffer: Value<'c, 'a>,
    pub(super) axis: i64,
    /// Where `buffer` is not the operand: the whole view the operand is, and
    /// the unit axis of `buffer` it drops.
    pub(super) whole_view: Option<(OperationRef<'c, 'a>, i64)>,
}

impl<'c, 'a> Sliced<'c, 'a> {
    /// The operand along `axis`; and, where the operand is a whole view
    /// `host.select %b[u][0]` of a buffer `%b` whose axis `u` has extent 1,
    /// `%b` along the matching axis: convert-fusion-to-host views away the
    /// local `didx` axis of a reduction's operand (GEMM+RS), while the stream
    /// loop that writes it slices the buffer.
    pub(super) fn forms(operand: Value<'c, 'a>, axis: i64) -> Vec<Self> {
        let mut forms = vec![Self {
            buffer: operand,
            axis,
            whole_view: None,
        }];
        let whole_view = OperationResult::try_from(operand)
            .ok()
            .map(|result| result.owner())
            .filter(|op| Op::HostSelect.is(op))
            .and_then(|view| {
                let (buffer, unit) = (ir::operand(&view, 0)?, integer_attribute(&view, "axis")?);
                let extent = static_shape(buffer.r#type())?.get(unit as usize).copied();
                (extent == Some(1) && constant(ir::operand(&view, 1)?) == Some(0))
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
pub(super) fn collective_of(op: &OperationRef, axis: i64) -> Result<Collective, String> {
    let op_name = ir::name(op);
    match Op::of(op) {
        Some(Op::CommAllgather) => Ok(Collective::Allgather),
        Some(Op::CommReduceScatter) => match integer_attribute(op, "kind") {
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
pub(super) fn whole_mesh(op: &OperationRef) -> Result<i64, String> {
    ir::whole_mesh_size(op).ok_or_else(|| {
        if op.has_attribute("team_size") {
            return "it runs within several teams (a 2-D mesh's rows or columns); a ring \
                    spans one team, the whole mesh"
                .to_owned();
        }
        let team = op.attribute("team").expect("a collective has a team");
        let team = DenseI64ArrayAttribute::try_from(team).expect("a team is an i64 array");
        let ranks: Vec<i64> = (0..team.len())
            .map(|index| team.element(index).expect("in range"))
            .collect();
        format!(
            "team {ranks:?} is not the whole mesh in order, ranks 0 to {}: the ring takes \
             position r in the team to be rank r",
            ranks.len() - 1
        )
    })
}

/// Where a ring step goes in the loop body, given the loop's selects of the
/// sliced buffer (`views`, in order): the allgather's slice arrives right
/// after the first select, before anything reads it; the reduce-scatter's
/// partial leaves after the last use of any select, once everything has
/// written it. The selects and their uses must all run on the step's stream,
/// the one the ring moves data on: before the body's first stream switch.
pub(super) fn step_position<'c, 'a>(
    stream_loop: &StreamLoop<'c, 'a>,
    views: &[OperationRef<'c, 'a>],
    collective: Collective,
    op_name: &str,
) -> Result<OperationRef<'c, 'a>, Reported> {
    let end = ir::block_ops(stream_loop.body).find(|op| Op::HostSetCurrentStream.is(op));
    let mut last_use = views[0];
    for &view in views {
        for user in std::iter::once(view).chain(ir::users(view.result(0).expect("a view").into())) {
            let at = ir::ancestor_in(user, stream_loop.body).expect("a view is used where it is");
            let on_step_stream = end.is_none_or(|end| at.is_before_in_block(end));
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
        .expect("a loop body ends with host.yield"))
}

/// The loop index only picks the step's stream and the slices: any other use
/// would read a slice index as a step. An error for each other use.
pub(super) fn check_index_uses(stream_loop: &StreamLoop) -> Result<(), Reported> {
    let mut result = Ok(());
    for user in ir::users(stream_loop.index) {
        let picks = Op::HostStreamFromPool.is(&user)
            || (Op::HostSelect.is(&user) && ir::operand(&user, 1) == Some(stream_loop.index))
            || (Op::ArithRemui.is(&user)
                && ir::operand(&user, 0) == Some(stream_loop.index)
                && ir::users(user.result(0).expect("a remainder").into())
                    .iter()
                    .all(|rotated| Op::HostStreamFromPool.is(rotated)));
        if !picks {
            emit_error(
                user.location(),
                &format!(
                    "'{}' uses the index of a stream loop that becomes a ring, where the index \
                     is a step and no longer a slice; only host.stream_from_pool (of the index or of \
                     arith.remui of it) and host.select may use it",
                    ir::name(&user)
                ),
            );
            result = Err(Reported);
        }
    }
    result
}

/// The stream loop `stream_for` (a `host.stream_for`) runs.
fn stream_loop<'c, 'a>(stream_for: OperationRef<'c, 'a>) -> StreamLoop<'c, 'a> {
    let body = ir::region(&stream_for, 0)
        .and_then(|region| region.first_block())
        .expect("verified: host.stream_for has a body");
    let operand = |position| ir::operand(&stream_for, position).expect("verified: its range");
    StreamLoop {
        op: stream_for,
        body,
        index: body
            .argument(0)
            .expect("verified: the body takes the index")
            .into(),
        lower: operand(0),
        upper: operand(1),
    }
}

pub(super) fn is_select_of(op: OperationRef, axis: i64, index: Value) -> bool {
    Op::HostSelect.is(&op)
        && integer_attribute(&op, "axis") == Some(axis)
        && ir::operand(&op, 1) == Some(index)
}

/// Whether `op` is `ancestor` or nested in it.
pub(super) fn within(op: OperationRef, ancestor: OperationRef) -> bool {
    let mut current = Some(op);
    while let Some(op) = current {
        if op == ancestor {
            return true;
        }
        current = op.parent_operation();
    }
    false
}

/// Whether `value` is available before `op`: an argument of an enclosing
/// block, or the result of an op before `op` in its block.
pub(super) fn defined_before(value: Value, op: OperationRef) -> bool {
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

#[cfg(test)]
mod tests {
    use super::{Collective, Combine, local_step_last};

    #[test]
    fn local_step_last_only_where_every_ring_is_a_reduce_scatter() {
        assert!(!local_step_last([Collective::Allgather]));
        assert!(local_step_last([Collective::ReduceScatter(Combine::Sum)]));
        assert!(local_step_last([
            Collective::ReduceScatter(Combine::Sum),
            Collective::ReduceScatter(Combine::Max),
        ]));
        assert!(!local_step_last([
            Collective::ReduceScatter(Combine::Max),
            Collective::Allgather,
        ]));
    }
}
