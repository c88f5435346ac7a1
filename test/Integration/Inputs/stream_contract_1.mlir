// Streaming through a contraction on one device
// (test/Integration/stream-contraction.mlir): FC1 (a linear with its bias,
// its output features in 4 chunks), gelu, then FC2 (a linear with its
// bias, added once) contracting those chunks; and a matmul contracting a
// plain stream axis (one index of K per iteration: 16 rank-1 updates).
fusion.mesh @dev = [0]
func.func @mlp(%x: tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>, %w1: tensor<64x16xf32, #fusion.dist<@dev, [serial, serial]>>, %b1: tensor<64xf32, #fusion.dist<@dev, [serial]>>,
               %w2: tensor<16x64xf32, #fusion.dist<@dev, [serial, serial]>>, %b2: tensor<16xf32, #fusion.dist<@dev, [serial]>>)
    -> (tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<8x64xf32, #fusion.dist<@dev, [serial, serial]>>) {
  %h = fusion.linear %x, %w1, %b1 : tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<64x16xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<64xf32, #fusion.dist<@dev, [serial]>> -> tensor<8x64xf32, #fusion.dist<@dev, [serial, stream<4>]>>
  %a = fusion.gelu %h : tensor<8x64xf32, #fusion.dist<@dev, [serial, stream<4>]>> -> tensor<8x64xf32, #fusion.dist<@dev, [serial, stream<4>]>>
  %y = fusion.linear %a, %w2, %b2 : tensor<8x64xf32, #fusion.dist<@dev, [serial, stream<4>]>>, tensor<16x64xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<16xf32, #fusion.dist<@dev, [serial]>> -> tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>
  %n = fusion.neg %x : tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<8x16xf32, #fusion.dist<@dev, [serial, stream]>>
  %z = fusion.matmul %n, %w2 : tensor<8x16xf32, #fusion.dist<@dev, [serial, stream]>>, tensor<16x64xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<8x64xf32, #fusion.dist<@dev, [serial, serial]>>
  return %y, %z : tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<8x64xf32, #fusion.dist<@dev, [serial, serial]>>
}
