// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=cuda}))' | FileCheck %s --check-prefixes=CHECK,CUDA
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=nccl chunks=2}))' | FileCheck %s --check-prefixes=CHECK,NCCL
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=cuda chunks=1}))' | FileCheck %s --check-prefix=WHOLE

// GEMM+RS as a chain of accumulating GEMMs: at step i the rank at position r
// computes its partial of block (r + i + 1) mod 4 onto the sum that rank
// r + 1 sent (host.matmul {accumulate}), from scratch at step 0 and into the
// output at the last step, and sends the sum on to rank r - 1. Steps run in
// two parts, each iteration on its own pool stream; the receive for
// iteration j + 2 is posted at iteration j and waited for on its stream. No
// combine follows the loop. With whole steps (chunks=1) the split form stays.

// CHECK-LABEL: func.func @matmul_reduce_scatter
// CHECK-SAME: (%[[A:.*]]: memref<4x8x16xf32>, %[[B:.*]]: memref<16x32xf32>, %[[C:.*]]: memref<1x8x32xf32>)
// CHECK: %[[P:.*]] = host.alloc : memref<4x8x32xf32>
// CHECK: %[[MAIN:.*]] = host.get_current_stream
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[RANK:.*]] = host.rank : index
// CHECK-NEXT: %[[R1:.*]] = arith.addi %[[RANK]], %{{.*}} : index
// CHECK-NEXT: %[[FROM:.*]] = arith.remui %[[R1]], %{{.*}} : index
// CHECK-NEXT: %[[R2:.*]] = arith.addi %{{.*}}, %[[RANK]] : index
// CHECK-NEXT: %[[R3:.*]] = arith.subi %[[R2]], %{{.*}} : index
// CHECK-NEXT: %[[TO:.*]] = arith.remui %[[R3]], %{{.*}} : index
// CHECK-NEXT: %[[OUT:.*]] = host.select %[[C]][0][%{{.*}}] : memref<1x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
// CUDA-NEXT: comm.share_mem_handles %[[P]], %[[C]] team [0, 1, 2, 3]
// NCCL-NOT: comm.share_mem_handles
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[C8]] step
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[STEP:.*]] = arith.divui %[[J]], %[[TWO]] : index
// CHECK-NEXT: %[[PART:.*]] = arith.remui %[[J]], %[[TWO]] : index
// CHECK-NEXT: %[[T:.*]] = arith.addi %[[STEP]], %{{.*}} : index
// CHECK-NEXT: %[[T1:.*]] = arith.addi %[[RANK]], %[[T]] : index
// CHECK-NEXT: %[[BLOCK:.*]] = arith.remui %[[T1]], %{{.*}} : index
// CHECK-NEXT: %[[T2:.*]] = arith.addi %[[T]], %{{.*}} : index
// CHECK-NEXT: %[[T3:.*]] = arith.addi %[[RANK]], %[[T2]] : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.remui %[[T3]], %{{.*}} : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[STEP]], %{{.*}} : index
// CHECK-NEXT: %[[LAST:.*]] = arith.cmpi eq, %[[BLOCK]], %[[RANK]] : index
// CHECK-NEXT: %[[NEXT_LAST:.*]] = arith.cmpi eq, %[[NEXT]], %[[RANK]] : index
// CHECK-NEXT: %[[AHEAD:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[LATER:.*]] = arith.addi %[[J]], %[[AHEAD]] : index
// CHECK-NEXT: %[[LATER_S:.*]] = host.stream_from_pool %[[LATER]] : !host.stream
// CHECK-NEXT: %[[S:.*]] = host.stream_from_pool %[[J]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[S]]
// The iterations compute in order: each waits for the previous one's stream.
// CHECK-NEXT: %[[PREV0:.*]] = arith.addi %[[J]], %[[C8]] : index
// CHECK-NEXT: %[[PREV1:.*]] = arith.subi %[[PREV0]], %{{.*}} : index
// CHECK-NEXT: %[[PREV:.*]] = arith.remui %[[PREV1]], %[[C8]] : index
// CHECK-NEXT: %[[PREV_S:.*]] = host.stream_from_pool %[[PREV]] : !host.stream
// CHECK-NEXT: host.sync_stream %[[PREV_S]]
// CHECK-NEXT: %[[AI:.*]] = host.select %[[A]][0][%[[BLOCK]]]
// CHECK: %[[A_PART:.*]] = memref.subview %[[AI]]
// CHECK: %[[PI:.*]] = host.select %[[P]][0][%[[BLOCK]]]
// CHECK: %[[P_PART:.*]] = memref.subview %[[PI]][%{{.*}}, 0] [4, 32] [1, 1]
// CHECK: %[[OUT_PART:.*]] = memref.subview %[[OUT]][%{{.*}}, 0] [4, 32] [1, 1]
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: host.matmul ins(%[[A_PART]], %[[B]] : {{.*}}) outs(%[[P_PART]] : memref<4x32xf32, strided<[32, 1], offset: ?>>){{$}}
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT: host.matmul ins(%[[A_PART]], %[[B]] : {{.*}}) outs(%[[OUT_PART]] : {{.*}}) {accumulate}
// CHECK-NEXT: } else {
// CHECK-NEXT: host.matmul ins(%[[A_PART]], %[[B]] : {{.*}}) outs(%[[P_PART]] : {{.*}}) {accumulate}
// CHECK-NEXT: }
// CHECK-NEXT: }
// Where the next step's part arrives: the partial buffer's block, or the
// output's at the last step.
// CHECK-NEXT: %[[PN:.*]] = host.select %[[P]][0][%[[NEXT]]]
// CHECK: %[[PN_PART:.*]] = memref.subview %[[PN]]
// CHECK-NEXT: %[[TARGET:.*]] = arith.select %[[NEXT_LAST]], %[[OUT_PART]], %[[PN_PART]]
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT: } else {
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// CUDA-NEXT: %[[RECV:.*]] = comm.recv %[[TARGET]] from %[[FROM]] team [0, 1, 2, 3] on cuda
// CUDA-NEXT: host.sync_stream %[[S]]
// CUDA-NEXT: %[[SEND:.*]] = comm.send %[[P_PART]] to %[[TO]] team [0, 1, 2, 3] on cuda
// CUDA-NEXT: comm.wait %[[SEND]]
// CUDA-NEXT: host.set_current_stream %[[LATER_S]]
// CUDA-NEXT: comm.wait %[[RECV]]
// NCCL-NEXT: host.sync_stream %[[S]]
// NCCL-NEXT: comm.start_coalescing
// NCCL-NEXT: comm.recv %[[TARGET]] from %[[FROM]] team [0, 1, 2, 3] :
// NCCL-NEXT: comm.send %[[P_PART]] to %[[TO]] team [0, 1, 2, 3] :
// NCCL-NEXT: %[[GROUP:.*]] = comm.end_coalescing
// NCCL-NEXT: host.set_current_stream %[[LATER_S]]
// NCCL-NEXT: comm.wait %[[GROUP]]
// CHECK-NEXT: host.set_current_stream %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream %[[MAIN]]
// CHECK-NEXT: }
// The joins cover every iteration's stream; nothing combines after them.
// CHECK-NEXT: scf.for %[[K:.*]] = %{{.*}} to %[[C8]] step
// CHECK-NEXT: host.stream_from_pool %[[K]]
// CHECK-NEXT: host.sync_stream
// CHECK-NEXT: }
// CHECK-NOT: host.sum
// CHECK-NOT: comm.reduce_scatter
// CHECK: return
// WHOLE-LABEL: func.func @matmul_reduce_scatter
// WHOLE-NOT: accumulate
// WHOLE: host.sum [0]
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

// The form convert-fusion-to-host gives GEMM+RS, with the steps rotated over
// 3 pool streams: the partial products [1, 4, 8, 32] reduce-scattered
// through a whole view that drops their unit axis. The last step's GEMM
// writes the output itself; iteration j's stream is j mod 3 (the fork loop
// stops after the first 3 iterations, which fork every stream), and the
// receive for iteration j + 2 waits on stream (j + 2) mod 3.
// CHECK-LABEL: func.func @whole_view
// CHECK-SAME: %[[C:[^:]*]]: memref<1x8x32xbf16>)
// CHECK: %[[N:.*]] = arith.constant 3 : index
// CHECK: %[[P:.*]] = host.alloc : memref<1x4x8x32xbf16>
// CHECK-NEXT: %[[SPAN:.*]] = arith.muli %[[N]], %[[ONE:.*]] : index
// CHECK-NEXT: %[[END:.*]] = arith.addi %[[ZERO:.*]], %[[SPAN]] : index
// CHECK-NEXT: %[[FORKED:.*]] = arith.minsi %{{.*}}, %[[END]] : index
// CHECK-NEXT: scf.for %[[F:.*]] = %[[ZERO]] to %[[FORKED]] step %[[ONE]]
// CHECK-NEXT: %[[FR:.*]] = arith.remui %[[F]], %[[N]] : index
// CHECK-NEXT: %[[FS:.*]] = host.stream_from_pool %[[FR]] : !host.stream
// CHECK-NEXT: host.set_current_stream %[[FS]]
// CHECK-NEXT: host.sync_stream
// CHECK-NEXT: }
// CUDA: comm.share_mem_handles %[[P]], %[[C]] team [0, 1, 2, 3] : memref<1x4x8x32xbf16>, memref<1x8x32xbf16>
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[LATER:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK-NEXT: %[[ROT:.*]] = arith.remui %[[LATER]], %[[N]] : index
// CHECK-NEXT: %[[LATER_S:.*]] = host.stream_from_pool %[[ROT]] : !host.stream
// CHECK-NEXT: %[[R:.*]] = arith.remui %[[J]], %[[N]] : index
// CHECK-NEXT: %[[S:.*]] = host.stream_from_pool %[[R]] : !host.stream
// CHECK: %[[OUT_PART:.*]] = memref.subview %[[C]][0, %{{.*}}, 0] [1, 4, 32] [1, 1, 1] : memref<1x8x32xbf16> to memref<1x4x32xbf16, strided<[256, 32, 1], offset: ?>>
// CHECK: host.matmul ins({{.*}}) outs(%[[OUT_PART]] : {{.*}}) {accumulate}
// CHECK: %[[SENT:.*]] = host.select %{{.*}}[0][%{{.*}}] : memref<1x4x32xbf16, strided<[1024, 32, 1], offset: ?>> to memref<4x32xbf16, strided<[32, 1], offset: ?>>
// CHECK: %[[TARGET:.*]] = arith.select
// CHECK: comm.recv %[[TARGET]]
// CHECK: comm.send %[[SENT]]
// CHECK: host.set_current_stream %[[LATER_S]]
// CHECK-NOT: comm.reduce_scatter
// CHECK-NOT: host.sum
// CHECK: return
func.func @whole_view(%a: memref<1x4x8x16xbf16>, %b: memref<16x32xbf16>, %c: memref<1x8x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %p = host.alloc : memref<1x4x8x32xbf16>
  host.stream_for %c0 to %c4 step %c1 from %main streams %c3 {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x8x16xbf16> to memref<1x8x16xbf16, strided<[512, 16, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x8x32xbf16> to memref<1x8x32xbf16, strided<[1024, 32, 1], offset: ?>>
    host.matmul ins(%ai, %b : memref<1x8x16xbf16, strided<[512, 16, 1], offset: ?>>, memref<16x32xbf16>)
                outs(%pi : memref<1x8x32xbf16, strided<[1024, 32, 1], offset: ?>>)
  }
  %all = host.select %p[0][%c0] : memref<1x4x8x32xbf16> to memref<4x8x32xbf16, strided<[256, 32, 1], offset: ?>>
  %r = comm.reduce_scatter %all into %c sum team [0, 1, 2, 3] : memref<4x8x32xbf16, strided<[256, 32, 1], offset: ?>> into memref<1x8x32xbf16>
  comm.wait %r
  return
}

// -----

// With the steps rotated over no more pool streams than parts, the wait for
// iteration j + 2 would land on a stream that an earlier part's GEMM waits
// for: the split form stays.
// CHECK-LABEL: func.func @two_streams
// CHECK-NOT: accumulate
// CHECK: host.sum [0]
func.func @two_streams(%a: memref<1x4x8x16xbf16>, %b: memref<16x32xbf16>, %c: memref<1x8x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %p = host.alloc : memref<1x4x8x32xbf16>
  host.stream_for %c0 to %c4 step %c1 from %main streams %c2 {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x8x16xbf16> to memref<1x8x16xbf16, strided<[512, 16, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x8x32xbf16> to memref<1x8x32xbf16, strided<[1024, 32, 1], offset: ?>>
    host.matmul ins(%ai, %b : memref<1x8x16xbf16, strided<[512, 16, 1], offset: ?>>, memref<16x32xbf16>)
                outs(%pi : memref<1x8x32xbf16, strided<[1024, 32, 1], offset: ?>>)
  }
  %all = host.select %p[0][%c0] : memref<1x4x8x32xbf16> to memref<4x8x32xbf16, strided<[256, 32, 1], offset: ?>>
  %r = comm.reduce_scatter %all into %c sum team [0, 1, 2, 3] : memref<4x8x32xbf16, strided<[256, 32, 1], offset: ?>> into memref<1x8x32xbf16>
  comm.wait %r
  return
}

// -----

// Where the chain does not apply, the reduce-scatter keeps the split form
// (slots, then host.sum or host.amax): a max reduce-scatter; a partial the
// loop also reads after its GEMM; a GEMM that already accumulates; an output
// defined after the loop.
// CHECK-LABEL: func.func @max
// CHECK-NOT: accumulate
// CHECK: host.amax [0]
// WHOLE-LABEL: func.func @max
// WHOLE: host.amax [0]
func.func @max(%a: memref<4x8x16xf32>, %b: memref<16x32xf32>, %c: memref<1x8x32xf32>) {
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
  %r = comm.reduce_scatter %p into %c max team [0, 1, 2, 3] : memref<4x8x32xf32> into memref<1x8x32xf32>
  comm.wait %r
  return
}

// -----

// CHECK-LABEL: func.func @read_after_gemm
// CHECK-NOT: accumulate
// CHECK: host.sum [0]
func.func @read_after_gemm(%a: memref<4x8x16xf32>, %b: memref<16x32xf32>, %c: memref<1x8x32xf32>) {
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
    host.neg ins(%pi : memref<8x32xf32, strided<[32, 1], offset: ?>>) outs(%pi : memref<8x32xf32, strided<[32, 1], offset: ?>>)
  }
  %r = comm.reduce_scatter %p into %c sum team [0, 1, 2, 3] : memref<4x8x32xf32> into memref<1x8x32xf32>
  comm.wait %r
  return
}

// -----

// CHECK-LABEL: func.func @accumulating_gemm
// CHECK: host.sum [0]
func.func @accumulating_gemm(%a: memref<4x8x16xf32>, %b: memref<16x32xf32>, %c: memref<1x8x32xf32>) {
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
                outs(%pi : memref<8x32xf32, strided<[32, 1], offset: ?>>) {accumulate}
  }
  %r = comm.reduce_scatter %p into %c sum team [0, 1, 2, 3] : memref<4x8x32xf32> into memref<1x8x32xf32>
  comm.wait %r
  return
}

// -----

// CHECK-LABEL: func.func @output_after_loop
// CHECK-NOT: accumulate
// CHECK: host.sum [0]
func.func @output_after_loop(%a: memref<4x8x16xf32>, %b: memref<16x32xf32>) -> memref<1x8x32xf32> {
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
  %c = host.alloc : memref<1x8x32xf32>
  %r = comm.reduce_scatter %p into %c sum team [0, 1, 2, 3] : memref<4x8x32xf32> into memref<1x8x32xf32>
  comm.wait %r
  return %c : memref<1x8x32xf32>
}
