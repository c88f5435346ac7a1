// exp of a tensor sharded over 2 devices, stream-parallel along its rows,
// in bf16; then negated in f32 after a cast.
fusion.mesh @tp = [0, 1]
func.func @exp(%a: tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> (tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, stream, serial]>>,
        tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>) {
  %e = fusion.exp %a : tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
                    -> tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, stream, serial]>>
  %c = fusion.cast %a : tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
                     -> tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %n = fusion.exp %c : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                    -> tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  return %e, %n : tensor<2x4x8xbf16, #fusion.dist<@tp, [didx, stream, serial]>>,
                  tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
}
