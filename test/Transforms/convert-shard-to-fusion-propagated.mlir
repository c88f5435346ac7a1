// A shard user's flow: sharding-propagation annotates every operand and
// result of the ops (and their destinations), and convert-shard-to-fusion
// imports the outcome as it imports the program it came from.
// RUN: hir-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(sharding-propagation),convert-shard-to-fusion)' | FileCheck %s
// RUN: hir-opt %s -split-input-file --pass-pipeline='builtin.module(convert-shard-to-fusion,fusion-propagate-sharding)' | FileCheck %s

// A row-parallel matmul: A split along M (16 rows a device), B replicated.
// CHECK:       fusion.mesh @g = [0, 1, 2, 3]
// CHECK-NOT:   shard.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME:  (%[[A:[^:]+]]: tensor<64x32xf32, #fusion.dist<@g, [didx, serial]>>, %[[B:[^:]+]]: tensor<32x16xf32, #fusion.dist<@g, [serial, serial]>>)
// CHECK-SAME:  -> tensor<64x16xf32, #fusion.dist<@g, [didx, serial]>>
// CHECK-NEXT:  %[[C:.*]] = fusion.matmul %[[A]], %[[B]] : tensor<64x32xf32, #fusion.dist<@g, [didx, serial]>>, tensor<32x16xf32, #fusion.dist<@g, [serial, serial]>> -> tensor<64x16xf32, #fusion.dist<@g, [didx, serial]>>
// CHECK-NEXT:  return %[[C]]
shard.grid @g(shape = 4)
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<64x32xf32>
  %e = tensor.empty() : tensor<64x16xf32>
  %c = linalg.matmul ins(%a1, %b : tensor<64x32xf32>, tensor<32x16xf32>) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %c : tensor<64x16xf32>
}

// -----

// Megatron's MLP: W1 split along N (column-parallel), W2 along K
// (row-parallel), whose product is partial on every device until the
// replicated result sums it (fusion's matmul over a split K).
// CHECK:       fusion.mesh @g = [0, 1, 2, 3]
// CHECK-LABEL: func.func @mlp
// CHECK-SAME:  (%[[X:[^:]+]]: tensor<8x32xf32, #fusion.dist<@g, [serial, serial]>>, %[[W1:[^:]+]]: tensor<32x64xf32, #fusion.dist<@g, [serial, didx]>>, %[[W2:[^:]+]]: tensor<64x32xf32, #fusion.dist<@g, [didx, serial]>>)
// CHECK-SAME:  -> tensor<8x32xf32, #fusion.dist<@g, [serial, serial]>>
// CHECK-NEXT:  %[[H:.*]] = fusion.matmul %[[X]], %[[W1]] : {{.*}} -> tensor<8x64xf32, #fusion.dist<@g, [serial, didx]>>
// CHECK-NEXT:  %[[T:.*]] = fusion.tanh %[[H]] : tensor<8x64xf32, #fusion.dist<@g, [serial, didx]>> -> tensor<8x64xf32, #fusion.dist<@g, [serial, didx]>>
// CHECK-NEXT:  %[[Y:.*]] = fusion.matmul %[[T]], %[[W2]] : {{.*}} -> tensor<8x32xf32, #fusion.dist<@g, [serial, serial]>>
// CHECK-NEXT:  return %[[Y]]
shard.grid @g(shape = 4)
func.func @mlp(%x: tensor<8x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<64x32xf32>) -> tensor<8x32xf32> {
  %replicated = shard.sharding @g split_axes = [[]] : !shard.sharding
  %x1 = shard.shard %x to %replicated : tensor<8x32xf32>
  %columns = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %w1s = shard.shard %w1 to %columns : tensor<32x64xf32>
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %w2s = shard.shard %w2 to %rows : tensor<64x32xf32>
  %e1 = tensor.empty() : tensor<8x64xf32>
  %h = linalg.matmul ins(%x1, %w1s : tensor<8x32xf32>, tensor<32x64xf32>) outs(%e1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %t = linalg.tanh ins(%h : tensor<8x64xf32>) outs(%e1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %y = linalg.matmul ins(%t, %w2s : tensor<8x64xf32>, tensor<64x32xf32>) outs(%e2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y1 = shard.shard %y to %replicated : tensor<8x32xf32>
  return %y1 : tensor<8x32xf32>
}

// -----

// The same layer on a 2x4 grid (TP=4 over the columns, DP=2 over the rows).
// CHECK:       fusion.mesh @tp_dp = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// CHECK-LABEL: func.func @tp_dp_mlp
// CHECK-SAME:  (%[[X:[^:]+]]: tensor<16x32xf32, #fusion.dist<@tp_dp, [didy, serial]>>, %[[W1:[^:]+]]: tensor<32x64xf32, #fusion.dist<@tp_dp, [serial, didx]>>, %[[W2:[^:]+]]: tensor<64x32xf32, #fusion.dist<@tp_dp, [didx, serial]>>)
// CHECK-SAME:  -> tensor<16x32xf32, #fusion.dist<@tp_dp, [didy, serial]>>
// CHECK-NEXT:  %[[H:.*]] = fusion.matmul %[[X]], %[[W1]] : {{.*}} -> tensor<16x64xf32, #fusion.dist<@tp_dp, [didy, didx]>>
// CHECK-NEXT:  %[[T:.*]] = fusion.tanh %[[H]]
// CHECK-NEXT:  %[[Y:.*]] = fusion.matmul %[[T]], %[[W2]] : {{.*}} -> tensor<16x32xf32, #fusion.dist<@tp_dp, [didy, serial]>>
// CHECK-NEXT:  return %[[Y]]
shard.grid @tp_dp(shape = 2x4)
func.func @tp_dp_mlp(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %batch = shard.sharding @tp_dp split_axes = [[0]] : !shard.sharding
  %columns = shard.sharding @tp_dp split_axes = [[], [1]] : !shard.sharding
  %rows = shard.sharding @tp_dp split_axes = [[1]] : !shard.sharding
  %x1 = shard.shard %x to %batch : tensor<16x32xf32>
  %w1s = shard.shard %w1 to %columns : tensor<32x64xf32>
  %w2s = shard.shard %w2 to %rows : tensor<64x32xf32>
  %e1 = tensor.empty() : tensor<16x64xf32>
  %h = linalg.matmul ins(%x1, %w1s : tensor<16x32xf32>, tensor<32x64xf32>) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %t = linalg.tanh ins(%h : tensor<16x64xf32>) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %y = linalg.matmul ins(%t, %w2s : tensor<16x64xf32>, tensor<64x32xf32>) outs(%e2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y1 = shard.shard %y to %batch : tensor<16x32xf32>
  return %y1 : tensor<16x32xf32>
}
