// Natural-shape AG+GEMM on 1 devices: A's rows split over the devices,
// each output's rows in k chunks (k = D, 2 and 8).
fusion.mesh @tp = [0]
func.func @ag_matmul_rows(%a: tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>,
                          %b: tensor<32x48xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> (tensor<64x48xf32, #fusion.dist<@tp, [stream<1>, serial]>>,
        tensor<64x48xf32, #fusion.dist<@tp, [stream<2>, serial]>>,
        tensor<64x48xf32, #fusion.dist<@tp, [stream<8>, serial]>>) {
  %c = fusion.matmul %a, %b : tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<32x48xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<64x48xf32, #fusion.dist<@tp, [stream<1>, serial]>>
  %f = fusion.matmul %a, %b : tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<32x48xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<64x48xf32, #fusion.dist<@tp, [stream<2>, serial]>>
  %m = fusion.matmul %a, %b : tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<32x48xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<64x48xf32, #fusion.dist<@tp, [stream<8>, serial]>>
  return %c, %f, %m : tensor<64x48xf32, #fusion.dist<@tp, [stream<1>, serial]>>, tensor<64x48xf32, #fusion.dist<@tp, [stream<2>, serial]>>, tensor<64x48xf32, #fusion.dist<@tp, [stream<8>, serial]>>
}
