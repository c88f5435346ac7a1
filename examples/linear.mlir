// y = x @ w^T + bias with x: [S, M, K], w: [N, K], bias: [N], stream-parallel along S.
// Seed: single-device stream lowering, linear with bias (002): iteration s
// computes y[s] from x[s] and all of w and bias.
fusion.mesh @dev = [0]
func.func @linear(%x: tensor<4x8x32xf32, #fusion.dist<@dev, [serial, serial, serial]>>,
                  %w: tensor<16x32xf32, #fusion.dist<@dev, [serial, serial]>>,
                  %bias: tensor<16xf32, #fusion.dist<@dev, [serial]>>)
    -> tensor<4x8x16xf32, #fusion.dist<@dev, [stream, serial, serial]>> {
  %y = fusion.linear %x, %w, %bias : tensor<4x8x32xf32, #fusion.dist<@dev, [serial, serial, serial]>>,
                                     tensor<16x32xf32, #fusion.dist<@dev, [serial, serial]>>,
                                     tensor<16xf32, #fusion.dist<@dev, [serial]>>
                                  -> tensor<4x8x16xf32, #fusion.dist<@dev, [stream, serial, serial]>>
  return %y : tensor<4x8x16xf32, #fusion.dist<@dev, [stream, serial, serial]>>
}
