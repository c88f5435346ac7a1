// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hir-scope-loop-allocas))' | FileCheck %s
// Idempotent: a second run changes nothing.
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hir-scope-loop-allocas,hir-scope-loop-allocas))' | FileCheck %s

func.func private @hir_rt_neg_f32(memref<*xf32>, memref<*xf32>)

// The body's stack is saved before the casts a runtime call takes and
// restored before the terminator.
// CHECK-LABEL: func.func @call_in_loop
// CHECK: scf.for
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT: memref.cast
// CHECK-NEXT: func.call @hir_rt_neg_f32
// CHECK-NEXT: llvm.intr.stackrestore %[[SP]] : !llvm.ptr
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @call_in_loop(%a: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %0 = memref.cast %a : memref<4xf32> to memref<*xf32>
    func.call @hir_rt_neg_f32(%0, %0) : (memref<*xf32>, memref<*xf32>) -> ()
  }
  return
}

// -----

// A body that yields values keeps its terminator: the restore comes before it.
// CHECK-LABEL: func.func @yields
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (index)
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave
// CHECK-NEXT: memref.alloca
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[ACC]]
// CHECK-NEXT: llvm.intr.stackrestore %[[SP]]
// CHECK-NEXT: scf.yield %[[NEXT]] : index
func.func @yields(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
    %tmp = memref.alloca() : memref<16xf32>
    %next = arith.addi %acc, %c1 : index
    scf.yield %next : index
  }
  return %r : index
}

// -----

func.func private @hir_rt_neg_f32(memref<*xf32>, memref<*xf32>)

// A cast under an scf.if in the body counts; an inner loop is bracketed on its
// own and does not make the loop around it bracketed.
// CHECK-LABEL: func.func @nested
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave
// CHECK-NEXT: scf.if
// CHECK: memref.cast
// CHECK: }
// CHECK-NEXT: llvm.intr.stackrestore %[[SP]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @nested(%a: memref<4xf32>, %n: index, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      scf.if %flag {
        %0 = memref.cast %a : memref<4xf32> to memref<*xf32>
        func.call @hir_rt_neg_f32(%0, %0) : (memref<*xf32>, memref<*xf32>) -> ()
      }
    }
  }
  return
}

// -----

// Both regions of an scf.while run once per iteration.
// CHECK-LABEL: func.func @while_loop
// CHECK: scf.while
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave
// CHECK: llvm.intr.stackrestore %[[SP]]
// CHECK-NEXT: scf.condition
// CHECK: } do {
// CHECK-NEXT: ^bb0(%{{.*}}: index):
// CHECK-NEXT: %[[SP2:.*]] = llvm.intr.stacksave
// CHECK: llvm.intr.stackrestore %[[SP2]]
// CHECK-NEXT: scf.yield
func.func @while_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.while (%i = %c0) : (index) -> index {
    %tmp = memref.alloca() : memref<4xf32>
    %more = arith.cmpi slt, %i, %n : index
    scf.condition(%more) %i : index
  } do {
  ^bb0(%i: index):
    %tmp = memref.alloca() : memref<4xf32>
    %next = arith.addi %i, %c1 : index
    scf.yield %next : index
  }
  return
}

// -----

// Loops that take no stack, and straight-line code, are left alone.
// CHECK-LABEL: func.func @no_stack
// CHECK-NOT: llvm.intr.stacksave
// CHECK: return
func.func @no_stack(%a: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = memref.cast %a : memref<4xf32> to memref<*xf32>
  scf.for %i = %c0 to %n step %c1 {
    %s = host.get_current_stream : !host.stream
    host.set_current_stream %s
  }
  return
}
