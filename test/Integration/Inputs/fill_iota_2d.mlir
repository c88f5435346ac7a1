// Iotas along both split axes of a 2-D mesh (rows over didy, columns over
// didx; ranks 2 and 3 hold rows 3..5), in f16 and f32, and a fill in bf16.
fusion.mesh @grid = [[0, 1], [2, 3]]
func.func @fill_iota_2d()
    -> (tensor<6x8xf16, #fusion.dist<@grid, [didy, didx]>>,
        tensor<6x8xf32, #fusion.dist<@grid, [didy, didx]>>,
        tensor<6x8xbf16, #fusion.dist<@grid, [didy, didx]>>) {
  %rows = fusion.iota 0 : tensor<6x8xf16, #fusion.dist<@grid, [didy, didx]>>
  %cols = fusion.iota 1 : tensor<6x8xf32, #fusion.dist<@grid, [didy, didx]>>
  %full = fusion.fill 2.5 : tensor<6x8xbf16, #fusion.dist<@grid, [didy, didx]>>
  return %rows, %cols, %full : tensor<6x8xf16, #fusion.dist<@grid, [didy, didx]>>,
                               tensor<6x8xf32, #fusion.dist<@grid, [didy, didx]>>,
                               tensor<6x8xbf16, #fusion.dist<@grid, [didy, didx]>>
}
