// RUN: hir-opt %s --split-input-file --host-fuse-elementwise | FileCheck %s
// RUN: hir-opt %s --split-input-file --host-fuse-elementwise | hir-opt --split-input-file --verify-roundtrip | FileCheck %s --check-prefix=VALID
// VALID-NOT: error

// A chain: the broadcast of an input, the ops, one output; the intermediate
// allocations become temporaries and go, the allocation between the ops
// moves before the fused op.
// CHECK-LABEL: func.func @chain
// CHECK-NOT: host.alloc
// CHECK: host.fused ins(%arg1, %arg0 : memref<8xf32>, memref<4x8xf32>) outs(%arg2 : memref<4x8xbf16>) {
// CHECK-NEXT: ^bb0(%[[B:.*]]: memref<8xf32>, %[[A:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xbf16>, %[[T0:.*]]: memref<4x8xf32>, %[[T1:.*]]: memref<4x8xf32>, %[[T2:.*]]: memref<4x8xf32>):
// CHECK-NEXT: host.broadcast [0] ins(%[[B]] : memref<8xf32>) outs(%[[T0]] : memref<4x8xf32>)
// CHECK-NEXT: host.add ins(%[[A]], %[[T0]] : {{.*}}) outs(%[[T1]] : memref<4x8xf32>)
// CHECK-NEXT: host.gelu ins(%[[T1]] : memref<4x8xf32>) outs(%[[T2]] : memref<4x8xf32>)
// CHECK-NEXT: host.cast ins(%[[T2]] : memref<4x8xf32>) outs(%[[Y]] : memref<4x8xbf16>)
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @chain(%a: memref<4x8xf32>, %b: memref<8xf32>, %y: memref<4x8xbf16>) {
  %0 = host.alloc : memref<4x8xf32>
  host.broadcast [0] ins(%b : memref<8xf32>) outs(%0 : memref<4x8xf32>)
  %1 = host.alloc : memref<4x8xf32>
  host.add ins(%a, %0 : memref<4x8xf32>, memref<4x8xf32>) outs(%1 : memref<4x8xf32>)
  %2 = host.alloc : memref<4x8xf32>
  host.gelu ins(%1 : memref<4x8xf32>) outs(%2 : memref<4x8xf32>)
  host.cast ins(%2 : memref<4x8xf32>) outs(%y : memref<4x8xbf16>)
  return
}

// -----

