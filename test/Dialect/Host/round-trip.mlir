// RUN: hir-opt %s | hir-opt | FileCheck %s
// RUN: hir-opt %s --mlir-print-op-generic | hir-opt | FileCheck %s

// Every host op and type survives printing and re-parsing, in the custom and
// in the generic form.

// Allocation, views and deallocation.
// CHECK-LABEL: func.func @buffers
// CHECK-SAME: ([[A:%.*]]: memref<4x1x256x1024xbf16>, [[I:%.*]]: index)
// CHECK-NEXT: [[G:%.*]] = host.alloc : memref<4x4x256x1024xbf16>
// CHECK-NEXT: [[AI:%.*]] = host.select [[A]][0]{{\[}}[[I]]] : memref<4x1x256x1024xbf16> to memref<1x256x1024xbf16, strided<[262144, 1024, 1], offset: ?>>
// CHECK-NEXT: [[C:%.*]] = arith.constant 1 : index
// CHECK-NEXT: [[GI:%.*]] = host.select [[G]][1]{{\[}}[[C]]] : memref<4x4x256x1024xbf16> to memref<4x256x1024xbf16, strided<[1048576, 1024, 1], offset: ?>>
// CHECK-NEXT: [[GIJ:%.*]] = host.select [[GI]][2]{{\[}}[[I]]] : memref<4x256x1024xbf16, strided<[1048576, 1024, 1], offset: ?>> to memref<4x256xbf16, strided<[1048576, 1024], offset: ?>>
// CHECK-NEXT: [[V:%.*]] = host.alloc : memref<8xf32>
// CHECK-NEXT: [[S:%.*]] = host.select [[V]][0]{{\[}}[[I]]] : memref<8xf32> to memref<f32, strided<[], offset: ?>>
// CHECK-NEXT: host.dealloc [[V]] : memref<8xf32>
// CHECK-NEXT: host.dealloc [[G]] : memref<4x4x256x1024xbf16>
func.func @buffers(%a: memref<4x1x256x1024xbf16>, %i: index) {
  %g = host.alloc : memref<4x4x256x1024xbf16>
  %ai = host.select %a[0][%i] : memref<4x1x256x1024xbf16>
      to memref<1x256x1024xbf16, strided<[262144, 1024, 1], offset: ?>>
  %c1 = arith.constant 1 : index
  %gi = host.select %g[1][%c1] : memref<4x4x256x1024xbf16>
      to memref<4x256x1024xbf16, strided<[1048576, 1024, 1], offset: ?>>
  %gij = host.select %gi[2][%i] : memref<4x256x1024xbf16, strided<[1048576, 1024, 1], offset: ?>>
      to memref<4x256xbf16, strided<[1048576, 1024], offset: ?>>
  %v = host.alloc : memref<8xf32>
  %s = host.select %v[0][%i] : memref<8xf32> to memref<f32, strided<[], offset: ?>>
  host.dealloc %v : memref<8xf32>
  host.dealloc %g : memref<4x4x256x1024xbf16>
  return
}

// A constant index on an axis of dynamic extent cannot be checked against the
// extent, and is accepted.
// CHECK-LABEL: func.func @select_dynamic
// CHECK-SAME: ([[A:%.*]]: memref<?x8xf32>)
// CHECK-NEXT: [[C:%.*]] = arith.constant 3 : index
// CHECK-NEXT: host.select [[A]][0]{{\[}}[[C]]] : memref<?x8xf32> to memref<8xf32, strided<[1], offset: ?>>
func.func @select_dynamic(%a: memref<?x8xf32>) {
  %c3 = arith.constant 3 : index
  %0 = host.select %a[0][%c3] : memref<?x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  return
}

// Streams, ranks and the number of devices.
// CHECK-LABEL: func.func @streams
// CHECK-SAME: ([[I:%.*]]: index) -> (index, index)
// CHECK-NEXT: [[MAIN:%.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[S:%.*]] = host.stream_from_pool [[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S]]
// CHECK-NEXT: [[R:%.*]] = host.rank : index
// CHECK-NEXT: [[N:%.*]] = host.num_devices : index
// CHECK-NEXT: return [[R]], [[N]] : index, index
func.func @streams(%i: index) -> (index, index) {
  %main = host.get_current_stream : !host.stream
  %s = host.stream_from_pool %i : !host.stream
  host.set_current_stream %s
  host.sync_stream %main
  host.set_current_stream %main
  host.sync_stream %s
  %r = host.rank : index
  %n = host.num_devices : index
  return %r, %n : index, index
}

