// C = sum_d A[:, d] @ B[d]; A: [S, DIDx(D), M/S, K/D], B: [DIDx(D), K/D, N] -> C: [Stream(S), M/S, N]
// Seed: MultiDeviceStreamParallelTypeTest.matmul_AR (001), row-parallel GEMM: K is
// sharded, each device multiplies its K-slice, and the sum over the didx axis
// is an allreduce per stream iteration, overlapped with the next slice's GEMM.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @matmul_allreduce(%a: tensor<4x4x8x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                            %b: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> tensor<4x8x16xf32, #fusion.dist<@tp, [stream, serial, serial]>> {
  %bb = fusion.broadcast %b [0] : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                               -> tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>
  %partial = fusion.matmul %a, %bb : tensor<4x4x8x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                                     tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>
                                  -> tensor<4x4x8x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
  %c = fusion.sum %partial [1] : tensor<4x4x8x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
                              -> tensor<4x8x16xf32, #fusion.dist<@tp, [stream, serial, serial]>>
  return %c : tensor<4x8x16xf32, #fusion.dist<@tp, [stream, serial, serial]>>
}
