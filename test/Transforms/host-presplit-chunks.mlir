// RUN: hir-opt --host-presplit-chunks --split-input-file %s | FileCheck %s
// RUN: hir-opt --pass-pipeline='builtin.module(func.func(host-presplit-chunks,host-presplit-chunks))' --split-input-file %s | FileCheck %s

// The pass cannot fail; what it does not rewrite it leaves as it is (the
// cases that say "Left alone" or that stay whole).

// Natural-shape AG+GEMM then a neg, fused in one stream<4> loop on 4 ranks:
// the allgather writes split views of its input and output, every chunk the
// loop takes becomes a select of a split view at the index (the gathered
// buffer's, and, made in front of the loop, the others'), and the chunks'
// offsets go.
// CHECK-LABEL: func.func @ag_matmul_neg(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: memref<16x32xf32>, [[B:%[a-zA-Z0-9_]+]]: memref<32x48xf32>, [[OUT:%[a-zA-Z0-9_]+]]: memref<64x48xf32>) {
// CHECK: [[G:%[a-zA-Z0-9_]+]] = host.alloc : memref<64x32xf32>
// CHECK-NEXT: [[AX:%[a-zA-Z0-9_]+]] = memref.expand_shape [[A]] {{\[}}[0, 1], [2]] output_shape [1, 16, 32] : memref<16x32xf32> into memref<1x16x32xf32>
// CHECK-NEXT: [[GX:%[a-zA-Z0-9_]+]] = memref.expand_shape [[G]] {{\[}}[0, 1], [2]] output_shape [4, 16, 32] : memref<64x32xf32> into memref<4x16x32xf32>
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[AX]] into [[GX]] team [0, 1, 2, 3] : memref<1x16x32xf32> into memref<4x16x32xf32>
// CHECK-NEXT: comm.wait [[REQ]]
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = host.alloc : memref<64x48xf32>
// CHECK: [[TX:%[a-zA-Z0-9_]+]] = memref.expand_shape [[T]] {{\[}}[0, 1], [2]] output_shape [4, 16, 48] : memref<64x48xf32> into memref<4x16x48xf32>
// CHECK-NEXT: [[OX:%[a-zA-Z0-9_]+]] = memref.expand_shape [[OUT]] {{\[}}[0, 1], [2]] output_shape [4, 16, 48] : memref<64x48xf32> into memref<4x16x48xf32>
// CHECK-NEXT: host.stream_for
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, {{%[a-zA-Z0-9_]+}}: !host.stream):
// CHECK-NEXT: [[GI:%[a-zA-Z0-9_]+]] = host.select [[GX]][0]{{\[}}[[I]]{{\]}} : memref<4x16x32xf32> to memref<16x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT: [[TI:%[a-zA-Z0-9_]+]] = host.select [[TX]][0]{{\[}}[[I]]{{\]}} : memref<4x16x48xf32> to memref<16x48xf32, strided<[48, 1], offset: ?>>
// CHECK-NEXT: host.matmul ins([[GI]], [[B]] : memref<16x32xf32, strided<[32, 1], offset: ?>>, memref<32x48xf32>) outs([[TI]] : memref<16x48xf32, strided<[48, 1], offset: ?>>)
// CHECK-NEXT: [[TJ:%[a-zA-Z0-9_]+]] = host.select [[TX]][0]{{\[}}[[I]]{{\]}}
// CHECK-NEXT: [[OI:%[a-zA-Z0-9_]+]] = host.select [[OX]][0]{{\[}}[[I]]{{\]}}
// CHECK-NEXT: host.neg ins([[TJ]] : {{.*}}) outs([[OI]] : {{.*}})
// CHECK-NEXT: }
// CHECK-NOT: arith.muli
// CHECK: return
func.func @ag_matmul_neg(%arg0: memref<16x32xf32>, %arg1: memref<32x48xf32>, %arg2: memref<64x48xf32>) {
  %0 = host.get_current_stream : !host.stream
  %1 = host.alloc : memref<64x32xf32>
  %2 = comm.allgather %arg0 into %1 team [0, 1, 2, 3] : memref<16x32xf32> into memref<64x32xf32>
  comm.wait %2
  %3 = host.alloc : memref<64x48xf32>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  host.stream_for %c0 to %c4 step %c1 from %0 {
  ^bb0(%i: index, %s: !host.stream):
    %4 = arith.muli %i, %c16 : index
    %g = memref.subview %1[%4, 0] [16, 32] [1, 1] : memref<64x32xf32> to memref<16x32xf32, strided<[32, 1], offset: ?>>
    %t = memref.subview %3[%4, 0] [16, 48] [1, 1] : memref<64x48xf32> to memref<16x48xf32, strided<[48, 1], offset: ?>>
    host.matmul ins(%g, %arg1 : memref<16x32xf32, strided<[32, 1], offset: ?>>, memref<32x48xf32>) outs(%t : memref<16x48xf32, strided<[48, 1], offset: ?>>)
    %5 = arith.muli %i, %c16 : index
    %t2 = memref.subview %3[%5, 0] [16, 48] [1, 1] : memref<64x48xf32> to memref<16x48xf32, strided<[48, 1], offset: ?>>
    %o = memref.subview %arg2[%5, 0] [16, 48] [1, 1] : memref<64x48xf32> to memref<16x48xf32, strided<[48, 1], offset: ?>>
    host.neg ins(%t2 : memref<16x48xf32, strided<[48, 1], offset: ?>>) outs(%o : memref<16x48xf32, strided<[48, 1], offset: ?>>)
  }
  host.dealloc %3 : memref<64x48xf32>
  host.dealloc %1 : memref<64x32xf32>
  return
}

