// A natural tensor-parallel program on 8 devices, written without stream
// axes (test/Integration/overlap.mlir): an allgather of x's rows into a
// column-parallel matmul, then two row-parallel GEMMs whose partial sums
// are reduce-scattered onto the rows, a matmul (the chain of accumulating
// GEMMs with rings) and a linear (the ring of partial blocks), their sum
// reading both reduce-scatters' outputs.
fusion.mesh @tp = [0, 1, 2, 3, 4, 5, 6, 7]
func.func @natural(%x: tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                   %w1: tensor<16x48xf32, #fusion.dist<@tp, [serial, didx]>>,
                   %w2: tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                   %w3: tensor<16x48xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> (tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>) {
  %g = fusion.set %x : tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<48x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %h = fusion.matmul %g, %w1 : tensor<48x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [serial, didx]>>
      -> tensor<48x48xf32, #fusion.dist<@tp, [serial, didx]>>
  %y = fusion.matmul %h, %w2 : tensor<48x48xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>
      -> tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>
  %z = fusion.linear %h, %w3 : tensor<48x48xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<16x48xf32, #fusion.dist<@tp, [serial, didx]>>
      -> tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>
  %r = fusion.add %y, %z : tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>
      -> tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>
  return %r, %z : tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>
}
