// RUN: hir-opt %s --split-input-file --host-p2p-pipeline='chunks=1' | FileCheck %s --check-prefixes=CHECK,NCCL
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=nccl chunks=1}))' | FileCheck %s --check-prefixes=CHECK,NCCL
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=cuda chunks=1}))' | FileCheck %s --check-prefixes=CHECK,CUDA

// The inputs are host programs whose collective communicates along the axis
// of a stream loop, so that the loop cannot slice it: an allgather stays
// before the loop that reads its output slice by slice, a reduce-scatter after
// the loop that writes its input slice by slice. The ring at step %t of rank
// %rank works on slice (%rank + %t) mod 4 and meets partner (4 + %rank - %t)
// mod 4, where %t is the loop index %i, or %i + 1 in a loop of reduce-scatters
// only (their local step comes last); at the step whose slice is its own it
// copies, or, for an allgather into a buffer of its own that only the step's
// slice reads, computes on its own shard instead (the first two cases). Each
// step's stream first waits for the previous step's, stream (%i + n - 1) mod n
// of the n the steps use, so that the steps compute one at a time, in order.

// DIDx -> Stream on one axis (seed 001's AllgatherP2p): in [DIDx(4), 8] ->
// out [Stream(4), 8]. Slice s of the gathered buffer comes from rank s.
// CHECK-LABEL: func.func @allgather
// CHECK-SAME: (%[[IN:.*]]: memref<1x8xf32>, %[[OUT:.*]]: memref<4x8xf32>)
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[G:.*]] = host.alloc : memref<4x8xf32>
// CHECK-NEXT: %[[MAIN:.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: scf.for %[[J:.*]] = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK-NEXT: %[[PS:.*]] = host.stream_from_pool %[[J]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[PS]]
// CHECK-NEXT: host.sync_stream %[[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[RANK:.*]] = host.rank : index
// CHECK-NEXT: %[[OWN:.*]] = host.select %[[IN]][0][%[[C0]]] : memref<1x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CUDA-NEXT: comm.share_mem_handles %[[IN]], %[[G]] team [0, 1, 2, 3] : memref<1x8xf32>, memref<4x8xf32>
// CHECK-NEXT: scf.for %[[I:.*]] = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[RANK]], %[[I]] : index
// CHECK-NEXT: %[[SLICE:.*]] = arith.remui %[[SUM]], %[[C4]] : index
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.addi %[[C4]], %[[RANK]] : index
// CHECK-NEXT: %[[BACK:.*]] = arith.subi %[[SHIFTED]], %[[I]] : index
// CHECK-NEXT: %[[PARTNER:.*]] = arith.remui %[[BACK]], %[[C4]] : index
// CHECK-NEXT: %[[LOCAL:.*]] = arith.cmpi eq, %[[SLICE]], %[[RANK]] : index
// CHECK-NEXT: %[[S:.*]] = host.stream_from_pool %[[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[S]]
// CHECK-NEXT: %[[BACK:.*]] = arith.addi %[[I]], %[[N:.*]] : index
// CHECK-NEXT: %[[BEFORE:.*]] = arith.subi %[[BACK]], %{{.*}} : index
// CHECK-NEXT: %[[PREVIOUS:.*]] = arith.remui %[[BEFORE]], %[[N]] : index
// CHECK-NEXT: %[[PS:.*]] = host.stream_from_pool %[[PREVIOUS]] : !host.stream
// CHECK-NEXT: host.sync_stream %[[PS]]
// CHECK-NEXT: %[[GI:.*]] = host.select %[[G]][0][%[[SLICE]]] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: %[[X:.*]] = scf.if %[[LOCAL]] -> (memref<8xf32, strided<[1], offset: ?>>) {
// CHECK-NEXT: scf.yield %[[OWN]] : memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: } else {
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// NCCL-NEXT: comm.start_coalescing
// NCCL-NEXT: comm.recv %[[GI]] from %[[SLICE]] team [0, 1, 2, 3] : memref<8xf32, strided<[1], offset: ?>>
// NCCL-NEXT: comm.send %[[OWN]] to %[[PARTNER]] team [0, 1, 2, 3] : memref<8xf32, strided<[1], offset: ?>>
// NCCL-NEXT: %[[GROUP:.*]] = comm.end_coalescing
// NCCL-NEXT: host.set_current_stream %[[S]]
// NCCL-NEXT: comm.wait %[[GROUP]]
// CUDA-NEXT: %[[RECV:.*]] = comm.recv %[[GI]] from %[[SLICE]] team [0, 1, 2, 3] on cuda : memref<8xf32, strided<[1], offset: ?>>
// CUDA-NEXT: %[[SEND:.*]] = comm.send %[[OWN]] to %[[PARTNER]] team [0, 1, 2, 3] on cuda : memref<8xf32, strided<[1], offset: ?>>
// CUDA-NEXT: comm.wait %[[SEND]]
// CUDA-NEXT: host.set_current_stream %[[S]]
// CUDA-NEXT: comm.wait %[[RECV]]
// CHECK-NEXT: scf.yield %[[GI]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[OI:.*]] = host.select %[[OUT]][0][%[[SLICE]]]
// CHECK-NEXT: host.copy ins(%[[X]] : {{.*}}) outs(%[[OI]] : {{.*}})
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for %[[J:.*]] = %[[C0]] to %[[C4]] step
// CHECK-NEXT: %[[JS:.*]] = host.stream_from_pool %[[J]] : !host.stream
// CHECK-NEXT: host.sync_stream %[[JS]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @allgather(%in: memref<1x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = host.alloc : memref<4x8xf32>
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %in into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %oi = host.select %out[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.copy ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%oi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// AG+GEMM (seed 000): A [DIDx(4), 8, 16], B [16, 32] -> C [Stream(4), 8, 32].
// Step %i multiplies slice (%rank + %i) mod 4 of A as soon as it arrived, on
// the step's stream, while later slices are in flight.
// CHECK-LABEL: func.func @ag_matmul
// CHECK-SAME: (%[[A:.*]]: memref<1x8x16xbf16>, %[[B:.*]]: memref<16x32xbf16>, %[[C:.*]]: memref<4x8x32xbf16>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[G:.*]] = host.alloc : memref<4x8x16xbf16>
// CHECK-NEXT: %[[MAIN:.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: scf.for
// CHECK: host.sync_stream %[[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[RANK:.*]] = host.rank : index
// CHECK-NEXT: %[[OWN:.*]] = host.select %[[A]][0][%[[C0]]] : memref<1x8x16xbf16> to memref<8x16xbf16, strided<[16, 1], offset: ?>>
// CUDA-NEXT: comm.share_mem_handles %[[A]], %[[G]] team [0, 1, 2, 3] : memref<1x8x16xbf16>, memref<4x8x16xbf16>
// CHECK-NEXT: scf.for %[[I:.*]] = %[[C0]] to %[[C4]] step
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[RANK]], %[[I]] : index
// CHECK-NEXT: %[[SLICE:.*]] = arith.remui %[[SUM]], %[[C4]] : index
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.addi %[[C4]], %[[RANK]] : index
// CHECK-NEXT: %[[BACK:.*]] = arith.subi %[[SHIFTED]], %[[I]] : index
// CHECK-NEXT: %[[PARTNER:.*]] = arith.remui %[[BACK]], %[[C4]] : index
// CHECK-NEXT: %[[LOCAL:.*]] = arith.cmpi eq, %[[SLICE]], %[[RANK]] : index
// CHECK-NEXT: %[[S:.*]] = host.stream_from_pool %[[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[S]]
// CHECK-NEXT: %[[BACK:.*]] = arith.addi %[[I]], %[[N:.*]] : index
// CHECK-NEXT: %[[BEFORE:.*]] = arith.subi %[[BACK]], %{{.*}} : index
// CHECK-NEXT: %[[PREVIOUS:.*]] = arith.remui %[[BEFORE]], %[[N]] : index
// CHECK-NEXT: %[[PS:.*]] = host.stream_from_pool %[[PREVIOUS]] : !host.stream
// CHECK-NEXT: host.sync_stream %[[PS]]
// CHECK-NEXT: %[[GI:.*]] = host.select %[[G]][0][%[[SLICE]]]
// CHECK-NEXT: %[[X:.*]] = scf.if %[[LOCAL]] -> (memref<8x16xbf16, strided<[16, 1], offset: ?>>) {
// CHECK-NEXT: scf.yield %[[OWN]]
// CHECK-NEXT: } else {
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// NCCL-NEXT: comm.start_coalescing
// NCCL-NEXT: comm.recv %[[GI]] from %[[SLICE]] team [0, 1, 2, 3] : memref<8x16xbf16, strided<[16, 1], offset: ?>>
// NCCL-NEXT: comm.send %[[OWN]] to %[[PARTNER]] team [0, 1, 2, 3] : memref<8x16xbf16, strided<[16, 1], offset: ?>>
// NCCL-NEXT: %[[GROUP:.*]] = comm.end_coalescing
// NCCL-NEXT: host.set_current_stream %[[S]]
// NCCL-NEXT: comm.wait %[[GROUP]]
// CUDA-NEXT: %[[RECV:.*]] = comm.recv %[[GI]] from %[[SLICE]] team [0, 1, 2, 3] on cuda
// CUDA-NEXT: %[[SEND:.*]] = comm.send %[[OWN]] to %[[PARTNER]] team [0, 1, 2, 3] on cuda
// CUDA-NEXT: comm.wait %[[SEND]]
// CUDA-NEXT: host.set_current_stream %[[S]]
// CUDA-NEXT: comm.wait %[[RECV]]
// CHECK-NEXT: scf.yield %[[GI]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[CI:.*]] = host.select %[[C]][0][%[[SLICE]]]
// CHECK-NEXT: host.matmul ins(%[[X]], %[[B]] : {{.*}}) outs(%[[CI]] : {{.*}})
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for %[[J:.*]] = %[[C0]] to %[[C4]] step
// CHECK-NEXT: %[[JS:.*]] = host.stream_from_pool %[[J]] : !host.stream
// CHECK-NEXT: host.sync_stream %[[JS]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @ag_matmul(%a: memref<1x8x16xbf16>, %b: memref<16x32xbf16>, %c: memref<4x8x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = host.alloc : memref<4x8x16xbf16>
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<1x8x16xbf16> into memref<4x8x16xbf16>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8x16xbf16> to memref<8x16xbf16, strided<[16, 1], offset: ?>>
    %ci = host.select %c[0][%i] : memref<4x8x32xbf16> to memref<8x32xbf16, strided<[32, 1], offset: ?>>
    host.matmul ins(%gi, %b : memref<8x16xbf16, strided<[16, 1], offset: ?>>, memref<16x32xbf16>)
                outs(%ci : memref<8x32xbf16, strided<[32, 1], offset: ?>>)
  }
  return
}

