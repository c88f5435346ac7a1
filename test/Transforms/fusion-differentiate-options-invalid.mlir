// fusion-differentiate's options checked against the function: each error
// at the function (or, for a function that is not there, the module).
// RUN: not hir-opt %s --pass-pipeline='builtin.module(fusion-differentiate{function=g})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not hir-opt %s --pass-pipeline='builtin.module(fusion-differentiate{wrt=1})' 2>&1 | FileCheck %s --check-prefix=INTEGER
// RUN: not hir-opt %s --pass-pipeline='builtin.module(fusion-differentiate{wrt=3})' 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not hir-opt %s --pass-pipeline='builtin.module(fusion-differentiate{wrt=0,0})' 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not hir-opt %s --pass-pipeline='builtin.module(fusion-differentiate{wrt=0,x})' 2>&1 | FileCheck %s --check-prefix=WRT
// RUN: not hir-opt %s --pass-pipeline='builtin.module(fusion-differentiate{saved=later})' 2>&1 | FileCheck %s --check-prefix=SAVED
// RUN: hir-opt %s --pass-pipeline='builtin.module(fusion-differentiate{function=@f wrt=2,0})' | FileCheck %s

// UNKNOWN: error: fusion-differentiate: no function '@g' in the module
// INTEGER: [[@LINE+6]]:1: error: wrt argument 1 of '@f' is tensor<4xi32>; only floating-point tensors get gradients
// RANGE: [[@LINE+5]]:1: error: wrt argument 3 is out of range: '@f' has 3 arguments
// TWICE: [[@LINE+4]]:1: error: wrt lists argument 0 twice
// WRT: option 'wrt' must be an integer from 0 to {{[0-9]+}}, not 'x'
// SAVED: option 'saved' must be one of gathered|recompute, not 'later'

func.func @f(%x: tensor<4xf32>, %i: tensor<4xi32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.mul %x, %z : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// The gradients come in wrt's order.
// CHECK-LABEL: func.func @f_backward(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>, %[[Z:[^:]+]]: tensor<4xf32>, %[[DY:[^:]+]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: %[[DX:.+]] = fusion.mul %[[DY]], %[[Z]]
// CHECK-NEXT: %[[DZ:.+]] = fusion.mul %[[DY]], %[[X]]
// CHECK-NEXT: return %[[DZ]], %[[DX]]
