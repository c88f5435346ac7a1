// A fusion program whose input (2^40 f32, 4 TiB) no memory holds
// (test/Integration/hir-run-invalid.mlir).
fusion.mesh @one = [0]
func.func @too_large(%x: tensor<1048576x1048576xf32, #fusion.dist<@one, [serial, serial]>>)
    -> tensor<1048576x1048576xf32, #fusion.dist<@one, [serial, serial]>> {
  %y = fusion.neg %x : tensor<1048576x1048576xf32, #fusion.dist<@one, [serial, serial]>>
                     -> tensor<1048576x1048576xf32, #fusion.dist<@one, [serial, serial]>>
  return %y : tensor<1048576x1048576xf32, #fusion.dist<@one, [serial, serial]>>
}