// -----

// GEMM+RS: C = sum_d A_d @ B_d with C [DIDx(4), 8, 32]; each rank's partial
// products P [Stream(4), 8, 32] hold one block per rank. Step %i computes
// block (%rank + %i + 1) mod 4 (the local block last, so that the first
// partial leaves as soon as it is computed) and sends it to its owner while
// receiving the partner's partial of this rank's block into slot %i of three.
// The three slots are summed into C on the main stream right after the loop,
// while the local step's GEMM runs; after the joins, C += the local partial
// (which nothing copies).
// CHECK-LABEL: func.func @matmul_reduce_scatter
// CHECK-SAME: (%[[A:.*]]: memref<4x8x16xf32>, %[[B:.*]]: memref<16x32xf32>, %[[C:.*]]: memref<1x8x32xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[P:.*]] = host.alloc : memref<4x8x32xf32>
// CHECK-NEXT: %[[MAIN:.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: scf.for
// CHECK: host.sync_stream %[[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[RANK:.*]] = host.rank : index
// CHECK-NEXT: %[[SLOTS:.*]] = host.alloc : memref<3x8x32xf32>
// CHECK-NEXT: %[[C3:.*]] = arith.constant 3 : index
// CUDA-NEXT: comm.share_mem_handles %[[P]], %[[SLOTS]] team [0, 1, 2, 3] : memref<4x8x32xf32>, memref<3x8x32xf32>
// CHECK-NEXT: scf.for %[[I:.*]] = %[[C0]] to %[[C4]] step %[[C1:.*]] {
// CHECK-NEXT: %[[STEP:.*]] = arith.addi %[[I]], %[[C1]] : index
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[RANK]], %[[STEP]] : index
// CHECK-NEXT: %[[SLICE:.*]] = arith.remui %[[SUM]], %[[C4]] : index
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.addi %[[C4]], %[[RANK]] : index
// CHECK-NEXT: %[[BACK:.*]] = arith.subi %[[SHIFTED]], %[[STEP]] : index
// CHECK-NEXT: %[[PARTNER:.*]] = arith.remui %[[BACK]], %[[C4]] : index
// CHECK-NEXT: %[[LOCAL:.*]] = arith.cmpi eq, %[[SLICE]], %[[RANK]] : index
// CHECK-NEXT: %[[S:.*]] = host.stream_from_pool %[[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[S]]
// CHECK-NEXT: %[[BACK:.*]] = arith.addi %[[I]], %[[N:.*]] : index
// CHECK-NEXT: %[[BEFORE:.*]] = arith.subi %[[BACK]], %{{.*}} : index
// CHECK-NEXT: %[[PREVIOUS:.*]] = arith.remui %[[BEFORE]], %[[N]] : index
// CHECK-NEXT: %[[PS:.*]] = host.stream_from_pool %[[PREVIOUS]] : !host.stream
// CHECK-NEXT: host.sync_stream %[[PS]]
// CHECK-NEXT: %[[AI:.*]] = host.select %[[A]][0][%[[SLICE]]]
// CHECK-NEXT: %[[PI:.*]] = host.select %[[P]][0][%[[SLICE]]]
// CHECK-NEXT: host.matmul ins(%[[AI]], %[[B]] : {{.*}}) outs(%[[PI]] : {{.*}})
// CHECK-NEXT: %[[K:.*]] = arith.remui %[[I]], %[[C3]] : index
// CHECK-NEXT: %[[SLOT:.*]] = host.select %[[SLOTS]][0][%[[K]]] : memref<3x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT: scf.if %[[LOCAL]] {
// CHECK-NEXT: } else {
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// CHECK-NEXT: host.sync_stream %[[S]]
// NCCL-NEXT: comm.start_coalescing
// NCCL-NEXT: comm.recv %[[SLOT]] from %[[PARTNER]] team [0, 1, 2, 3] : memref<8x32xf32, strided<[32, 1], offset: ?>>
// NCCL-NEXT: comm.send %[[PI]] to %[[SLICE]] team [0, 1, 2, 3] : memref<8x32xf32, strided<[32, 1], offset: ?>>
// NCCL-NEXT: %[[GROUP:.*]] = comm.end_coalescing
// NCCL-NEXT: comm.wait %[[GROUP]]
// CUDA-NEXT: %[[RECV:.*]] = comm.recv %[[SLOT]] from %[[PARTNER]] team [0, 1, 2, 3] on cuda
// CUDA-NEXT: %[[SEND:.*]] = comm.send %[[PI]] to %[[SLICE]] team [0, 1, 2, 3] on cuda
// CUDA-NEXT: comm.wait %[[SEND]]
// CUDA-NEXT: comm.wait %[[RECV]]
// CHECK-NEXT: host.set_current_stream %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[MINE:.*]] = host.select %[[C]][0][%[[C0]]] : memref<1x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT: host.sum [0] ins(%[[SLOTS]] : memref<3x8x32xf32>) outs(%[[MINE]] : {{.*}})
// CHECK-NEXT: scf.for
// CHECK-NEXT: %[[JS:.*]] = host.stream_from_pool
// CHECK-NEXT: host.sync_stream %[[JS]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[OWN:.*]] = host.select %[[P]][0][%[[RANK]]] : memref<4x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT: host.add ins(%[[MINE]], %[[OWN]] : {{.*}}) outs(%[[MINE]] : {{.*}})
// CHECK-NEXT: return
func.func @matmul_reduce_scatter(%a: memref<4x8x16xf32>, %b: memref<16x32xf32>, %c: memref<1x8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = host.alloc : memref<4x8x32xf32>
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    %pi = host.select %p[0][%i] : memref<4x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    host.matmul ins(%ai, %b : memref<8x16xf32, strided<[16, 1], offset: ?>>, memref<16x32xf32>)
                outs(%pi : memref<8x32xf32, strided<[32, 1], offset: ?>>)
  }
  %r = comm.reduce_scatter %p into %c sum team [0, 1, 2, 3] : memref<4x8x32xf32> into memref<1x8x32xf32>
  comm.wait %r
  return
}

