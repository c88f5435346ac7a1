// A row-parallel linear on natural shapes, completed by an allreduce:
//   Y = X @ W^T, X: [T, K] and W: [N, K] both split along K over the devices,
//   Y: [T, N] replicated. Each device computes its partial product over its
//   K/D columns; the sum of the partials is the allreduce.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @row_parallel_allreduce(%x: tensor<8x32xf32, #fusion.dist<@tp, [serial, didx]>>,
                                  %w: tensor<16x32xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>> {
  %y = fusion.linear %x, %w : tensor<8x32xf32, #fusion.dist<@tp, [serial, didx]>>,
                              tensor<16x32xf32, #fusion.dist<@tp, [serial, didx]>>
                           -> tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>
  return %y : tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>
}
