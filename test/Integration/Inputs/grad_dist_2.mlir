// Distributed gradients on 2 devices (test/Integration/grad-ops.mlir): a
// replicated weight read by row-split activations (its gradient a sum
// across the devices), a sum over the split rows, a gather and a
// row-split result through a bf16 cast.
fusion.mesh @tp = [0, 1]
func.func @distributed(%x: tensor<8x4xf32, #fusion.dist<@tp, [didx, serial]>>,
                       %w: tensor<6x4xf32, #fusion.dist<@tp, [serial, serial]>>,
                       %u: tensor<8x6xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> (tensor<6xf32, #fusion.dist<@tp, [serial]>>, tensor<8x6xbf16, #fusion.dist<@tp, [didx, serial]>>) {
  %y = fusion.linear %x, %w : tensor<8x4xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<6x4xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>>
  %s = fusion.sum %y [0] : tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<6xf32, #fusion.dist<@tp, [serial]>>
  %ug = fusion.set %u : tensor<8x6xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>>
  %t = fusion.mul %y, %ug : tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>>
  %c = fusion.cast %t : tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x6xbf16, #fusion.dist<@tp, [didx, serial]>>
  return %s, %c : tensor<6xf32, #fusion.dist<@tp, [serial]>>, tensor<8x6xbf16, #fusion.dist<@tp, [didx, serial]>>
}
