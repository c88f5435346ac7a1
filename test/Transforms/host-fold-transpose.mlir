// RUN: hir-opt %s --split-input-file --host-fold-transpose | FileCheck %s
// RUN: hir-opt %s --split-input-file --host-fold-transpose | hir-opt --split-input-file --verify-roundtrip | FileCheck %s --check-prefix=VALID
// RUN: hir-opt %s --split-input-file --host-fold-transpose --host-insert-dealloc --convert-host-to-llvm | FileCheck %s --check-prefix=LLVM
// VALID-NOT: error

// A backward's weight gradient dW = dy^T x and input gradient dx = dy W of a
// weight stored [out, in]: each transposed copy only a GEMM reads becomes a
// view of its source, and the copy's buffer goes.
// CHECK-LABEL: func.func @backward
// CHECK-NOT: host.alloc
// CHECK-NOT: host.transpose
// CHECK: %[[DYT:.+]] = memref.transpose %arg0 (d0, d1) -> (d1, d0) : memref<8x32xbf16> to memref<32x8xbf16, strided<[1, 32]>>
// CHECK-NEXT: host.matmul ins(%[[DYT]], %arg1 : memref<32x8xbf16, strided<[1, 32]>>, memref<8x16xbf16>) outs(%arg3 : memref<32x16xbf16>)
// CHECK-NEXT: %[[WT:.+]] = memref.transpose %arg2 (d0, d1) -> (d1, d0) : memref<32x16xbf16> to memref<16x32xbf16, strided<[1, 16]>>
// CHECK-NEXT: host.linear ins(%arg0, %[[WT]] : memref<8x32xbf16>, memref<16x32xbf16, strided<[1, 16]>>) outs(%arg4 : memref<8x16xbf16>)
// CHECK-NEXT: return
// LLVM-LABEL: func.func @backward
// LLVM-NOT: hir_rt_transpose
// LLVM: call @hir_rt_matmul_bf16(
// LLVM: call @hir_rt_linear_bf16(
func.func @backward(%dy: memref<8x32xbf16>, %x: memref<8x16xbf16>, %w: memref<32x16xbf16>,
                    %dw: memref<32x16xbf16>, %dx: memref<8x16xbf16>) {
  %t = host.alloc : memref<32x8xbf16>
  host.transpose [1, 0] ins(%dy : memref<8x32xbf16>) outs(%t : memref<32x8xbf16>)
  host.matmul ins(%t, %x : memref<32x8xbf16>, memref<8x16xbf16>) outs(%dw : memref<32x16xbf16>)
  %u = host.alloc : memref<16x32xbf16>
  host.transpose [1, 0] ins(%w : memref<32x16xbf16>) outs(%u : memref<16x32xbf16>)
  host.linear ins(%dy, %u : memref<8x32xbf16>, memref<16x32xbf16>) outs(%dx : memref<8x16xbf16>)
  return
}

// -----

// A batch of matrices (attention's K^T), and a copy of an allocation read by
// GEMMs in a loop: the view is of the allocation, which the deallocs keep
// alive until the loop's end.
// CHECK-LABEL: func.func @batched_in_loop
// CHECK: %[[K:.+]] = host.alloc : memref<2x8x4xf32>
// CHECK-NEXT: host.exp ins(%arg1 : memref<2x8x4xf32>) outs(%[[K]] : memref<2x8x4xf32>)
// CHECK-NEXT: %[[KT:.+]] = memref.transpose %[[K]] (d0, d1, d2) -> (d0, d2, d1) : memref<2x8x4xf32> to memref<2x4x8xf32, strided<[32, 1, 4]>>
// CHECK: scf.for
// CHECK-NEXT: host.matmul ins(%arg0, %[[KT]] : memref<2x8x4xf32>, memref<2x4x8xf32, strided<[32, 1, 4]>>)
// CHECK-NOT: host.transpose
// LLVM-LABEL: func.func @batched_in_loop
// LLVM-NOT: hir_rt_transpose
// LLVM: scf.for
// LLVM: call @hir_rt_matmul_f32(
// LLVM: }
// LLVM: call @hir_rt_dealloc(
func.func @batched_in_loop(%q: memref<2x8x4xf32>, %k0: memref<2x8x4xf32>, %s: memref<2x8x8xf32>) {
  %k = host.alloc : memref<2x8x4xf32>
  host.exp ins(%k0 : memref<2x8x4xf32>) outs(%k : memref<2x8x4xf32>)
  %kt = host.alloc : memref<2x4x8xf32>
  host.transpose [0, 2, 1] ins(%k : memref<2x8x4xf32>) outs(%kt : memref<2x4x8xf32>)
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c2 step %c1 {
    host.matmul ins(%q, %kt : memref<2x8x4xf32>, memref<2x4x8xf32>) outs(%s : memref<2x8x8xf32>)
  }
  return
}

