// Matmuls whose batch axes broadcast, beside a stream axis, on 2 devices:
// - C, the TP-rowwise GEMM+RS: device d multiplies its K-slice of A by its
//   own K-slice of B, [DIDx(D), 1, 1, K/D, N], whose unit axes are broadcast
//   along the stream chunks and the scattered rows; the sum over the devices
//   is a reduce-scatter per chunk.
// - Y: one activation [1, M, K] against S weights streamed, the activation's
//   unit axis broadcast along the stream axis.
fusion.mesh @tp = [0, 1]
func.func @matmul_broadcast(
    %a: tensor<2x2x2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial, serial, serial]>>,
    %b: tensor<2x1x1x8x6xf32, #fusion.dist<@tp, [didx, serial, serial, serial, serial]>>,
    %x: tensor<1x4x8xbf16, #fusion.dist<@tp, [serial, serial, serial]>>,
    %w: tensor<3x8x6xbf16, #fusion.dist<@tp, [serial, serial, serial]>>)
    -> (tensor<2x2x4x6xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>,
        tensor<3x4x6xbf16, #fusion.dist<@tp, [stream, serial, serial]>>) {
  %p = fusion.matmul %a, %b : tensor<2x2x2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial, serial, serial]>>,
                              tensor<2x1x1x8x6xf32, #fusion.dist<@tp, [didx, serial, serial, serial, serial]>>
                           -> tensor<2x2x2x4x6xf32, #fusion.dist<@tp, [didx, stream, serial, serial, serial]>>
  %c = fusion.sum %p [0] : tensor<2x2x2x4x6xf32, #fusion.dist<@tp, [didx, stream, serial, serial, serial]>>
                        -> tensor<2x2x4x6xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
  %y = fusion.matmul %x, %w : tensor<1x4x8xbf16, #fusion.dist<@tp, [serial, serial, serial]>>,
                              tensor<3x8x6xbf16, #fusion.dist<@tp, [serial, serial, serial]>>
                           -> tensor<3x4x6xbf16, #fusion.dist<@tp, [stream, serial, serial]>>
  return %c, %y : tensor<2x2x4x6xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>,
                  tensor<3x4x6xbf16, #fusion.dist<@tp, [stream, serial, serial]>>
}
