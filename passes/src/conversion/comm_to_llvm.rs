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
//!   their `i64` codes ([`ReduceKind`], [`Backend`]).
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
//! Every `comm` op is lowered or the pass fails at it: none is left.
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

use super::runtime_calls::{Failure, Handles, Result, Runtime, dtype, is_request};
use crate::HirPass;
use crate::ir;
use hir_abi::{Backend, Collective, Entry, ReduceKind};
use melior::{
    Context, IrRewriter,
    ir::{
        OperationRef, Value,
        attribute::{DenseI64ArrayAttribute, IntegerAttribute},
        operation::OperationLike,
    },
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
        let context = module.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        if let Err(failure) = convert(context, module) {
            failure.emit();
            return false;
        }
        true
    }
}

fn convert<'c, 'a>(context: &'c Context, module: OperationRef<'c, 'a>) -> Result<'c, ()> {
    let ops: Vec<_> = ir::nested(module)
        .into_iter()
        .filter(|op| ir::name(op).starts_with("comm."))
        .collect();
    let mut requests = Handles::new("comm", "'!comm.request'", is_request).through_scf();
    requests.check(module, ARGUMENT)?;

    let Some(mut runtime) = Runtime::new(context, module) else {
        return Ok(());
    };
    // Requests are made before they are waited for: lower their makers first.
    let (makers, others): (Vec<_>, Vec<_>) =
        ops.into_iter().partition(|op| requests.makes_handle(op));
    let rewriter = IrRewriter::new(context);
    let rewriter = rewriter.as_rewriter_base();
    for &op in &makers {
        let request = lower(&mut runtime, op)?.expect("a request maker");
        requests.record(op.result(0).expect("one result").into(), request);
    }
    // From here on every request is its `i64`, in the `scf` values that
    // carry it too: `comm.wait` takes it as it is.
    requests.carry(&rewriter, module);
    for op in others {
        lower(&mut runtime, op)?;
        rewriter.erase_op(op);
    }
    for op in makers {
        rewriter.erase_op(op);
    }
    Ok(())
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

/// The code of `op`'s backend (`comm.Backend`, an `i32` enum, `nccl` by default).
fn backend<'c>(op: &OperationRef<'c, '_>) -> Result<'c, i64> {
    let backend = match integer(op, "backend", 0) {
        0 => Backend::Nccl,
        1 => Backend::Cuda,
        other => {
            return Err(Failure::new(
                op.location(),
                format!("'{}' op has an unknown backend {other}", ir::name(op)),
            ));
        }
    };
    Ok(backend as i64)
}

/// `op`'s team as a `memref<*xi64>` constant.
fn team<'c, 'a>(
    runtime: &mut Runtime<'c, 'a>,
    op: OperationRef<'c, 'a>,
) -> Result<'c, Value<'c, 'a>> {
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
            runtime.table(op, "team", &shape, &ranks)
        }
        _ => runtime.list(op, "team", &ranks),
    }
}

/// Lowers one comm op (inserting before it) and returns the request that
/// replaces its result, if it has one.
fn lower<'c, 'a>(
    runtime: &mut Runtime<'c, 'a>,
    op: OperationRef<'c, 'a>,
) -> Result<'c, Option<Value<'c, 'a>>> {
    let name = ir::name(&op);
    let operand = |index: usize| op.operand(index).expect("verified operand count");
    let mnemonic = name.strip_prefix("comm.").unwrap_or_default();
    match mnemonic {
        "send" | "recv" => {
            let element = dtype(&op, operand(0))?;
            let entry = match mnemonic {
                "send" => Entry::Send(element),
                _ => Entry::Recv(element),
            };
            let arguments = [
                runtime.buffer(op, operand(0)),
                runtime.index_to_i64(op, operand(1)),
                team(runtime, op)?,
                runtime.constant(op, backend(&op)?),
            ];
            runtime.call(op, entry, &arguments)
        }
        "start_coalescing" => runtime.call(op, Entry::StartCoalescing, &[]),
        "end_coalescing" => runtime.call(op, Entry::EndCoalescing, &[]),
        "wait" => runtime.call(op, Entry::Wait, &[operand(0)]),
        "share_mem_handles" => {
            let team = team(runtime, op)?;
            for buffer in op.operands() {
                let entry = Entry::ShareMemHandle(dtype(&op, buffer)?);
                let buffer = runtime.buffer(op, buffer);
                runtime.call(op, entry, &[buffer, team])?;
            }
            Ok(None)
        }
        "barrier" => {
            let arguments = [team(runtime, op)?, runtime.constant(op, backend(&op)?)];
            runtime.call(op, Entry::Barrier, &arguments)
        }
        collective => {
            let Some(collective) = Collective::ALL
                .into_iter()
                .find(|known| known.name() == collective)
            else {
                return Err(Failure::new(
                    op.location(),
                    format!("'{name}' op has no lowering to the runtime"),
                ));
            };
            let entry = Entry::Collective(collective, dtype(&op, operand(0))?);
            let root = match op.operand(2) {
                Ok(root) => runtime.index_to_i64(op, root),
                Err(_) => runtime.constant(op, integer(&op, "root", 0)),
            };
            let arguments = [
                runtime.buffer(op, operand(0)),
                runtime.buffer(op, operand(1)),
                runtime.constant(op, reduce_kind(&op)?),
                root,
                runtime.constant(op, integer(&op, "axis", 0)),
                team(runtime, op)?,
                runtime.constant(op, backend(&op)?),
            ];
            runtime.call(op, entry, &arguments)
        }
    }
}
