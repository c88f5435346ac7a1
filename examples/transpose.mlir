// Transposes on a tensor split over 4 devices; the distribution moves with
// the axes, so every transpose is local:
//   y = x^T @ w       x [8, 16] split along its rows, so x^T [16, 8] is split
//                     along K: each device multiplies its K-slice, then an
//                     allreduce sums the partial products
//   u = permute(v, [2, 0, 1]), stream-parallel along u's last axis (v's
//                     axis 1): each iteration transposes one slice
fusion.mesh @tp = [0, 1, 2, 3]
func.func @transpose(%x: tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                     %w: tensor<8x4xf32, #fusion.dist<@tp, [didx, serial]>>,
                     %v: tensor<4x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> (tensor<16x4xf32, #fusion.dist<@tp, [serial, serial]>>,
        tensor<8x4x4xbf16, #fusion.dist<@tp, [serial, didx, stream]>>) {
  %xt = fusion.transpose %x [1, 0] : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
                                  -> tensor<16x8xf32, #fusion.dist<@tp, [serial, didx]>>
  %y = fusion.matmul %xt, %w : tensor<16x8xf32, #fusion.dist<@tp, [serial, didx]>>,
                               tensor<8x4xf32, #fusion.dist<@tp, [didx, serial]>>
                            -> tensor<16x4xf32, #fusion.dist<@tp, [serial, serial]>>
  %u = fusion.transpose %v [2, 0, 1] : tensor<4x4x8xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
                                    -> tensor<8x4x4xbf16, #fusion.dist<@tp, [serial, didx, stream]>>
  return %y, %u : tensor<16x4xf32, #fusion.dist<@tp, [serial, serial]>>,
                  tensor<8x4x4xbf16, #fusion.dist<@tp, [serial, didx, stream]>>
}
