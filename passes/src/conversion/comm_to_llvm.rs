//! `convert-comm-to-llvm`: every `comm` op becomes a call of the runtime's C
//! ABI ([`hir_abi::Entry`]), taken to the LLVM dialect by the
//! upstream conversions of [`super::LLVM_PIPELINE`].
//!
//! - Collectives call `hir_rt_<collective>_<dtype>(in, out, kind, root, axis,
//!   team, backend)`, with 0 for the fields the collective has none of; a
//!   root given as a value (`root %i`, the only operand after the buffers)
//!   is passed as it is, and the runtime checks it is in the team; sends and
//!   receives `hir_rt_{send,recv}_<dtype>(buffer, peer, team,
//!   backend)`. Buffers are cast to unranked memrefs, teams are
//!   `memref<*xi64>` constants (`memref.global`; several teams of one
//!   size, `team [[0, 1], [2, 3]]`, are a 2-D constant, one team a row, of
//!   which the runtime takes the row that holds the calling rank), reduce kinds and backends
//!   their `i64` codes ([`ReduceKind`], [`Transport`]).
//! - `!comm.request` values become `i64` handles, also where they flow
//!   through `scf.for` iter_args (so a wait can be posted one iteration
//!   later) and `scf.if` results: those block arguments and results are
//!   retyped to `i64` in place, their `scf.yield`s yield the handles. A
//!   request that flows through any other op (a call, a return, `scf.while`,
//!   an unknown op) is an error. `comm-verify-requests` checks that each is
//!   waited exactly once on every path.
//! - `comm.share_mem_handles` calls `hir_rt_share_mem_handle_<dtype>` once
//!   per buffer.
//!
//! The pass is two pattern sets applied by melior's walk driver
//! ([`crate::patterns`]), one pattern per op or family (the collectives of
//! the ABI's `Collective`, rooted at the ops its names spell), each
//! changing the IR only through the rewriter: first the request makers,
//! each replaced by the `i64` handle its call returns, then the other ops
//! and the `scf.for`/`scf.if` that carry requests ([`Handles::retype`]).
//! Then every `comm` op is lowered, or the pass fails at the first left
//! (`'comm.x' op has no lowering to the runtime`): none is left.
//!
//! ```mlir
//! %r = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
//! comm.wait %r
//! ```
//! becomes
//! ```mlir
//! memref.global "private" constant @__hir_team_0_1 : memref<2xi64> = dense<[0, 1]>
//! ...
//! %t = memref.get_global @__hir_team_0_1 : memref<2xi64>
//! %r = call @hir_rt_allreduce_f32(%in, %out, %c0_i64, %c0_i64, %c0_i64, %team, %c0_i64)
//!     : (memref<*xf32>, memref<*xf32>, i64, i64, i64, memref<*xi64>, i64) -> i64
//! call @hir_rt_wait(%r) : (i64) -> ()
//! ```

use super::handles::{Handles, is_request};
use super::runtime_calls::{self, Failure, Result, Runtime, Shared, State, dtype};
use crate::ops::Op;
use crate::{HirPass, ir, patterns};
use hir_abi::{Collective, Entry, ReduceKind, Transport};
use melior::ir::{
    OperationRef, Value,
    attribute::{DenseI64ArrayAttribute, IntegerAttribute},
    operation::OperationLike,
};

/// The op the pass runs on: it adds declarations to the module.
pub const ANCHOR: &str = crate::ops::MODULE;
pub const ARGUMENT: &str = "convert-comm-to-llvm";

/// Creates the pass (anchored on `builtin.module`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(ConvertCommToLlvm)
}

struct ConvertCommToLlvm;

impl HirPass for ConvertCommToLlvm {
    fn run(&mut self, module: OperationRef) -> bool {
        let requests = Handles::new(Op::CommWait, "'!comm.request'", is_request).through_scf();
        if let Err(failure) = requests.check(module, ARGUMENT) {
            failure.emit();
            return false;
        }
        let state = Shared::default();
        // Requests are made before they are waited for: their makers go
        // first, and each request's users then take its `i64` handle.
        patterns::walk(module, |context, set| {
            let add = |root: &str, lower| runtime_calls::add(set, context, &state, root, lower);
            for collective in Collective::ALL {
                add(&Op::CommWait.sibling(collective.name()), self::collective);
            }
            add(Op::CommSend.name(), point_to_point);
            add(Op::CommRecv.name(), point_to_point);
            add(Op::CommEndCoalescing.name(), end_coalescing);
        });
        if State::failed(&state) {
            return false;
        }
        patterns::walk(module, |context, set| {
            let add = |root: &str, lower| runtime_calls::add(set, context, &state, root, lower);
            add(Op::CommWait.name(), wait);
            add(Op::CommStartCoalescing.name(), start_coalescing);
            add(Op::CommShareMemHandles.name(), share_mem_handles);
            add(Op::CommBarrier.name(), barrier);
            // The `scf` values that carry requests become `i64`s too.
            for root in [Op::ScfFor, Op::ScfIf] {
                patterns::add(set, context, root.name(), &[], move |op, rewriter| {
                    requests.retype(rewriter, op)
                });
            }
        });
        if State::failed(&state) {
            return false;
        }
        // Every comm op is lowered, or the pass fails at it.
        if let Err(failure) = runtime_calls::leftover(module, Op::CommWait) {
            failure.emit();
            return false;
        }
        true
    }
}