// -----

// GEMM+RS as convert-fusion-to-host gives it (hir-bench's rs-ring): the partial
// products P [DIDx(4), Stream(4), 8, 32] keep the local didx axis of extent 1,
// the loop slices P along axis 1, and the reduce-scatter takes the whole view
// P[0][0] that drops the unit axis. The ring slices P as the loop does and
// views the unit axis away from the step's block; the whole view stays, as
// what the local partial is selected from.
// CHECK-LABEL: func.func @matmul_reduce_scatter_of_view
// CHECK-SAME: (%[[A:.*]]: memref<1x4x8x16xf32>, %[[B:.*]]: memref<16x32xf32>, %[[C:.*]]: memref<1x8x32xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[P:.*]] = host.alloc : memref<1x4x8x32xf32>
// CHECK-NEXT: %[[MAIN:.*]] = host.get_current_stream : !host.stream
// CHECK: %[[RANK:.*]] = host.rank : index
// CHECK-NEXT: %[[SLOTS:.*]] = host.alloc : memref<3x8x32xf32>
// CHECK-NEXT: %[[C3:.*]] = arith.constant 3 : index
// CUDA-NEXT: comm.share_mem_handles %[[P]], %[[SLOTS]] team [0, 1, 2, 3] : memref<1x4x8x32xf32>, memref<3x8x32xf32>
// CHECK-NEXT: scf.for %[[I:.*]] = %[[C0]] to %[[C4]] step
// CHECK: %[[SLICE:.*]] = arith.remui %{{.*}}, %[[C4]] : index
// CHECK: %[[PARTNER:.*]] = arith.remui %{{.*}}, %[[C4]] : index
// CHECK-NEXT: %[[LOCAL:.*]] = arith.cmpi eq, %[[SLICE]], %[[RANK]] : index
// CHECK-NEXT: %[[S:.*]] = host.stream_from_pool %[[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[S]]
// CHECK-NEXT: %[[BACK:.*]] = arith.addi %[[I]], %[[N:.*]] : index
// CHECK-NEXT: %[[BEFORE:.*]] = arith.subi %[[BACK]], %{{.*}} : index
// CHECK-NEXT: %[[PREVIOUS:.*]] = arith.remui %[[BEFORE]], %[[N]] : index
// CHECK-NEXT: %[[PS:.*]] = host.stream_from_pool %[[PREVIOUS]] : !host.stream
// CHECK-NEXT: host.sync_stream %[[PS]]
// CHECK-NEXT: %[[AI:.*]] = host.select %[[A]][1][%[[SLICE]]]
// CHECK-NEXT: %[[PI:.*]] = host.select %[[P]][1][%[[SLICE]]] : memref<1x4x8x32xf32> to memref<1x8x32xf32, strided<[1024, 32, 1], offset: ?>>
// CHECK-NEXT: host.matmul ins(%[[AI]], %[[B]] : {{.*}}) outs(%[[PI]] : {{.*}})
// CHECK-NEXT: %[[BLOCK:.*]] = host.select %[[PI]][0][%[[C0]]] : memref<1x8x32xf32, strided<[1024, 32, 1], offset: ?>> to memref<8x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT: %[[K:.*]] = arith.remui %[[I]], %[[C3]] : index
// CHECK-NEXT: %[[SLOT:.*]] = host.select %[[SLOTS]][0][%[[K]]] : memref<3x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT: scf.if %[[LOCAL]] {
// CHECK-NEXT: } else {
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// CHECK-NEXT: host.sync_stream %[[S]]
// NCCL-NEXT: comm.start_coalescing
// NCCL-NEXT: comm.recv %[[SLOT]] from %[[PARTNER]] team [0, 1, 2, 3] : memref<8x32xf32, strided<[32, 1], offset: ?>>
// NCCL-NEXT: comm.send %[[BLOCK]] to %[[SLICE]] team [0, 1, 2, 3] : memref<8x32xf32, strided<[32, 1], offset: ?>>
// NCCL-NEXT: %[[GROUP:.*]] = comm.end_coalescing
// NCCL-NEXT: comm.wait %[[GROUP]]
// CUDA-NEXT: %[[RECV:.*]] = comm.recv %[[SLOT]] from %[[PARTNER]] team [0, 1, 2, 3] on cuda
// CUDA-NEXT: %[[SEND:.*]] = comm.send %[[BLOCK]] to %[[SLICE]] team [0, 1, 2, 3] on cuda
// CUDA-NEXT: comm.wait %[[SEND]]
// CUDA-NEXT: comm.wait %[[RECV]]
// CHECK-NEXT: host.set_current_stream %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[MINE:.*]] = host.select %[[C]][0][%[[C0]]] : memref<1x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT: host.sum [0] ins(%[[SLOTS]] : memref<3x8x32xf32>) outs(%[[MINE]] : {{.*}})
// CHECK-NEXT: scf.for
// CHECK-NEXT: %[[JS:.*]] = host.stream_from_pool
// CHECK-NEXT: host.sync_stream %[[JS]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[WHOLE:.*]] = host.select %[[P]][0][%[[C0]]] : memref<1x4x8x32xf32> to memref<4x8x32xf32, strided<[256, 32, 1], offset: ?>>
// CHECK-NEXT: %[[OWN:.*]] = host.select %[[WHOLE]][0][%[[RANK]]]
// CHECK-NEXT: host.add ins(%[[MINE]], %[[OWN]] : {{.*}}) outs(%[[MINE]] : {{.*}})
// CHECK-NEXT: return
func.func @matmul_reduce_scatter_of_view(%a: memref<1x4x8x16xf32>, %b: memref<16x32xf32>, %c: memref<1x8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = host.alloc : memref<1x4x8x32xf32>
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x8x16xf32> to memref<1x8x16xf32, strided<[512, 16, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x8x32xf32> to memref<1x8x32xf32, strided<[1024, 32, 1], offset: ?>>
    host.matmul ins(%ai, %b : memref<1x8x16xf32, strided<[512, 16, 1], offset: ?>>, memref<16x32xf32>)
                outs(%pi : memref<1x8x32xf32, strided<[1024, 32, 1], offset: ?>>)
  }
  %whole = host.select %p[0][%c0] : memref<1x4x8x32xf32> to memref<4x8x32xf32, strided<[256, 32, 1], offset: ?>>
  %r = comm.reduce_scatter %whole into %c sum team [0, 1, 2, 3] : memref<4x8x32xf32, strided<[256, 32, 1], offset: ?>> into memref<1x8x32xf32>
  comm.wait %r
  return
}