// A stream-parallel loop, rotated over two pool streams or over the pool,
// nested, and with its body switching streams and back.
// CHECK-LABEL: func.func @stream_for
// CHECK-SAME: ([[A:%.*]]: memref<4x8xf32>, [[N:%.*]]: index)
// CHECK: [[MAIN:%.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: host.stream_for [[C0:%.*]] to [[C4:%.*]] step [[C1:%.*]] from [[MAIN]] streams [[N]] {
// CHECK-NEXT: ^bb0([[I:%.*]]: index, [[S:%.*]]: !host.stream):
// CHECK-NEXT: [[AI:%.*]] = host.select [[A]][0]{{\[}}[[I]]] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.neg ins([[AI]] : memref<8xf32, strided<[1], offset: ?>>) outs([[AI]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: }
// CHECK-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%.*]]: index, [[S:%.*]]: !host.stream):
// CHECK-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[S]] {
// CHECK-NEXT: ^bb0([[J:%.*]]: index, [[T:%.*]]: !host.stream):
// CHECK-NEXT: host.sync_stream [[S]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @stream_for(%a: memref<4x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c4 step %c1 from %main streams %n {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>)
             outs(%ai : memref<8xf32, strided<[1], offset: ?>>)
    host.set_current_stream %main
    host.set_current_stream %s
  }
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    host.stream_for %c0 to %c4 step %c1 from %s {
    ^bb0(%j: index, %t: !host.stream):
      host.sync_stream %s
      host.yield
    }
  }
  return
}

// A stream handle passed as an argument.
// CHECK-LABEL: func.func @stream_argument
// CHECK-SAME: ([[S:%.*]]: !host.stream)
// CHECK-NEXT: host.sync_stream [[S]]
func.func @stream_argument(%s: !host.stream) {
  host.sync_stream %s
  return
}

// Copy, the unary ops and where; cast between every float type.
// CHECK-LABEL: func.func @unary
// CHECK-SAME: ([[A:%.*]]: memref<8x16xf32>, [[B:%.*]]: memref<8x16xf32>, [[H:%.*]]: memref<8x16xf16>, [[BF:%.*]]: memref<8x16xbf16>)
// CHECK-NEXT: host.copy ins([[A]] : memref<8x16xf32>) outs([[B]] : memref<8x16xf32>)
// CHECK-NEXT: host.neg ins([[A]] : memref<8x16xf32>) outs([[B]] : memref<8x16xf32>)
// CHECK-NEXT: host.exp ins([[A]] : memref<8x16xf32>) outs([[B]] : memref<8x16xf32>)
// CHECK-NEXT: host.tanh ins([[A]] : memref<8x16xf32>) outs([[B]] : memref<8x16xf32>)
// CHECK-NEXT: host.abs ins([[A]] : memref<8x16xf32>) outs([[B]] : memref<8x16xf32>)
// CHECK-NEXT: host.relu ins([[A]] : memref<8x16xf32>) outs([[B]] : memref<8x16xf32>)
// CHECK-NEXT: host.gelu ins([[A]] : memref<8x16xf32>) outs([[B]] : memref<8x16xf32>)
// CHECK-NEXT: host.rsqrt ins([[A]] : memref<8x16xf32>) outs([[B]] : memref<8x16xf32>)
// CHECK-NEXT: host.where ins([[A]], [[B]], [[A]] : memref<8x16xf32>, memref<8x16xf32>, memref<8x16xf32>) outs([[B]] : memref<8x16xf32>)
// CHECK-NEXT: host.cast ins([[A]] : memref<8x16xf32>) outs([[H]] : memref<8x16xf16>)
// CHECK-NEXT: host.cast ins([[H]] : memref<8x16xf16>) outs([[BF]] : memref<8x16xbf16>)
func.func @unary(%a: memref<8x16xf32>, %b: memref<8x16xf32>, %h: memref<8x16xf16>,
                 %bf: memref<8x16xbf16>) {
  host.copy ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>)
  host.neg ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>)
  host.exp ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>)
  host.tanh ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>)
  host.abs ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>)
  host.relu ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>)
  host.gelu ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>)
  host.rsqrt ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>)
  host.where ins(%a, %b, %a : memref<8x16xf32>, memref<8x16xf32>, memref<8x16xf32>)
             outs(%b : memref<8x16xf32>)
  host.cast ins(%a : memref<8x16xf32>) outs(%h : memref<8x16xf16>)
  host.cast ins(%h : memref<8x16xf16>) outs(%bf : memref<8x16xbf16>)
  return
}

