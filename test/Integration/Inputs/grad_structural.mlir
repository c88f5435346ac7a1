// The gradients of the ops that move, repeat or reduce elements, on one
// device, with an integer result that gets no cotangent
// (test/Integration/grad-ops.mlir).
fusion.mesh @dev = [0]
func.func @structural(%x: tensor<4x6x8xf32>, %k: tensor<4xi32>) -> (tensor<3x4xf32>, tensor<4x8xf32>, tensor<4xi32>) {
  %t = fusion.transpose %x [2, 0, 1] : tensor<4x6x8xf32> -> tensor<8x4x6xf32>
  %r = fusion.reshape %t : tensor<8x4x6xf32> -> tensor<8x24xf32>
  %s = fusion.slice %r offsets [1, 2] strides [2, 3] : tensor<8x24xf32> -> tensor<4x8xf32>
  %b = fusion.broadcast %s [0] : tensor<4x8xf32> -> tensor<3x4x8xf32>
  %su = fusion.sum %b [2] : tensor<3x4x8xf32> -> tensor<3x4xf32>
  %am = fusion.amax %x [1] : tensor<4x6x8xf32> -> tensor<4x8xf32>
  %c = fusion.cast %am : tensor<4x8xf32> -> tensor<4x8xbf16>
  %back = fusion.cast %c : tensor<4x8xbf16> -> tensor<4x8xf32>
  %sq = fusion.mul %back, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %su, %sq, %k : tensor<3x4xf32>, tensor<4x8xf32>, tensor<4xi32>
}