// An intermediate used after the chain is an output; a stream switch ends
// the chain, and a chain of one op stays.
// CHECK-LABEL: func.func @outputs_and_ends
// CHECK: %[[T:.*]] = host.alloc : memref<8xf32>
// CHECK-NEXT: host.fused ins(%arg0 : memref<8xf32>) outs(%[[T]], %arg1 : memref<8xf32>, memref<8xf32>) {
// CHECK: host.set_current_stream
// CHECK-NEXT: host.neg ins(%[[T]] : memref<8xf32>) outs(%arg1 : memref<8xf32>)
// CHECK-NEXT: return
func.func @outputs_and_ends(%a: memref<8xf32>, %y: memref<8xf32>, %s: !host.stream) {
  %t = host.alloc : memref<8xf32>
  host.exp ins(%a : memref<8xf32>) outs(%t : memref<8xf32>)
  host.tanh ins(%t : memref<8xf32>) outs(%y : memref<8xf32>)
  host.set_current_stream %s
  host.neg ins(%t : memref<8xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

// Not fused where fusing could change what the ops compute: an op writing
// a buffer the chain reads through another view, and a broadcast of a value
// the chain computes (its elements come from other positions).
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: host.fused
// CHECK: return
func.func @not_fused(%a: memref<4x8xf32>, %r: memref<8xf32>, %y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %row = host.select %a[0][%c0] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  host.neg ins(%row : memref<8xf32, strided<[1], offset: ?>>) outs(%r : memref<8xf32>)
  host.exp ins(%r : memref<8xf32>) outs(%row : memref<8xf32, strided<[1], offset: ?>>)
  host.broadcast [0] ins(%r : memref<8xf32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

// In a stream loop: the views between the ops move before the fused op,
// and the slice of an allocation only the chain uses is a temporary.
// CHECK-LABEL: func.func @in_stream_loop
// CHECK-NOT: host.alloc
// CHECK: host.stream_for
// CHECK: %[[AI:.*]] = host.select %arg0
// CHECK-NEXT: %[[YI:.*]] = host.select %arg1
// CHECK-NEXT: host.fused ins(%[[AI]] : memref<8xf32, strided<[1], offset: ?>>) outs(%[[YI]] : memref<8xf32, strided<[1], offset: ?>>) {
// CHECK: host.relu
// CHECK-NEXT: host.abs
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @in_stream_loop(%a: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = host.alloc : memref<4x8xf32>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %ti = host.select %t[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.relu ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%ti : memref<8xf32, strided<[1], offset: ?>>)
    %yi = host.select %y[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.abs ins(%ti : memref<8xf32, strided<[1], offset: ?>>) outs(%yi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// A chain of more buffers than the runtime's entries take (8) is cut: its
// longest head that fits is fused, the op left over stays.
// CHECK-LABEL: func.func @cut
// CHECK: %[[T:.*]] = host.alloc : memref<8xf32>
// CHECK-NEXT: host.fused ins(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6 : {{.*}}) outs(%[[T]] : memref<8xf32>)
// CHECK-COUNT-6: host.add
// CHECK-NEXT: }
// CHECK-NEXT: host.add ins(%[[T]], %arg7 : memref<8xf32>, memref<8xf32>) outs(%arg8 : memref<8xf32>)
func.func @cut(%a0: memref<8xf32>, %a1: memref<8xf32>, %a2: memref<8xf32>, %a3: memref<8xf32>,
               %a4: memref<8xf32>, %a5: memref<8xf32>, %a6: memref<8xf32>, %a7: memref<8xf32>,
               %y: memref<8xf32>) {
  %t0 = host.alloc : memref<8xf32>
  host.add ins(%a0, %a1 : memref<8xf32>, memref<8xf32>) outs(%t0 : memref<8xf32>)
  %t1 = host.alloc : memref<8xf32>
  host.add ins(%t0, %a2 : memref<8xf32>, memref<8xf32>) outs(%t1 : memref<8xf32>)
  %t2 = host.alloc : memref<8xf32>
  host.add ins(%t1, %a3 : memref<8xf32>, memref<8xf32>) outs(%t2 : memref<8xf32>)
  %t3 = host.alloc : memref<8xf32>
  host.add ins(%t2, %a4 : memref<8xf32>, memref<8xf32>) outs(%t3 : memref<8xf32>)
  %t4 = host.alloc : memref<8xf32>
  host.add ins(%t3, %a5 : memref<8xf32>, memref<8xf32>) outs(%t4 : memref<8xf32>)
  %t5 = host.alloc : memref<8xf32>
  host.add ins(%t4, %a6 : memref<8xf32>, memref<8xf32>) outs(%t5 : memref<8xf32>)
  host.add ins(%t5, %a7 : memref<8xf32>, memref<8xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

// A LayerNorm (f32 inside casts, as torch computes it) is one kernel: the
// reductions of the last axis, the ops on rows (the mean, the variance,
// rsqrt), the broadcasts of rows along the last axis and of the weights;
// the row buffers become temporaries of the row shape.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NOT: host.alloc
// CHECK: host.fused ins(%arg0, %arg1, %arg2, %arg3 : memref<4x8xbf16>, memref<4xf32>, memref<4xf32>, memref<8xbf16>) outs(%arg4 : memref<4x8xbf16>) {
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: host.cast
// CHECK-NEXT: host.sum [1] ins(%{{.*}} : memref<4x8xf32>) outs(%[[S:.*]] : memref<4xf32>)
// CHECK-NEXT: host.mul ins(%[[S]], %{{.*}} : memref<4xf32>, memref<4xf32>) outs(%[[M:.*]] : memref<4xf32>)
// CHECK-NEXT: host.broadcast [1] ins(%[[M]] : memref<4xf32>) outs(%{{.*}} : memref<4x8xf32>)
// CHECK-NEXT: host.sub
// CHECK-NEXT: host.mul
// CHECK-NEXT: host.sum [1]
// CHECK-NEXT: host.mul
// CHECK-NEXT: host.add
// CHECK-NEXT: host.rsqrt {{.*}} memref<4xf32>
// CHECK-NEXT: host.broadcast [1]
// CHECK-NEXT: host.mul
// CHECK-NEXT: host.broadcast [0]
// CHECK-NEXT: host.cast
// CHECK-NEXT: host.mul
// CHECK-NEXT: host.cast {{.*}} outs(%{{.*}} : memref<4x8xbf16>)
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @layer_norm(%x16: memref<4x8xbf16>, %inv: memref<4xf32>, %eps: memref<4xf32>, %g16: memref<8xbf16>, %y: memref<4x8xbf16>) {
  %x = host.alloc : memref<4x8xf32>
  host.cast ins(%x16 : memref<4x8xbf16>) outs(%x : memref<4x8xf32>)
  %s = host.alloc : memref<4xf32>
  host.sum [1] ins(%x : memref<4x8xf32>) outs(%s : memref<4xf32>)
  %m = host.alloc : memref<4xf32>
  host.mul ins(%s, %inv : memref<4xf32>, memref<4xf32>) outs(%m : memref<4xf32>)
  %mb = host.alloc : memref<4x8xf32>
  host.broadcast [1] ins(%m : memref<4xf32>) outs(%mb : memref<4x8xf32>)
  %c = host.alloc : memref<4x8xf32>
  host.sub ins(%x, %mb : memref<4x8xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>)
  %q = host.alloc : memref<4x8xf32>
  host.mul ins(%c, %c : memref<4x8xf32>, memref<4x8xf32>) outs(%q : memref<4x8xf32>)
  %v = host.alloc : memref<4xf32>
  host.sum [1] ins(%q : memref<4x8xf32>) outs(%v : memref<4xf32>)
  %v2 = host.alloc : memref<4xf32>
  host.mul ins(%v, %inv : memref<4xf32>, memref<4xf32>) outs(%v2 : memref<4xf32>)
  %v3 = host.alloc : memref<4xf32>
  host.add ins(%v2, %eps : memref<4xf32>, memref<4xf32>) outs(%v3 : memref<4xf32>)
  %r = host.alloc : memref<4xf32>
  host.rsqrt ins(%v3 : memref<4xf32>) outs(%r : memref<4xf32>)
  %rb = host.alloc : memref<4x8xf32>
  host.broadcast [1] ins(%r : memref<4xf32>) outs(%rb : memref<4x8xf32>)
  %n = host.alloc : memref<4x8xf32>
  host.mul ins(%c, %rb : memref<4x8xf32>, memref<4x8xf32>) outs(%n : memref<4x8xf32>)
  %gb16 = host.alloc : memref<4x8xbf16>
  host.broadcast [0] ins(%g16 : memref<8xbf16>) outs(%gb16 : memref<4x8xbf16>)
  %gb = host.alloc : memref<4x8xf32>
  host.cast ins(%gb16 : memref<4x8xbf16>) outs(%gb : memref<4x8xf32>)
  %o = host.alloc : memref<4x8xf32>
  host.mul ins(%n, %gb : memref<4x8xf32>, memref<4x8xf32>) outs(%o : memref<4x8xf32>)
  host.cast ins(%o : memref<4x8xf32>) outs(%y : memref<4x8xbf16>)
  return
}

// -----

// A row statistic used after the chain is a row output (softmax's maxima).
// CHECK-LABEL: func.func @softmax_with_maxima
// CHECK: host.fused ins(%arg0 : memref<2x3x16xf32>) outs(%arg2, %arg1 : memref<2x3xf32>, memref<2x3x16xf32>) {
// CHECK: host.amax [2]
// CHECK: host.sum [2]
// CHECK: host.div
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @softmax_with_maxima(%x: memref<2x3x16xf32>, %y: memref<2x3x16xf32>, %max: memref<2x3xf32>) {
  host.amax [2] ins(%x : memref<2x3x16xf32>) outs(%max : memref<2x3xf32>)
  %mb = host.alloc : memref<2x3x16xf32>
  host.broadcast [2] ins(%max : memref<2x3xf32>) outs(%mb : memref<2x3x16xf32>)
  %c = host.alloc : memref<2x3x16xf32>
  host.sub ins(%x, %mb : memref<2x3x16xf32>, memref<2x3x16xf32>) outs(%c : memref<2x3x16xf32>)
  %e = host.alloc : memref<2x3x16xf32>
  host.exp ins(%c : memref<2x3x16xf32>) outs(%e : memref<2x3x16xf32>)
  %s = host.alloc : memref<2x3xf32>
  host.sum [2] ins(%e : memref<2x3x16xf32>) outs(%s : memref<2x3xf32>)
  %sb = host.alloc : memref<2x3x16xf32>
  host.broadcast [2] ins(%s : memref<2x3xf32>) outs(%sb : memref<2x3x16xf32>)
  host.div ins(%e, %sb : memref<2x3x16xf32>, memref<2x3x16xf32>) outs(%y : memref<2x3x16xf32>)
  return
}

// -----

// Reductions stay unfused where a kernel over rows cannot hold them: of an
// axis other than the last (with its broadcast back); a chain whose outputs
// are all rows (a sum and its scaling, used after it); a row broadcast
// along an axis other than the last.
// CHECK-LABEL: func.func @reductions_not_fused
// CHECK: host.sum [0]
// CHECK-NEXT: host.fused ins(%0, %arg0 : memref<8xf32>, memref<4x8xf32>) outs(%arg2 : memref<4x8xf32>)
// CHECK-NOT: host.sum
// CHECK: host.set_current_stream
// CHECK-NEXT: host.alloc
// CHECK-NEXT: host.sum [1]
// CHECK-NEXT: host.mul
// CHECK-NEXT: host.set_current_stream
// CHECK-NEXT: host.alloc
// CHECK-NEXT: host.exp
// CHECK-NEXT: host.broadcast [0]
// CHECK-NEXT: return
func.func @reductions_not_fused(%x: memref<4x8xf32>, %w: memref<4xf32>, %y: memref<4x8xf32>,
                                %rows: memref<4xf32>, %z: memref<8x4xf32>, %s: !host.stream) {
  %s0 = host.alloc : memref<8xf32>
  host.sum [0] ins(%x : memref<4x8xf32>) outs(%s0 : memref<8xf32>)
  %b0 = host.alloc : memref<4x8xf32>
  host.broadcast [0] ins(%s0 : memref<8xf32>) outs(%b0 : memref<4x8xf32>)
  host.sub ins(%x, %b0 : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>)
  host.set_current_stream %s
  %s1 = host.alloc : memref<4xf32>
  host.sum [1] ins(%x : memref<4x8xf32>) outs(%s1 : memref<4xf32>)
  host.mul ins(%s1, %w : memref<4xf32>, memref<4xf32>) outs(%rows : memref<4xf32>)
  host.set_current_stream %s
  %t = host.alloc : memref<4xf32>
  host.exp ins(%w : memref<4xf32>) outs(%t : memref<4xf32>)
  host.broadcast [0] ins(%t : memref<4xf32>) outs(%z : memref<8x4xf32>)
  return
}

// -----

// The backward of a tanh gelu as fusion-differentiate writes it: its five
// constants are fills of allocations only the chain reads, so they join it
// as constants of the kernel (host.fill in the body, on temporaries) and
// their allocations go: the fused op takes only x, dy and dx.
// CHECK-LABEL: func.func @gelu_backward_constants
// CHECK-NOT: host.alloc
// CHECK-NOT: host.fill
// CHECK: host.fused ins(%arg0, %arg1 : memref<4x8xbf16>, memref<4x8xbf16>) outs(%arg2 : memref<4x8xbf16>) {
// CHECK-NEXT: ^bb0(%[[X:[^:]*]]: memref<4x8xbf16>, %{{[^:]*}}: memref<4x8xbf16>, %{{[^:]*}}: memref<4x8xbf16>, %[[HALF:[^:]*]]: memref<4x8xbf16>, %[[ONE:[^:]*]]: memref<4x8xbf16>, %[[K:[^:]*]]: memref<4x8xbf16>, %[[A:[^:]*]]: memref<4x8xbf16>, %[[B:[^:]*]]: memref<4x8xbf16>,
// CHECK-NEXT: host.fill 5.000000e-01 outs(%[[HALF]] : memref<4x8xbf16>)
// CHECK-NEXT: host.fill 1.000000e+00 outs(%[[ONE]] : memref<4x8xbf16>)
// CHECK-NEXT: host.fill 0.79788456080286541 outs(%[[K]] : memref<4x8xbf16>)
// CHECK-NEXT: host.fill 4.471500e-02 outs(%[[A]] : memref<4x8xbf16>)
// CHECK-NEXT: host.fill 1.341450e-01 outs(%[[B]] : memref<4x8xbf16>)
// CHECK-NEXT: host.mul ins(%[[X]], %[[X]] :
// CHECK-COUNT-17: host.{{mul|add|sub|tanh}}
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @gelu_backward_constants(%x: memref<4x8xbf16>, %dy: memref<4x8xbf16>, %dx: memref<4x8xbf16>) {
  %half = host.alloc : memref<4x8xbf16>
  host.fill 5.000000e-01 outs(%half : memref<4x8xbf16>)
  %one = host.alloc : memref<4x8xbf16>
  host.fill 1.000000e+00 outs(%one : memref<4x8xbf16>)
  %k = host.alloc : memref<4x8xbf16>
  host.fill 0.79788456080286541 outs(%k : memref<4x8xbf16>)
  %a = host.alloc : memref<4x8xbf16>
  host.fill 4.471500e-02 outs(%a : memref<4x8xbf16>)
  %b = host.alloc : memref<4x8xbf16>
  host.fill 1.341450e-01 outs(%b : memref<4x8xbf16>)
  %x2 = host.alloc : memref<4x8xbf16>
  host.mul ins(%x, %x : memref<4x8xbf16>, memref<4x8xbf16>) outs(%x2 : memref<4x8xbf16>)
  %x3 = host.alloc : memref<4x8xbf16>
  host.mul ins(%x2, %x : memref<4x8xbf16>, memref<4x8xbf16>) outs(%x3 : memref<4x8xbf16>)
  %ax3 = host.alloc : memref<4x8xbf16>
  host.mul ins(%a, %x3 : memref<4x8xbf16>, memref<4x8xbf16>) outs(%ax3 : memref<4x8xbf16>)
  %in = host.alloc : memref<4x8xbf16>
  host.add ins(%ax3, %x : memref<4x8xbf16>, memref<4x8xbf16>) outs(%in : memref<4x8xbf16>)
  %u = host.alloc : memref<4x8xbf16>
  host.mul ins(%k, %in : memref<4x8xbf16>, memref<4x8xbf16>) outs(%u : memref<4x8xbf16>)
  %t = host.alloc : memref<4x8xbf16>
  host.tanh ins(%u : memref<4x8xbf16>) outs(%t : memref<4x8xbf16>)
  %onet = host.alloc : memref<4x8xbf16>
  host.add ins(%one, %t : memref<4x8xbf16>, memref<4x8xbf16>) outs(%onet : memref<4x8xbf16>)
  %left = host.alloc : memref<4x8xbf16>
  host.mul ins(%half, %onet : memref<4x8xbf16>, memref<4x8xbf16>) outs(%left : memref<4x8xbf16>)
  %t2 = host.alloc : memref<4x8xbf16>
  host.mul ins(%t, %t : memref<4x8xbf16>, memref<4x8xbf16>) outs(%t2 : memref<4x8xbf16>)
  %sech = host.alloc : memref<4x8xbf16>
  host.sub ins(%one, %t2 : memref<4x8xbf16>, memref<4x8xbf16>) outs(%sech : memref<4x8xbf16>)
  %bx2 = host.alloc : memref<4x8xbf16>
  host.mul ins(%b, %x2 : memref<4x8xbf16>, memref<4x8xbf16>) outs(%bx2 : memref<4x8xbf16>)
  %dp = host.alloc : memref<4x8xbf16>
  host.add ins(%one, %bx2 : memref<4x8xbf16>, memref<4x8xbf16>) outs(%dp : memref<4x8xbf16>)
  %du = host.alloc : memref<4x8xbf16>
  host.mul ins(%k, %dp : memref<4x8xbf16>, memref<4x8xbf16>) outs(%du : memref<4x8xbf16>)
  %hx = host.alloc : memref<4x8xbf16>
  host.mul ins(%half, %x : memref<4x8xbf16>, memref<4x8xbf16>) outs(%hx : memref<4x8xbf16>)
  %r1 = host.alloc : memref<4x8xbf16>
  host.mul ins(%hx, %sech : memref<4x8xbf16>, memref<4x8xbf16>) outs(%r1 : memref<4x8xbf16>)
  %r2 = host.alloc : memref<4x8xbf16>
  host.mul ins(%r1, %du : memref<4x8xbf16>, memref<4x8xbf16>) outs(%r2 : memref<4x8xbf16>)
  %g = host.alloc : memref<4x8xbf16>
  host.add ins(%left, %r2 : memref<4x8xbf16>, memref<4x8xbf16>) outs(%g : memref<4x8xbf16>)
  host.mul ins(%dy, %g : memref<4x8xbf16>, memref<4x8xbf16>) outs(%dx : memref<4x8xbf16>)
  return
}

// -----

// Constants count against no buffer limit: six inputs, three fills and one
// output are one kernel of seven buffers (with the fills as buffers, ten,
// it was cut).
// CHECK-LABEL: func.func @constants_take_no_buffer
// CHECK-NOT: host.alloc
// CHECK: host.fused ins(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5 : {{.*}}) outs(%arg6 : memref<8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: host.fill 2.000000e+00
// CHECK-COUNT-10: host.{{add|mul|fill}}
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @constants_take_no_buffer(%a0: memref<8xf32>, %a1: memref<8xf32>, %a2: memref<8xf32>,
                                    %a3: memref<8xf32>, %a4: memref<8xf32>, %a5: memref<8xf32>,
                                    %y: memref<8xf32>) {
  %c0 = host.alloc : memref<8xf32>
  host.fill 2.0 outs(%c0 : memref<8xf32>)
  %t0 = host.alloc : memref<8xf32>
  host.add ins(%a0, %a1 : memref<8xf32>, memref<8xf32>) outs(%t0 : memref<8xf32>)
  %t1 = host.alloc : memref<8xf32>
  host.mul ins(%t0, %c0 : memref<8xf32>, memref<8xf32>) outs(%t1 : memref<8xf32>)
  %c1 = host.alloc : memref<8xf32>
  host.fill 3.0 outs(%c1 : memref<8xf32>)
  %t2 = host.alloc : memref<8xf32>
  host.add ins(%t1, %a2 : memref<8xf32>, memref<8xf32>) outs(%t2 : memref<8xf32>)
  %t3 = host.alloc : memref<8xf32>
  host.mul ins(%t2, %c1 : memref<8xf32>, memref<8xf32>) outs(%t3 : memref<8xf32>)
  %c2 = host.alloc : memref<8xf32>
  host.fill -1.0 outs(%c2 : memref<8xf32>)
  %t4 = host.alloc : memref<8xf32>
  host.add ins(%t3, %a3 : memref<8xf32>, memref<8xf32>) outs(%t4 : memref<8xf32>)
  %t5 = host.alloc : memref<8xf32>
  host.mul ins(%t4, %c2 : memref<8xf32>, memref<8xf32>) outs(%t5 : memref<8xf32>)
  %t6 = host.alloc : memref<8xf32>
  host.add ins(%t5, %a4 : memref<8xf32>, memref<8xf32>) outs(%t6 : memref<8xf32>)
  host.add ins(%t6, %a5 : memref<8xf32>, memref<8xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

// A fill whose buffer is read after the chain, or is an argument, stays a
// kernel: the one among the chain's ops moves before the fused op, which
// reads its buffer as an input; the argument's fill ends no chain that
// follows it.
// CHECK-LABEL: func.func @fills_that_stay
// CHECK: %[[C:.*]] = host.alloc : memref<8xf32>
// CHECK-NEXT: host.fill 2.000000e+00 outs(%[[C]] : memref<8xf32>)
// CHECK-NEXT: host.fused ins(%arg0, %[[C]] : memref<8xf32>, memref<8xf32>) outs(%arg1 : memref<8xf32>) {
// CHECK-NOT: host.fill
// CHECK: host.exp
// CHECK-NEXT: host.mul
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream
// CHECK-NEXT: host.fill 1.000000e+00 outs(%arg2 : memref<8xf32>)
// CHECK-NEXT: host.fused ins(%arg2, %[[C]] : memref<8xf32>, memref<8xf32>) outs(%arg3 : memref<8xf32>) {
// CHECK-NOT: host.fill
// CHECK: host.add
// CHECK-NEXT: host.neg
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @fills_that_stay(%a: memref<8xf32>, %y: memref<8xf32>, %w: memref<8xf32>, %z: memref<8xf32>, %s: !host.stream) {
  %t = host.alloc : memref<8xf32>
  host.exp ins(%a : memref<8xf32>) outs(%t : memref<8xf32>)
  %c = host.alloc : memref<8xf32>
  host.fill 2.0 outs(%c : memref<8xf32>)
  host.mul ins(%t, %c : memref<8xf32>, memref<8xf32>) outs(%y : memref<8xf32>)
  host.set_current_stream %s
  host.fill 1.0 outs(%w : memref<8xf32>)
  %u = host.alloc : memref<8xf32>
  host.add ins(%w, %c : memref<8xf32>, memref<8xf32>) outs(%u : memref<8xf32>)
  host.neg ins(%u : memref<8xf32>) outs(%z : memref<8xf32>)
  return
}

// -----

// A fill of a row (the iteration shape without its last axis) is a
// constant of a row program, broadcast along the row as the row values
// are: the mean as a sum times 1/8.
// CHECK-LABEL: func.func @row_constant
// CHECK-NOT: host.alloc
// CHECK: host.fused ins(%arg0 : memref<4x8xf32>) outs(%arg1 : memref<4x8xf32>) {
// CHECK-NEXT: ^bb0(%{{[^:]*}}: memref<4x8xf32>, %{{[^:]*}}: memref<4x8xf32>, %[[INV:[^:]*]]: memref<4xf32>,
// CHECK-NEXT: host.fill 1.250000e-01 outs(%[[INV]] : memref<4xf32>)
// CHECK-NEXT: host.sum [1]
// CHECK-NEXT: host.mul
// CHECK-NEXT: host.broadcast [1]
// CHECK-NEXT: host.sub
// CHECK-NEXT: }
func.func @row_constant(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %inv = host.alloc : memref<4xf32>
  host.fill 0.125 outs(%inv : memref<4xf32>)
  %s = host.alloc : memref<4xf32>
  host.sum [1] ins(%x : memref<4x8xf32>) outs(%s : memref<4xf32>)
  %m = host.alloc : memref<4xf32>
  host.mul ins(%s, %inv : memref<4xf32>, memref<4xf32>) outs(%m : memref<4xf32>)
  %mb = host.alloc : memref<4x8xf32>
  host.broadcast [1] ins(%m : memref<4xf32>) outs(%mb : memref<4x8xf32>)
  host.sub ins(%x, %mb : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>)
  return
}
