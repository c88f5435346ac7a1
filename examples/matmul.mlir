// c = a @ b with a: [M, K], b: [K, N], stream-parallel along M.
// Seed: single-device stream lowering, Matmul_M (002): iteration i computes row
// i of c from row i of a and all of b.
fusion.mesh @dev = [0]
func.func @matmul(%a: tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>,
                  %b: tensor<16x32xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<8x32xf32, #fusion.dist<@dev, [stream, serial]>> {
  %c = fusion.matmul %a, %b : tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>,
                              tensor<16x32xf32, #fusion.dist<@dev, [serial, serial]>>
                           -> tensor<8x32xf32, #fusion.dist<@dev, [stream, serial]>>
  return %c : tensor<8x32xf32, #fusion.dist<@dev, [stream, serial]>>
}
