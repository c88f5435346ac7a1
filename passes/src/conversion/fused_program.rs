//! The program of a `host.fused` op ([`hir_abi::fused::Program`]), read off
//! its body for `convert-host-to-llvm`: each broadcast of an input is a
//! load of it with stride 0 along the new axes, each other input read is a
//! plain load, each elementwise op an instruction (the C ABI's `Unary` and
//! `Binary` by mnemonic, as their unfused entries; `copy` and `cast` a
//! conversion to the written buffer's type), each fill a constant of the
//! written buffer's type, and each output a store of the slot last written
//! to it.
//!
//! A body that reduces (a `host.sum` or `host.amax` of the iteration
//! shape's last axis) or holds buffers of the iteration shape without that
//! axis is a row program: a reduction is an instruction whose result is one
//! value per row, a buffer of the row shape holds such values (an input
//! read as a load broadcast along the row, an output written by a row
//! store), and a broadcast of one along the row is that value.
//!
//! ```mlir
//! host.fused ins(%x, %b : memref<4x8xf32>, memref<8xf32>) outs(%y : memref<4x8xbf16>) {
//! ^bb0(%xa: memref<4x8xf32>, %ba: memref<8xf32>, %ya: memref<4x8xbf16>, %t0: memref<4x8xf32>, %t1: memref<4x8xf32>):
//!   host.broadcast [0] ins(%ba : ...) outs(%t0 : ...)
//!   host.add ins(%xa, %t0 : ...) outs(%t1 : ...)
//!   host.cast ins(%t1 : ...) outs(%ya : ...)
//! }
//! ```
//! is `loads [x, b broadcast along 0], add(0, 1): f32, convert(2): bf16,
//! store y <- 3`.

use super::runtime_calls::{self, Failure, Result, dtype};
use crate::ir;
use crate::ops::Op;
use hir_abi::fused::{Instr, Load, Program, Store};
use hir_abi::{Binary, Reduction, Unary};
use hir_dialects::{OpKind, destination};
use melior::ir::{
    BlockLike, OperationRef, RegionLike, Value, ValueLike,
    attribute::{DenseI32ArrayAttribute, FloatAttribute},
    block::BlockArgument,
    operation::OperationLike,
    r#type::{MemRefType, ShapedTypeLike},
};

