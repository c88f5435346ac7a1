// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=cuda allreduce=ring}))' | FileCheck %s --check-prefixes=CHECK,CUDA
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=nccl chunks=1 allreduce=ring}))' | FileCheck %s --check-prefixes=CHECK,NCCL
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=cuda}))' | FileCheck %s --check-prefix=WHOLE

// GEMM+AR with allreduce=ring: the allreduce of the partial products after
// the stream loop that writes them becomes a reduce-scatter into the rank's
// block of the output (a subview taken before the loop), whose ring runs in
// the loop (with cuda and the chosen two parts, the chain of accumulating
// GEMMs into that block; with whole steps, the split form), and after it an
// allgather ring of the blocks on the caller's stream: at step i = 1..3,
// receive block (rank + i) mod 4 from its owner, send the own block to
// (4 + rank - i) mod 4. With the default allreduce=whole the allreduce stays.

// CHECK-LABEL: func.func @gemm_allreduce
// CHECK-SAME: %[[C:[a-z0-9]+]]: memref<4x4x8xf32>)
// CHECK: %[[MAIN:.*]] = host.get_current_stream
// CHECK: %[[RANK:.*]] = host.rank : index
// CHECK-NEXT: %[[ONE_BLOCK:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[AT:.*]] = arith.muli %[[RANK]], %[[ONE_BLOCK]] : index
// CHECK-NEXT: %[[OWN:.*]] = memref.subview %[[C]][%[[AT]], 0, 0] [1, 4, 8] [1, 1, 1] : memref<4x4x8xf32> to memref<1x4x8xf32, strided<[32, 8, 1], offset: ?>>
// CUDA-NEXT: comm.share_mem_handles %[[C]] team [0, 1, 2, 3] : memref<4x4x8xf32>
// NCCL-NOT: comm.share_mem_handles
// The reduce-scatter ring in the stream loop.
// CUDA: comm.share_mem_handles %{{.*}}, %[[OWN]] team [0, 1, 2, 3]
// CUDA: host.matmul {{.*}} {accumulate}
// CUDA: comm.send {{.*}} on cuda
// NCCL: %[[SLOTS:.*]] = host.alloc : memref<3x4x8xf32>
// NCCL: comm.send
// NCCL: %[[MINE:.*]] = host.select %[[OWN]][0][%{{.*}}]
// NCCL-NEXT: host.sum [0] ins(%[[SLOTS]] : memref<3x4x8xf32>) outs(%[[MINE]] :
// NCCL: host.add ins(%[[MINE]], %{{.*}}) outs(%[[MINE]] :
// CHECK-NOT: comm.allreduce
// CHECK-NOT: comm.reduce_scatter
// The allgather ring, after the joins.
// CHECK: %[[FIRST:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[D:.*]] = arith.constant 4 : index
// CHECK-NEXT: scf.for %[[I:.*]] = %[[FIRST]] to %[[D]] step %[[FIRST]] {
// CHECK-NEXT: %[[S0:.*]] = arith.addi %[[RANK]], %[[I]] : index
// CHECK-NEXT: %[[FROM:.*]] = arith.remui %[[S0]], %[[D]] : index
// CHECK-NEXT: %[[P0:.*]] = arith.addi %[[D]], %[[RANK]] : index
// CHECK-NEXT: %[[P1:.*]] = arith.subi %[[P0]], %[[I]] : index
// CHECK-NEXT: %[[TO:.*]] = arith.remui %[[P1]], %[[D]] : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[BAT:.*]] = arith.muli %[[FROM]], %[[ONE]] : index
// CHECK-NEXT: %[[BLOCK:.*]] = memref.subview %[[C]][%[[BAT]], 0, 0] [1, 4, 8] [1, 1, 1]
// CUDA-NEXT: %[[R:.*]] = comm.recv %[[BLOCK]] from %[[FROM]] team [0, 1, 2, 3] on cuda
// CUDA-NEXT: %[[T:.*]] = comm.send %[[OWN]] to %[[TO]] team [0, 1, 2, 3] on cuda
// CUDA-NEXT: comm.wait %[[T]]
// CUDA-NEXT: comm.wait %[[R]]
// NCCL-NEXT: comm.start_coalescing
// NCCL-NEXT: comm.recv %[[BLOCK]] from %[[FROM]] team [0, 1, 2, 3] :
// NCCL-NEXT: comm.send %[[OWN]] to %[[TO]] team [0, 1, 2, 3] :
// NCCL-NEXT: %[[G:.*]] = comm.end_coalescing
// NCCL-NEXT: comm.wait %[[G]]
// CHECK-NEXT: }
// CHECK-NEXT: return

// WHOLE-LABEL: func.func @gemm_allreduce
// WHOLE: host.stream_for
// WHOLE: %[[R:.*]] = comm.allreduce
// WHOLE-NEXT: comm.wait %[[R]]
// WHOLE-NOT: comm.send
func.func @gemm_allreduce(%a: memref<1x4x4x2xf32>, %b: memref<1x1x2x8xf32>, %c: memref<4x4x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %p = host.alloc : memref<1x4x4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b0 = host.select %b[1][%c0] : memref<1x1x2x8xf32> to memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x4x2xf32> to memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x4x8xf32> to memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>
    host.matmul ins(%ai, %b0 : memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>, memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>) outs(%pi : memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>)
  }
  %v = host.select %p[0][%c0] : memref<1x4x4x8xf32> to memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>>
  %r = comm.allreduce %v into %c sum team [0, 1, 2, 3] : memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>> into memref<4x4x8xf32>
  comm.wait %r
  return
}

// -----

// An allreduce in the stream loop, on slices along another axis (a
// collective pipeline, matmul_allreduce.mlir's), is left alone; so is an
// allreduce no stream loop writes.

// CHECK-LABEL: func.func @pipelined
// CHECK: host.stream_for
// CHECK: comm.allreduce
// CHECK: comm.allreduce
// CHECK-NOT: comm.send
// WHOLE-LABEL: func.func @pipelined
func.func @pipelined(%p: memref<4x1x8xf32>, %c: memref<4x8xf32>, %q: memref<8xf32>, %d: memref<8xf32>) {
  %main = host.get_current_stream : !host.stream
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %pi = host.select %p[0][%i] : memref<4x1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    %vi = host.select %pi[0][%c0] : memref<1x8xf32, strided<[8, 1], offset: ?>> to memref<8xf32, strided<[1], offset: ?>>
    %ci = host.select %c[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %r = comm.allreduce %vi into %ci sum team [0, 1, 2, 3] : memref<8xf32, strided<[1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>
    comm.wait %r
  }
  %r = comm.allreduce %q into %d sum team [0, 1, 2, 3] : memref<8xf32> into memref<8xf32>
  comm.wait %r
  return
}
