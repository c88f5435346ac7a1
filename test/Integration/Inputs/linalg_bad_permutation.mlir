// MLIR 22's linalg.transpose parser sets the attribute its parse of a
// `permutation` list failed to make, and crashes on a literal out of the
// 64-bit range (stock mlir-opt too), so HIR's tools refuse it first.
func.func @f(%a: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.transpose ins(%a : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 18446744073709551616]
  return %t : tensor<4x8xf32>
}
