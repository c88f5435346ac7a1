// One device: a chain with a broadcast bias, gelu, a cast, a where and an
// intermediate used twice, then a stream-parallel exp (test/Integration/fused.mlir).
fusion.mesh @dev = [0]
func.func @chain(%a: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
                 %b: tensor<8xf32, #fusion.dist<@dev, [serial]>>)
    -> (tensor<4x8xbf16, #fusion.dist<@dev, [serial, serial]>>, tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>) {
  %bb = fusion.broadcast %b [0] : tensor<8xf32, #fusion.dist<@dev, [serial]>> -> tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
  %0 = fusion.add %a, %bb : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
  %1 = fusion.gelu %0 : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
  %2 = fusion.cast %1 : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<4x8xbf16, #fusion.dist<@dev, [serial, serial]>>
  %3 = fusion.tanh %2 : tensor<4x8xbf16, #fusion.dist<@dev, [serial, serial]>> -> tensor<4x8xbf16, #fusion.dist<@dev, [serial, serial]>>
  %4 = fusion.mul %1, %0 : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
  %5 = fusion.where %4, %a, %bb : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
  %6 = fusion.exp %5 : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
  return %3, %6 : tensor<4x8xbf16, #fusion.dist<@dev, [serial, serial]>>, tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
}
