// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-verify-deallocs))' -verify-diagnostics | FileCheck %s
// The pass is in the pipeline to LLVM, so hir-run refuses a second free at
// the op instead of dying of a signal (the fuzz found this program: before,
// SIGSEGV).
// RUN: not hir-run %S/Inputs/freed-twice.mlir 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: freed-twice.mlir:10:3: error: 'memref.dealloc' op frees a memref that 'memref.dealloc' already freed
// What the IR does not show the runtime's heap checks: a free of memory
// from a function's argument, or freed twice through a call.
// RUN: not hir-run %S/Inputs/free-argument.mlir 2>&1 | FileCheck %s --check-prefix=ARGUMENT
// ARGUMENT: hir-run: error: the run failed: rank 0: memref.dealloc: frees 0x{{[0-9a-f]+}}, which the program's heap does not hold: freed before, not from memref.alloc, or another rank's
// RUN: not hir-run -n 2 %S/Inputs/free-through-a-call.mlir 2>&1 | FileCheck %s --check-prefix=CALL
// CALL: hir-run: error: the run failed: rank {{[01]}}: memref.dealloc: frees 0x{{[0-9a-f]+}}, which the program's heap does not hold: freed before, not from memref.alloc, or another rank's

// A store after the free; what comes before it is kept.
func.func @store_after(%v: f32) {
  %c0 = arith.constant 0 : index
  %m = memref.alloc() : memref<4xf32>
  memref.store %v, %m[%c0] : memref<4xf32>
  memref.dealloc %m : memref<4xf32>
  // expected-error @+1 {{'memref.store' op uses a memref after 'memref.dealloc' freed it}}
  memref.store %v, %m[%c0] : memref<4xf32>
  return
}

// -----

// A second free; an op after both is reported once, for the first.
func.func @twice(%a: memref<4xf32>) {
  %g = host.alloc : memref<4xf32>
  host.dealloc %g : memref<4xf32>
  // expected-error @+1 {{'host.dealloc' op frees a memref that 'host.dealloc' already freed}}
  host.dealloc %g : memref<4xf32>
  // expected-error @+1 {{'host.neg' op uses a memref after 'host.dealloc' freed it}}
  host.neg ins(%g : memref<4xf32>) outs(%a : memref<4xf32>)
  return
}

// -----

// A view of the freed memory, made before the free, used after it; and a
// use nested in a later loop.
func.func @view(%a: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %m = memref.alloc() : memref<8xf32>
  %half = memref.subview %m[0] [2] [1] : memref<8xf32> to memref<2xf32, strided<[1]>>
  memref.dealloc %m : memref<8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{'host.neg' op uses a memref after 'memref.dealloc' freed it}}
    host.neg ins(%half : memref<2xf32, strided<[1]>>) outs(%a : memref<2xf32>)
  }
  return
}

// -----

// A free in a branch makes what follows the branch suspect.
func.func @after_branch(%c: i1, %v: f32) {
  %c0 = arith.constant 0 : index
  %m = memref.alloc() : memref<4xf32>
  scf.if %c {
    memref.dealloc %m : memref<4xf32>
  }
  // expected-error @+1 {{'memref.store' op uses a memref after 'memref.dealloc' freed it}}
  memref.store %v, %m[%c0] : memref<4xf32>
  return
}

// -----

// A free in a loop of memory from outside it: the second iteration would
// free it again.
func.func @in_a_loop(%v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %true = arith.constant true
  %m = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %v, %m[%c0] : memref<4xf32>
    scf.if %true {
      // expected-error @+1 {{'memref.dealloc' op frees, in every iteration of the enclosing 'scf.for', a memref from outside it: the second iteration would use freed memory}}
      memref.dealloc %m : memref<4xf32>
    }
  }
  return
}

// -----

// host.stream_for is a loop too.
func.func @in_a_stream_loop(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %main = host.get_current_stream : !host.stream
  %g = host.alloc : memref<4xf32>
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    host.neg ins(%a : memref<4xf32>) outs(%g : memref<4xf32>)
    // expected-error @+1 {{'host.dealloc' op frees, in every iteration of the enclosing 'host.stream_for', a memref from outside it: the second iteration would use freed memory}}
    host.dealloc %g : memref<4xf32>
  }
  return
}

// -----

// Kept: a free in one branch and a use in the other; a loop body that
// allocates, uses and frees its own memory; an iteration argument freed
// each iteration and replaced by the yield; the free last.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: memref.dealloc
func.func @kept(%c: i1, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %m = memref.alloc() : memref<4xf32>
  scf.if %c {
    memref.dealloc %m : memref<4xf32>
  } else {
    memref.store %v, %m[%c0] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %n = memref.alloc() : memref<4xf32>
    memref.store %v, %n[%c0] : memref<4xf32>
    memref.dealloc %n : memref<4xf32>
  }
  %first = memref.alloc() : memref<4xf32>
  %last = scf.for %i = %c0 to %c4 step %c1 iter_args(%prev = %first) -> (memref<4xf32>) {
    memref.store %v, %prev[%c0] : memref<4xf32>
    memref.dealloc %prev : memref<4xf32>
    %next = memref.alloc() : memref<4xf32>
    scf.yield %next : memref<4xf32>
  }
  memref.store %v, %last[%c0] : memref<4xf32>
  memref.dealloc %last : memref<4xf32>
  return
}
