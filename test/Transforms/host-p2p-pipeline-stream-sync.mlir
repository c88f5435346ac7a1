// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{stream-sync=comm}))' | FileCheck %s --check-prefixes=CHECK,NCCL
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=nccl chunks=1 stream-sync=comm}))' | FileCheck %s --check-prefixes=CHECK,NCCL,WHOLE
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=cuda chunks=1 stream-sync=comm}))' | FileCheck %s --check-prefixes=CHECK,CUDA,WHOLE
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=cuda chunks=1 stream-sync=step}))' | FileCheck %s --check-prefix=STEP

// host-p2p-pipeline{stream-sync=comm}, nvFuser's inter_stream_synchronization:
// in a loop whose rings are all allgathers, each step's transfers run on the
// step's own stream %s, and right after them the stream of step %i + 1 waits
// for %s, if it is the next stream of the pool (%i + 1 < n: guarded at the
// wrap). No step's stream waits for the previous step's compute, and the
// steps are whole (chunks=0 chooses 1). With stream-sync=step (the default)
// the transfers run on the caller's stream and each step's stream waits for
// the whole previous step (STEP).

// CHECK-LABEL: func.func @allgather
// CHECK: %[[MAIN:.*]] = host.get_current_stream : !host.stream
// CHECK: %[[RANK:.*]] = host.rank : index
// CHECK: scf.for %[[I:.*]] = %[[C0:.*]] to %[[C4:.*]] step %[[C1:.*]] {
// CHECK: %[[S:.*]] = host.stream_from_pool %[[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[S]]
// CHECK-NEXT: %[[GI:.*]] = host.select
// CHECK-NEXT: %[[X:.*]] = scf.if
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } else {
// CHECK-NOT: host.set_current_stream
// NCCL-NEXT: comm.start_coalescing
// NCCL-NEXT: comm.recv %[[GI]]
// NCCL-NEXT: comm.send
// NCCL-NEXT: %[[GROUP:.*]] = comm.end_coalescing
// NCCL-NEXT: comm.wait %[[GROUP]]
// CUDA-NEXT: %[[RECV:.*]] = comm.recv %[[GI]]
// CUDA-NEXT: %[[SEND:.*]] = comm.send
// CUDA-NEXT: comm.wait %[[SEND]]
// CUDA-NEXT: comm.wait %[[RECV]]
// CHECK-NEXT: scf.yield %[[GI]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[I]], %[[C1]] : index
// CHECK-NEXT: %[[NO_WRAP:.*]] = arith.cmpi ult, %[[NEXT]], %[[C4]] : index
// CHECK-NEXT: scf.if %[[NO_WRAP]] {
// CHECK-NEXT: %[[T:.*]] = host.stream_from_pool %[[NEXT]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[T]]
// CHECK-NEXT: host.sync_stream %[[S]]
// CHECK-NEXT: host.set_current_stream %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: host.select
// CHECK-NEXT: host.copy ins(%[[X]]
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for
// CHECK-NEXT: host.stream_from_pool
// CHECK-NEXT: host.sync_stream
// CHECK-NEXT: }
// STEP-LABEL: func.func @allgather
// STEP: host.rank
// STEP: host.set_current_stream %[[S:.*]]
// STEP-NEXT: arith.addi
// STEP-NEXT: arith.subi
// STEP-NEXT: arith.remui
// STEP-NEXT: %[[PREV:.*]] = host.stream_from_pool
// STEP-NEXT: host.sync_stream %[[PREV]]
// STEP-NOT: arith.cmpi ult
// STEP: host.set_current_stream %[[MAIN:.*]]
// STEP-NEXT: comm.recv

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

// The steps rotated over 2 pool streams (hir-lower num-streams=2): step 0's
// transfers hold back stream 1, but step 1's do not hold back stream 0
// (the wrap), which ran the whole of step 0 before step 2.
// CHECK-LABEL: func.func @allgather_rotated
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: host.rank
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[C1:.*]] {
// CHECK: %[[K:.*]] = arith.remui %[[I]], %[[C2]] : index
// CHECK-NEXT: %[[S:.*]] = host.stream_from_pool %[[K]] : !host.stream
// CHECK: %[[NEXT:.*]] = arith.addi %[[I]], %[[C1]] : index
// CHECK-NEXT: %[[NO_WRAP:.*]] = arith.cmpi ult, %[[NEXT]], %[[C2]] : index
// CHECK-NEXT: scf.if %[[NO_WRAP]] {
// CHECK-NEXT: %[[T:.*]] = host.stream_from_pool %[[NEXT]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[T]]
// CHECK-NEXT: host.sync_stream %[[S]]

func.func @allgather_rotated(%in: memref<1x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c2 = arith.constant 2 : index
  %g = host.alloc : memref<4x8xf32>
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %in into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main streams %c2 {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %oi = host.select %out[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.copy ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%oi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// A reduce-scatter's transfer needs the partial its step computes, so its
// ring keeps the step order whatever stream-sync says: each step's stream
// waits for the previous step's, the transfers run on the caller's stream.
// (With chunks=0 a sum of GEMM partials is the chain of accumulating GEMMs,
// which stream-sync leaves as it is.)
// CHECK-LABEL: func.func @matmul_reduce_scatter
// WHOLE: host.rank
// WHOLE: host.set_current_stream %[[S:.*]]
// WHOLE-NEXT: arith.addi
// WHOLE-NEXT: arith.subi
// WHOLE-NEXT: arith.remui
// WHOLE-NEXT: %[[PREV:.*]] = host.stream_from_pool
// WHOLE-NEXT: host.sync_stream %[[PREV]]
// WHOLE-NOT: arith.cmpi ult
// WHOLE: host.set_current_stream %[[MAIN:.*]]
// WHOLE-NEXT: host.sync_stream %[[S]]

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
