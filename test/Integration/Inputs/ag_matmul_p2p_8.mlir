// examples/ag_matmul_p2p.mlir on a mesh of 8 devices, smaller.
fusion.mesh @tp = [0, 1, 2, 3, 4, 5, 6, 7]
func.func @ag_matmul_p2p_8(%a: tensor<8x32x64xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
                         %b: tensor<64x48xbf16, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<8x32x48xbf16, #fusion.dist<@tp, [stream, serial, serial]>> {
  %c = fusion.matmul %a, %b : tensor<8x32x64xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
                              tensor<64x48xbf16, #fusion.dist<@tp, [serial, serial]>>
                           -> tensor<8x32x48xbf16, #fusion.dist<@tp, [stream, serial, serial]>>
  return %c : tensor<8x32x48xbf16, #fusion.dist<@tp, [stream, serial, serial]>>
}
