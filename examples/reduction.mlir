// out[i, j] = sum_k in[i, j, k], stream-parallel along i.
// Seed: single-device stream lowering, Reduction (002): the stream axis is outer
// to the reduced one, so each iteration reduces its own slice in[i] into out[i].
fusion.mesh @dev = [0]
func.func @reduction(%in: tensor<4x8x16xf32, #fusion.dist<@dev, [serial, serial, serial]>>)
    -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>> {
  %out = fusion.sum %in [2] : tensor<4x8x16xf32, #fusion.dist<@dev, [serial, serial, serial]>>
                           -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
  return %out : tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
}
