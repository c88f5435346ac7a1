// out[s, e, n] = sum_d in[s, d, e, n]; device d keeps out[:, d, :].
// Seed: MultiDeviceStreamParallelTypeTest.ReduceScatter (001). in: [S, DIDx(D), D, N],
// out: [Stream(S), DIDx(D), N]; the sum over the didx axis whose result is
// sharded on another axis is a reduce-scatter, one per stream iteration.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @reduce_scatter(%in: tensor<4x4x4x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>)
    -> tensor<4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial]>> {
  %out = fusion.sum %in [1] : tensor<4x4x4x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>
                           -> tensor<4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial]>>
  return %out : tensor<4x4x16xf32, #fusion.dist<@tp, [stream, didx, serial]>>
}
