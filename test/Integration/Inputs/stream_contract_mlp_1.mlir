// Streaming through a contraction on 1 device (test/Integration/stream-contraction.mlir):
// a tensor-parallel MLP in the pre-split layout (device d holds W1[d] and
// W2[d], its F/D features), x's rows gathered, FC1 with its features in 4
// chunks (stream<4>), gelu, FC2 contracting those chunks (each iteration
// adds its chunk's partial product), then the partial sums over the
// devices reduce-scattered onto x's rows.
fusion.mesh @tp = [0]
func.func @mlp(%x: tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>,
               %w1: tensor<1x16x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
               %w2: tensor<1x16x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>> {
  %g = fusion.set %x : tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<48x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %h = fusion.matmul %g, %w1 : tensor<48x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<1x16x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>
      -> tensor<1x48x16xf32, #fusion.dist<@tp, [didx, serial, stream<4>]>>
  %a = fusion.gelu %h : tensor<1x48x16xf32, #fusion.dist<@tp, [didx, serial, stream<4>]>> -> tensor<1x48x16xf32, #fusion.dist<@tp, [didx, serial, stream<4>]>>
  %p = fusion.matmul %a, %w2 : tensor<1x48x16xf32, #fusion.dist<@tp, [didx, serial, stream<4>]>>, tensor<1x16x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>
      -> tensor<1x48x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %y = fusion.sum %p [0] : tensor<1x48x16xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>
  return %y : tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>
}
