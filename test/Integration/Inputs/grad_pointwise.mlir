// Every elementwise op's gradient, on one device (test/Integration/grad-ops.mlir).
fusion.mesh @dev = [0]
func.func @pointwise(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>, %z: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %one = fusion.fill 1.0 : tensor<8x16xf32>
  %a = fusion.tanh %x : tensor<8x16xf32> -> tensor<8x16xf32>
  %ny = fusion.neg %y : tensor<8x16xf32> -> tensor<8x16xf32>
  %b = fusion.exp %ny : tensor<8x16xf32> -> tensor<8x16xf32>
  %c = fusion.mul %a, %b : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %ez = fusion.exp %z : tensor<8x16xf32> -> tensor<8x16xf32>
  %den = fusion.add %ez, %one : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %d = fusion.div %c, %den : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %xy = fusion.sub %x, %y : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %e = fusion.relu %xy : tensor<8x16xf32> -> tensor<8x16xf32>
  %f = fusion.abs %z : tensor<8x16xf32> -> tensor<8x16xf32>
  %g = fusion.max %e, %f : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %h = fusion.min %g, %a : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %gl = fusion.gelu %h : tensor<8x16xf32> -> tensor<8x16xf32>
  %xx = fusion.mul %x, %x : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %p = fusion.add %xx, %one : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %r = fusion.rsqrt %p : tensor<8x16xf32> -> tensor<8x16xf32>
  %m = fusion.relu %y : tensor<8x16xf32> -> tensor<8x16xf32>
  %w = fusion.where %m, %r, %gl : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %s = fusion.add %w, %d : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %out = fusion.add %s, %gl : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %out : tensor<8x16xf32>
}