// -----

// A second loop over the same gathered buffer selects from the split view
// the first one made: one allgather, one view.
// CHECK-LABEL: func.func @two_loops(
// CHECK: [[G:%[a-zA-Z0-9_]+]] = host.alloc : memref<8x8xf32>
// CHECK: [[GX:%[a-zA-Z0-9_]+]] = memref.expand_shape [[G]] {{.*}} output_shape [2, 4, 8]
// CHECK-NEXT: comm.allgather {{.*}} into [[GX]]
// CHECK-NOT: memref.expand_shape [[G]]
// CHECK: host.select [[GX]][0]
// CHECK: host.select [[GX]][0]
func.func @two_loops(%arg0: memref<4x8xf32>, %arg1: memref<8x8xf32>, %arg2: memref<8x8xf32>) {
  %0 = host.get_current_stream : !host.stream
  %1 = host.alloc : memref<8x8xf32>
  %2 = comm.allgather %arg0 into %1 team [0, 1] : memref<4x8xf32> into memref<8x8xf32>
  comm.wait %2
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  host.stream_for %c0 to %c2 step %c1 from %0 {
  ^bb0(%i: index, %s: !host.stream):
    %o = arith.muli %i, %c4 : index
    %g = memref.subview %1[%o, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    %y = memref.subview %arg1[%o, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    host.neg ins(%g : memref<4x8xf32, strided<[8, 1], offset: ?>>) outs(%y : memref<4x8xf32, strided<[8, 1], offset: ?>>)
  }
  host.stream_for %c0 to %c2 step %c1 from %0 {
  ^bb0(%i: index, %s: !host.stream):
    %o = arith.muli %i, %c4 : index
    %g = memref.subview %1[%o, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    %y = memref.subview %arg2[%o, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    host.abs ins(%g : memref<4x8xf32, strided<[8, 1], offset: ?>>) outs(%y : memref<4x8xf32, strided<[8, 1], offset: ?>>)
  }
  host.dealloc %1 : memref<8x8xf32>
  return
}

// -----

// Left alone: 2 chunks of rows gathered from 4 ranks (a chunk holds two
// ranks' rows), so neither the allgather nor the loop changes.
// CHECK-LABEL: func.func @fewer_chunks(
// CHECK-NOT: memref.expand_shape
// CHECK: comm.allgather %arg0 into
// CHECK: memref.subview
// CHECK: return
func.func @fewer_chunks(%arg0: memref<4x8xf32>, %arg1: memref<16x8xf32>) {
  %0 = host.get_current_stream : !host.stream
  %1 = host.alloc : memref<16x8xf32>
  %2 = comm.allgather %arg0 into %1 team [0, 1, 2, 3] : memref<4x8xf32> into memref<16x8xf32>
  comm.wait %2
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  host.stream_for %c0 to %c2 step %c1 from %0 {
  ^bb0(%i: index, %s: !host.stream):
    %o = arith.muli %i, %c8 : index
    %g = memref.subview %1[%o, 0] [8, 8] [1, 1] : memref<16x8xf32> to memref<8x8xf32, strided<[8, 1], offset: ?>>
    %y = memref.subview %arg1[%o, 0] [8, 8] [1, 1] : memref<16x8xf32> to memref<8x8xf32, strided<[8, 1], offset: ?>>
    host.neg ins(%g : memref<8x8xf32, strided<[8, 1], offset: ?>>) outs(%y : memref<8x8xf32, strided<[8, 1], offset: ?>>)
  }
  host.dealloc %1 : memref<16x8xf32>
  return
}

// -----

// Left alone: a loop whose chunks no allgather writes (a matmul streamed
// along N) keeps its subviews.
// CHECK-LABEL: func.func @no_gather(
// CHECK-NOT: memref.expand_shape
// CHECK: memref.subview
// CHECK: return
func.func @no_gather(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  %0 = host.get_current_stream : !host.stream
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c4 step %c1 from %0 {
  ^bb0(%i: index, %s: !host.stream):
    %c4_0 = arith.constant 4 : index
    %o = arith.muli %i, %c4_0 : index
    %bi = memref.subview %b[0, %o] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
    %ci = memref.subview %c[0, %o] [4, 4] [1, 1] : memref<4x16xf32> to memref<4x4xf32, strided<[16, 1], offset: ?>>
    host.matmul ins(%a, %bi : memref<4x8xf32>, memref<8x4xf32, strided<[16, 1], offset: ?>>) outs(%ci : memref<4x4xf32, strided<[16, 1], offset: ?>>)
  }
  return
}

// -----

// Left alone: an allgather whose input is not contiguous (a strided view)
// has no split view as an expand_shape of the identity layout.
// CHECK-LABEL: func.func @strided_input(
// CHECK-NOT: memref.expand_shape
// CHECK: return
func.func @strided_input(%arg0: memref<4x16xf32>, %arg1: memref<8x8xf32>) {
  %0 = host.get_current_stream : !host.stream
  %in = memref.subview %arg0[0, 0] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1]>>
  %1 = host.alloc : memref<8x8xf32>
  %2 = comm.allgather %in into %1 team [0, 1] : memref<4x8xf32, strided<[16, 1]>> into memref<8x8xf32>
  comm.wait %2
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  host.stream_for %c0 to %c2 step %c1 from %0 {
  ^bb0(%i: index, %s: !host.stream):
    %o = arith.muli %i, %c4 : index
    %g = memref.subview %1[%o, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    %y = memref.subview %arg1[%o, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    host.neg ins(%g : memref<4x8xf32, strided<[8, 1], offset: ?>>) outs(%y : memref<4x8xf32, strided<[8, 1], offset: ?>>)
  }
  host.dealloc %1 : memref<8x8xf32>
  return
}

// -----

// Natural-shape GEMM+RS (what host-auto-stream makes): a loop writes the
// partial sums in one chunk of rows per rank, and the reduce-scatter after
// it reads them. Its input becomes a split view made in front of the loop
// (whose chunks become selects of it), its output, an argument, a split
// view of one block there too.
// CHECK-LABEL: func.func @gemm_rs(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: memref<8x8xf32>, [[B:%[a-zA-Z0-9_]+]]: memref<8x6xf32>, [[OUT:%[a-zA-Z0-9_]+]]: memref<4x6xf32>) {
// CHECK: [[P:%[a-zA-Z0-9_]+]] = host.alloc : memref<8x6xf32>
// CHECK: [[AX:%[a-zA-Z0-9_]+]] = memref.expand_shape [[A]] {{\[}}[0, 1], [2]] output_shape [2, 4, 8] : memref<8x8xf32> into memref<2x4x8xf32>
// CHECK-NEXT: [[PX:%[a-zA-Z0-9_]+]] = memref.expand_shape [[P]] {{\[}}[0, 1], [2]] output_shape [2, 4, 6] : memref<8x6xf32> into memref<2x4x6xf32>
// CHECK-NEXT: [[OX:%[a-zA-Z0-9_]+]] = memref.expand_shape [[OUT]] {{\[}}[0, 1], [2]] output_shape [1, 4, 6] : memref<4x6xf32> into memref<1x4x6xf32>
// CHECK-NEXT: host.stream_for
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, {{%[a-zA-Z0-9_]+}}: !host.stream):
// CHECK-NEXT: [[AI:%[a-zA-Z0-9_]+]] = host.select [[AX]][0]{{\[}}[[I]]{{\]}}
// CHECK-NEXT: [[PI:%[a-zA-Z0-9_]+]] = host.select [[PX]][0]{{\[}}[[I]]{{\]}}
// CHECK-NEXT: host.matmul ins([[AI]], [[B]] : {{.*}}) outs([[PI]] : {{.*}})
// CHECK-NEXT: }
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.reduce_scatter [[PX]] into [[OX]] sum team [0, 1] : memref<2x4x6xf32> into memref<1x4x6xf32>
func.func @gemm_rs(%arg0: memref<8x8xf32>, %arg1: memref<8x6xf32>, %arg2: memref<4x6xf32>) {
  %0 = host.get_current_stream : !host.stream
  %1 = host.alloc : memref<8x6xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %0 {
  ^bb0(%i: index, %s: !host.stream):
    %c4 = arith.constant 4 : index
    %2 = arith.muli %i, %c4 : index
    %a = memref.subview %arg0[%2, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    %p = memref.subview %1[%2, 0] [4, 6] [1, 1] : memref<8x6xf32> to memref<4x6xf32, strided<[6, 1], offset: ?>>
    host.matmul ins(%a, %arg1 : memref<4x8xf32, strided<[8, 1], offset: ?>>, memref<8x6xf32>) outs(%p : memref<4x6xf32, strided<[6, 1], offset: ?>>)
  }
  %3 = comm.reduce_scatter %1 into %arg2 sum team [0, 1] : memref<8x6xf32> into memref<4x6xf32>
  comm.wait %3
  return
}

// -----

// GEMM+RS whose output is allocated after the loop: its split view is made
// in front of the reduce-scatter.
// CHECK-LABEL: func.func @gemm_rs_output_after(
// CHECK: host.stream_for
// CHECK: [[O:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x6xf32>
// CHECK-NEXT: [[OX:%[a-zA-Z0-9_]+]] = memref.expand_shape [[O]] {{\[}}[0, 1], [2]] output_shape [1, 4, 6] : memref<4x6xf32> into memref<1x4x6xf32>
// CHECK-NEXT: comm.reduce_scatter %{{.+}} into [[OX]] sum team [0, 1] : memref<2x4x6xf32> into memref<1x4x6xf32>
func.func @gemm_rs_output_after(%arg0: memref<8x8xf32>, %arg1: memref<8x6xf32>, %arg2: memref<4x6xf32>) {
  %0 = host.get_current_stream : !host.stream
  %1 = host.alloc : memref<8x6xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %0 {
  ^bb0(%i: index, %s: !host.stream):
    %c4 = arith.constant 4 : index
    %2 = arith.muli %i, %c4 : index
    %a = memref.subview %arg0[%2, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    %p = memref.subview %1[%2, 0] [4, 6] [1, 1] : memref<8x6xf32> to memref<4x6xf32, strided<[6, 1], offset: ?>>
    host.matmul ins(%a, %arg1 : memref<4x8xf32, strided<[8, 1], offset: ?>>, memref<8x6xf32>) outs(%p : memref<4x6xf32, strided<[6, 1], offset: ?>>)
  }
  %o = host.alloc : memref<4x6xf32>
  %3 = comm.reduce_scatter %1 into %o sum team [0, 1] : memref<8x6xf32> into memref<4x6xf32>
  comm.wait %3
  host.neg ins(%o : memref<4x6xf32>) outs(%arg2 : memref<4x6xf32>)
  return
}

// -----

// Left alone: four chunks for a reduce-scatter of two ranks (a chunk holds
// part of one rank's block).
// CHECK-LABEL: func.func @gemm_rs_other_count(
// CHECK-NOT: memref.expand_shape
// CHECK: comm.reduce_scatter %{{.+}} into %{{.+}} sum team [0, 1] : memref<8x6xf32> into memref<4x6xf32>
func.func @gemm_rs_other_count(%arg0: memref<8x8xf32>, %arg1: memref<8x6xf32>, %arg2: memref<4x6xf32>) {
  %0 = host.get_current_stream : !host.stream
  %1 = host.alloc : memref<8x6xf32>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c4 step %c1 from %0 {
  ^bb0(%i: index, %s: !host.stream):
    %c2 = arith.constant 2 : index
    %2 = arith.muli %i, %c2 : index
    %a = memref.subview %arg0[%2, 0] [2, 8] [1, 1] : memref<8x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
    %p = memref.subview %1[%2, 0] [2, 6] [1, 1] : memref<8x6xf32> to memref<2x6xf32, strided<[6, 1], offset: ?>>
    host.matmul ins(%a, %arg1 : memref<2x8xf32, strided<[8, 1], offset: ?>>, memref<8x6xf32>) outs(%p : memref<2x6xf32, strided<[6, 1], offset: ?>>)
  }
  %3 = comm.reduce_scatter %1 into %arg2 sum team [0, 1] : memref<8x6xf32> into memref<4x6xf32>
  comm.wait %3
  return
}
