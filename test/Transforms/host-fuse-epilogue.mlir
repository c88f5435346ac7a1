// RUN: hir-opt %s --split-input-file --host-fuse-epilogue | FileCheck %s
// RUN: hir-opt %s --split-input-file --host-fuse-epilogue | hir-opt --split-input-file --verify-roundtrip | FileCheck %s --check-prefix=VALID
// VALID-NOT: error

// A linear with bias, then gelu of its output, which nothing else uses: the
// linear writes the gelu's output with the activation as its epilogue, and
// the intermediate allocation goes. The allocation of the output, made
// between the two, moves before the linear.
// CHECK-LABEL: func.func @linear_bias
// CHECK-NEXT: %[[Y:.*]] = host.alloc : memref<8x32xbf16>
// CHECK-NEXT: host.linear activation gelu ins(%arg0, %arg1, %arg2 : memref<8x64xbf16>, memref<32x64xbf16>, memref<32xbf16>) outs(%[[Y]] : memref<8x32xbf16>)
// CHECK-NEXT: host.neg ins(%[[Y]] : memref<8x32xbf16>) outs(%arg3 : memref<8x32xbf16>)
// CHECK-NEXT: return
func.func @linear_bias(%x: memref<8x64xbf16>, %w: memref<32x64xbf16>, %b: memref<32xbf16>,
                       %z: memref<8x32xbf16>) {
  %t = host.alloc : memref<8x32xbf16>
  host.linear ins(%x, %w, %b : memref<8x64xbf16>, memref<32x64xbf16>, memref<32xbf16>)
              outs(%t : memref<8x32xbf16>)
  %y = host.alloc : memref<8x32xbf16>
  host.gelu ins(%t : memref<8x32xbf16>) outs(%y : memref<8x32xbf16>)
  host.neg ins(%y : memref<8x32xbf16>) outs(%z : memref<8x32xbf16>)
  return
}

// -----

// Without a bias, and a matmul (batched), each into a function's output;
// a compute op between them that touches neither buffer stays where it is.
// CHECK-LABEL: func.func @linear_and_matmul
// CHECK-NOT: host.alloc
// CHECK-NEXT: host.linear activation gelu ins(%arg0, %arg1 : memref<8x64xf32>, memref<32x64xf32>) outs(%arg2 : memref<8x32xf32>)
// CHECK-NEXT: host.matmul activation gelu ins(%arg3, %arg4 : memref<2x8x16xf32>, memref<16x4xf32>) outs(%arg5 : memref<2x8x4xf32>)
// CHECK-NEXT: host.exp
// CHECK-NOT: host.gelu
// CHECK: return
func.func @linear_and_matmul(%x: memref<8x64xf32>, %w: memref<32x64xf32>, %y: memref<8x32xf32>,
                             %a: memref<2x8x16xf32>, %k: memref<16x4xf32>, %c: memref<2x8x4xf32>,
                             %e: memref<4xf32>) {
  %t = host.alloc : memref<8x32xf32>
  host.linear ins(%x, %w : memref<8x64xf32>, memref<32x64xf32>) outs(%t : memref<8x32xf32>)
  %u = host.alloc : memref<2x8x4xf32>
  host.matmul ins(%a, %k : memref<2x8x16xf32>, memref<16x4xf32>) outs(%u : memref<2x8x4xf32>)
  host.exp ins(%e : memref<4xf32>) outs(%e : memref<4xf32>)
  host.gelu ins(%t : memref<8x32xf32>) outs(%y : memref<8x32xf32>)
  host.gelu ins(%u : memref<2x8x4xf32>) outs(%c : memref<2x8x4xf32>)
  return
}

// -----