/// The program of `fused`, a verified `host.fused` op.
pub fn program<'c>(fused: OperationRef<'c, '_>) -> Result<'c, Program> {
    let body = ir::region(&fused, 0)
        .and_then(|region| region.first_block())
        .expect("a verified host.fused has a body");
    let dtypes = fused
        .operands()
        .map(|buffer| dtype(&fused, buffer))
        .collect::<Result<Vec<_>>>()?;
    let segments = fused
        .attribute("operandSegmentSizes")
        .ok()
        .and_then(|segments| DenseI32ArrayAttribute::try_from(segments).ok())
        .expect("host.fused has its operand segments");
    let inputs = segments.element(0).expect("the inputs' segment") as usize;
    let argument = |value: Value| {
        BlockArgument::try_from(value)
            .expect("verified: the body's ops take its arguments")
            .argument_number()
    };
    // Each op of the body: the argument it writes and those it reads.
    let ops: Vec<(OperationRef, usize, Vec<usize>)> = ir::block_ops(body)
        .map(|op| {
            let written = destination(&op).expect("verified: the body's ops are in DPS");
            let reads = (0..op.operand_count())
                .filter(|&index| index != written)
                .map(|index| argument(op.operand(index).expect("index in range")))
                .collect();
            (
                op,
                argument(op.operand(written).expect("index in range")),
                reads,
            )
        })
        .collect();
    let rank =
        |value: Value| MemRefType::try_from(value.r#type()).map_or(0, |memref| memref.rank());
    let arguments: Vec<Value> = (0..body.argument_count())
        .map(|index| body.argument(index).expect("index in range").into())
        .collect();
    // The iteration shape's rank (its largest outputs'); buffers of one
    // axis fewer hold one value per row.
    let iteration = arguments[inputs..dtypes.len()]
        .iter()
        .map(|&output| rank(output))
        .max()
        .expect("verified: a fused op has outputs");
    let rows = |argument: usize| iteration > 0 && rank(arguments[argument]) + 1 == iteration;
    let reduced = (ops
        .iter()
        .any(|(op, _, _)| OpKind::of(op) == OpKind::Reduction)
        || (inputs..arguments.len()).any(rows))
    .then(|| iteration - 1);
    // The load of a broadcast of an input, or of an input read plainly (one
    // of the row shape is broadcast along the row).
    let broadcast_load = |op: OperationRef<'c, '_>, target: usize, input: usize| {
        let mut broadcast = axes(op)?;
        if rows(target) {
            broadcast.extend(reduced);
        }
        Ok(Load {
            buffer: input,
            broadcast,
        })
    };
    let plain_load = |input: usize| Load {
        buffer: input,
        broadcast: if rows(input) {
            reduced.into_iter().collect()
        } else {
            Vec::new()
        },
    };
    // The loads first, since their slots come before the instructions'.
    let mut loads: Vec<Load> = Vec::new();
    for (op, target, reads) in &ops {
        let wanted: Vec<Load> = if OpKind::of(op) == OpKind::Broadcast {
            match reads[0] < inputs {
                true => vec![broadcast_load(*op, *target, reads[0])?],
                false => Vec::new(),
            }
        } else {
            reads
                .iter()
                .filter(|&&read| read < inputs)
                .map(|&read| plain_load(read))
                .collect()
        };
        for load in wanted {
            if !loads.contains(&load) {
                loads.push(load);
            }
        }
    }
    let slot_of = |load: Load| {
        loads
            .iter()
            .position(|other| *other == load)
            .expect("every load was collected")
    };
    // The slot each output or temporary argument holds now.
    let mut current: Vec<Option<usize>> = vec![None; body.argument_count()];
    let mut instrs = Vec::new();
    for (op, target, reads) in ops {
        if OpKind::of(&op) == OpKind::Broadcast {
            current[target] = Some(match reads[0] < inputs {
                true => slot_of(broadcast_load(op, target, reads[0])?),
                // A row value broadcast along the row is that value.
                false if reduced.is_some() && axes(op)? == [iteration - 1] => {
                    current[reads[0]].expect("verified: written before read")
                }
                false => {
                    return Err(Failure::new(
                        op.location(),
                        "a broadcast in a fused kernel reads an input, or a row value along \
                         the row"
                            .into(),
                    ));
                }
            });
            continue;
        }
        let operands: Vec<usize> = reads
            .iter()
            .map(|&read| match read < inputs {
                true => slot_of(plain_load(read)),
                false => current[read].expect("verified: written before read"),
            })
            .collect();
        let name = ir::name(&op);
        let mnemonic = name.strip_prefix("host.").unwrap_or_default();
        let instr = match Op::of(&op) {
            Some(Op::HostCopy | Op::HostCast) => Instr::Convert(operands[0]),
            Some(Op::HostWhere) => Instr::Where(operands[0], operands[1], operands[2]),
            Some(Op::HostFill) => Instr::constant(
                op.attribute("value")
                    .ok()
                    .and_then(|value| FloatAttribute::try_from(value).ok())
                    .expect("verified: a fill has its f64 value")
                    .value(),
            ),
            _ => match (
                Unary::ALL.into_iter().find(|op| op.name() == mnemonic),
                Binary::ALL.into_iter().find(|op| op.name() == mnemonic),
                Reduction::ALL.into_iter().find(|op| op.name() == mnemonic),
            ) {
                (Some(unary), _, _) => Instr::Unary(unary, operands[0]),
                (_, Some(binary), _) => Instr::Binary(binary, operands[0], operands[1]),
                (_, _, Some(reduction)) => Instr::Reduce(reduction, operands[0]),
                _ => {
                    return Err(Failure::new(
                        op.location(),
                        format!("'{name}' op has no lowering in a fused kernel"),
                    ));
                }
            },
        };
        let written = op
            .operand(destination(&op).expect("verified: in DPS"))
            .expect("index in range");
        instrs.push((instr, dtype(&op, written)?));
        current[target] = Some(loads.len() + instrs.len() - 1);
    }
    let stores = (inputs..dtypes.len())
        .map(|output| Store {
            buffer: output,
            slot: current[output].expect("verified: every output is written"),
            row: rows(output),
        })
        .collect();
    Ok(Program {
        reduced,
        dtypes,
        loads,
        instrs,
        stores,
    })
}

/// The new axes of a broadcast.
fn axes<'c>(op: OperationRef<'c, '_>) -> Result<'c, Vec<usize>> {
    Ok(runtime_calls::axes(&op)?
        .into_iter()
        .map(|axis| axis as usize)
        .collect())
}
