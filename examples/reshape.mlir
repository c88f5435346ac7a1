// Reshapes on a tensor split over 4 devices: an axis kept whole keeps its
// distribution, merged or split axes are serial, so every reshape is local.
//   h = reshape(x, [T, H*W]) @ w      x [T, H, W] split along T: each device
//                                     flattens its tokens' [H, W] features
//   u = reshape(v, [S, 2, 8])         split along its stream axis: each
//                                     iteration reshapes one slice
fusion.mesh @tp = [0, 1, 2, 3]
func.func @reshape(%x: tensor<8x4x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                   %w: tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>,
                   %v: tensor<4x16xbf16, #fusion.dist<@tp, [didx, serial]>>)
    -> (tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>,
        tensor<4x2x8xbf16, #fusion.dist<@tp, [stream, serial, serial]>>) {
  %flat = fusion.reshape %x : tensor<8x4x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                           -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  %h = fusion.matmul %flat, %w : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                                 tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>
                              -> tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>
  %g = fusion.set %v : tensor<4x16xbf16, #fusion.dist<@tp, [didx, serial]>>
                    -> tensor<4x16xbf16, #fusion.dist<@tp, [stream, serial]>>
  %u = fusion.reshape %g : tensor<4x16xbf16, #fusion.dist<@tp, [stream, serial]>>
                        -> tensor<4x2x8xbf16, #fusion.dist<@tp, [stream, serial, serial]>>
  return %h, %u : tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>,
                  tensor<4x2x8xbf16, #fusion.dist<@tp, [stream, serial, serial]>>
}
