// out[s, n] = sum_d in[s, d, n], where axis d is sharded over the mesh.
// Seed: MultiDeviceStreamParallelTypeTest.Allreduce (001). in: [S, DIDx(D), N],
// out: [Stream(S), N]; summing the didx axis leaves a partial sum per device,
// completed by one allreduce per stream iteration.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @allreduce(%in: tensor<4x4x16xf32, #fusion.dist<@tp, [serial, didx, serial]>>)
    -> tensor<4x16xf32, #fusion.dist<@tp, [stream, serial]>> {
  %out = fusion.sum %in [1] : tensor<4x4x16xf32, #fusion.dist<@tp, [serial, didx, serial]>>
                           -> tensor<4x16xf32, #fusion.dist<@tp, [stream, serial]>>
  return %out : tensor<4x16xf32, #fusion.dist<@tp, [stream, serial]>>
}
