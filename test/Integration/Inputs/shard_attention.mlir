// softmax(Q K^T) V written with upstream shard and linalg, heads split over
// 2 devices (test/Integration/attention.mlir): convert-shard-to-fusion
// imports the pattern as one fusion.attention of scale 1.
shard.grid @g(shape = 2)
func.func @shard_attention(%q: tensor<4x16x8xf32>, %k: tensor<4x12x8xf32>, %v: tensor<4x12x4xf32>)
    -> tensor<4x16x4xf32> {
  %heads = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %q1 = shard.shard %q to %heads : tensor<4x16x8xf32>
  %k1 = shard.shard %k to %heads : tensor<4x12x8xf32>
  %v1 = shard.shard %v to %heads : tensor<4x12x4xf32>
  %et = tensor.empty() : tensor<4x8x12xf32>
  %kt = linalg.transpose ins(%k1 : tensor<4x12x8xf32>) outs(%et : tensor<4x8x12xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<4x16x12xf32>
  %s = linalg.batch_matmul ins(%q1, %kt : tensor<4x16x8xf32>, tensor<4x8x12xf32>) outs(%es : tensor<4x16x12xf32>) -> tensor<4x16x12xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x16x12xf32>) outs(%es : tensor<4x16x12xf32>) -> tensor<4x16x12xf32>
  %eo = tensor.empty() : tensor<4x16x4xf32>
  %o = linalg.batch_matmul ins(%p, %v1 : tensor<4x16x12xf32>, tensor<4x12x4xf32>) outs(%eo : tensor<4x16x4xf32>) -> tensor<4x16x4xf32>
  %o1 = shard.shard %o to %heads : tensor<4x16x4xf32>
  return %o1 : tensor<4x16x4xf32>
}
