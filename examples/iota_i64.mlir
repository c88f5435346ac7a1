// i64 positions and constants on a split axis, computed where they are held:
//   p = 1000 * row + column  (each device's rows hold their global indices)
//   y = x + p                 (elementwise, exact)
//   g = p gathered whole      (an allgather of i64 buffers)
//   z = -3 everywhere         (a fill of a stream-parallel i64 tensor)
fusion.mesh @tp = [0, 1, 2, 3]
func.func @iota_i64(%x: tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>)
    -> (tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>,
        tensor<8x16xi64, #fusion.dist<@tp, [serial, serial]>>,
        tensor<4x8x16xi64, #fusion.dist<@tp, [stream, didx, serial]>>) {
  %rows = fusion.iota 0 : tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>
  %cols = fusion.iota 1 : tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>
  %k = fusion.fill 1000.0 : tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>
  %scaled = fusion.mul %rows, %k : tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>,
                                   tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>
                                -> tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>
  %p = fusion.add %scaled, %cols : tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>,
                                   tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>
                                -> tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>
  %y = fusion.add %x, %p : tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>,
                           tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>
  %g = fusion.set %p : tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>
                    -> tensor<8x16xi64, #fusion.dist<@tp, [serial, serial]>>
  %z = fusion.fill -3.0 : tensor<4x8x16xi64, #fusion.dist<@tp, [stream, didx, serial]>>
  return %y, %g, %z : tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>,
                      tensor<8x16xi64, #fusion.dist<@tp, [serial, serial]>>,
                      tensor<4x8x16xi64, #fusion.dist<@tp, [stream, didx, serial]>>
}
