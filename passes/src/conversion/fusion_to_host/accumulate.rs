//! A contraction streamed over its contracted axis K
//! ([`crate::fusion::stream_contraction`]): a `host.stream_for` over K's
//! chunks whose iteration i takes chunk i of K of every operand (a
//! `memref.subview` part at `i * K/k`, as a `stream<k>` loop takes its
//! chunks, so `host-stream-parallelize` fuses it with the loops that
//! computed those chunks) and adds its product to the whole result.
//! Iteration 0 writes the result (a linear's bias with it); each later one
//! accumulates (`{accumulate}`: the GEMM's beta = 1, without the bias).
//!
//! The accumulations are ordered by the caller's stream: each iteration
//! first makes its stream wait for the caller's (`host.sync_stream`), which
//! has joined every earlier iteration by then (the join at the end of each
//! iteration is `host.stream_for`'s semantics, kept by
//! `host-lower-stream-for` for a body that uses the caller's stream). So
//! the iterations add one after the other, whichever pool stream each runs
//! on, while the work in front of the sync (the chunk's FC1 and gelu, once
//! fused) overlaps the previous iteration's.
//!
//! ```mlir
//! host.stream_for %c0 to %c4 step %c1 from %main {
//! ^bb0(%i: index, %s: !host.stream):
//!   %k = arith.muli %i, %c16 : index
//!   %ai = memref.subview %a[0, %k] [8, 16] [1, 1] : memref<8x64xf32> to ...
//!   %wi = memref.subview %w[0, %k] [16, 16] [1, 1] : memref<16x64xf32> to ...
//!   %first = arith.cmpi eq, %i, %c0 : index
//!   host.sync_stream %main
//!   scf.if %first {
//!     host.linear ins(%ai, %wi, %b : ...) outs(%y : memref<8x16xf32>)
//!   } else {
//!     host.linear ins(%ai, %wi : ...) outs(%y : memref<8x16xf32>) {accumulate}
//!   }
//! }
//! ```

use super::Lowering;
use crate::{
    builders::{self, Builder},
    diagnostics::Emitted,
    fusion::stream_contraction,
    ir,
    ops::Op,
};
use melior::{
    dialect::{arith, scf},
    ir::{
        Attribute, Block, OperationRef, Region, RegionLike, Value, ValueLike,
        operation::OperationLike,
    },
};

impl<'c, 'm> Lowering<'c, 'm> {
    /// The loop of accumulating GEMMs computing `op`, a contraction over a
    /// stream axis as `streamed` says, from the local `buffers` of its
    /// operands into `destination`.
    pub(super) fn accumulate(
        &self,
        op: OperationRef<'c, 'm>,
        buffers: &[Value<'c, 'm>],
        destination: Value<'c, 'm>,
        streamed: &stream_contraction::StreamedContraction,
    ) -> Result<(), Emitted> {
        let location = op.location();
        let name = ir::name(&op);
        let mnemonic = name.split_once('.').map_or("", |(_, mnemonic)| mnemonic);
        let host_name = Op::HostCopy.sibling(mnemonic);
        let main = self.main_stream(location);
        let (_, terminator, index) =
            Builder::before(self.context, op).stream_for(streamed.iterations, main, location);
        let body = Builder::before(self.context, terminator);
        // Every operand's K has one extent (the op's verifier), so one offset.
        let mut offset = None;
        let chunks: Vec<Value> = buffers
            .iter()
            .zip(&streamed.contracted)
            .map(|(&buffer, &axis)| {
                let Some(axis) = axis else {
                    return buffer;
                };
                let size = builders::buffer_shape(buffer.r#type())[axis] / streamed.iterations;
                let offset = *offset.get_or_insert_with(|| body.part_offset(index, size, location));
                body.window(buffer, axis, offset, size, location)
            })
            .collect();
        let zero = body.index(0, location);
        let first = body.value(arith::cmpi(
            self.context,
            arith::CmpiPredicate::Eq,
            index,
            zero,
            location,
        ));
        body.sync_stream(main, location);
        let gemm = |accumulate: bool| {
            let block = Block::new(&[]);
            let ops = Builder::at_end(self.context, &block, location);
            let mut operands = chunks.clone();
            if accumulate {
                // The bias is added once, by iteration 0.
                operands.truncate(2);
            }
            operands.push(destination);
            let attributes = if accumulate {
                vec![("accumulate", Attribute::unit(self.context))]
            } else {
                Vec::new()
            };
            ops.op(&host_name, location, &operands, &attributes, &[]);
            ops.insert(scf::r#yield(&[], location));
            let region = Region::new();
            region.append_block(block);
            region
        };
        body.insert(scf::r#if(first, &[], gemm(false), gemm(true), location));
        Ok(())
    }
}
