// C = A @ B streamed along its columns: C's N axis in 4 chunks (stream<4>),
// iteration i computing C[:, i*N/4 : (i+1)*N/4] from B's columns of chunk i.
// Natural shapes: no pre-split axis, no transposed weight.
fusion.mesh @dev = [0]
func.func @matmul_columns(%a: tensor<256x1024xbf16, #fusion.dist<@dev, [serial, serial]>>,
                          %b: tensor<1024x2048xbf16, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<256x2048xbf16, #fusion.dist<@dev, [serial, stream<4>]>> {
  %c = fusion.matmul %a, %b : tensor<256x1024xbf16, #fusion.dist<@dev, [serial, serial]>>,
                              tensor<1024x2048xbf16, #fusion.dist<@dev, [serial, serial]>>
                           -> tensor<256x2048xbf16, #fusion.dist<@dev, [serial, stream<4>]>>
  return %c : tensor<256x2048xbf16, #fusion.dist<@dev, [serial, stream<4>]>>
}