// -----

// A view of a view: the transposed copy of a slice.
// CHECK-LABEL: func.func @slice
// CHECK: %[[S:.+]] = memref.subview
// CHECK-NEXT: memref.transpose %[[S]] (d0, d1) -> (d1, d0) : memref<4x8xf32, strided<[8, 1], offset: 32>> to memref<8x4xf32, strided<[1, 8], offset: 32>>
// CHECK-NOT: host.transpose
func.func @slice(%a: memref<8x8xf32>, %b: memref<4x8xf32>, %c: memref<8x8xf32>) {
  %s = memref.subview %a[4, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  %t = host.alloc : memref<8x4xf32>
  host.transpose [1, 0] ins(%s : memref<4x8xf32, strided<[8, 1], offset: 32>>) outs(%t : memref<8x4xf32>)
  host.matmul ins(%t, %b : memref<8x4xf32>, memref<4x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

// What stays a copy: one an elementwise op also reads; one into a function's
// output; one whose source is written (in place, or by a collective) before
// the GEMM reads it; a permutation that moves a batch axis; one the GEMM
// writes into.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.transpose
// CHECK-COUNT-6: host.transpose
// CHECK-NOT: memref.transpose
// CHECK: return
func.func @kept(%a: memref<8x4xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>, %o: memref<4x8xf32>,
                %x: memref<2x3x4xf32>, %y: memref<3x4x5xf32>, %z: memref<3x2x5xf32>) {
  %t1 = host.alloc : memref<4x8xf32>
  host.transpose [1, 0] ins(%a : memref<8x4xf32>) outs(%t1 : memref<4x8xf32>)
  host.matmul ins(%t1, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  host.exp ins(%t1 : memref<4x8xf32>) outs(%o : memref<4x8xf32>)

  host.transpose [1, 0] ins(%a : memref<8x4xf32>) outs(%o : memref<4x8xf32>)
  host.matmul ins(%o, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)

  %t3 = host.alloc : memref<4x8xf32>
  host.transpose [1, 0] ins(%a : memref<8x4xf32>) outs(%t3 : memref<4x8xf32>)
  host.exp ins(%b : memref<8x4xf32>) outs(%a : memref<8x4xf32>)
  host.matmul ins(%t3, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)

  %t4 = host.alloc : memref<4x8xf32>
  host.transpose [1, 0] ins(%a : memref<8x4xf32>) outs(%t4 : memref<4x8xf32>)
  %r = comm.allreduce %b into %a sum team [0] : memref<8x4xf32> into memref<8x4xf32>
  comm.wait %r
  host.matmul ins(%t4, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)

  %t5 = host.alloc : memref<3x2x4xf32>
  host.transpose [1, 0, 2] ins(%x : memref<2x3x4xf32>) outs(%t5 : memref<3x2x4xf32>)
  host.matmul ins(%t5, %y : memref<3x2x4xf32>, memref<3x4x5xf32>) outs(%z : memref<3x2x5xf32>)

  %t7 = host.alloc : memref<4x4xf32>
  host.transpose [1, 0] ins(%c : memref<4x4xf32>) outs(%t7 : memref<4x4xf32>)
  host.matmul ins(%c, %c : memref<4x4xf32>, memref<4x4xf32>) outs(%t7 : memref<4x4xf32>)
  return
}

// -----

// A transformer block's heads: Q, K and V, [S, heads, dh] to [heads, S, dh],
// only attention reads: each becomes a view, its rows still contiguous.
// CHECK-LABEL: func.func @attention_heads
// CHECK-NOT: host.alloc
// CHECK-NOT: host.transpose
// CHECK: %[[Q:.+]] = memref.transpose %arg0 (d0, d1, d2) -> (d1, d0, d2) : memref<8x2x4xbf16> to memref<2x8x4xbf16, strided<[4, 8, 1]>>
// CHECK-NEXT: %[[K:.+]] = memref.transpose %arg1 (d0, d1, d2) -> (d1, d0, d2) : memref<8x2x4xbf16> to memref<2x8x4xbf16, strided<[4, 8, 1]>>
// CHECK-NEXT: %[[V:.+]] = memref.transpose %arg2 (d0, d1, d2) -> (d1, d0, d2) : memref<8x2x4xbf16> to memref<2x8x4xbf16, strided<[4, 8, 1]>>
// CHECK-NEXT: host.attention scale 5.000000e-01 causal ins(%[[Q]], %[[K]], %[[V]] : memref<2x8x4xbf16, strided<[4, 8, 1]>>, memref<2x8x4xbf16, strided<[4, 8, 1]>>, memref<2x8x4xbf16, strided<[4, 8, 1]>>) outs(%arg3 : memref<2x8x4xbf16>)
// CHECK-NEXT: return
// LLVM-LABEL: func.func @attention_heads
// LLVM-NOT: hir_rt_transpose
// LLVM: call @hir_rt_attention_bf16(
func.func @attention_heads(%q: memref<8x2x4xbf16>, %k: memref<8x2x4xbf16>, %v: memref<8x2x4xbf16>,
                           %o: memref<2x8x4xbf16>) {
  %qh = host.alloc : memref<2x8x4xbf16>
  host.transpose [1, 0, 2] ins(%q : memref<8x2x4xbf16>) outs(%qh : memref<2x8x4xbf16>)
  %kh = host.alloc : memref<2x8x4xbf16>
  host.transpose [1, 0, 2] ins(%k : memref<8x2x4xbf16>) outs(%kh : memref<2x8x4xbf16>)
  %vh = host.alloc : memref<2x8x4xbf16>
  host.transpose [1, 0, 2] ins(%v : memref<8x2x4xbf16>) outs(%vh : memref<2x8x4xbf16>)
  host.attention scale 0.5 causal ins(%qh, %kh, %vh : memref<2x8x4xbf16>, memref<2x8x4xbf16>, memref<2x8x4xbf16>) outs(%o : memref<2x8x4xbf16>)
  return
}

// -----

// What attention reads as a copy still: a permutation that moves the last
// axis (its rows would not be contiguous), and a copy an elementwise op also
// reads.
// CHECK-LABEL: func.func @attention_kept
// CHECK-NOT: memref.transpose
// CHECK-COUNT-2: host.transpose
// CHECK-NOT: memref.transpose
// CHECK: return
func.func @attention_kept(%q: memref<2x4x8xf32>, %k: memref<2x8x4xf32>, %o: memref<2x8x4xf32>,
                          %e: memref<2x8x4xf32>) {
  %qt = host.alloc : memref<2x8x4xf32>
  host.transpose [0, 2, 1] ins(%q : memref<2x4x8xf32>) outs(%qt : memref<2x8x4xf32>)
  %kh = host.alloc : memref<2x8x4xf32>
  host.transpose [0, 1, 2] ins(%k : memref<2x8x4xf32>) outs(%kh : memref<2x8x4xf32>)
  host.attention scale 0.5 ins(%qt, %kh, %kh : memref<2x8x4xf32>, memref<2x8x4xf32>, memref<2x8x4xf32>) outs(%o : memref<2x8x4xf32>)
  host.exp ins(%kh : memref<2x8x4xf32>) outs(%e : memref<2x8x4xf32>)
  return
}

// -----

// Attention's output transposed into its place ([heads, S, dh] to [S, heads,
// dh]): the attention writes there through a view, into an argument, or into
// an allocation made after it, which moves before it.
// CHECK-LABEL: func.func @attention_output
// CHECK-NEXT: %[[OV:.+]] = memref.transpose %arg3 (d0, d1, d2) -> (d1, d0, d2) : memref<8x2x4xf32> to memref<2x8x4xf32, strided<[4, 8, 1]>>
// CHECK-NEXT: host.attention scale 5.000000e-01 ins(%arg0, %arg1, %arg2 : memref<2x8x4xf32>, memref<2x8x4xf32>, memref<2x8x4xf32>) outs(%[[OV]] : memref<2x8x4xf32, strided<[4, 8, 1]>>)
// CHECK-NEXT: %[[T:.+]] = host.alloc : memref<8x2x4xf32>
// CHECK-NEXT: %[[TV:.+]] = memref.transpose %[[T]] (d0, d1, d2) -> (d1, d0, d2) : memref<8x2x4xf32> to memref<2x8x4xf32, strided<[4, 8, 1]>>
// CHECK-NEXT: host.attention scale 5.000000e-01 ins(%arg0, %arg1, %arg2 : memref<2x8x4xf32>, memref<2x8x4xf32>, memref<2x8x4xf32>) outs(%[[TV]] : memref<2x8x4xf32, strided<[4, 8, 1]>>)
// CHECK-NEXT: host.exp ins(%[[T]] : memref<8x2x4xf32>) outs(%arg4 : memref<8x2x4xf32>)
// CHECK-NEXT: return
// LLVM-LABEL: func.func @attention_output
// LLVM-NOT: hir_rt_transpose
// LLVM: call @hir_rt_attention_f32(
func.func @attention_output(%q: memref<2x8x4xf32>, %k: memref<2x8x4xf32>, %v: memref<2x8x4xf32>,
                            %out: memref<8x2x4xf32>, %e: memref<8x2x4xf32>) {
  %o = host.alloc : memref<2x8x4xf32>
  host.attention scale 0.5 ins(%q, %k, %v : memref<2x8x4xf32>, memref<2x8x4xf32>, memref<2x8x4xf32>) outs(%o : memref<2x8x4xf32>)
  host.transpose [1, 0, 2] ins(%o : memref<2x8x4xf32>) outs(%out : memref<8x2x4xf32>)
  %o2 = host.alloc : memref<2x8x4xf32>
  host.attention scale 0.5 ins(%q, %k, %v : memref<2x8x4xf32>, memref<2x8x4xf32>, memref<2x8x4xf32>) outs(%o2 : memref<2x8x4xf32>)
  %t = host.alloc : memref<8x2x4xf32>
  host.transpose [1, 0, 2] ins(%o2 : memref<2x8x4xf32>) outs(%t : memref<8x2x4xf32>)
  host.exp ins(%t : memref<8x2x4xf32>) outs(%e : memref<8x2x4xf32>)
  return
}

// -----

// What stays a copy of attention's output: a destination read between the
// attention and the transpose (it would see the output early), and an output
// another op also reads.
// CHECK-LABEL: func.func @attention_output_kept
// CHECK-NOT: memref.transpose
// CHECK-COUNT-2: host.transpose
// CHECK-NOT: memref.transpose
// CHECK: return
func.func @attention_output_kept(%q: memref<2x8x4xf32>, %k: memref<2x8x4xf32>, %v: memref<2x8x4xf32>,
                                 %out: memref<8x2x4xf32>, %e: memref<2x8x4xf32>, %f: memref<8x2x4xf32>) {
  %o = host.alloc : memref<2x8x4xf32>
  host.attention scale 0.5 ins(%q, %k, %v : memref<2x8x4xf32>, memref<2x8x4xf32>, memref<2x8x4xf32>) outs(%o : memref<2x8x4xf32>)
  host.exp ins(%out : memref<8x2x4xf32>) outs(%f : memref<8x2x4xf32>)
  host.transpose [1, 0, 2] ins(%o : memref<2x8x4xf32>) outs(%out : memref<8x2x4xf32>)
  %o2 = host.alloc : memref<2x8x4xf32>
  host.attention scale 0.5 ins(%q, %k, %v : memref<2x8x4xf32>, memref<2x8x4xf32>, memref<2x8x4xf32>) outs(%o2 : memref<2x8x4xf32>)
  host.transpose [1, 0, 2] ins(%o2 : memref<2x8x4xf32>) outs(%out : memref<8x2x4xf32>)
  host.exp ins(%o2 : memref<2x8x4xf32>) outs(%e : memref<2x8x4xf32>)
  return
}
