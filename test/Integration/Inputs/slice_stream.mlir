// A slice whose result is stream-parallel over the axis it takes whole:
// every third column from column 1, one row per iteration.
fusion.mesh @tp = [0, 1]
func.func @stream(%x: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<8x5xf32, #fusion.dist<@tp, [stream, serial]>> {
  %e = fusion.exp %x : tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<8x16xf32, #fusion.dist<@tp, [stream, serial]>>
  %s = fusion.slice %e offsets [0, 1] strides [1, 3] : tensor<8x16xf32, #fusion.dist<@tp, [stream, serial]>> -> tensor<8x5xf32, #fusion.dist<@tp, [stream, serial]>>
  return %s : tensor<8x5xf32, #fusion.dist<@tp, [stream, serial]>>
}