// -----

// A reduce-scatter whose output is allocated after the loop cannot be
// combined into right after the loop: every rank's partial gets its slot,
// the local step copies its own, and all four are summed after the joins.
// CHECK-LABEL: func.func @reduce_scatter_into_later_buffer
// CHECK: host.rank
// CHECK-NEXT: %[[SLOTS:.*]] = host.alloc : memref<4x8xf32>
// CHECK: scf.for
// CHECK: %[[SLOT:.*]] = host.select %[[SLOTS]][0][%[[PARTNER:.*]]] : memref<4x8xf32>
// CHECK-NEXT: scf.if
// CHECK-NEXT: host.copy ins(%{{.*}} : {{.*}}) outs(%[[SLOT]] : {{.*}})
// CHECK: comm.recv %[[SLOT]] from %[[PARTNER]]
// CHECK: scf.for
// CHECK-NEXT: host.stream_from_pool
// CHECK-NEXT: host.sync_stream
// CHECK-NEXT: }
// CHECK-NEXT: %[[C:.*]] = host.alloc : memref<1x8xf32>
// CHECK-NEXT: %[[MINE:.*]] = host.select %[[C]][0]
// CHECK-NEXT: host.sum [0] ins(%[[SLOTS]] : memref<4x8xf32>) outs(%[[MINE]] : {{.*}})
// CHECK-NOT: host.add
// CHECK: return
func.func @reduce_scatter_into_later_buffer(%a: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = host.alloc : memref<4x8xf32>
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %pi = host.select %p[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%pi : memref<8xf32, strided<[1], offset: ?>>)
  }
  %c = host.alloc : memref<1x8xf32>
  %r = comm.reduce_scatter %p into %c sum team [0, 1, 2, 3] : memref<4x8xf32> into memref<1x8xf32>
  comm.wait %r
  host.dealloc %c : memref<1x8xf32>
  return
}

