// examples/shard_mlp.mlir written in fusion by hand: what a user of fusion
// writes for the same layer. test/Integration/shard-import.mlir checks that
// both lower to one host program.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @shard_mlp(%x: tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                     %w1: tensor<64x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                     %w2: tensor<16x64xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>> {
  %xg = fusion.set %x : tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>
                     -> tensor<32x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %h = fusion.linear %xg, %w1 : tensor<32x16xf32, #fusion.dist<@tp, [serial, serial]>>,
                                tensor<64x16xf32, #fusion.dist<@tp, [didx, serial]>>
                             -> tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>
  %a = fusion.tanh %h : tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>
                     -> tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>
  %y = fusion.linear %a, %w2 : tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>,
                               tensor<16x64xf32, #fusion.dist<@tp, [serial, didx]>>
                            -> tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>
  return %y : tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>
}
