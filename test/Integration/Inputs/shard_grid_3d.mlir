// A 2x2x2 shard grid: a tensor split along all three grid axes (didz,
// didy, didx), reduced along the innermost, which is split over the grid's
// last axis: a local sum, then an allreduce within each didx team.
shard.grid @g(shape = 2x2x2)
func.func @grid3d(%a: tensor<8x4x6xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @g split_axes = [[0], [1], [2]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<8x4x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.reduce ins(%a1 : tensor<8x4x6xf32>) outs(%z : tensor<8x4xf32>) dimensions = [2]
    (%in: f32, %init: f32) {
      %0 = arith.addf %in, %init : f32
      linalg.yield %0 : f32
    }
  %t = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %r1 = shard.shard %r to %t : tensor<8x4xf32>
  return %r1 : tensor<8x4xf32>
}
