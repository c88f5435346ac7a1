// The tensor- and sequence-parallel MLP of tp_mlp.mlir on a 3-D mesh of 8
// ranks, 2 x 2 x 2: tensor parallel within each row (didx), fully sharded
// data parallel (FSDP/ZeRO-3) across the rows of a plane (didy), and two
// data-parallel replicas, one per plane (didz), as HSDP + TP jobs run.
// Each plane takes its half of the batch (axis 0, didz), each row of a plane
// its half of that (axis 1, didy), and each row splits its tokens (axis 2,
// didx). The weights are split over the row as in Megatron (W1, b1 along F,
// W2 along F) and their other axis is sharded across the rows (FSDP), so
// each is gathered within its column before the layer runs; no weight is
// split across planes. Every collective runs within the teams of one mesh
// axis: the weight gathers over didy, the activation's allgather and the
// reduce-scatter over didx.
fusion.mesh @fsdp_tp = [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
func.func @fsdp_tp_mlp(%x: tensor<2x2x16x16xf32, #fusion.dist<@fsdp_tp, [didz, didy, didx, serial]>>,
                       %w1: tensor<32x16xf32, #fusion.dist<@fsdp_tp, [didx, didy]>>,
                       %b1: tensor<32xf32, #fusion.dist<@fsdp_tp, [didx]>>,
                       %w2: tensor<16x32xf32, #fusion.dist<@fsdp_tp, [didy, didx]>>)
    -> tensor<2x2x16x16xf32, #fusion.dist<@fsdp_tp, [didz, didy, didx, serial]>> {
  %xg = fusion.set %x : tensor<2x2x16x16xf32, #fusion.dist<@fsdp_tp, [didz, didy, didx, serial]>>
                     -> tensor<2x2x16x16xf32, #fusion.dist<@fsdp_tp, [didz, didy, serial, serial]>>
  %w1g = fusion.set %w1 : tensor<32x16xf32, #fusion.dist<@fsdp_tp, [didx, didy]>>
                       -> tensor<32x16xf32, #fusion.dist<@fsdp_tp, [didx, serial]>>
  %w2g = fusion.set %w2 : tensor<16x32xf32, #fusion.dist<@fsdp_tp, [didy, didx]>>
                       -> tensor<16x32xf32, #fusion.dist<@fsdp_tp, [serial, didx]>>
  %h = fusion.linear %xg, %w1g, %b1 : tensor<2x2x16x16xf32, #fusion.dist<@fsdp_tp, [didz, didy, serial, serial]>>,
                                      tensor<32x16xf32, #fusion.dist<@fsdp_tp, [didx, serial]>>,
                                      tensor<32xf32, #fusion.dist<@fsdp_tp, [didx]>>
                                   -> tensor<2x2x16x32xf32, #fusion.dist<@fsdp_tp, [didz, didy, serial, didx]>>
  %a = fusion.gelu %h : tensor<2x2x16x32xf32, #fusion.dist<@fsdp_tp, [didz, didy, serial, didx]>>
                     -> tensor<2x2x16x32xf32, #fusion.dist<@fsdp_tp, [didz, didy, serial, didx]>>
  %y = fusion.linear %a, %w2g : tensor<2x2x16x32xf32, #fusion.dist<@fsdp_tp, [didz, didy, serial, didx]>>,
                                tensor<16x32xf32, #fusion.dist<@fsdp_tp, [serial, didx]>>
                             -> tensor<2x2x16x16xf32, #fusion.dist<@fsdp_tp, [didz, didy, didx, serial]>>
  return %y : tensor<2x2x16x16xf32, #fusion.dist<@fsdp_tp, [didz, didy, didx, serial]>>
}