// In a stream loop, as convert-fusion-to-host and host-stream-parallelize
// leave it: each op takes its own select of slice i of the intermediate.
// The two selects are one view, so the linear writes slice i of the output
// (its select moves before the linear), and the intermediate and its
// selects go.
// CHECK-LABEL: func.func @in_stream_loop
// CHECK-NOT: host.alloc
// CHECK: host.stream_for
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %{{.*}}: !host.stream):
// CHECK-NEXT: %[[XI:.*]] = host.select %arg0[0][%[[I]]]
// CHECK-NEXT: %[[YI:.*]] = host.select %arg3[0][%[[I]]]
// CHECK-NEXT: host.linear activation gelu ins(%[[XI]], %arg1, %arg2 : memref<8x16xf32, strided<[16, 1], offset: ?>>, memref<16x16xf32>, memref<16xf32>) outs(%[[YI]] : memref<8x16xf32, strided<[16, 1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @in_stream_loop(%x: memref<4x8x16xf32>, %w: memref<16x16xf32>, %b: memref<16xf32>,
                          %y: memref<4x8x16xf32>) {
  %main = host.get_current_stream : !host.stream
  %t = host.alloc : memref<4x8x16xf32>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %xi = host.select %x[0][%i] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    %ti = host.select %t[0][%i] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    host.linear ins(%xi, %w, %b : memref<8x16xf32, strided<[16, 1], offset: ?>>, memref<16x16xf32>, memref<16xf32>)
                outs(%ti : memref<8x16xf32, strided<[16, 1], offset: ?>>)
    %tj = host.select %t[0][%i] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    %yi = host.select %y[0][%i] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    host.gelu ins(%tj : memref<8x16xf32, strided<[16, 1], offset: ?>>)
              outs(%yi : memref<8x16xf32, strided<[16, 1], offset: ?>>)
  }
  return
}

// -----

// A stream<2> loop's chunks, as host-presplit-chunks leaves them: views of
// the intermediate in the pre-split layout (memref.expand_shape), then a
// select of chunk i for each op.
// CHECK-LABEL: func.func @presplit_chunks
// CHECK-NOT: host.alloc
// CHECK: %[[Y:.*]] = memref.expand_shape %arg3
// CHECK: host.stream_for
// CHECK: %[[XI:.*]] = host.select
// CHECK-NEXT: %[[YI:.*]] = host.select %[[Y]][0][%{{.*}}]
// CHECK-NEXT: host.linear activation gelu ins(%[[XI]], %arg1, %arg2 : {{.*}}) outs(%[[YI]] : memref<16x16xf32, strided<[16, 1], offset: ?>>)
// CHECK-NEXT: }
func.func @presplit_chunks(%x: memref<2x16x16xf32>, %w: memref<16x16xf32>, %b: memref<16xf32>,
                           %y: memref<32x16xf32>) {
  %main = host.get_current_stream : !host.stream
  %t = host.alloc : memref<32x16xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %tc = memref.expand_shape %t [[0, 1], [2]] output_shape [2, 16, 16] : memref<32x16xf32> into memref<2x16x16xf32>
  %yc = memref.expand_shape %y [[0, 1], [2]] output_shape [2, 16, 16] : memref<32x16xf32> into memref<2x16x16xf32>
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %xi = host.select %x[0][%i] : memref<2x16x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    %ti = host.select %tc[0][%i] : memref<2x16x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    host.linear ins(%xi, %w, %b : memref<16x16xf32, strided<[16, 1], offset: ?>>, memref<16x16xf32>, memref<16xf32>)
                outs(%ti : memref<16x16xf32, strided<[16, 1], offset: ?>>)
    %tj = host.select %tc[0][%i] : memref<2x16x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    %yi = host.select %yc[0][%i] : memref<2x16x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    host.gelu ins(%tj : memref<16x16xf32, strided<[16, 1], offset: ?>>)
              outs(%yi : memref<16x16xf32, strided<[16, 1], offset: ?>>)
  }
  return
}

// -----

