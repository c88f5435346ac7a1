// AG+linear+bias as a ring on 2 device(s): X is row-sharded (DIDx) and Y is
// produced slice by slice along the same axis (Stream), so with p2p the
// allgather of X becomes a ring whose steps each run the linear, bias
// included, on the slice that arrived (test/Integration/ring-linear-bias.mlir).
fusion.mesh @tp = [0, 1]
func.func @ag_linear_bias_ring_2(%x: tensor<2x8x32xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                               %w: tensor<16x32xf32, #fusion.dist<@tp, [serial, serial]>>,
                               %bias: tensor<16xf32, #fusion.dist<@tp, [serial]>>)
    -> tensor<2x8x16xf32, #fusion.dist<@tp, [stream, serial, serial]>> {
  %y = fusion.linear %x, %w, %bias : tensor<2x8x32xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                                     tensor<16x32xf32, #fusion.dist<@tp, [serial, serial]>>,
                                     tensor<16xf32, #fusion.dist<@tp, [serial]>>
                                  -> tensor<2x8x16xf32, #fusion.dist<@tp, [stream, serial, serial]>>
  return %y : tensor<2x8x16xf32, #fusion.dist<@tp, [stream, serial, serial]>>
}
