// [S, H] with H split over 4 devices, split into [S, heads, dh] with the
// heads split (an outer split), transposed to [heads, S, dh], back, merged to
// [S, H] and contracted over the split H (row parallel: a reduce-scatter).
// The values between the split and the merge's result are left to
// fusion-propagate-sharding, which carries the split across both.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @heads(%x: tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>,
    %w: tensor<16x16xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>> {
  %split = fusion.reshape %x : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x4x4xf32>
  %heads = fusion.transpose %split [1, 0, 2] : tensor<8x4x4xf32> -> tensor<4x8x4xf32>
  %e = fusion.exp %heads : tensor<4x8x4xf32> -> tensor<4x8x4xf32>
  %back = fusion.transpose %e [1, 0, 2] : tensor<4x8x4xf32> -> tensor<8x4x4xf32>
  %merged = fusion.reshape %back : tensor<8x4x4xf32> -> tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>
  %y = fusion.linear %merged, %w : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<16x16xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  return %y : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
}
