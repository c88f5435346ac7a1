// The gradients of matmul (a batched operand times a weight, and a batch
// axis of extent 1 broadcast) and linear (with bias, and of a vector), on
// one device (test/Integration/grad-ops.mlir).
fusion.mesh @dev = [0]
func.func @contraction(%a: tensor<2x8x16xf32>, %b: tensor<16x4xf32>, %q: tensor<1x4x5xf32>,
                       %w: tensor<3x5xf32>, %bias: tensor<3xf32>, %v: tensor<5xf32>)
    -> (tensor<2x8x3xf32>, tensor<3xf32>) {
  %p = fusion.matmul %a, %b : tensor<2x8x16xf32>, tensor<16x4xf32> -> tensor<2x8x4xf32>
  %pq = fusion.matmul %p, %q : tensor<2x8x4xf32>, tensor<1x4x5xf32> -> tensor<2x8x5xf32>
  %y = fusion.linear %pq, %w, %bias : tensor<2x8x5xf32>, tensor<3x5xf32>, tensor<3xf32> -> tensor<2x8x3xf32>
  %u = fusion.linear %v, %w : tensor<5xf32>, tensor<3x5xf32> -> tensor<3xf32>
  return %y, %u : tensor<2x8x3xf32>, tensor<3xf32>
}
