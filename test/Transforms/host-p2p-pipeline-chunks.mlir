// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=cuda chunks=2}))' | FileCheck %s --check-prefixes=CHECK,TWO
// RUN: hir-opt %s --split-input-file --host-p2p-pipeline | FileCheck %s --check-prefixes=CHECK,CHOSEN

// Ring steps in parts (`chunks`): the loop runs D * c iterations, iteration
// %j is part %j mod c of step %j / c, and every slice the loop takes is
// narrowed to its part of the rows (memref.subview), the ring's own buffers
// too. With chunks=0 (the default) the pass chooses: two parts for a loop of
// allgather rings whose steps split in two, whole steps otherwise.

// AG+GEMM: each step's received slice and GEMM in two halves of 4 rows.
// CHECK-LABEL: func.func @ag_matmul
// CHECK-SAME: (%[[A:.*]]: memref<1x8x16xbf16>, %[[B:.*]]: memref<16x32xbf16>, %[[C:.*]]: memref<4x8x32xbf16>)
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[OWN:.*]] = host.select %[[A]][0]
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[C8]] step
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[STEP:.*]] = arith.divui %[[J]], %[[TWO]] : index
// CHECK-NEXT: %[[PART:.*]] = arith.remui %[[J]], %[[TWO]] : index
// CHECK: %[[S:.*]] = host.stream_from_pool %[[STEP]] : !host.stream
// CHECK: %[[GI:.*]] = host.select %{{.*}}[0][%[[SLICE:.*]]] : memref<4x8x16xbf16>
// CHECK-NEXT: %[[ROWS:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[AT:.*]] = arith.muli %[[PART]], %[[ROWS]] : index
// CHECK-NEXT: %[[HALF:.*]] = memref.subview %[[GI]][%[[AT]], 0] [4, 16] [1, 1] : memref<8x16xbf16, strided<[16, 1], offset: ?>> to memref<4x16xbf16, strided<[16, 1], offset: ?>>
// CHECK: %[[OWN_HALF:.*]] = memref.subview %[[OWN]][%{{.*}}, 0] [4, 16] [1, 1]
// Over cuda, each step's first half receives both halves: the second is
// posted before the first one's send and waited for on the next step's
// stream, which the second half's iteration syncs its step's stream with.
// TWO: %[[FIRST:.*]] = arith.cmpi eq, %[[PART]], %{{.*}} : index
// TWO: %[[MORE:.*]] = arith.cmpi ne, %[[PART]], %{{.*}} : index
// TWO: %[[NEXT_HALF:.*]] = memref.subview %[[GI]][%{{.*}}, 0] [4, 16] [1, 1]
// TWO: %[[AFTER:.*]] = arith.addi %[[STEP]], %{{.*}} : index
// TWO-NEXT: %[[NEXT_POOL:.*]] = arith.remui %[[AFTER]], %{{.*}} : index
// TWO-NEXT: %[[ARRIVALS:.*]] = host.stream_from_pool %[[NEXT_POOL]] : !host.stream
// CHECK: %[[X:.*]] = scf.if %{{.*}} -> (memref<4x16xbf16, strided<[16, 1], offset: ?>>) {
// CHECK-NEXT: scf.yield %[[OWN_HALF]]
// CHECK-NEXT: } else {
// TWO-NEXT: host.set_current_stream %[[MAIN:.*]]
// TWO-NEXT: scf.if %[[FIRST]] {
// TWO-NEXT: %[[R:.*]] = comm.recv %[[HALF]] from %[[SLICE]] team [0, 1, 2, 3] on cuda
// TWO-NEXT: host.set_current_stream %[[S]]
// TWO-NEXT: comm.wait %[[R]]
// TWO-NEXT: host.set_current_stream %[[MAIN]]
// TWO-NEXT: } else {
// TWO-NEXT: host.set_current_stream %[[S]]
// TWO-NEXT: host.sync_stream %[[ARRIVALS]]
// TWO-NEXT: host.set_current_stream %[[MAIN]]
// TWO-NEXT: }
// TWO-NEXT: scf.if %[[MORE]] {
// TWO-NEXT: %[[R_NEXT:.*]] = comm.recv %[[NEXT_HALF]] from %[[SLICE]] team [0, 1, 2, 3] on cuda
// TWO-NEXT: host.set_current_stream %[[ARRIVALS]]
// TWO-NEXT: comm.wait %[[R_NEXT]]
// TWO-NEXT: host.set_current_stream %[[MAIN]]
// TWO-NEXT: }
// TWO-NEXT: %[[T:.*]] = comm.send %[[OWN_HALF]] to %{{.*}} team [0, 1, 2, 3] on cuda
// TWO-NEXT: comm.wait %[[T]]
// TWO-NEXT: host.set_current_stream %[[S]]
// CHOSEN: comm.start_coalescing
// CHOSEN-NEXT: comm.recv %[[HALF]] from %[[SLICE]]
// CHOSEN-NEXT: comm.send %[[OWN_HALF]] to
// CHECK: scf.yield %[[HALF]]
// CHECK: %[[CI:.*]] = host.select %[[C]][0][%[[SLICE]]]
// CHECK: %[[OUT:.*]] = memref.subview %[[CI]][%{{.*}}, 0] [4, 32] [1, 1]
// CHECK: host.matmul ins(%[[X]], %[[B]] : {{.*}}) outs(%[[OUT]] : memref<4x32xbf16, strided<[32, 1], offset: ?>>)
// The joins still cover the 4 steps' streams.
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: host.stream_from_pool %[[K]]
// CHECK-NEXT: host.sync_stream
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

