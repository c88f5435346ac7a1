// A linear with bias (f32, a stream-parallel output: one slice per
// iteration of a stream loop) and a matmul (bf16, no bias), each followed
// by gelu: host-fuse-epilogue makes each gelu its GEMM's epilogue.
fusion.mesh @tp = [0, 1]
func.func @epilogues(%x: tensor<4x8x16xf32, #fusion.dist<@tp, [serial, serial, serial]>>,
                     %w: tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                     %b: tensor<32xf32, #fusion.dist<@tp, [didx]>>,
                     %a: tensor<8x16xbf16, #fusion.dist<@tp, [serial, serial]>>,
                     %k: tensor<16x32xbf16, #fusion.dist<@tp, [serial, didx]>>)
    -> (tensor<4x8x32xf32, #fusion.dist<@tp, [stream, serial, didx]>>,
        tensor<8x32xbf16, #fusion.dist<@tp, [serial, didx]>>) {
  %h = fusion.linear %x, %w, %b : tensor<4x8x16xf32, #fusion.dist<@tp, [serial, serial, serial]>>,
                                  tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                                  tensor<32xf32, #fusion.dist<@tp, [didx]>>
                               -> tensor<4x8x32xf32, #fusion.dist<@tp, [stream, serial, didx]>>
  %g = fusion.gelu %h : tensor<4x8x32xf32, #fusion.dist<@tp, [stream, serial, didx]>>
                     -> tensor<4x8x32xf32, #fusion.dist<@tp, [stream, serial, didx]>>
  %m = fusion.matmul %a, %k : tensor<8x16xbf16, #fusion.dist<@tp, [serial, serial]>>,
                              tensor<16x32xbf16, #fusion.dist<@tp, [serial, didx]>>
                           -> tensor<8x32xbf16, #fusion.dist<@tp, [serial, didx]>>
  %n = fusion.gelu %m : tensor<8x32xbf16, #fusion.dist<@tp, [serial, didx]>>
                     -> tensor<8x32xbf16, #fusion.dist<@tp, [serial, didx]>>
  return %g, %n : tensor<4x8x32xf32, #fusion.dist<@tp, [stream, serial, didx]>>,
                  tensor<8x32xbf16, #fusion.dist<@tp, [serial, didx]>>
}
