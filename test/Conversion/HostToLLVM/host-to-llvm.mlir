// RUN: hir-opt %s --split-input-file --convert-host-to-llvm | FileCheck %s --implicit-check-not=host.

// Runtime functions that take buffers are declared with the C interface and
// take unranked memrefs; the others take and return i64 handles.
// CHECK-LABEL: module
// CHECK-DAG: func.func private @hir_rt_get_current_stream() -> i64{{$}}
// CHECK-DAG: func.func private @hir_rt_stream_from_pool(i64) -> i64{{$}}
// CHECK-DAG: func.func private @hir_rt_set_current_stream(i64){{$}}
// CHECK-DAG: func.func private @hir_rt_sync_stream(i64){{$}}
// CHECK-DAG: func.func private @hir_rt_alloc(i64, i64) -> !llvm.ptr{{$}}
// CHECK-DAG: func.func private @hir_rt_dealloc(!llvm.ptr){{$}}
// CHECK-DAG: func.func private @hir_rt_neg_f32(memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// The entry point gets the C interface too.
// CHECK: func.func @stream_loop(%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>) attributes {llvm.emit_c_interface}
// CHECK-DAG: %[[SITE:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[BYTES:.*]] = arith.constant 128 : i64
// CHECK: %[[P:.*]] = call @hir_rt_alloc(%[[SITE]], %[[BYTES]]) : (i64, i64) -> !llvm.ptr
// CHECK: %[[D0:.*]] = llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[D1:.*]] = llvm.insertvalue %[[P]], %[[D0]][0]
// CHECK: %[[D2:.*]] = llvm.insertvalue %[[P]], %[[D1]][1]
// CHECK: llvm.insertvalue %{{.*}}[2]
// CHECK: llvm.insertvalue %{{.*}}[3, 0]
// CHECK: llvm.insertvalue %{{.*}}[4, 0]
// CHECK: llvm.insertvalue %{{.*}}[3, 1]
// CHECK: %[[D:.*]] = llvm.insertvalue %{{.*}}[4, 1]
// CHECK: %[[G:.*]] = builtin.unrealized_conversion_cast %[[D]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x8xf32>
// CHECK: %[[MAIN:.*]] = call @hir_rt_get_current_stream() : () -> i64
// CHECK: scf.for %[[I:.*]] =
// CHECK:   %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:   %[[S:.*]] = func.call @hir_rt_stream_from_pool(%[[I64]]) : (i64) -> i64
// CHECK:   func.call @hir_rt_set_current_stream(%[[S]]) : (i64) -> ()
// CHECK:   %[[AI:.*]] = memref.subview %[[A]][%[[I]], 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK:   %[[GI:.*]] = memref.subview %[[G]][%[[I]], 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK:   %[[AU:.*]] = memref.cast %[[AI]] : memref<8xf32, strided<[1], offset: ?>> to memref<*xf32>
// CHECK:   %[[GU:.*]] = memref.cast %[[GI]] : memref<8xf32, strided<[1], offset: ?>> to memref<*xf32>
// CHECK:   func.call @hir_rt_neg_f32(%[[AU]], %[[GU]]) : (memref<*xf32>, memref<*xf32>) -> ()
// CHECK:   func.call @hir_rt_set_current_stream(%[[MAIN]]) : (i64) -> ()
// CHECK:   func.call @hir_rt_sync_stream(%[[S]]) : (i64) -> ()
// CHECK: }
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[G]] : memref<4x8xf32> -> index
// CHECK: %[[PTR64:.*]] = arith.index_cast %[[PTR]] : index to i64
// CHECK: %[[PTRP:.*]] = llvm.inttoptr %[[PTR64]] : i64 to !llvm.ptr
// CHECK: call @hir_rt_dealloc(%[[PTRP]]) : (!llvm.ptr) -> ()
func.func @stream_loop(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = host.alloc : memref<4x8xf32>
  %main = host.get_current_stream : !host.stream
  scf.for %i = %c0 to %c4 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
    host.set_current_stream %main
    host.sync_stream %s
  }
  host.dealloc %g : memref<4x8xf32>
  return
}

