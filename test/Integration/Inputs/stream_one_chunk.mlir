// Two stream<1> loops, one iteration each, fuse into one (test/Integration/stream-regressions.mlir).
fusion.mesh @tp = [0, 1]
func.func @one(%a: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<8x16xf32, #fusion.dist<@tp, [stream<1>, serial]>> {
  %n = fusion.neg %a : tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<8x16xf32, #fusion.dist<@tp, [stream<1>, serial]>>
  %e = fusion.exp %n : tensor<8x16xf32, #fusion.dist<@tp, [stream<1>, serial]>> -> tensor<8x16xf32, #fusion.dist<@tp, [stream<1>, serial]>>
  return %e : tensor<8x16xf32, #fusion.dist<@tp, [stream<1>, serial]>>
}
