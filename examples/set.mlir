// out = in, computed slice by slice along axis 0 on the stream pool.
// Seed: single-device stream lowering, SingleSetOp (002). The output's axis 0
// is `stream`: the lowering emits one loop whose iteration i copies row i.
fusion.mesh @dev = [0]
func.func @set(%in: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>> {
  %out = fusion.set %in : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
                       -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
  return %out : tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
}