// -----

// An allgather into a whole view whose unit axis comes after the gathered one:
// G [2, 1, 8] gathered through G[1][0], read by the loop as G[0][%i]. The
// step receives into the loop's slice with the unit axis viewed away.
// CHECK-LABEL: func.func @allgather_into_view
// CHECK-SAME: (%[[IN:.*]]: memref<1x8xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[G:.*]] = host.alloc : memref<2x1x8xf32>
// CHECK-NOT: host.select %[[G]][1]
// CHECK: %[[OWN:.*]] = host.select %[[IN]][0][%[[C0]]] : memref<1x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CUDA-NEXT: comm.share_mem_handles %[[IN]], %[[G]] team [0, 1] : memref<1x8xf32>, memref<2x1x8xf32>
// CHECK-NEXT: scf.for
// CHECK: %[[SLICE:.*]] = arith.remui
// CHECK: %[[GI:.*]] = host.select %[[G]][0][%[[SLICE]]] : memref<2x1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: %[[ROW:.*]] = host.select %[[GI]][0][%[[C0]]] : memref<1x8xf32, strided<[8, 1], offset: ?>> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: scf.if
// CHECK-NEXT: host.copy ins(%[[OWN]] : {{.*}}) outs(%[[ROW]] : {{.*}})
// CHECK: comm.recv %[[ROW]] from %[[SLICE]] team [0, 1]
// CHECK-NEXT: comm.send %[[OWN]]
// CHECK: host.neg ins(%[[GI]] : {{.*}}) outs(%[[GI]] : {{.*}})
// CHECK-NOT: comm.allgather
// CHECK: return
func.func @allgather_into_view(%in: memref<1x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %main = host.get_current_stream : !host.stream
  %g = host.alloc : memref<2x1x8xf32>
  %whole = host.select %g[1][%c0] : memref<2x1x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
  %r = comm.allgather %in into %whole team [0, 1] : memref<1x8xf32> into memref<2x8xf32, strided<[8, 1], offset: ?>>
  comm.wait %r
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<2x1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    host.neg ins(%gi : memref<1x8xf32, strided<[8, 1], offset: ?>>) outs(%gi : memref<1x8xf32, strided<[8, 1], offset: ?>>)
  }
  return
}