// The binary ops, on whole buffers and on strided views.
// CHECK-LABEL: func.func @binary
// CHECK-SAME: ([[A:%.*]]: memref<8xf32>, [[B:%.*]]: memref<8xf32>, [[C:%.*]]: memref<8xf32>, [[V:%.*]]: memref<8xf32, strided<[4], offset: ?>>)
// CHECK-NEXT: host.add ins([[A]], [[B]] : memref<8xf32>, memref<8xf32>) outs([[C]] : memref<8xf32>)
// CHECK-NEXT: host.sub ins([[A]], [[B]] : memref<8xf32>, memref<8xf32>) outs([[C]] : memref<8xf32>)
// CHECK-NEXT: host.mul ins([[A]], [[B]] : memref<8xf32>, memref<8xf32>) outs([[C]] : memref<8xf32>)
// CHECK-NEXT: host.div ins([[A]], [[B]] : memref<8xf32>, memref<8xf32>) outs([[C]] : memref<8xf32>)
// CHECK-NEXT: host.max ins([[A]], [[B]] : memref<8xf32>, memref<8xf32>) outs([[C]] : memref<8xf32>)
// CHECK-NEXT: host.min ins([[A]], [[B]] : memref<8xf32>, memref<8xf32>) outs([[C]] : memref<8xf32>)
// CHECK-NEXT: host.add ins([[V]], [[A]] : memref<8xf32, strided<[4], offset: ?>>, memref<8xf32>) outs([[V]] : memref<8xf32, strided<[4], offset: ?>>)
func.func @binary(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>,
                  %v: memref<8xf32, strided<[4], offset: ?>>) {
  host.add ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
  host.sub ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
  host.mul ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
  host.div ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
  host.max ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
  host.min ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
  host.add ins(%v, %a : memref<8xf32, strided<[4], offset: ?>>, memref<8xf32>)
           outs(%v : memref<8xf32, strided<[4], offset: ?>>)
  return
}

// Reductions over one and several axes, and broadcasts.
// CHECK-LABEL: func.func @reductions_and_broadcast
// CHECK-SAME: ([[A:%.*]]: memref<4x8x16xf32>, [[B:%.*]]: memref<4x16xf32>, [[C:%.*]]: memref<8xf32>, [[D:%.*]]: memref<16xf32>, [[E:%.*]]: memref<8x16xf32>)
// CHECK-NEXT: host.sum [1] ins([[A]] : memref<4x8x16xf32>) outs([[B]] : memref<4x16xf32>)
// CHECK-NEXT: host.amax [0, 2] ins([[A]] : memref<4x8x16xf32>) outs([[C]] : memref<8xf32>)
// CHECK-NEXT: host.broadcast [0] ins([[D]] : memref<16xf32>) outs([[E]] : memref<8x16xf32>)
// CHECK-NEXT: host.broadcast [0, 2] ins([[C]] : memref<8xf32>) outs([[A]] : memref<4x8x16xf32>)
func.func @reductions_and_broadcast(%a: memref<4x8x16xf32>, %b: memref<4x16xf32>, %c: memref<8xf32>,
                                    %d: memref<16xf32>, %e: memref<8x16xf32>) {
  host.sum [1] ins(%a : memref<4x8x16xf32>) outs(%b : memref<4x16xf32>)
  host.amax [0, 2] ins(%a : memref<4x8x16xf32>) outs(%c : memref<8xf32>)
  host.broadcast [0] ins(%d : memref<16xf32>) outs(%e : memref<8x16xf32>)
  host.broadcast [0, 2] ins(%c : memref<8xf32>) outs(%a : memref<4x8x16xf32>)
  return
}

