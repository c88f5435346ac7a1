// The tensor- and sequence-parallel MLP of tp_mlp.mlir on a 2-D mesh: two
// data-parallel replicas (rows, didy) of a 4-way tensor-parallel group
// (columns, didx), 8 ranks. Each replica takes its half of the batch
// (axis 0, didy) and splits its tokens over its row (axis 1, didx); the
// weights are split over the row as in Megatron and replicated across rows.
// The allgather and the reduce-scatter run within each row.
fusion.mesh @tp_dp = [[0, 1, 2, 3], [4, 5, 6, 7]]
func.func @tp_dp_mlp(%x: tensor<2x16x16xf32, #fusion.dist<@tp_dp, [didy, didx, serial]>>,
                     %w1: tensor<32x16xf32, #fusion.dist<@tp_dp, [didx, serial]>>,
                     %b1: tensor<32xf32, #fusion.dist<@tp_dp, [didx]>>,
                     %w2: tensor<16x32xf32, #fusion.dist<@tp_dp, [serial, didx]>>)
    -> tensor<2x16x16xf32, #fusion.dist<@tp_dp, [didy, didx, serial]>> {
  %xg = fusion.set %x : tensor<2x16x16xf32, #fusion.dist<@tp_dp, [didy, didx, serial]>>
                     -> tensor<2x16x16xf32, #fusion.dist<@tp_dp, [didy, serial, serial]>>
  %h = fusion.linear %xg, %w1, %b1 : tensor<2x16x16xf32, #fusion.dist<@tp_dp, [didy, serial, serial]>>,
                                     tensor<32x16xf32, #fusion.dist<@tp_dp, [didx, serial]>>,
                                     tensor<32xf32, #fusion.dist<@tp_dp, [didx]>>
                                  -> tensor<2x16x32xf32, #fusion.dist<@tp_dp, [didy, serial, didx]>>
  %a = fusion.gelu %h : tensor<2x16x32xf32, #fusion.dist<@tp_dp, [didy, serial, didx]>>
                     -> tensor<2x16x32xf32, #fusion.dist<@tp_dp, [didy, serial, didx]>>
  %y = fusion.linear %a, %w2 : tensor<2x16x32xf32, #fusion.dist<@tp_dp, [didy, serial, didx]>>,
                               tensor<16x32xf32, #fusion.dist<@tp_dp, [serial, didx]>>
                            -> tensor<2x16x16xf32, #fusion.dist<@tp_dp, [didy, didx, serial]>>
  return %y : tensor<2x16x16xf32, #fusion.dist<@tp_dp, [didy, didx, serial]>>
}
