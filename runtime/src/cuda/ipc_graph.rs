//! `cuda` (CUDA-IPC) transfers in CUDA graphs.
//!
//! A transfer's flags are signalled by values the host numbers per call
//! (`ipc.rs`), and a captured flag wait or write is a memory-operation node
//! holding the value (and slot address) of the capture's numbering. Replayed
//! as captured, a second replay would wait for values its peer already
//! wrote in the first and run ahead of it. So a capture notes each transfer
//! flag it enqueues ([`Numbering`]), [`GraphSignals::find`] finds their nodes
//! in the graph, and before each launch [`GraphSignals::renumber`] gives
//! every node the address and value of the replay's own numbers: the next
//! ones of each pair and direction, as a direct call would take (the
//! receiver's host and the sender's number the replay alike, so their
//! numbers meet). The numbers the capture itself took are never signalled:
//! nothing ran while capturing.
//!
//! The destinations a replay's sends write are the capture's: a replay
//! repeats the capture's addresses, and both ranks replay their graphs.

use super::Check;
use super::ipc_signal::Numbering;
use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::collections::HashMap;

/// A memory-operation node of the graph and which of its operations signal
/// which of the [`Numbering`]'s flags.
struct MemOpNode {
    node: sys::CUgraphNode,
    ctx: sys::CUcontext,
    flags: std::ffi::c_uint,
    ops: Vec<sys::CUstreamBatchMemOpParams>,
    signals: Vec<Option<usize>>,
}

/// A captured graph's transfer flags, renumbered before each replay.
pub(super) struct GraphSignals {
    numbering: Numbering,
    nodes: Vec<MemOpNode>,
}

/// An operation's (address, value) if it waits on or writes a 32-bit value.
fn flag_operation(op: &sys::CUstreamBatchMemOpParams) -> Option<(sys::CUdeviceptr, u32)> {
    use sys::CUstreamBatchMemOpType::*;
    // SAFETY: every member of the union begins with `operation`, and the
    // member read is the one it names.
    unsafe {
        match op.operation {
            CU_STREAM_MEM_OP_WAIT_VALUE_32 => {
                Some((op.waitValue.address, op.waitValue.__bindgen_anon_1.value))
            }
            CU_STREAM_MEM_OP_WRITE_VALUE_32 => {
                Some((op.writeValue.address, op.writeValue.__bindgen_anon_1.value))
            }
            _ => None,
        }
    }
}

/// `op` signalling `address` with `value` instead.
fn with_flag(
    mut op: sys::CUstreamBatchMemOpParams,
    (address, value): (sys::CUdeviceptr, u32),
) -> sys::CUstreamBatchMemOpParams {
    use sys::CUstreamBatchMemOpType::*;
    // SAFETY: as in `flag_operation`; only the member `operation` names is
    // written.
    unsafe {
        match op.operation {
            CU_STREAM_MEM_OP_WAIT_VALUE_32 => {
                op.waitValue.address = address;
                op.waitValue.__bindgen_anon_1.value = value;
            }
            CU_STREAM_MEM_OP_WRITE_VALUE_32 => {
                op.writeValue.address = address;
                op.writeValue.__bindgen_anon_1.value = value;
            }
            _ => {}
        }
    }
    op
}

/// The nodes of `graph`.
fn nodes(graph: sys::CUgraph) -> Result<Vec<sys::CUgraphNode>> {
    let mut count = 0;
    // SAFETY: a live graph; a null array asks for the count.
    unsafe { sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut count) }
        .result()
        .check("cuGraphGetNodes")?;
    let mut nodes = vec![std::ptr::null_mut(); count];
    // SAFETY: room for `count` nodes.
    unsafe { sys::cuGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count) }
        .result()
        .check("cuGraphGetNodes")?;
    nodes.truncate(count);
    Ok(nodes)
}

