// The TP-rowwise GEMM+RS as users write it: C = A @ B with K sharded, device d
// holding A's K-slice and its own K-slice of B; C is reduce-scattered by rows.
// A: [S, DIDx(D), D, M/(S*D), K/D], B: [DIDx(D), 1, K/D, N]
//   -> C: [Stream(S), DIDx(D), M/(S*D), N]
// B's batch axes align with A's last two (torch.matmul broadcasting): its
// didx axis meets A's, and its unit axis is broadcast along A's axis 2 and
// read in place by every stream chunk (no fusion.broadcast, no copy of B,
// unlike matmul_reduce_scatter.mlir, the nvFuser seed's program).
fusion.mesh @tp = [0, 1, 2, 3]
func.func @matmul_reduce_scatter_rowwise(
    %a: tensor<4x4x4x4x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>,
    %b: tensor<4x1x8x16xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>)
    -> tensor<4x4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>> {
  %partial = fusion.matmul %a, %b : tensor<4x4x4x4x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>,
                                    tensor<4x1x8x16xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>
                                 -> tensor<4x4x4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial, serial]>>
  %c = fusion.sum %partial [1] : tensor<4x4x4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial, serial]>>
                              -> tensor<4x4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
  return %c : tensor<4x4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
}
