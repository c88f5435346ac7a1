// Megatron's tensor- and sequence-parallel MLP with its bias and gelu, as an
// upstream MLIR `shard` user writes it: linalg has no named op for a bias
// broadcast or for gelu, so they are one `linalg.generic` (gelu in its tanh
// form, torch's `approximate='tanh'`):
//   Y = gelu(X @ W1^T + b1) @ W2^T
// X: [T, H] with its tokens split over the 4 devices of grid @tp, W1: [F, H]
// and b1: [F] split along F (column parallel), W2: [H, F] split along F (row
// parallel), Y split along T. hir-run imports it with convert-shard-to-fusion:
// the generic becomes a broadcast of b1 and the pointwise fusion ops of its
// body, and the layer lowers to allgather, linear, the pointwise chain,
// linear, reduce-scatter. It computes what examples/tp_mlp.mlir (its fusion
// twin, with fusion.linear's bias and fusion.gelu) computes:
// test/Integration/shard-generic.mlir compares the two on the same inputs.
shard.grid @tp(shape = 4)
#tf = affine_map<(t, f) -> (t, f)>
#f = affine_map<(t, f) -> (f)>
func.func @shard_generic_mlp(%x: tensor<32x16xf32>, %w1: tensor<64x16xf32>, %b1: tensor<64xf32>,
                             %w2: tensor<16x64xf32>) -> tensor<32x16xf32> {
  %tokens = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %features = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %replicated = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %x_tokens = shard.shard %x to %tokens : tensor<32x16xf32>
  %w1_features = shard.shard %w1 to %tokens : tensor<64x16xf32>
  %b1_features = shard.shard %b1 to %tokens : tensor<64xf32>
  %w2_features = shard.shard %w2 to %features : tensor<16x64xf32>
  %x_all = shard.shard %x_tokens to %replicated annotate_for_users : tensor<32x16xf32>
  %e1 = tensor.empty() : tensor<32x64xf32>
  %h = linalg.matmul indexing_maps = [affine_map<(t, f, h) -> (t, h)>, affine_map<(t, f, h) -> (f, h)>, affine_map<(t, f, h) -> (t, f)>]
         ins(%x_all, %w1_features : tensor<32x16xf32>, tensor<64x16xf32>) outs(%e1 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %h_features = shard.shard %h to %features : tensor<32x64xf32>
  // gelu(h + b1) = 0.5 * z * (1 + tanh(sqrt(2 / pi) * (z + 0.044715 * z^3))), z = h + b1
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %sqrt_2_over_pi = arith.constant 0.7978845608028654 : f32
  %cubic = arith.constant 0.044715 : f32
  %a = linalg.generic {indexing_maps = [#tf, #f, #tf], iterator_types = ["parallel", "parallel"]}
         ins(%h_features, %b1_features : tensor<32x64xf32>, tensor<64xf32>) outs(%e1 : tensor<32x64xf32>) {
  ^bb0(%hv: f32, %bv: f32, %out: f32):
    %z = arith.addf %hv, %bv : f32
    %z2 = arith.mulf %z, %z : f32
    %z3 = arith.mulf %z2, %z : f32
    %c = arith.mulf %z3, %cubic : f32
    %inner = arith.addf %z, %c : f32
    %scaled = arith.mulf %inner, %sqrt_2_over_pi : f32
    %t = math.tanh %scaled : f32
    %onet = arith.addf %t, %one : f32
    %hz = arith.mulf %z, %half : f32
    %g = arith.mulf %hz, %onet : f32
    linalg.yield %g : f32
  } -> tensor<32x64xf32>
  %a_features = shard.shard %a to %features : tensor<32x64xf32>
  %e2 = tensor.empty() : tensor<32x16xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(t, h, f) -> (t, f)>, affine_map<(t, h, f) -> (h, f)>, affine_map<(t, h, f) -> (t, h)>]
         ins(%a_features, %w2_features : tensor<32x64xf32>, tensor<16x64xf32>) outs(%e2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y_tokens = shard.shard %y to %tokens : tensor<32x16xf32>
  return %y_tokens : tensor<32x16xf32>
}
