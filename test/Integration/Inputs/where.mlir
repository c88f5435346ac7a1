// where over 2 devices: the mask is relu(m), zero where m is negative (the
// inputs are never zero), so both operands are selected; in f32, and in bf16
// stream-parallel along the rows.
fusion.mesh @tp = [0, 1]
func.func @where(%m: tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                 %a: tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                 %b: tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                 %n: tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
                 %c: tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> (tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, stream, serial]>>) {
  %mask = fusion.relu %m : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                        -> tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %r = fusion.where %mask, %a, %b : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                                    tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                                    tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                                 -> tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %nmask = fusion.relu %n : tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
                         -> tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
  %s = fusion.where %nmask, %c, %n : tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
                                     tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
                                     tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
                                  -> tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, stream, serial]>>
  return %r, %s : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                  tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, stream, serial]>>
}
