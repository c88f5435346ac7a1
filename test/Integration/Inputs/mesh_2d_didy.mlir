// On a 2x4 mesh: the data-parallel gradient sum over the rows (didy, one
// allreduce within each column), then a gather of the didx-split columns
// within each row, and a re-split of axis 1 over the rows.
fusion.mesh @m = [[0, 1, 2, 3], [4, 5, 6, 7]]
func.func @mesh_2d_didy(%g: tensor<2x8x12xf32, #fusion.dist<@m, [didy, didx, serial]>>)
    -> tensor<8x12xf32, #fusion.dist<@m, [serial, didy]>> {
  %s = fusion.sum %g [0] : tensor<2x8x12xf32, #fusion.dist<@m, [didy, didx, serial]>>
                        -> tensor<8x12xf32, #fusion.dist<@m, [didx, serial]>>
  %r = fusion.set %s : tensor<8x12xf32, #fusion.dist<@m, [didx, serial]>>
                    -> tensor<8x12xf32, #fusion.dist<@m, [serial, didy]>>
  return %r : tensor<8x12xf32, #fusion.dist<@m, [serial, didy]>>
}
