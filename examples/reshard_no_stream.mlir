// out = in, gathered along axis 0 in one piece: a resharding with no stream axis.
// Seed: the resharding that 001's Allgather test pipelines, here with no stream
// axis: the didx -> serial set lowers to one allgather of the whole tensor.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @reshard_no_stream(%in: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> {
  %out = fusion.set %in : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
                       -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return %out : tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
}
