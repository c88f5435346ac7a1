// AG+GEMM on natural shapes: A [M, K] with its rows split over 4 devices
// (each holds 256 contiguous rows), C = A @ B with C's rows in 4 chunks
// (stream<4>): chunk i is device i's rows, gathered and multiplied while
// the next chunk's multiply runs on another stream. The same computation as
// ag_matmul_p2p.mlir without its pre-split [D, M/D, K] layout.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @ag_matmul_rows(%a: tensor<1024x1024xbf16, #fusion.dist<@tp, [didx, serial]>>,
                          %b: tensor<1024x2048xbf16, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<1024x2048xbf16, #fusion.dist<@tp, [stream<4>, serial]>> {
  %c = fusion.matmul %a, %b : tensor<1024x1024xbf16, #fusion.dist<@tp, [didx, serial]>>,
                              tensor<1024x2048xbf16, #fusion.dist<@tp, [serial, serial]>>
                           -> tensor<1024x2048xbf16, #fusion.dist<@tp, [stream<4>, serial]>>
  return %c : tensor<1024x2048xbf16, #fusion.dist<@tp, [stream<4>, serial]>>
}