// -----

// Allocation sites are numbered in program order across the module; a
// rank-0 buffer has no size or stride arrays.
// CHECK-LABEL: func.func @sites
// CHECK: %[[S0:.*]] = arith.constant 0 : i64
// CHECK: %[[B0:.*]] = arith.constant 4 : i64
// CHECK: call @hir_rt_alloc(%[[S0]], %[[B0]])
// CHECK: llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64)>
// CHECK: %[[S1:.*]] = arith.constant 1 : i64
// CHECK: %[[B1:.*]] = arith.constant 2048 : i64
// CHECK: call @hir_rt_alloc(%[[S1]], %[[B1]])
// CHECK-LABEL: func.func @more_sites
// CHECK: %[[S2:.*]] = arith.constant 2 : i64
// CHECK: call @hir_rt_alloc(%[[S2]],
func.func @sites() {
  %a = host.alloc : memref<f32>
  %b = host.alloc : memref<4x256xf16>
  return
}
func.func @more_sites() {
  %a = host.alloc : memref<8xbf16>
  return
}

// -----

// Compute ops call their dtype-suffixed entry; reduction and broadcast axes
// are private i64 constants shared by every use.
// CHECK-DAG: memref.global "private" constant @__hir_axes_1 : memref<1xi64> = dense<1>
// CHECK-DAG: func.func private @hir_rt_copy_bf16(memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_cast_bf16_f32(memref<*xbf16>, memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_sub_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_sum_f32(memref<*xf32>, memref<*xf32>, memref<*xi64>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_amax_f32(memref<*xf32>, memref<*xf32>, memref<*xi64>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_broadcast_to_f32(memref<*xf32>, memref<*xf32>, memref<*xi64>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_matmul_bf16(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_matmul_acc_bf16(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_linear_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_linear_bias_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_rank() -> i64{{$}}
// CHECK-DAG: func.func private @hir_rt_num_devices() -> i64{{$}}
// CHECK-LABEL: func.func @compute
// CHECK: call @hir_rt_copy_bf16(
// CHECK: call @hir_rt_cast_bf16_f32(
// CHECK: call @hir_rt_sub_f32(
// CHECK: %[[AXES1:.*]] = memref.get_global @__hir_axes_1 : memref<1xi64>
// CHECK: %[[LIST1:.*]] = memref.cast %[[AXES1]] : memref<1xi64> to memref<*xi64>
// CHECK: call @hir_rt_sum_f32(%{{.*}}, %{{.*}}, %[[LIST1]])
// CHECK: memref.get_global @__hir_axes_1 : memref<1xi64>
// CHECK: call @hir_rt_amax_f32(
// CHECK: memref.get_global @__hir_axes_1 : memref<1xi64>
// CHECK: call @hir_rt_broadcast_to_f32(
// CHECK: call @hir_rt_matmul_bf16(
// CHECK: call @hir_rt_matmul_acc_bf16(
// CHECK: call @hir_rt_linear_f32(
// CHECK: call @hir_rt_linear_bias_f32(
// CHECK: %[[R:.*]] = call @hir_rt_rank() : () -> i64
// CHECK: %[[RI:.*]] = arith.index_cast %[[R]] : i64 to index
// CHECK: %[[N:.*]] = call @hir_rt_num_devices() : () -> i64
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK: return %[[RI]], %[[NI]] : index, index
func.func @compute(%a: memref<8x16xbf16>, %b: memref<8x16xbf16>, %f: memref<8x16xf32>,
                   %g: memref<8x16xf32>, %r: memref<8xf32>, %w: memref<32x16xf32>,
                   %bias: memref<32xf32>, %y: memref<8x32xf32>, %k: memref<16x16xbf16>) -> (index, index) {
  host.copy ins(%a : memref<8x16xbf16>) outs(%b : memref<8x16xbf16>)
  host.cast ins(%a : memref<8x16xbf16>) outs(%f : memref<8x16xf32>)
  host.sub ins(%f, %g : memref<8x16xf32>, memref<8x16xf32>) outs(%g : memref<8x16xf32>)
  host.sum [1] ins(%f : memref<8x16xf32>) outs(%r : memref<8xf32>)
  host.amax [1] ins(%f : memref<8x16xf32>) outs(%r : memref<8xf32>)
  host.broadcast [1] ins(%r : memref<8xf32>) outs(%y : memref<8x32xf32>)
  host.matmul ins(%a, %k : memref<8x16xbf16>, memref<16x16xbf16>) outs(%b : memref<8x16xbf16>)
  host.matmul ins(%a, %k : memref<8x16xbf16>, memref<16x16xbf16>) outs(%b : memref<8x16xbf16>) {accumulate}
  host.linear ins(%f, %w : memref<8x16xf32>, memref<32x16xf32>) outs(%y : memref<8x32xf32>)
  host.linear ins(%f, %w, %bias : memref<8x16xf32>, memref<32x16xf32>, memref<32xf32>) outs(%y : memref<8x32xf32>)
  %rank = host.rank : index
  %n = host.num_devices : index
  return %rank, %n : index, index
}