impl GraphSignals {
    /// Finds the nodes of `numbering`'s flags in `graph` (None when the call
    /// made no `cuda` transfer).
    pub fn find(graph: sys::CUgraph, numbering: Numbering) -> Result<Option<GraphSignals>> {
        if numbering.signals.is_empty() {
            return Ok(None);
        }
        let index: HashMap<(sys::CUdeviceptr, u32), usize> = numbering
            .signals
            .iter()
            .enumerate()
            .map(|(i, signal)| ((signal.address, signal.value), i))
            .collect();
        let mut found = vec![false; numbering.signals.len()];
        let mut memop_nodes = Vec::new();
        for node in nodes(graph)? {
            let mut kind = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
            // SAFETY: a node of the live graph.
            unsafe { sys::cuGraphNodeGetType(node, &mut kind) }
                .result()
                .check("cuGraphNodeGetType")?;
            if kind != sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_BATCH_MEM_OP {
                continue;
            }
            // SAFETY: a memory-operation node; the array it returns is the
            // graph's, copied before the graph changes.
            let params = unsafe {
                let mut params = std::mem::zeroed::<sys::CUDA_BATCH_MEM_OP_NODE_PARAMS>();
                sys::cuGraphBatchMemOpNodeGetParams(node, &mut params)
                    .result()
                    .check("cuGraphBatchMemOpNodeGetParams")?;
                params
            };
            // SAFETY: `count` operations at `paramArray`, as the driver says.
            let ops =
                unsafe { std::slice::from_raw_parts(params.paramArray, params.count as usize) }
                    .to_vec();
            let signals: Vec<Option<usize>> = ops
                .iter()
                .map(|op| flag_operation(op).and_then(|flag| index.get(&flag).copied()))
                .collect();
            if signals.iter().all(Option::is_none) {
                continue;
            }
            for &i in signals.iter().flatten() {
                found[i] = true;
            }
            memop_nodes.push(MemOpNode {
                node,
                ctx: params.ctx,
                flags: params.flags,
                ops,
                signals,
            });
        }
        // A flag write is always enqueued; a wait only where the program
        // waits for its request.
        if let Some(lost) = numbering
            .signals
            .iter()
            .zip(&found)
            .find(|(signal, found)| !**found && !signal.side.waits_on(signal.flag))
        {
            return Err(Error::Invalid(format!(
                "the CUDA graph lost the flag write of cuda transfer #{} with team member {} \
                 on team {}: the driver captured it as no memory-operation node",
                lost.0.number, lost.0.member, lost.0.team
            )));
        }
        tracing::debug!(
            signals = numbering.signals.len(),
            found = found.iter().filter(|&&found| found).count(),
            nodes = memop_nodes.len(),
            ranges = ?numbering.ranges,
            "found the cuda transfers' flags in the captured graph"
        );
        Ok(Some(GraphSignals {
            numbering,
            nodes: memop_nodes,
        }))
    }

    /// Gives `exec`'s flag nodes the numbers of its next replay (taken from
    /// `ipc`'s counters); the replay must be launched next.
    pub fn renumber(&self, exec: sys::CUgraphExec, ipc: &mut super::ipc::Ipc) -> Result<()> {
        let flags = ipc.renumber(&self.numbering);
        for node in &self.nodes {
            let mut ops: Vec<sys::CUstreamBatchMemOpParams> = node
                .ops
                .iter()
                .zip(&node.signals)
                .map(|(&op, signal)| match signal {
                    Some(i) => with_flag(op, flags[*i]),
                    None => op,
                })
                .collect();
            let params = sys::CUDA_BATCH_MEM_OP_NODE_PARAMS {
                ctx: node.ctx,
                count: ops.len() as std::ffi::c_uint,
                paramArray: ops.as_mut_ptr(),
                flags: node.flags,
            };
            // SAFETY: a node of the graph `exec` was instantiated from,
            // given operations of the same kinds with new values.
            unsafe { sys::cuGraphExecBatchMemOpNodeSetParams(exec, node.node, &params) }
                .result()
                .check("cuGraphExecBatchMemOpNodeSetParams")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sys::CUstreamBatchMemOpType::*;

    fn op(operation: sys::CUstreamBatchMemOpType) -> sys::CUstreamBatchMemOpParams {
        // SAFETY: the union is plain data; all zeros is a valid value of it.
        let mut op: sys::CUstreamBatchMemOpParams = unsafe { std::mem::zeroed() };
        op.operation = operation;
        op
    }

    #[test]
    fn flag_operations_are_read_and_renumbered_in_place() {
        for operation in [
            CU_STREAM_MEM_OP_WAIT_VALUE_32,
            CU_STREAM_MEM_OP_WRITE_VALUE_32,
        ] {
            let renumbered = with_flag(op(operation), (0x2040, 17));
            assert_eq!(flag_operation(&renumbered), Some((0x2040, 17)));
            // SAFETY: `operation` is the member both renumbering and this read.
            assert_eq!(unsafe { renumbered.operation }, operation);
        }
        let flush = with_flag(op(CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES), (0x2040, 17));
        assert_eq!(flag_operation(&flush), None);
    }
}
