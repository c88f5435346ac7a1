// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-verify-loops))' -verify-diagnostics | FileCheck %s
// The pass is first in the pipeline to LLVM, so hir-run refuses such a
// loop at the loop instead of running forever.
// RUN: not hir-run %S/Inputs/zero-step.mlir 2>&1 | FileCheck %s --check-prefix=NEVER

// NEVER: zero-step.mlir:8:3: error: 'scf.for' op step 0 is not positive: the loop would never end

// A zero step never leaves its first iteration.
func.func @zero(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'scf.for' op step 0 is not positive: the loop would never end}}
  scf.for %i = %c0 to %c4 step %c0 {
    host.neg ins(%a : memref<8xf32>) outs(%a : memref<8xf32>)
  }
  return
}

// -----

// A negative step counts down past the upper bound: nested loops are
// checked too.
func.func @negative(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %m1 = arith.constant -1 : index
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{'scf.for' op step -1 is not positive: the loop would never end}}
    scf.for %j = %c0 to %c4 step %m1 {
      host.neg ins(%a : memref<8xf32>) outs(%a : memref<8xf32>)
    }
  }
  return
}

// -----

// The stream loop's step is its third operand too.
func.func @stream_loop(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  // expected-error @+1 {{'host.stream_for' op step 0 is not positive: the loop would never end}}
  host.stream_for %c0 to %c4 step %c0 from %main {
  ^bb0(%i: index, %s: !host.stream):
    host.neg ins(%a : memref<8xf32>) outs(%a : memref<8xf32>)
  }
  return
}

// -----

// Positive constant steps and steps known only at run time pass unchanged.
// CHECK-LABEL: func.func @fine
// CHECK: scf.for
// CHECK: scf.for
func.func @fine(%a: memref<8xf32>, %step: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    host.neg ins(%a : memref<8xf32>) outs(%a : memref<8xf32>)
  }
  scf.for %i = %c0 to %c4 step %step {
    host.neg ins(%a : memref<8xf32>) outs(%a : memref<8xf32>)
  }
  return
}
