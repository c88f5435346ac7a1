// out = in, gathered along axis 1 over 2 devices, one allgather per stream
// iteration: a second 2-device program for the same-program checks.
fusion.mesh @tp = [0, 1]
func.func @allgather_2(%in: tensor<4x2xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<4x2xf32, #fusion.dist<@tp, [stream, serial]>> {
  %out = fusion.set %in : tensor<4x2xf32, #fusion.dist<@tp, [serial, didx]>>
                       -> tensor<4x2xf32, #fusion.dist<@tp, [stream, serial]>>
  return %out : tensor<4x2xf32, #fusion.dist<@tp, [stream, serial]>>
}
