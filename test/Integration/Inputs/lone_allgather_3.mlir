// A lone DIDx -> Stream set on 3 device(s) (as examples/allgather_p2p.mlir
// on 4): with p2p it is a ring filling the output slice by slice
// (test/Integration/ring-lone-allgather.mlir).
fusion.mesh @tp = [0, 1, 2]
func.func @lone_allgather_3(%in: tensor<3x24xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<3x24xf32, #fusion.dist<@tp, [stream, serial]>> {
  %out = fusion.set %in : tensor<3x24xf32, #fusion.dist<@tp, [didx, serial]>>
                       -> tensor<3x24xf32, #fusion.dist<@tp, [stream, serial]>>
  return %out : tensor<3x24xf32, #fusion.dist<@tp, [stream, serial]>>
}
