// stream<k> with k the axis's extent is k chunks of one index (they keep the axis), so a matmul streams its N in 4 chunks of one column (test/Integration/stream-regressions.mlir).
fusion.mesh @tp = [0, 1]
func.func @columns(%a: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>,
                   %b: tensor<16x4xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<8x4xf32, #fusion.dist<@tp, [serial, stream<4>]>> {
  %c = fusion.matmul %a, %b : tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<16x4xf32, #fusion.dist<@tp, [serial, serial]>>
      -> tensor<8x4xf32, #fusion.dist<@tp, [serial, stream<4>]>>
  return %c : tensor<8x4xf32, #fusion.dist<@tp, [serial, stream<4>]>>
}
