// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(host-check-bounds)' -verify-diagnostics | FileCheck %s
// The pass is in the pipeline to LLVM: an index outside its axis fails the
// rank, naming the op, axis, index and extent. Before, the store below (the
// fuzz's mutant of Integration/Inputs/alloc_2gib.mlir) wrote 8 EiB past its
// block: SIGSEGV.
// RUN: not hir-run %S/Inputs/store-out-of-bounds.mlir 2>&1 | FileCheck %s --check-prefix=STORE
// STORE: hir-run: error: the run failed: rank 0: memref.store: index 9223372036854775807 of axis 0 is outside its extent 2147483648
// RUN: not hir-run -n 2 %S/Inputs/load-out-of-bounds.mlir 2>&1 | FileCheck %s --check-prefix=LOAD
// LOAD: hir-run: error: the run failed: rank {{[01]}}: memref.load: index -1 of axis 1 is outside its extent 8
// Inside their bounds, loads and stores run through the checks:
// Integration/memref-alloc.mlir.

// A store into a memref of dynamic size: its extent is read, the index
// compared unsigned (a negative one is outside too), the runtime called
// when it is outside; the function is declared once.
// CHECK-LABEL: module
// CHECK: func.func private @hir_rt_index_out_of_bounds(i64, i64, i64, i64)
// CHECK-NOT: @hir_rt_index_out_of_bounds(i64
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[DIM:.+]] = memref.dim %[[M:.+]], %{{.+}} : memref<?xi8>
// CHECK: %[[OUT:.+]] = arith.cmpi uge, %[[I:.+]], %[[DIM]] : index
// CHECK: %[[KIND:.+]] = arith.constant 1 : i64
// CHECK: %[[AXIS:.+]] = arith.constant 0 : i64
// CHECK: %[[I64:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[N64:.+]] = arith.index_cast %[[DIM]] : index to i64
// CHECK: scf.if %[[OUT]] {
// CHECK-NEXT: func.call @hir_rt_index_out_of_bounds(%[[KIND]], %[[AXIS]], %[[I64]], %[[N64]])
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %{{.+}}, %[[M]][%[[I]]] : memref<?xi8>
func.func @dynamic(%n: index, %i: index) {
  %v = arith.constant 7 : i8
  %m = memref.alloc(%n) : memref<?xi8>
  memref.store %v, %m[%i] : memref<?xi8>
  memref.dealloc %m : memref<?xi8>
  return
}

// A load of a static memref: a constant index inside its axis is not
// checked, a computed one is, against the static extent.
// CHECK-LABEL: func.func @static
// CHECK-NOT: scf.if
// CHECK: %[[EIGHT:.+]] = arith.constant 8 : index
// CHECK: arith.cmpi uge, %{{.+}}, %[[EIGHT]] : index
// CHECK: arith.constant 0 : i64
// CHECK: arith.constant 1 : i64
// CHECK: scf.if
// CHECK-NOT: scf.if
// CHECK: memref.load
func.func @static(%a: memref<4x8xf32>, %j: index) -> f32 {
  %c3 = arith.constant 3 : index
  %x = memref.load %a[%c3, %j] : memref<4x8xf32>
  return %x : f32
}

// -----

// Nothing to check: no declaration.
// CHECK-LABEL: module
// CHECK-NOT: hir_rt_index_out_of_bounds
// CHECK-LABEL: func.func @scalar
func.func @scalar(%v: index) {
  %c0 = arith.constant 0 : index
  %s = memref.alloca() : memref<index>
  memref.store %v, %s[] : memref<index>
  %t = memref.alloca() : memref<2xindex>
  memref.store %v, %t[%c0] : memref<2xindex>
  return
}

// -----

// The runtime's name is not the program's to take.
// expected-error @+1 {{'func.func' op is named @hir_rt_index_out_of_bounds, the runtime's function that host-check-bounds calls: rename it}}
func.func @hir_rt_index_out_of_bounds(%a: i64, %b: i64, %c: i64, %d: i64) {
  return
}
