// The gradient of fusion.attention on one device
// (test/Integration/grad-ops.mlir): no batch axis, fewer queries than keys,
// an additive mask and an explicit scale; two batch axes, causal, with the
// default scale; and self-attention, q, k and v one tensor, whose gradient
// sums the three.
fusion.mesh @dev = [0]
func.func @attention(%q: tensor<6x4xf32>, %k: tensor<10x4xf32>, %v: tensor<10x3xf32>,
                     %m: tensor<6x10xf32>, %x: tensor<2x3x8x4xf32>)
    -> (tensor<6x3xf32>, tensor<2x3x8x4xf32>) {
  %o = fusion.attention %q, %k, %v, %m scale 0.7
      : tensor<6x4xf32>, tensor<10x4xf32>, tensor<10x3xf32>, tensor<6x10xf32> -> tensor<6x3xf32>
  %s = fusion.attention %x, %x, %x causal
      : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return %o, %s : tensor<6x3xf32>, tensor<2x3x8x4xf32>
}