// Transpose (of a strided view too), reshape, fill and iota (from a dynamic
// offset).
// CHECK-LABEL: func.func @layout_and_init
// CHECK-SAME: ([[A:%.*]]: memref<4x8x16xf32>, [[B:%.*]]: memref<16x4x8xf32>, [[C:%.*]]: memref<8x16xbf16>, [[D:%.*]]: memref<16x8xf32>, [[O:%.*]]: index)
// CHECK-NEXT: host.transpose [2, 0, 1] ins([[A]] : memref<4x8x16xf32>) outs([[B]] : memref<16x4x8xf32>)
// CHECK-NEXT: [[V:%.*]] = host.select [[A]][0]{{\[}}[[O]]]
// CHECK-NEXT: host.transpose [1, 0] ins([[V]] : memref<8x16xf32, strided<[16, 1], offset: ?>>) outs([[D]] : memref<16x8xf32>)
// CHECK-NEXT: host.reshape ins([[V]] : memref<8x16xf32, strided<[16, 1], offset: ?>>) outs([[D]] : memref<16x8xf32>)
// CHECK-NEXT: host.fill 0.000000e+00 outs([[C]] : memref<8x16xbf16>)
// CHECK-NEXT: host.iota 1, [[O]] outs([[C]] : memref<8x16xbf16>)
func.func @layout_and_init(%a: memref<4x8x16xf32>, %b: memref<16x4x8xf32>, %c: memref<8x16xbf16>,
                           %d: memref<16x8xf32>, %o: index) {
  host.transpose [2, 0, 1] ins(%a : memref<4x8x16xf32>) outs(%b : memref<16x4x8xf32>)
  %v = host.select %a[0][%o] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
  host.transpose [1, 0] ins(%v : memref<8x16xf32, strided<[16, 1], offset: ?>>)
                 outs(%d : memref<16x8xf32>)
  host.reshape ins(%v : memref<8x16xf32, strided<[16, 1], offset: ?>>) outs(%d : memref<16x8xf32>)
  host.fill 0.0 outs(%c : memref<8x16xbf16>)
  host.iota 1, %o outs(%c : memref<8x16xbf16>)
  return
}

// Matmul (plain, batched and accumulating) and linear with and without bias,
// and accumulating (without).
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: ([[A:%.*]]: memref<256x1024xbf16>, [[B:%.*]]: memref<1024x2048xbf16>, [[C:%.*]]: memref<256x2048xbf16>, [[BA:%.*]]: memref<4x256x1024xbf16>, [[BC:%.*]]: memref<4x256x2048xbf16>, [[X:%.*]]: memref<8x64xf32>, [[W:%.*]]: memref<32x64xf32>, [[BIAS:%.*]]: memref<32xf32>, [[Y:%.*]]: memref<8x32xf32>)
// CHECK-NEXT: host.matmul ins([[A]], [[B]] : memref<256x1024xbf16>, memref<1024x2048xbf16>) outs([[C]] : memref<256x2048xbf16>)
// CHECK-NEXT: host.matmul ins([[BA]], [[B]] : memref<4x256x1024xbf16>, memref<1024x2048xbf16>) outs([[BC]] : memref<4x256x2048xbf16>)
// CHECK-NEXT: host.matmul ins([[A]], [[B]] : memref<256x1024xbf16>, memref<1024x2048xbf16>) outs([[C]] : memref<256x2048xbf16>) {accumulate}
// CHECK-NEXT: host.linear ins([[X]], [[W]], [[BIAS]] : memref<8x64xf32>, memref<32x64xf32>, memref<32xf32>) outs([[Y]] : memref<8x32xf32>)
// CHECK-NEXT: host.linear ins([[X]], [[W]] : memref<8x64xf32>, memref<32x64xf32>) outs([[Y]] : memref<8x32xf32>)
// CHECK-NEXT: host.linear ins([[X]], [[W]] : memref<8x64xf32>, memref<32x64xf32>) outs([[Y]] : memref<8x32xf32>) {accumulate}
func.func @gemm(%a: memref<256x1024xbf16>, %b: memref<1024x2048xbf16>, %c: memref<256x2048xbf16>,
                %ba: memref<4x256x1024xbf16>, %bc: memref<4x256x2048xbf16>,
                %x: memref<8x64xf32>, %w: memref<32x64xf32>, %bias: memref<32xf32>,
                %y: memref<8x32xf32>) {
  host.matmul ins(%a, %b : memref<256x1024xbf16>, memref<1024x2048xbf16>)
              outs(%c : memref<256x2048xbf16>)
  host.matmul ins(%ba, %b : memref<4x256x1024xbf16>, memref<1024x2048xbf16>)
              outs(%bc : memref<4x256x2048xbf16>)
  host.matmul ins(%a, %b : memref<256x1024xbf16>, memref<1024x2048xbf16>)
              outs(%c : memref<256x2048xbf16>) {accumulate}
  host.linear ins(%x, %w, %bias : memref<8x64xf32>, memref<32x64xf32>, memref<32xf32>)
              outs(%y : memref<8x32xf32>)
  host.linear ins(%x, %w : memref<8x64xf32>, memref<32x64xf32>) outs(%y : memref<8x32xf32>)
  host.linear ins(%x, %w : memref<8x64xf32>, memref<32x64xf32>) outs(%y : memref<8x32xf32>) {accumulate}
  return
}

