// [S, H] with H split over 4 devices, split into [S, heads, dh] with the
// heads split (an outer split), transposed to [heads, S, dh], back, merged to
// [S, H] and contracted over the split H (row parallel: a reduce-scatter).
fusion.mesh @tp = [0, 1, 2, 3]
func.func @heads(%x: tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>,
    %w: tensor<16x16xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>> {
  %split = fusion.reshape %x : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
  %heads = fusion.transpose %split [1, 0, 2] : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %e = fusion.exp %heads : tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %back = fusion.transpose %e [1, 0, 2] : tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
  %merged = fusion.reshape %back : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>
  %y = fusion.linear %merged, %w : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<16x16xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  return %y : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
}