// A ring step's chunk, as host-p2p-pipeline leaves it: each op's subview
// has its offset computed by its own arith ops, and they are one view; the
// output's view and its offset, computed between the two, move before the
// linear. An offset computed otherwise (another constant) is another chunk.
// CHECK-LABEL: func.func @ring_offsets
// CHECK-NOT: host.alloc
// CHECK: %[[YV:.*]] = memref.subview %arg2[%{{.*}}, 0] [8, 16] [1, 1]
// CHECK-NEXT: host.linear activation gelu ins(%arg0, %arg1 : memref<8x16xf32>, memref<16x16xf32>) outs(%[[YV]] : memref<8x16xf32, strided<[16, 1], offset: ?>>)
// CHECK-NOT: activation
// CHECK: host.gelu
// CHECK-NEXT: return
func.func @ring_offsets(%x: memref<8x16xf32>, %w: memref<16x16xf32>, %y: memref<16x16xf32>,
                        %j: index) {
  %t = host.alloc : memref<16x16xf32>
  %c8 = arith.constant 8 : index
  %o1 = arith.muli %j, %c8 : index
  %tw = memref.subview %t[%o1, 0] [8, 16] [1, 1] : memref<16x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
  host.linear ins(%x, %w : memref<8x16xf32>, memref<16x16xf32>) outs(%tw : memref<8x16xf32, strided<[16, 1], offset: ?>>)
  %c8_0 = arith.constant 8 : index
  %o2 = arith.muli %j, %c8_0 : index
  %tr = memref.subview %t[%o2, 0] [8, 16] [1, 1] : memref<16x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
  %c8_1 = arith.constant 8 : index
  %o3 = arith.muli %j, %c8_1 : index
  %yv = memref.subview %y[%o3, 0] [8, 16] [1, 1] : memref<16x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
  host.gelu ins(%tr : memref<8x16xf32, strided<[16, 1], offset: ?>>) outs(%yv : memref<8x16xf32, strided<[16, 1], offset: ?>>)
  %u = host.alloc : memref<16x16xf32>
  %uw = memref.subview %u[%o1, 0] [8, 16] [1, 1] : memref<16x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
  host.linear ins(%x, %w : memref<8x16xf32>, memref<16x16xf32>) outs(%uw : memref<8x16xf32, strided<[16, 1], offset: ?>>)
  %c1 = arith.constant 1 : index
  %o4 = arith.muli %j, %c1 : index
  %ur = memref.subview %u[%o4, 0] [8, 16] [1, 1] : memref<16x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
  host.gelu ins(%ur : memref<8x16xf32, strided<[16, 1], offset: ?>>) outs(%yv : memref<8x16xf32, strided<[16, 1], offset: ?>>)
  return
}

// -----

// Not folded where the intermediate is used by something else: another
// reader, a function's buffer (the caller sees it), an accumulating matmul
// (its output holds an earlier sum).
// CHECK-LABEL: func.func @intermediate_used
// CHECK-NOT: activation
// CHECK-COUNT-3: host.gelu
// CHECK-NOT: activation
// CHECK: return
func.func @intermediate_used(%x: memref<8x64xf32>, %w: memref<32x64xf32>, %y: memref<8x32xf32>,
                             %z: memref<8x32xf32>, %k: memref<64x32xf32>) {
  %t = host.alloc : memref<8x32xf32>
  host.linear ins(%x, %w : memref<8x64xf32>, memref<32x64xf32>) outs(%t : memref<8x32xf32>)
  host.gelu ins(%t : memref<8x32xf32>) outs(%y : memref<8x32xf32>)
  host.neg ins(%t : memref<8x32xf32>) outs(%z : memref<8x32xf32>)
  host.linear ins(%x, %w : memref<8x64xf32>, memref<32x64xf32>) outs(%z : memref<8x32xf32>)
  host.gelu ins(%z : memref<8x32xf32>) outs(%y : memref<8x32xf32>)
  %u = host.alloc : memref<8x32xf32>
  host.matmul ins(%x, %k : memref<8x64xf32>, memref<64x32xf32>) outs(%u : memref<8x32xf32>) {accumulate}
  host.gelu ins(%u : memref<8x32xf32>) outs(%y : memref<8x32xf32>)
  return
}