// GEMMs with an activation epilogue: linear with and without bias, matmul.
// CHECK-LABEL: func.func @gemm_epilogue
// CHECK-NEXT: host.linear activation gelu ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<8x64xbf16>, memref<32x64xbf16>, memref<32xbf16>) outs(%{{.*}} : memref<8x32xbf16>)
// CHECK-NEXT: host.linear activation gelu ins(%{{.*}}, %{{.*}} : memref<8x64xbf16>, memref<32x64xbf16>) outs(%{{.*}} : memref<8x32xbf16>)
// CHECK-NEXT: host.matmul activation gelu ins(%{{.*}}, %{{.*}} : memref<8x64xbf16>, memref<64x32xbf16>) outs(%{{.*}} : memref<8x32xbf16>)
func.func @gemm_epilogue(%x: memref<8x64xbf16>, %w: memref<32x64xbf16>, %b: memref<32xbf16>,
                         %k: memref<64x32xbf16>, %y: memref<8x32xbf16>) {
  host.linear activation gelu ins(%x, %w, %b : memref<8x64xbf16>, memref<32x64xbf16>, memref<32xbf16>)
              outs(%y : memref<8x32xbf16>)
  host.linear activation gelu ins(%x, %w : memref<8x64xbf16>, memref<32x64xbf16>)
              outs(%y : memref<8x32xbf16>)
  host.matmul activation gelu ins(%x, %k : memref<8x64xbf16>, memref<64x32xbf16>)
              outs(%y : memref<8x32xbf16>)
  return
}

// Attention: causal over heads, with a mask, and on the strided views of a
// stream loop's iteration (rank-reduced, the mask whole).
// CHECK-LABEL: func.func @attention
// CHECK-SAME: ([[Q:%.*]]: memref<4x8x16xbf16>, [[K:%.*]]: memref<4x12x16xbf16>, [[V:%.*]]: memref<4x12x8xbf16>, [[O:%.*]]: memref<4x8x8xbf16>, [[M:%.*]]: memref<8x12xbf16>, [[I:%.*]]: index)
// CHECK-NEXT: host.attention scale 2.500000e-01 causal ins([[Q]], [[K]], [[V]] : memref<4x8x16xbf16>, memref<4x12x16xbf16>, memref<4x12x8xbf16>) outs([[O]] : memref<4x8x8xbf16>)
// CHECK-NEXT: host.attention scale 1.250000e-01 ins([[Q]], [[K]], [[V]], [[M]] : memref<4x8x16xbf16>, memref<4x12x16xbf16>, memref<4x12x8xbf16>, memref<8x12xbf16>) outs([[O]] : memref<4x8x8xbf16>)
// CHECK: host.attention scale 1.000000e+00 causal ins(%{{.*}}, %{{.*}}, %{{.*}}, [[M]] : memref<8x16xbf16, strided<[16, 1], offset: ?>>, memref<12x16xbf16, strided<[16, 1], offset: ?>>, memref<12x8xbf16, strided<[8, 1], offset: ?>>, memref<8x12xbf16>) outs(%{{.*}} : memref<8x8xbf16, strided<[8, 1], offset: ?>>)
func.func @attention(%q: memref<4x8x16xbf16>, %k: memref<4x12x16xbf16>, %v: memref<4x12x8xbf16>,
                     %o: memref<4x8x8xbf16>, %m: memref<8x12xbf16>, %i: index) {
  host.attention scale 0.25 causal
      ins(%q, %k, %v : memref<4x8x16xbf16>, memref<4x12x16xbf16>, memref<4x12x8xbf16>)
      outs(%o : memref<4x8x8xbf16>)
  host.attention scale 0.125
      ins(%q, %k, %v, %m : memref<4x8x16xbf16>, memref<4x12x16xbf16>, memref<4x12x8xbf16>,
                           memref<8x12xbf16>)
      outs(%o : memref<4x8x8xbf16>)
  %qi = host.select %q[0][%i] : memref<4x8x16xbf16> to memref<8x16xbf16, strided<[16, 1], offset: ?>>
  %ki = host.select %k[0][%i] : memref<4x12x16xbf16> to memref<12x16xbf16, strided<[16, 1], offset: ?>>
  %vi = host.select %v[0][%i] : memref<4x12x8xbf16> to memref<12x8xbf16, strided<[8, 1], offset: ?>>
  %oi = host.select %o[0][%i] : memref<4x8x8xbf16> to memref<8x8xbf16, strided<[8, 1], offset: ?>>
  host.attention scale 1.0 causal
      ins(%qi, %ki, %vi, %m : memref<8x16xbf16, strided<[16, 1], offset: ?>>,
                              memref<12x16xbf16, strided<[16, 1], offset: ?>>,
                              memref<12x8xbf16, strided<[8, 1], offset: ?>>, memref<8x12xbf16>)
      outs(%oi : memref<8x8xbf16, strided<[8, 1], offset: ?>>)
  return
}

