// Megatron's tensor- and sequence-parallel MLP on natural shapes:
//   Y = gelu(X @ W1^T + b1) @ W2^T
// X: [T, H] with its tokens split over the devices (sequence parallel),
// W1: [F, H] and b1: [F] split along F (column parallel),
// W2: [H, F] split along F (row parallel), Y: [T, H] split along T.
// A didx axis of extent E over D devices holds E/D contiguous rows per
// device. It lowers to allgather, linear, gelu, linear, reduce-scatter.
fusion.mesh @tp = [0, 1]
func.func @tp_mlp(%x: tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                  %w1: tensor<64x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                  %b1: tensor<64xf32, #fusion.dist<@tp, [didx]>>,
                  %w2: tensor<16x64xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>> {
  %xg = fusion.set %x : tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>
                     -> tensor<32x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %h = fusion.linear %xg, %w1, %b1 : tensor<32x16xf32, #fusion.dist<@tp, [serial, serial]>>,
                                     tensor<64x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                                     tensor<64xf32, #fusion.dist<@tp, [didx]>>
                                  -> tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>
  %a = fusion.gelu %h : tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>
                     -> tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>
  %y = fusion.linear %a, %w2 : tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>,
                               tensor<16x64xf32, #fusion.dist<@tp, [serial, didx]>>
                            -> tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>
  return %y : tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>
}
