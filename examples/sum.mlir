// examples/sum.mlir: y = x[0] + x[1] + x[2] + x[3]; device d holds row d
// of x, and every device gets y.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @sum(%x: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<8xf32, #fusion.dist<@tp, [serial]>> {
  %y = fusion.sum %x [0] : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<8xf32, #fusion.dist<@tp, [serial]>>
  return %y : tensor<8xf32, #fusion.dist<@tp, [serial]>>
}
