// examples/ag_matmul_p2p.mlir on a mesh of 2 devices, smaller.
fusion.mesh @tp = [0, 1]
func.func @ag_matmul_p2p_2(%a: tensor<2x32x64xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
                         %b: tensor<64x48xbf16, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<2x32x48xbf16, #fusion.dist<@tp, [stream, serial, serial]>> {
  %c = fusion.matmul %a, %b : tensor<2x32x64xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
                              tensor<64x48xbf16, #fusion.dist<@tp, [serial, serial]>>
                           -> tensor<2x32x48xbf16, #fusion.dist<@tp, [stream, serial, serial]>>
  return %c : tensor<2x32x48xbf16, #fusion.dist<@tp, [stream, serial, serial]>>
}