// Matmul with broadcast batch axes: a unit axis of the rhs, a unit axis of
// the lhs, and an lhs with fewer batch axes than the rhs.
// CHECK-LABEL: func.func @matmul_broadcast
// CHECK-NEXT: host.matmul ins(%{{.*}}, %{{.*}} : memref<4x2x8x16xf32>, memref<1x1x16x32xf32>) outs(%{{.*}} : memref<4x2x8x32xf32>)
// CHECK-NEXT: host.matmul ins(%{{.*}}, %{{.*}} : memref<1x8x16xf32>, memref<2x16x32xf32>) outs(%{{.*}} : memref<2x8x32xf32>)
// CHECK-NEXT: host.matmul ins(%{{.*}}, %{{.*}} : memref<8x16xf32>, memref<2x16x32xf32>) outs(%{{.*}} : memref<2x8x32xf32>) {accumulate}
func.func @matmul_broadcast(%a: memref<4x2x8x16xf32>, %b: memref<1x1x16x32xf32>,
                            %c: memref<4x2x8x32xf32>, %d: memref<1x8x16xf32>,
                            %e: memref<2x16x32xf32>, %f: memref<2x8x32xf32>,
                            %g: memref<8x16xf32>) {
  host.matmul ins(%a, %b : memref<4x2x8x16xf32>, memref<1x1x16x32xf32>)
              outs(%c : memref<4x2x8x32xf32>)
  host.matmul ins(%d, %e : memref<1x8x16xf32>, memref<2x16x32xf32>)
              outs(%f : memref<2x8x32xf32>)
  host.matmul ins(%g, %e : memref<8x16xf32>, memref<2x16x32xf32>)
              outs(%f : memref<2x8x32xf32>) {accumulate}
  return
}

// The stream-sliced pipeline of the design: select, switch stream, compute,
// synchronize, inside scf.for.
// CHECK-LABEL: func.func @pipeline
// CHECK: [[MAIN:%.*]] = host.get_current_stream : !host.stream
// CHECK: scf.for [[I:%.*]] =
// CHECK-NEXT: [[S:%.*]] = host.stream_from_pool [[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: [[AI:%.*]] = host.select %{{.*}}[0]{{\[}}[[I]]] : memref<4x256x1024xbf16> to memref<256x1024xbf16, strided<[1024, 1], offset: ?>>
// CHECK-NEXT: [[CI:%.*]] = host.select %{{.*}}[0]{{\[}}[[I]]] : memref<4x256x2048xbf16> to memref<256x2048xbf16, strided<[2048, 1], offset: ?>>
// CHECK-NEXT: host.matmul ins([[AI]], %{{.*}} : memref<256x1024xbf16, strided<[1024, 1], offset: ?>>, memref<1024x2048xbf16>) outs([[CI]] : memref<256x2048xbf16, strided<[2048, 1], offset: ?>>)
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S]]
func.func @pipeline(%a: memref<4x256x1024xbf16>, %b: memref<1024x2048xbf16>,
                    %c: memref<4x256x2048xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  scf.for %i = %c0 to %c4 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    host.sync_stream %main
    %ai = host.select %a[0][%i] : memref<4x256x1024xbf16>
        to memref<256x1024xbf16, strided<[1024, 1], offset: ?>>
    %ci = host.select %c[0][%i] : memref<4x256x2048xbf16>
        to memref<256x2048xbf16, strided<[2048, 1], offset: ?>>
    host.matmul ins(%ai, %b : memref<256x1024xbf16, strided<[1024, 1], offset: ?>>,
                              memref<1024x2048xbf16>)
                outs(%ci : memref<256x2048xbf16, strided<[2048, 1], offset: ?>>)
    host.set_current_stream %main
    host.sync_stream %s
  }
  return
}
