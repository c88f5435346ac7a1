// C = A @ B; A: [S, DIDx(D), M/(S*D), K], B: [K, N] -> C: [Stream(S), D, M/(S*D), N]
// Seed: MultiDeviceStreamParallelTypeTest.AG_matmul (001); DESIGN.md §2.1 with
// S = D = 4, M = 4096, K = 1024, N = 2048. Each stream iteration allgathers A[s]
// and multiplies it while the next slice is in flight.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @ag_matmul(%a: tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                     %b: tensor<1024x2048xbf16, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<4x4x256x2048xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>> {
  %c = fusion.matmul %a, %b : tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                              tensor<1024x2048xbf16, #fusion.dist<@tp, [serial, serial]>>
                           -> tensor<4x4x256x2048xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>>
  return %c : tensor<4x4x256x2048xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>>
}