// -----

// A view of a view keeps its strides; a dynamic extent is read off the source.
// CHECK-LABEL: func.func @views
// CHECK: %[[V:.*]] = memref.subview %{{.*}}[%{{.*}}, 0, 0] [1, 4, 8] [1, 1, 1] : memref<2x4x8xf16> to memref<4x8xf16, strided<[8, 1], offset: ?>>
// CHECK: memref.subview %[[V]][0, %{{.*}}] [4, 1] [1, 1] : memref<4x8xf16, strided<[8, 1], offset: ?>> to memref<4xf16, strided<[8], offset: ?>>
// CHECK: %[[DIM:.*]] = memref.dim %[[X:.*]], %{{.*}} : memref<?x8xf32>
// CHECK: memref.subview %[[X]][0, %{{.*}}] [%[[DIM]], 1] [1, 1] : memref<?x8xf32> to memref<?xf32, strided<[8], offset: ?>>
func.func @views(%a: memref<2x4x8xf16>, %x: memref<?x8xf32>, %i: index) {
  %v = host.select %a[0][%i] : memref<2x4x8xf16> to memref<4x8xf16, strided<[8, 1], offset: ?>>
  %w = host.select %v[1][%i] : memref<4x8xf16, strided<[8, 1], offset: ?>> to memref<4xf16, strided<[8], offset: ?>>
  %u = host.select %x[1][%i] : memref<?x8xf32> to memref<?xf32, strided<[8], offset: ?>>
  host.neg ins(%w : memref<4xf16, strided<[8], offset: ?>>) outs(%w : memref<4xf16, strided<[8], offset: ?>>)
  host.neg ins(%u : memref<?xf32, strided<[8], offset: ?>>) outs(%u : memref<?xf32, strided<[8], offset: ?>>)
  return
}

// -----

// Mesh declarations go; private functions are not entry points.
// CHECK-NOT: fusion.mesh
// CHECK-LABEL: func.func private @helper(%{{.*}}: memref<8xf32>) {
// CHECK-LABEL: func.func @entry(%{{.*}}: memref<8xf32>) attributes {llvm.emit_c_interface} {
fusion.mesh @tp = [0, 1]
func.func private @helper(%a: memref<8xf32>) {
  host.neg ins(%a : memref<8xf32>) outs(%a : memref<8xf32>)
  return
}
func.func @entry(%a: memref<8xf32>) {
  func.call @helper(%a) : (memref<8xf32>) -> ()
  return
}

// -----

