// out = in, gathered along axis 1 and produced slice by slice along axis 0.
// Seed: MultiDeviceStreamParallelTypeTest.Allgather (001). in: [S, DIDx(D)],
// out: [Stream(S), D]; the didx -> serial set is an allgather, one per stream
// iteration (iteration s gathers row s).
fusion.mesh @tp = [0, 1, 2, 3]
func.func @allgather(%in: tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<8x4xf32, #fusion.dist<@tp, [stream, serial]>> {
  %out = fusion.set %in : tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>>
                       -> tensor<8x4xf32, #fusion.dist<@tp, [stream, serial]>>
  return %out : tensor<8x4xf32, #fusion.dist<@tp, [stream, serial]>>
}
