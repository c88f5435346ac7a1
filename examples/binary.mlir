// out = a + b, stream-parallel along axis 0.
// Seed: single-device stream lowering, SingleBinaryOp (002): both operands are
// sliced at the same index as the output.
fusion.mesh @dev = [0]
func.func @binary(%a: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
                  %b: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>> {
  %out = fusion.add %a, %b : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
                             tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
                          -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
  return %out : tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
}