// Attention calls its entry with the buffers, then the scale as an f64 and
// causal as an i64 (1 or 0); with a mask, the mask entry, the mask after v.
// CHECK-DAG: func.func private @hir_rt_attention_bf16(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, f64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_attention_mask_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, f64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: memref<4x8x16xbf16>, %[[K:.*]]: memref<4x12x16xbf16>, %[[V:.*]]: memref<4x12x8xbf16>, %[[O:.*]]: memref<4x8x8xbf16>, %[[FQ:.*]]: memref<8x16xf32>, %[[FK:.*]]: memref<12x16xf32>, %[[FV:.*]]: memref<12x8xf32>, %[[FM:.*]]: memref<8x12xf32>, %[[FO:.*]]: memref<8x8xf32>)
// CHECK-NEXT: %[[CQ:.*]] = memref.cast %[[Q]] : memref<4x8x16xbf16> to memref<*xbf16>
// CHECK-NEXT: %[[CK:.*]] = memref.cast %[[K]] : memref<4x12x16xbf16> to memref<*xbf16>
// CHECK-NEXT: %[[CV:.*]] = memref.cast %[[V]] : memref<4x12x8xbf16> to memref<*xbf16>
// CHECK-NEXT: %[[CO:.*]] = memref.cast %[[O]] : memref<4x8x8xbf16> to memref<*xbf16>
// CHECK-NEXT: %[[SCALE:.*]] = arith.constant 2.500000e-01 : f64
// CHECK-NEXT: %[[CAUSAL:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @hir_rt_attention_bf16(%[[CQ]], %[[CK]], %[[CV]], %[[CO]], %[[SCALE]], %[[CAUSAL]]) : (memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, f64, i64) -> ()
// CHECK: %[[CM:.*]] = memref.cast %[[FM]] : memref<8x12xf32> to memref<*xf32>
// CHECK-NEXT: %[[CFO:.*]] = memref.cast %[[FO]] : memref<8x8xf32> to memref<*xf32>
// CHECK-NEXT: %[[SCALE2:.*]] = arith.constant 1.250000e-01 : f64
// CHECK-NEXT: %[[PLAIN:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @hir_rt_attention_mask_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[CM]], %[[CFO]], %[[SCALE2]], %[[PLAIN]]) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, f64, i64) -> ()
func.func @attention(%q: memref<4x8x16xbf16>, %k: memref<4x12x16xbf16>, %v: memref<4x12x8xbf16>,
                     %o: memref<4x8x8xbf16>, %fq: memref<8x16xf32>, %fk: memref<12x16xf32>,
                     %fv: memref<12x8xf32>, %fm: memref<8x12xf32>, %fo: memref<8x8xf32>) {
  host.attention scale 0.25 causal
      ins(%q, %k, %v : memref<4x8x16xbf16>, memref<4x12x16xbf16>, memref<4x12x8xbf16>)
      outs(%o : memref<4x8x8xbf16>)
  host.attention scale 0.125
      ins(%fq, %fk, %fv, %fm : memref<8x16xf32>, memref<12x16xf32>, memref<12x8xf32>, memref<8x12xf32>)
      outs(%fo : memref<8x8xf32>)
  return
}

// -----

// A fill in a fused body is a constant instruction of the program, not a
// buffer: words [version 3, no reduced axis, 2 buffers (bf16, bf16), 1
// load (x), 2 instructions: constant (40, bf16, the f64's bits, 0, 0) and
// mul (18, bf16, slots 0 and 1), 1 store (y <- slot 2)].
// CHECK: memref.global "private" constant @[[WORDS:__hir_fused_[0-9_m]*]] : memref<23xi64> = dense<[3, -1, 2, 1, 1, 1, 0, 0, 2, 40, 1, 4605361924766709329, 0, 0, 18, 1, 0, 1, 0, 1, 1, 2, 0]>
// CHECK-DAG: func.func private @hir_rt_fused_2(memref<*xi64>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @fused_constant
// CHECK: memref.get_global @[[WORDS]]
// CHECK: call @hir_rt_fused_2(
func.func @fused_constant(%x: memref<4x8xbf16>, %y: memref<4x8xbf16>) {
  host.fused ins(%x : memref<4x8xbf16>) outs(%y : memref<4x8xbf16>) {
  ^bb0(%xa: memref<4x8xbf16>, %ya: memref<4x8xbf16>, %c: memref<4x8xbf16>):
    host.fill 0.79788456080286541 outs(%c : memref<4x8xbf16>)
    host.mul ins(%xa, %c : memref<4x8xbf16>, memref<4x8xbf16>) outs(%ya : memref<4x8xbf16>)
  }
  return
}
