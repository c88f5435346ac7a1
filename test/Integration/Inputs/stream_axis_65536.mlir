// A stream axis of 65536 slices: each iteration calls the runtime on its own
// pool stream, about 260k calls on the rank.
fusion.mesh @dev = [0]
func.func @long_stream(%a: tensor<65536x4xf32, #fusion.dist<@dev, [serial, serial]>>,
                       %b: tensor<65536x4xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<65536x4xf32, #fusion.dist<@dev, [stream, serial]>> {
  %out = fusion.add %a, %b : tensor<65536x4xf32, #fusion.dist<@dev, [serial, serial]>>,
                             tensor<65536x4xf32, #fusion.dist<@dev, [serial, serial]>>
                          -> tensor<65536x4xf32, #fusion.dist<@dev, [stream, serial]>>
  return %out : tensor<65536x4xf32, #fusion.dist<@dev, [stream, serial]>>
}
