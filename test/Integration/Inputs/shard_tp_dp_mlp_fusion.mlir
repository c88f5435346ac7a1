// examples/shard_tp_dp_mlp.mlir written in fusion by hand.
// test/Integration/shard-import.mlir checks that both lower to one host
// program.
fusion.mesh @tp_dp = [[0, 1, 2, 3], [4, 5, 6, 7]]
func.func @shard_tp_dp_mlp(%x: tensor<16x32xf32, #fusion.dist<@tp_dp, [didy, serial]>>,
                           %w1: tensor<32x64xf32, #fusion.dist<@tp_dp, [serial, didx]>>,
                           %w2: tensor<64x32xf32, #fusion.dist<@tp_dp, [didx, serial]>>)
    -> tensor<16x32xf32, #fusion.dist<@tp_dp, [didy, serial]>> {
  %h = fusion.matmul %x, %w1 : tensor<16x32xf32, #fusion.dist<@tp_dp, [didy, serial]>>,
                               tensor<32x64xf32, #fusion.dist<@tp_dp, [serial, didx]>>
                            -> tensor<16x64xf32, #fusion.dist<@tp_dp, [didy, didx]>>
  %a = fusion.tanh %h : tensor<16x64xf32, #fusion.dist<@tp_dp, [didy, didx]>>
                     -> tensor<16x64xf32, #fusion.dist<@tp_dp, [didy, didx]>>
  %y = fusion.matmul %a, %w2 : tensor<16x64xf32, #fusion.dist<@tp_dp, [didy, didx]>>,
                               tensor<64x32xf32, #fusion.dist<@tp_dp, [didx, serial]>>
                            -> tensor<16x32xf32, #fusion.dist<@tp_dp, [didy, serial]>>
  return %y : tensor<16x32xf32, #fusion.dist<@tp_dp, [didy, serial]>>
}
