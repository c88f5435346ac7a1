// C = sum_d A[:, d] @ B[d]; A: [S, DIDx(D), D, M/(S*D), K/D], B: [DIDx(D), K/D, N]
//   -> C: [Stream(S), DIDx(D), M/(S*D), N]
// Seed: MultiDeviceStreamParallelTypeTest.matmul_RS_through_bcast (001): B is
// broadcast to A's batch axes, and the sum over the didx axis is a reduce-scatter.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @matmul_reduce_scatter(
    %a: tensor<4x4x4x4x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>,
    %b: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> tensor<4x4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>> {
  %bb = fusion.broadcast %b [0, 2] : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                                  -> tensor<4x4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>
  %partial = fusion.matmul %a, %bb : tensor<4x4x4x4x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>,
                                     tensor<4x4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>
                                  -> tensor<4x4x4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial, serial]>>
  %c = fusion.sum %partial [1] : tensor<4x4x4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial, serial]>>
                              -> tensor<4x4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
  return %c : tensor<4x4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
}
