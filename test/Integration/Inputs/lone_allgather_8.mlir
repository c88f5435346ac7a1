// A lone DIDx -> Stream set on 8 device(s) (as examples/allgather_p2p.mlir
// on 4): with p2p it is a ring filling the output slice by slice
// (test/Integration/ring-lone-allgather.mlir).
fusion.mesh @tp = [0, 1, 2, 3, 4, 5, 6, 7]
func.func @lone_allgather_8(%in: tensor<8x24xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<8x24xf32, #fusion.dist<@tp, [stream, serial]>> {
  %out = fusion.set %in : tensor<8x24xf32, #fusion.dist<@tp, [didx, serial]>>
                       -> tensor<8x24xf32, #fusion.dist<@tp, [stream, serial]>>
  return %out : tensor<8x24xf32, #fusion.dist<@tp, [stream, serial]>>
}
