// Megatron's tensor- and sequence-parallel MLP, written as an upstream MLIR
// `shard` user writes it (examples/tp_mlp.mlir is its fusion twin, with
// gelu and a bias, which linalg has no named ops for):
//   Y = tanh(X @ W1^T) @ W2^T
// X: [T, H] with its tokens split over the 4 devices of grid @tp (sequence
// parallel), gathered for the first matmul; W1: [F, H] split along F
// (column parallel); W2: [H, F] split along F (row parallel), whose partial
// products are summed and scattered along T. hir-run imports it with
// convert-shard-to-fusion; it lowers to allgather, linear, tanh, linear,
// reduce-scatter (the host program of test/Integration/Inputs/shard_mlp_fusion.mlir).
shard.grid @tp(shape = 4)
func.func @shard_mlp(%x: tensor<32x16xf32>, %w1: tensor<64x16xf32>, %w2: tensor<16x64xf32>) -> tensor<32x16xf32> {
  %tokens = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %features = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %replicated = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %x_tokens = shard.shard %x to %tokens : tensor<32x16xf32>
  %w1_features = shard.shard %w1 to %tokens : tensor<64x16xf32>
  %w2_features = shard.shard %w2 to %features : tensor<16x64xf32>
  %x_all = shard.shard %x_tokens to %replicated annotate_for_users : tensor<32x16xf32>
  %e1 = tensor.empty() : tensor<32x64xf32>
  %h = linalg.matmul indexing_maps = [affine_map<(t, f, h) -> (t, h)>, affine_map<(t, f, h) -> (f, h)>, affine_map<(t, f, h) -> (t, f)>]
         ins(%x_all, %w1_features : tensor<32x16xf32>, tensor<64x16xf32>) outs(%e1 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %h_features = shard.shard %h to %features : tensor<32x64xf32>
  %a = linalg.tanh ins(%h_features : tensor<32x64xf32>) outs(%e1 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %a_features = shard.shard %a to %features : tensor<32x64xf32>
  %e2 = tensor.empty() : tensor<32x16xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(t, h, f) -> (t, f)>, affine_map<(t, h, f) -> (h, f)>, affine_map<(t, h, f) -> (t, h)>]
         ins(%a_features, %w2_features : tensor<32x64xf32>, tensor<16x64xf32>) outs(%e2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y_tokens = shard.shard %y to %tokens : tensor<32x16xf32>
  return %y_tokens : tensor<32x16xf32>
}