/// An `i64` attribute of `op`, or `default` where it is absent (a default-valued one).
fn integer<'c>(op: &OperationRef<'c, '_>, name: &str, default: i64) -> i64 {
    op.attribute(name)
        .ok()
        .and_then(|attribute| IntegerAttribute::try_from(attribute).ok())
        .map_or(default, |attribute| attribute.value())
}

/// The code of `op`'s reduce kind (`comm.ReduceKind`, an `i32` enum), 0 if it has none.
fn reduce_kind<'c>(op: &OperationRef<'c, '_>) -> Result<'c, i64> {
    if !op.has_attribute("kind") {
        return Ok(0);
    }
    let kind = match integer(op, "kind", -1) {
        0 => ReduceKind::Sum,
        1 => ReduceKind::Prod,
        2 => ReduceKind::Max,
        3 => ReduceKind::Min,
        4 => ReduceKind::Avg,
        other => {
            return Err(Failure::new(
                op.location(),
                format!("'{}' op has an unknown reduce kind {other}", ir::name(op)),
            ));
        }
    };
    Ok(kind as i64)
}

/// The code of `op`'s backend (`comm.Transport`, an `i32` enum, `nccl` by default).
fn backend<'c>(op: &OperationRef<'c, '_>) -> Result<'c, i64> {
    let backend = match integer(op, "backend", 0) {
        0 => Transport::Nccl,
        1 => Transport::Cuda,
        other => {
            return Err(Failure::new(
                op.location(),
                format!("'{}' op has an unknown backend {other}", ir::name(op)),
            ));
        }
    };
    Ok(backend as i64)
}

/// The op's team as a `memref<*xi64>` constant.
fn team<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Value<'c, 'a>> {
    let op = runtime.op();
    let team = op
        .attribute("team")
        .ok()
        .and_then(|team| DenseI64ArrayAttribute::try_from(team).ok())
        .ok_or_else(|| {
            Failure::new(op.location(), format!("'{}' op has no team", ir::name(&op)))
        })?;
    let ranks: Vec<i64> = (0..team.len())
        .map(|index| team.element(index).expect("index in range"))
        .collect();
    match ir::integer_attribute(&op, "team_size") {
        // Several teams: one row each; the runtime takes the one that holds
        // the calling rank.
        Some(size) if size > 0 => {
            let shape = [ranks.len() as i64 / size, size];
            runtime.table("team", &shape, &ranks)
        }
        _ => runtime.list("team", &ranks),
    }
}

/// A collective: `hir_rt_<collective>_<dtype>(in, out, kind, root, axis,
/// team, backend) -> request`.
fn collective<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    let name = ir::name(&op);
    let mnemonic = name.split_once('.').map_or("", |(_, mnemonic)| mnemonic);
    let collective = Collective::ALL
        .into_iter()
        .find(|known| known.name() == mnemonic)
        .ok_or_else(|| {
            Failure::new(
                op.location(),
                format!("'{name}' op has no lowering to the runtime"),
            )
        })?;
    let entry = Entry::Collective(collective, dtype(&op, runtime.operand(0))?);
    let root = match ir::operand(&op, 2) {
        Some(root) => runtime.index_to_i64(root),
        None => runtime.constant(integer(&op, "root", 0)),
    };
    let arguments = [
        runtime.buffer(runtime.operand(0)),
        runtime.buffer(runtime.operand(1)),
        runtime.constant(reduce_kind(&op)?),
        root,
        runtime.constant(integer(&op, "axis", 0)),
        team(runtime)?,
        runtime.constant(backend(&op)?),
    ];
    runtime.call(entry, &arguments)
}

/// `comm.send`, `comm.recv`: `hir_rt_{send,recv}_<dtype>(buffer, peer, team,
/// backend) -> request`.
fn point_to_point<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    let element = dtype(&op, runtime.operand(0))?;
    let entry = match Op::of(&op) {
        Some(Op::CommSend) => Entry::Send(element),
        _ => Entry::Recv(element),
    };
    let arguments = [
        runtime.buffer(runtime.operand(0)),
        runtime.index_to_i64(runtime.operand(1)),
        team(runtime)?,
        runtime.constant(backend(&op)?),
    ];
    runtime.call(entry, &arguments)
}

/// `comm.end_coalescing`: `hir_rt_end_coalescing() -> request`.
fn end_coalescing<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    runtime.call(Entry::EndCoalescing, &[])
}

/// `comm.start_coalescing`: `hir_rt_start_coalescing()`.
fn start_coalescing<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    runtime.call(Entry::StartCoalescing, &[])
}

/// `comm.wait`: `hir_rt_wait(request)`, the request's `i64` as it is.
fn wait<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    runtime.call(Entry::Wait, &[runtime.operand(0)])
}

/// `comm.share_mem_handles`: `hir_rt_share_mem_handle_<dtype>(buffer, team)`
/// once per buffer.
fn share_mem_handles<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    let team = team(runtime)?;
    for buffer in op.operands() {
        let entry = Entry::ShareMemHandle(dtype(&op, buffer)?);
        let buffer = runtime.buffer(buffer);
        runtime.call(entry, &[buffer, team])?;
    }
    Ok(None)
}

/// `comm.barrier`: `hir_rt_barrier(team, backend)`.
fn barrier<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    let arguments = [team(runtime)?, runtime.constant(backend(&op)?)];
    runtime.call(Entry::Barrier, &arguments)
}