// -----

// Along a non-leading axis, over two ranks: an allgather of columns and a
// `max` reduce-scatter, combined by host.amax. An AG and an RS on one loop
// share its ring indices.
// CHECK-LABEL: func.func @columns
// CHECK-SAME: (%[[IN:.*]]: memref<8x1xf16>, %[[OUT:.*]]: memref<8x1xf16>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[G:.*]] = host.alloc : memref<8x2xf16>
// CHECK-NEXT: %[[P:.*]] = host.alloc : memref<8x2xf16>
// CHECK-NEXT: %[[MAIN:.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: scf.for %[[J:.*]] = %[[C0]] to %[[C2]] step
// CHECK-NEXT: %[[PS:.*]] = host.stream_from_pool %[[J]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[PS]]
// CHECK-NEXT: host.sync_stream %[[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[RANK:.*]] = host.rank : index
// CHECK-NEXT: %[[OWN:.*]] = host.select %[[IN]][1][%[[C0]]] : memref<8x1xf16> to memref<8xf16, strided<[1], offset: ?>>
// CUDA-NEXT: comm.share_mem_handles %[[IN]], %[[G]] team [0, 1]
// CHECK-NEXT: %[[SLOTS:.*]] = host.alloc : memref<8x2xf16>
// CUDA-NEXT: comm.share_mem_handles %[[P]], %[[SLOTS]] team [0, 1]
// CHECK-NEXT: scf.for %[[I:.*]] = %[[C0]] to %[[C2]] step
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[RANK]], %[[I]] : index
// CHECK-NEXT: %[[SLICE:.*]] = arith.remui %[[SUM]], %[[C2]] : index
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.addi %[[C2]], %[[RANK]] : index
// CHECK-NEXT: %[[BACK:.*]] = arith.subi %[[SHIFTED]], %[[I]] : index
// CHECK-NEXT: %[[PARTNER:.*]] = arith.remui %[[BACK]], %[[C2]] : index
// CHECK-NEXT: %[[LOCAL:.*]] = arith.cmpi eq, %[[SLICE]], %[[RANK]] : index
// CHECK-NOT: arith.
// CHECK: host.set_current_stream
// CHECK-NEXT: %[[BACK:.*]] = arith.addi %[[I]], %[[C2]] : index
// CHECK-NEXT: %[[BEFORE:.*]] = arith.subi %[[BACK]], %{{.*}} : index
// CHECK-NEXT: %[[PREVIOUS:.*]] = arith.remui %[[BEFORE]], %[[C2]] : index
// CHECK-NEXT: %[[PS:.*]] = host.stream_from_pool %[[PREVIOUS]] : !host.stream
// CHECK-NEXT: host.sync_stream %[[PS]]
// CHECK-NEXT: %[[GI:.*]] = host.select %[[G]][1][%[[SLICE]]] : memref<8x2xf16> to memref<8xf16, strided<[2], offset: ?>>
// CHECK-NEXT: scf.if %[[LOCAL]] {
// CHECK-NEXT: host.copy ins(%[[OWN]] : {{.*}}) outs(%[[GI]] : {{.*}})
// CHECK: comm.recv %[[GI]] from %[[SLICE]] team [0, 1]
// CHECK-NEXT: comm.send %[[OWN]] to %[[PARTNER]] team [0, 1]
// CHECK: %[[PI:.*]] = host.select %[[P]][1][%[[SLICE]]]
// CHECK-NEXT: host.neg ins(%[[GI]] : {{.*}}) outs(%[[PI]] : {{.*}})
// CHECK-NEXT: %[[SLOT:.*]] = host.select %[[SLOTS]][1][%[[PARTNER]]] : memref<8x2xf16> to memref<8xf16, strided<[2], offset: ?>>
// CHECK-NEXT: scf.if %[[LOCAL]] {
// CHECK-NEXT: host.copy ins(%[[PI]] : {{.*}}) outs(%[[SLOT]] : {{.*}})
// CHECK: comm.recv %[[SLOT]] from %[[PARTNER]] team [0, 1]
// CHECK-NEXT: comm.send %[[PI]] to %[[SLICE]] team [0, 1]
// CHECK: host.sync_stream
// CHECK-NEXT: }
// CHECK-NEXT: %[[MINE:.*]] = host.select %[[OUT]][1][%[[C0]]] : memref<8x1xf16> to memref<8xf16, strided<[1], offset: ?>>
// CHECK-NEXT: host.amax [1] ins(%[[SLOTS]] : memref<8x2xf16>) outs(%[[MINE]] : {{.*}})
// CHECK-NEXT: return
func.func @columns(%in: memref<8x1xf16>, %out: memref<8x1xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %g = host.alloc : memref<8x2xf16>
  %p = host.alloc : memref<8x2xf16>
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %in into %g axis 1 team [0, 1] : memref<8x1xf16> into memref<8x2xf16>
  comm.wait %r
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[1][%i] : memref<8x2xf16> to memref<8xf16, strided<[2], offset: ?>>
    %pi = host.select %p[1][%i] : memref<8x2xf16> to memref<8xf16, strided<[2], offset: ?>>
    host.neg ins(%gi : memref<8xf16, strided<[2], offset: ?>>) outs(%pi : memref<8xf16, strided<[2], offset: ?>>)
  }
  %q = comm.reduce_scatter %p into %out max axis 1 team [0, 1] : memref<8x2xf16> into memref<8x1xf16>
  comm.wait %q
  return
}

