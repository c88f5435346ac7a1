// Initialisation on a tensor split over 4 devices: positions (iota) and
// constants (fill) computed where they are held, with no communication.
//   p = iota along the rows * 0.5 + iota along the columns
//   y = x + p, z = zeros
// The row axis is split (didx): device d holds rows 2d, 2d + 1, and its row
// iota holds those global indices. z is stream-parallel: a fill places
// nothing on streams, it writes the rank's part whole.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @fill_iota(%x: tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> (tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>,
        tensor<4x8x16xbf16, #fusion.dist<@tp, [stream, didx, serial]>>) {
  %rows = fusion.iota 0 : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  %cols = fusion.iota 1 : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  %half = fusion.fill 0.5 : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  %scaled = fusion.mul %rows, %half : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                                      tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
                                   -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  %p = fusion.add %scaled, %cols : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                                   tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
                                -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  %y = fusion.add %x, %p : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                           tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  %z = fusion.fill 0.0 : tensor<4x8x16xbf16, #fusion.dist<@tp, [stream, didx, serial]>>
  return %y, %z : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                  tensor<4x8x16xbf16, #fusion.dist<@tp, [stream, didx, serial]>>
}
