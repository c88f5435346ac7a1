// The documented pipeline from host IR to the LLVM dialect leaves nothing
// else: runtime entries taking buffers are called through their C interface,
// and the entry point gets one. The descriptors a loop iteration passes live
// for that iteration: its stack is saved before them and restored after.
// RUN: hir-opt %s --pass-pipeline='builtin.module(func.func(host-verify-loops),func.func(host-verify-deallocs),host-check-bounds,func.func(comm-verify-requests),convert-comm-to-llvm,convert-host-to-llvm,func.func(hir-scope-loop-allocas),convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm{use-generic-functions=true},convert-arith-to-llvm,convert-index-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)' \
// RUN:   | FileCheck %s --implicit-check-not=host. --implicit-check-not=comm. --implicit-check-not=memref. \
// RUN:       --implicit-check-not=scf. --implicit-check-not=arith. --implicit-check-not=cf. \
// RUN:       --implicit-check-not=func.func --implicit-check-not=unrealized_conversion_cast --implicit-check-not=affine. \
// RUN:       --implicit-check-not=malloc --implicit-check-not=@free

// CHECK-DAG: llvm.func @hir_rt_alloc(i64, i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
// CHECK-DAG: llvm.func @_mlir_ciface_hir_rt_neg_f32(!llvm.ptr, !llvm.ptr)
// CHECK-DAG: llvm.func @_mlir_ciface_hir_rt_allgather_f32(!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64) -> i64
// CHECK-DAG: llvm.mlir.global private constant @__hir_team_0_1(dense<[0, 1]> : tensor<2xi64>)
// CHECK-LABEL: llvm.func @ag_neg(
// CHECK: llvm.call @hir_rt_alloc(
// CHECK: llvm.call @hir_rt_get_current_stream()
// CHECK: %[[STACK:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK: llvm.call @hir_rt_stream_from_pool(
// CHECK: llvm.alloca
// CHECK: llvm.call @hir_rt_allgather_f32(
// CHECK: llvm.call @hir_rt_wait(
// CHECK: llvm.call @hir_rt_neg_f32(
// CHECK: llvm.call @hir_rt_sync_stream(
// CHECK: llvm.intr.stackrestore %[[STACK]] : !llvm.ptr
// CHECK: llvm.call @hir_rt_dealloc(
// CHECK-LABEL: llvm.func @_mlir_ciface_ag_neg(
// CHECK: llvm.call @ag_neg(
func.func @ag_neg(%a: memref<2x1x8xf32>, %c: memref<2x2x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %g = host.alloc : memref<2x2x8xf32>
  %main = host.get_current_stream : !host.stream
  scf.for %i = %c0 to %c2 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    host.sync_stream %main
    %ai = host.select %a[0][%i] : memref<2x1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    %gi = host.select %g[0][%i] : memref<2x2x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
    %r = comm.allgather %ai into %gi team [0, 1] : memref<1x8xf32, strided<[8, 1], offset: ?>> into memref<2x8xf32, strided<[8, 1], offset: ?>>
    comm.wait %r
    %ci = host.select %c[0][%i] : memref<2x2x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
    host.neg ins(%gi : memref<2x8xf32, strided<[8, 1], offset: ?>>) outs(%ci : memref<2x8xf32, strided<[8, 1], offset: ?>>)
    host.set_current_stream %main
    host.sync_stream %s
  }
  host.dealloc %g : memref<2x2x8xf32>
  return
}

// The program's own heap is the runtime's checked one: no call of
// malloc or free.
// CHECK-LABEL: llvm.func @scratch(
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc(
// CHECK: llvm.store
// CHECK: llvm.call @_mlir_memref_to_llvm_free(
func.func @scratch(%n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %m = memref.alloc(%n) : memref<?xf32>
  memref.store %v, %m[%c0] : memref<?xf32>
  memref.dealloc %m : memref<?xf32>
  return
}
