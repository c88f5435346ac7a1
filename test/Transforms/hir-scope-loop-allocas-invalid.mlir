// RUN: hir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(hir-scope-loop-allocas))'

// A parallel loop's iterations are not scoped: one that takes stack is an error.
func.func private @hir_rt_neg_f32(memref<*xf32>, memref<*xf32>)
func.func @parallel(%a: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'scf.parallel' op body takes stack in every iteration, and hir-scope-loop-allocas scopes only scf.for and scf.while bodies}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %0 = memref.cast %a : memref<4xf32> to memref<*xf32>
    func.call @hir_rt_neg_f32(%0, %0) : (memref<*xf32>, memref<*xf32>) -> ()
    scf.reduce
  }
  return
}

// -----

// The same inside an scf.for: the for is scoped, the parallel loop still is not.
func.func @forall(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{'scf.forall' op body takes stack in every iteration}}
    scf.forall (%j) in (%n) {
      %tmp = memref.alloca() : memref<4xf32>
    }
  }
  return
}
