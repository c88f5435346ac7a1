// shard_mlp.mlir's layer on a 2-D grid, as an upstream MLIR `shard` user
// writes it: two data-parallel replicas (grid axis 0, the rows: didy) of a
// 4-way tensor-parallel group (grid axis 1, the columns: didx), 8 ranks.
//   Y = tanh(X @ W1) @ W2
// X: [B, H] with its batch split over the rows; W1: [H, F] split along F
// over the columns (column parallel); W2: [F, H] split along F over the
// columns (row parallel), whose partial products are summed within each row.
// convert-shard-to-fusion makes the grid fusion.mesh @tp_dp = [[0, 1, 2, 3],
// [4, 5, 6, 7]]; it lowers to matmul, tanh, matmul and an allreduce within
// each row (the host program of
// test/Integration/Inputs/shard_tp_dp_mlp_fusion.mlir).
shard.grid @tp_dp(shape = 2x4)
func.func @shard_tp_dp_mlp(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %batch = shard.sharding @tp_dp split_axes = [[0]] : !shard.sharding
  %batch_features = shard.sharding @tp_dp split_axes = [[0], [1]] : !shard.sharding
  %columns = shard.sharding @tp_dp split_axes = [[], [1]] : !shard.sharding
  %rows = shard.sharding @tp_dp split_axes = [[1]] : !shard.sharding
  %x_batch = shard.shard %x to %batch : tensor<16x32xf32>
  %w1_features = shard.shard %w1 to %columns : tensor<32x64xf32>
  %w2_features = shard.shard %w2 to %rows : tensor<64x32xf32>
  %e1 = tensor.empty() : tensor<16x64xf32>
  %h = linalg.matmul ins(%x_batch, %w1_features : tensor<16x32xf32>, tensor<32x64xf32>)
                     outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h_split = shard.shard %h to %batch_features : tensor<16x64xf32>
  %a = linalg.tanh ins(%h_split : tensor<16x64xf32>) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %a_split = shard.shard %a to %batch_features : tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %y = linalg.matmul ins(%a_split, %w2_features : tensor<16x64xf32>, tensor<64x32xf32>)
                     outs(%e2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y_batch = shard.shard %y to %batch : tensor<16x32xf32>
  return %y_batch : tensor<16x32xf32>
}
