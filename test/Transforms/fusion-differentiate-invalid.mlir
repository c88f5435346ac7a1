// fusion-differentiate's errors, each at the module, the function or the op.
// RUN: hir-opt %s --split-input-file --verify-diagnostics --fusion-differentiate
// The options' errors: fusion-differentiate-options-invalid.mlir.

// An op with no rule on the way from an argument to a result.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{fusion-differentiate: cannot differentiate 'arith.addf': it has no differentiation rule}}
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The function to differentiate must be named when there are several.
// expected-error @+1 {{fusion-differentiate: the module has 2 public functions; name one with function=NAME}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// The names the pass adds must be free.
module {
  // expected-error @+1 {{fusion-differentiate: the module already has a function '@f_forward'}}
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func private @f_forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// A body of more than one block is not a fusion.
// expected-error @+1 {{fusion-differentiate: '@f' must have a body of one block}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^next
^next:
  return %x : tensor<4xf32>
}
