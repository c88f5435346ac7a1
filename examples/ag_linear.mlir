// Y = X @ W^T + bias; X: [S, DIDx(D), M/(S*D), K], W: [N, K], bias: [N] -> Y: [Stream(S), D, M/(S*D), N]
// Seed: stream-parallelized linear lowered to the AG+GEMM overlap (003): each
// stream iteration allgathers X[s] and runs the linear on it.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @ag_linear(%x: tensor<4x4x8x32xbf16, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                     %w: tensor<16x32xbf16, #fusion.dist<@tp, [serial, serial]>>,
                     %bias: tensor<16xbf16, #fusion.dist<@tp, [serial]>>)
    -> tensor<4x4x8x16xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>> {
  %y = fusion.linear %x, %w, %bias : tensor<4x4x8x32xbf16, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                                     tensor<16x32xbf16, #fusion.dist<@tp, [serial, serial]>>,
                                     tensor<16xbf16, #fusion.dist<@tp, [serial]>>
                                  -> tensor<4x4x8x16xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>>
  return %y : tensor<4x4x8x16xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>>
}
