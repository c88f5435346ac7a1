// out = in, gathered slice by slice: in is sharded along axis 0 (DIDx) and
// out is stream-parallel along the same axis, so iteration i needs rank i's
// shard. Seed: MultiDeviceStreamParallelTypeTest.AllgatherP2p (001). Without
// p2p the allgather runs whole before the loop; with hir-lower{p2p=nccl|cuda}
// it becomes a ring of sends and receives, one per iteration.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @allgather_p2p(%in: tensor<4x64xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<4x64xf32, #fusion.dist<@tp, [stream, serial]>> {
  %out = fusion.set %in : tensor<4x64xf32, #fusion.dist<@tp, [didx, serial]>>
                       -> tensor<4x64xf32, #fusion.dist<@tp, [stream, serial]>>
  return %out : tensor<4x64xf32, #fusion.dist<@tp, [stream, serial]>>
}
