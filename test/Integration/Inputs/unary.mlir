// tanh, abs, relu, gelu (tanh form) and rsqrt of tensors sharded over 2
// devices, some stream-parallel along their rows, in f32 and bf16; rsqrt
// reads abs's result (the inputs have both signs).
fusion.mesh @tp = [0, 1]
func.func @unary(%a: tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                 %b: tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> (tensor<2x4x8xf32, #fusion.dist<@tp, [didx, stream, serial]>>,
        tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, stream, serial]>>,
        tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>) {
  %t = fusion.tanh %a : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                     -> tensor<2x4x8xf32, #fusion.dist<@tp, [didx, stream, serial]>>
  %g = fusion.gelu %a : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                     -> tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %h = fusion.gelu %b : tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
                     -> tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, stream, serial]>>
  %r = fusion.relu %a : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                     -> tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %m = fusion.abs %b : tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
                    -> tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
  %s = fusion.rsqrt %m : tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
                      -> tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
  return %t, %g, %h, %r, %s : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, stream, serial]>>,
                              tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                              tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, stream, serial]>>,
                              tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                              tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
}
