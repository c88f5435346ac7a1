// RUN: not hir-opt %s --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{stream-sync=comm chunks=2}))' 2>&1 | FileCheck %s --check-prefix=CHUNKS
// RUN: not hir-opt %s --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{stream-sync=event}))' 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not hir-opt %s --pass-pipeline='builtin.module(hir-lower{ring-sync=comm})' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not hir-opt %s --pass-pipeline='builtin.module(hir-lower{p2p=cuda ring-sync=comm ring-chunks=2})' 2>&1 | FileCheck %s --check-prefix=RING-CHUNKS

// The options host-p2p-pipeline{stream-sync} and hir-lower{ring-sync} refuse:
// stream-sync=comm runs whole steps (nvFuser's inter_stream_synchronization
// syncs the next stream after a step's one transfer), and ring-sync
// synchronizes the steps of rings, which p2p=none makes none of.
// CHUNKS: stream-sync=comm runs whole ring steps; it needs chunks=0 or chunks=1, not chunks=2
// Each refusal names the options as the user wrote them: the pass's, or
// hir-lower's (one rule, checked once: host_p2p_pipeline::check_chunks).
// RING-CHUNKS: hir-lower: ring-sync=comm runs whole ring steps; it needs ring-chunks=0 or ring-chunks=1, not ring-chunks=2
// VALUE: option 'stream-sync' must be one of step|comm, not 'event'
// PIPELINE: ring-sync=comm synchronizes the steps of rings; it needs p2p=nccl or p2p=cuda, not p2p=none

func.func @empty() {
  return
}
