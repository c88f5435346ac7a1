// Attention whose keys are split over the ranks: a located error of the
// op's verifier (test/Integration/attention.mlir).
fusion.mesh @tp = [0, 1]
func.func @attention(%q: tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                     %k: tensor<4x16x8xf32, #fusion.dist<@tp, [serial, didx, serial]>>,
                     %v: tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>> {
  %o = fusion.attention %q, %k, %v causal
      : tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [serial, didx, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
     -> tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  return %o : tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
}
