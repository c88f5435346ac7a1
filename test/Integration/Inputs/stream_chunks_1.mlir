// stream<k> on one device: a matmul and a linear streamed along their
// output columns, an elementwise chain sharing the matmul's loop, a
// reduction over chunks of rows.
fusion.mesh @dev = [0]
func.func @chunks(%a: tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>,
                  %b: tensor<16x32xf32, #fusion.dist<@dev, [serial, serial]>>,
                  %x: tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>,
                  %w: tensor<24x16xf32, #fusion.dist<@dev, [serial, serial]>>,
                  %bias: tensor<24xf32, #fusion.dist<@dev, [serial]>>)
    -> (tensor<8x32xf32, #fusion.dist<@dev, [serial, stream<4>]>>,
        tensor<8x24xf32, #fusion.dist<@dev, [serial, stream<3>]>>,
        tensor<8xf32, #fusion.dist<@dev, [stream<2>]>>) {
  %c = fusion.matmul %a, %b : tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<16x32xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<8x32xf32, #fusion.dist<@dev, [serial, stream<4>]>>
  %t = fusion.tanh %c : tensor<8x32xf32, #fusion.dist<@dev, [serial, stream<4>]>> -> tensor<8x32xf32, #fusion.dist<@dev, [serial, stream<4>]>>
  %e = fusion.add %t, %c : tensor<8x32xf32, #fusion.dist<@dev, [serial, stream<4>]>>, tensor<8x32xf32, #fusion.dist<@dev, [serial, stream<4>]>> -> tensor<8x32xf32, #fusion.dist<@dev, [serial, stream<4>]>>
  %y = fusion.linear %x, %w, %bias : tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<24x16xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<24xf32, #fusion.dist<@dev, [serial]>> -> tensor<8x24xf32, #fusion.dist<@dev, [serial, stream<3>]>>
  %s = fusion.sum %a [1] : tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<8xf32, #fusion.dist<@dev, [stream<2>]>>
  return %e, %y, %s : tensor<8x32xf32, #fusion.dist<@dev, [serial, stream<4>]>>, tensor<8x24xf32, #fusion.dist<@dev, [serial, stream<3>]>>, tensor<8xf32, #fusion.dist<@dev, [stream<2>]>>
}