// -----

// Steps rotated over two pool streams (hir-lower's num-streams=2): the step's
// stream is stream_from_pool (%i mod 2), the fork stops after the first two
// steps (which fork both streams), the joins after the loop rotate the same
// way, and the transfers still run on the main stream, in step order.
// CHECK-LABEL: func.func @rotated_streams
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[MAIN:.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: %[[SPAN:.*]] = arith.muli %[[C2]], %[[C1:.*]] : index
// CHECK-NEXT: %[[END:.*]] = arith.addi %[[C0:.*]], %[[SPAN]] : index
// CHECK-NEXT: %[[FORKED:.*]] = arith.minsi %[[C4:.*]], %[[END]] : index
// CHECK-NEXT: scf.for %[[J:.*]] = %[[C0]] to %[[FORKED]] step %[[C1]]
// CHECK-NEXT: %[[JP:.*]] = arith.remui %[[J]], %[[C2]] : index
// CHECK-NEXT: %[[JS:.*]] = host.stream_from_pool %[[JP]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[JS]]
// CHECK-NEXT: host.sync_stream %[[MAIN]]
// CHECK-NEXT: }
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C4]] step
// CHECK: %[[P:.*]] = arith.remui %[[I]], %[[C2]] : index
// CHECK-NEXT: %[[S:.*]] = host.stream_from_pool %[[P]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[S]]
// CHECK-NEXT: %[[BACK:.*]] = arith.addi %[[I]], %[[C2]] : index
// CHECK-NEXT: %[[BEFORE:.*]] = arith.subi %[[BACK]], %{{.*}} : index
// CHECK-NEXT: %[[PREVIOUS:.*]] = arith.remui %[[BEFORE]], %[[C2]] : index
// CHECK-NEXT: %[[PS:.*]] = host.stream_from_pool %[[PREVIOUS]] : !host.stream
// CHECK-NEXT: host.sync_stream %[[PS]]
// CHECK: } else {
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// CHECK: comm.recv
// CHECK-NEXT: comm.send
// CHECK: host.set_current_stream %[[S]]
// CHECK-NEXT: comm.wait
// CHECK: host.neg
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for %[[J:.*]] = %[[C0]] to %[[C4]] step
// CHECK-NEXT: %[[JP:.*]] = arith.remui %[[J]], %[[C2]] : index
// CHECK-NEXT: %[[JS:.*]] = host.stream_from_pool %[[JP]] : !host.stream
// CHECK-NEXT: host.sync_stream %[[JS]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @rotated_streams(%in: memref<1x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %g = host.alloc : memref<4x8xf32>
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %in into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main streams %c2 {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %oi = host.select %out[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%oi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// Left alone: a stream-sliced collective of a collective pipeline (DESIGN
// §2.2: sliced along the stream axis, gathered along another), and a
// collective no stream loop slices.
// CHECK-LABEL: func.func @collective_pipeline
// CHECK-NOT: host.rank
// CHECK: %[[R:.*]] = comm.allgather
// CHECK-NEXT: comm.wait %[[R]]
// CHECK-NOT: comm.send
// CHECK: return
func.func @collective_pipeline(%a: memref<4x1x8xf32>, %g: memref<4x4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    %gi = host.select %g[0][%i] : memref<4x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    %r = comm.allgather %ai into %gi team [0, 1, 2, 3]
        : memref<1x8xf32, strided<[8, 1], offset: ?>> into memref<4x8xf32, strided<[8, 1], offset: ?>>
    comm.wait %r
  }
  return
}

// CHECK-LABEL: func.func @no_stream_loop
// CHECK-NEXT: %[[R:.*]] = comm.reduce_scatter
// CHECK-NEXT: comm.wait %[[R]]
// CHECK-NEXT: return
func.func @no_stream_loop(%p: memref<4x8xf32>, %c: memref<1x8xf32>) {
  %r = comm.reduce_scatter %p into %c sum team [0, 1, 2, 3] : memref<4x8xf32> into memref<1x8xf32>
  comm.wait %r
  return
}