// -----

// Not folded where writing the output at the GEMM would change what runs:
// a stream switch between them (the write would move to another stream),
// an op between them that reads the output, a GEMM that reads the output's
// buffer, and a gelu of another slice than the GEMM writes.
// CHECK-LABEL: func.func @write_cannot_move
// CHECK-NOT: activation
// CHECK-COUNT-3: host.gelu
// CHECK-NOT: activation
// CHECK: host.stream_for
// CHECK-NOT: activation
// CHECK: host.gelu
// CHECK-NOT: activation
// CHECK: return
func.func @write_cannot_move(%x: memref<8x64xf32>, %w: memref<32x64xf32>, %y: memref<8x32xf32>,
                             %z: memref<8x32xf32>, %s: !host.stream, %v: memref<8x8xf32>,
                             %k: memref<8x8xf32>, %o: memref<4x8x8xf32>) {
  %t = host.alloc : memref<8x32xf32>
  host.linear ins(%x, %w : memref<8x64xf32>, memref<32x64xf32>) outs(%t : memref<8x32xf32>)
  host.set_current_stream %s
  host.gelu ins(%t : memref<8x32xf32>) outs(%y : memref<8x32xf32>)
  %u = host.alloc : memref<8x32xf32>
  host.linear ins(%x, %w : memref<8x64xf32>, memref<32x64xf32>) outs(%u : memref<8x32xf32>)
  host.neg ins(%y : memref<8x32xf32>) outs(%z : memref<8x32xf32>)
  host.gelu ins(%u : memref<8x32xf32>) outs(%y : memref<8x32xf32>)
  %m = host.alloc : memref<8x8xf32>
  host.matmul ins(%v, %k : memref<8x8xf32>, memref<8x8xf32>) outs(%m : memref<8x8xf32>)
  host.gelu ins(%m : memref<8x8xf32>) outs(%v : memref<8x8xf32>)
  %main = host.get_current_stream : !host.stream
  %r = host.alloc : memref<4x8x8xf32>
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c3 step %c1 from %main {
  ^bb0(%i: index, %q: !host.stream):
    %ri = host.select %r[0][%i] : memref<4x8x8xf32> to memref<8x8xf32, strided<[8, 1], offset: ?>>
    host.matmul ins(%v, %k : memref<8x8xf32>, memref<8x8xf32>) outs(%ri : memref<8x8xf32, strided<[8, 1], offset: ?>>)
    %next = arith.addi %i, %c1 : index
    %rn = host.select %r[0][%next] : memref<4x8x8xf32> to memref<8x8xf32, strided<[8, 1], offset: ?>>
    %oi = host.select %o[0][%i] : memref<4x8x8xf32> to memref<8x8xf32, strided<[8, 1], offset: ?>>
    host.gelu ins(%rn : memref<8x8xf32, strided<[8, 1], offset: ?>>) outs(%oi : memref<8x8xf32, strided<[8, 1], offset: ?>>)
  }
  return
}

// -----

// Not folded across blocks: the GEMM in a stream loop writes the whole
// intermediate slice by slice, and the gelu after the loop reads all of it.
// CHECK-LABEL: func.func @across_blocks
// CHECK-NOT: activation
// CHECK: host.gelu
// CHECK: return
func.func @across_blocks(%x: memref<4x8x16xf32>, %w: memref<16x16xf32>, %y: memref<4x8x16xf32>) {
  %main = host.get_current_stream : !host.stream
  %t = host.alloc : memref<4x8x16xf32>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %xi = host.select %x[0][%i] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    %ti = host.select %t[0][%i] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    host.linear ins(%xi, %w : memref<8x16xf32, strided<[16, 1], offset: ?>>, memref<16x16xf32>)
                outs(%ti : memref<8x16xf32, strided<[16, 1], offset: ?>>)
  }
  host.gelu ins(%t : memref<4x8x16xf32>) outs(%y : memref<4x8x16xf32>)
  return
}
