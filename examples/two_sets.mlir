// t = in; out = t, both stream-parallel along axis 0.
// Seed: single-device stream lowering, TwoSetOps (002). Both ops are scheduled
// over the same stream axis, so the lowering merges them into one loop.
fusion.mesh @dev = [0]
func.func @two_sets(%in: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>> {
  %t = fusion.set %in : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
                     -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
  %out = fusion.set %t : tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
                      -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
  return %out : tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
}