// Steps rotated over one pool stream: no other stream to wait for a half
// received ahead on, so each half is received in its own iteration.
// TWO-LABEL: func.func @ag_matmul_one_stream
// TWO: scf.if %{{.*}} -> (memref<4x16xbf16, strided<[16, 1], offset: ?>>) {
// TWO: } else {
// TWO-NEXT: host.set_current_stream %[[MAIN:.*]]
// TWO-NEXT: %[[R:.*]] = comm.recv
// TWO-NEXT: %[[T:.*]] = comm.send
// TWO-NEXT: comm.wait %[[T]]
// TWO-NEXT: host.set_current_stream
// TWO-NEXT: comm.wait %[[R]]
// TWO-NOT: comm.recv
// TWO: host.matmul
func.func @ag_matmul_one_stream(%a: memref<1x8x16xbf16>, %b: memref<16x32xbf16>, %c: memref<4x8x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = host.alloc : memref<4x8x16xbf16>
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<1x8x16xbf16> into memref<4x8x16xbf16>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main streams %c1 {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8x16xbf16> to memref<8x16xbf16, strided<[16, 1], offset: ?>>
    %ci = host.select %c[0][%i] : memref<4x8x32xbf16> to memref<8x32xbf16, strided<[32, 1], offset: ?>>
    host.matmul ins(%gi, %b : memref<8x16xbf16, strided<[16, 1], offset: ?>>, memref<16x32xbf16>)
                outs(%ci : memref<8x32xbf16, strided<[32, 1], offset: ?>>)
  }
  return
}

// -----

// GEMM+RS by max (a sum is a chain of accumulating GEMMs instead: see
// host-p2p-pipeline-chain.mlir): with chunks=2 each partial block leaves in
// two halves, each into its half of the step's slot; the combine after the
// loop is unchanged. The pass does not choose parts for it (whole steps: a
// loop of 4).
// CHECK-LABEL: func.func @matmul_reduce_scatter
// CHECK: %[[SLOTS:.*]] = host.alloc : memref<3x8x32xf32>
// TWO: scf.for %{{.*}} = %{{.*}} to %[[C8:.*]] step
// TWO: %[[PI:.*]] = host.select %{{.*}}[0][%{{.*}}] : memref<4x8x32xf32>
// TWO-NEXT: arith.constant 4 : index
// TWO-NEXT: arith.muli
// TWO-NEXT: %[[PART:.*]] = memref.subview %[[PI]][%{{.*}}, 0] [4, 32] [1, 1]
// TWO: host.matmul ins(%{{.*}}, %{{.*}} : memref<4x16xf32, {{.*}}>, memref<16x32xf32>) outs(%[[PART]] : memref<4x32xf32, {{.*}}>)
// TWO: %[[SLOT:.*]] = host.select %[[SLOTS]][0]
// TWO: %[[SLOT_HALF:.*]] = memref.subview %[[SLOT]][%{{.*}}, 0] [4, 32] [1, 1]
// TWO: comm.recv %[[SLOT_HALF]] from
// TWO: comm.send %[[PART]] to
// CHOSEN: scf.for %{{.*}} = %{{.*}} to %c4 step
// CHOSEN-NOT: memref.subview
// CHECK: host.amax [0] ins(%[[SLOTS]] : memref<3x8x32xf32>)
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
  %r = comm.reduce_scatter %p into %c max team [0, 1, 2, 3] : memref<4x8x32xf32> into memref<1x8x32xf32>
  comm.wait %r
  return
}
