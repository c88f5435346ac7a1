// Every program in examples/ parses, verifies and passes fusion-verify-sharding,
// and keeps its ops (in order) through hir-opt.

// RUN: hir-opt --fusion-verify-sharding %examples/ag_linear.mlir | FileCheck %s --check-prefix=AG_LINEAR
// RUN: hir-opt --fusion-verify-sharding %examples/ag_matmul.mlir | FileCheck %s --check-prefix=AG_MATMUL
// RUN: %mlir_opt --load-dialect-plugin=%hir_plugin %examples/ag_matmul.mlir | FileCheck %s --check-prefix=AG_MATMUL
// RUN: hir-opt --fusion-verify-sharding %examples/allgather.mlir | FileCheck %s --check-prefix=ALLGATHER
// RUN: hir-opt --fusion-verify-sharding %examples/allgather_p2p.mlir | FileCheck %s --check-prefix=ALLGATHER_P2P
// RUN: hir-opt --fusion-verify-sharding %examples/ag_matmul_p2p.mlir | FileCheck %s --check-prefix=AG_MATMUL_P2P
// RUN: hir-opt --fusion-verify-sharding %examples/allreduce.mlir | FileCheck %s --check-prefix=ALLREDUCE
// RUN: hir-opt --fusion-verify-sharding %examples/binary.mlir | FileCheck %s --check-prefix=BINARY
// RUN: hir-opt --fusion-verify-sharding %examples/fill_iota.mlir | FileCheck %s --check-prefix=FILL_IOTA
// RUN: hir-opt --fusion-verify-sharding %examples/inputs_not_stream.mlir | FileCheck %s --check-prefix=INPUTS_NOT_STREAM
// RUN: hir-opt --fusion-verify-sharding %examples/linear.mlir | FileCheck %s --check-prefix=LINEAR
// RUN: hir-opt --fusion-verify-sharding %examples/matmul.mlir | FileCheck %s --check-prefix=MATMUL
// RUN: hir-opt --fusion-verify-sharding %examples/matmul_columns.mlir | FileCheck %s --check-prefix=MATMUL_COLUMNS
// RUN: hir-opt --fusion-verify-sharding %examples/ag_matmul_rows.mlir | FileCheck %s --check-prefix=AG_MATMUL_ROWS
// RUN: hir-opt --fusion-verify-sharding %examples/matmul_allreduce.mlir | FileCheck %s --check-prefix=MATMUL_ALLREDUCE
// RUN: hir-opt --fusion-verify-sharding %examples/matmul_reduce_scatter.mlir | FileCheck %s --check-prefix=MATMUL_REDUCE_SCATTER
// RUN: hir-opt --fusion-verify-sharding %examples/matmul_reduce_scatter_rowwise.mlir | FileCheck %s --check-prefix=MATMUL_REDUCE_SCATTER_ROWWISE
// RUN: hir-opt --fusion-verify-sharding %examples/reduce_scatter.mlir | FileCheck %s --check-prefix=REDUCE_SCATTER
// RUN: hir-opt --fusion-verify-sharding %examples/reduction.mlir | FileCheck %s --check-prefix=REDUCTION
// RUN: hir-opt --fusion-verify-sharding %examples/reshape.mlir | FileCheck %s --check-prefix=RESHAPE
// RUN: hir-opt --fusion-verify-sharding %examples/reshard_no_stream.mlir | FileCheck %s --check-prefix=RESHARD_NO_STREAM
// RUN: hir-opt --fusion-verify-sharding %examples/row_parallel_allreduce.mlir | FileCheck %s --check-prefix=ROW_PARALLEL_ALLREDUCE
// RUN: hir-opt --fusion-verify-sharding %examples/sum.mlir | FileCheck %s --check-prefix=SUM
// RUN: hir-opt --fusion-verify-sharding %examples/set.mlir | FileCheck %s --check-prefix=SET
// RUN: hir-opt --fusion-verify-sharding %examples/transpose.mlir | FileCheck %s --check-prefix=TRANSPOSE
// RUN: hir-opt --fusion-verify-sharding %examples/three_sets.mlir | FileCheck %s --check-prefix=THREE_SETS
// RUN: hir-opt --fusion-verify-sharding %examples/two_sets.mlir | FileCheck %s --check-prefix=TWO_SETS
// RUN: hir-opt --fusion-verify-sharding %examples/tp_mlp.mlir | FileCheck %s --check-prefix=TP_MLP
// RUN: hir-opt --fusion-verify-sharding %examples/tp_dp_mlp.mlir | FileCheck %s --check-prefix=TP_DP_MLP
// The example written with upstream shard, once imported:
// RUN: hir-opt --convert-shard-to-fusion --fusion-verify-sharding %examples/shard_mlp.mlir | FileCheck %s --check-prefix=SHARD_MLP
// RUN: hir-opt --convert-shard-to-fusion --fusion-verify-sharding %examples/shard_tp_dp_mlp.mlir | FileCheck %s --check-prefix=SHARD_TP_DP_MLP

// AG_LINEAR: fusion.mesh
// AG_LINEAR-LABEL: func.func @ag_linear
// AG_LINEAR: fusion.linear
// AG_LINEAR: return

// AG_MATMUL: fusion.mesh
// AG_MATMUL-LABEL: func.func @ag_matmul
// AG_MATMUL: fusion.matmul
// AG_MATMUL: return

// ALLGATHER: fusion.mesh
// ALLGATHER-LABEL: func.func @allgather
// ALLGATHER: fusion.set
// ALLGATHER: return

// ALLREDUCE: fusion.mesh
// ALLREDUCE-LABEL: func.func @allreduce
// ALLREDUCE: fusion.sum
// ALLREDUCE: return

// SUM: fusion.mesh @tp = [0, 1, 2, 3]
// SUM-LABEL: func.func @sum
// SUM: fusion.sum %{{.*}} [0]
// SUM: return

// BINARY: fusion.mesh
// BINARY-LABEL: func.func @binary
// BINARY: fusion.add
// BINARY: return

// FILL_IOTA: fusion.mesh
// FILL_IOTA-LABEL: func.func @fill_iota
// FILL_IOTA: fusion.iota 0
// FILL_IOTA: fusion.iota 1
// FILL_IOTA: fusion.fill 5.000000e-01
// FILL_IOTA: fusion.mul
// FILL_IOTA: fusion.add
// FILL_IOTA: fusion.add
// FILL_IOTA: fusion.fill 0.000000e+00
// FILL_IOTA: return

// TRANSPOSE: fusion.mesh
// TRANSPOSE-LABEL: func.func @transpose
// TRANSPOSE: fusion.transpose
// TRANSPOSE: fusion.matmul
// TRANSPOSE: fusion.transpose
// TRANSPOSE: return

// RESHAPE: fusion.mesh
// RESHAPE-LABEL: func.func @reshape
// RESHAPE: fusion.reshape
// RESHAPE: fusion.matmul
// RESHAPE: fusion.set
// RESHAPE: fusion.reshape
// RESHAPE: return

// INPUTS_NOT_STREAM: fusion.mesh
// INPUTS_NOT_STREAM-LABEL: func.func @inputs_not_stream
// INPUTS_NOT_STREAM: fusion.set
// INPUTS_NOT_STREAM: return

// LINEAR: fusion.mesh
// LINEAR-LABEL: func.func @linear
// LINEAR: fusion.linear
// LINEAR: return

// MATMUL: fusion.mesh
// MATMUL-LABEL: func.func @matmul
// MATMUL: fusion.matmul
// MATMUL: return

// MATMUL_COLUMNS-LABEL: func.func @matmul_columns
// MATMUL_COLUMNS: fusion.matmul {{.*}} -> tensor<256x2048xbf16, #fusion.dist<@dev, [serial, stream<4>]>>
// MATMUL_COLUMNS: return

// AG_MATMUL_ROWS-LABEL: func.func @ag_matmul_rows
// AG_MATMUL_ROWS: fusion.matmul {{.*}} -> tensor<1024x2048xbf16, #fusion.dist<@tp, [stream<4>, serial]>>
// AG_MATMUL_ROWS: return

// MATMUL_ALLREDUCE: fusion.mesh
// MATMUL_ALLREDUCE-LABEL: func.func @matmul_allreduce
// MATMUL_ALLREDUCE: fusion.broadcast
// MATMUL_ALLREDUCE: fusion.matmul
// MATMUL_ALLREDUCE: fusion.sum
// MATMUL_ALLREDUCE: return

// MATMUL_REDUCE_SCATTER: fusion.mesh
// MATMUL_REDUCE_SCATTER-LABEL: func.func @matmul_reduce_scatter
// MATMUL_REDUCE_SCATTER: fusion.broadcast
// MATMUL_REDUCE_SCATTER: fusion.matmul
// MATMUL_REDUCE_SCATTER: fusion.sum
// MATMUL_REDUCE_SCATTER: return

// MATMUL_REDUCE_SCATTER_ROWWISE: fusion.mesh
// MATMUL_REDUCE_SCATTER_ROWWISE-LABEL: func.func @matmul_reduce_scatter_rowwise
// MATMUL_REDUCE_SCATTER_ROWWISE-NOT: fusion.broadcast
// MATMUL_REDUCE_SCATTER_ROWWISE: fusion.matmul
// MATMUL_REDUCE_SCATTER_ROWWISE: fusion.sum
// MATMUL_REDUCE_SCATTER_ROWWISE: return

// REDUCE_SCATTER: fusion.mesh
// REDUCE_SCATTER-LABEL: func.func @reduce_scatter
// REDUCE_SCATTER: fusion.sum
// REDUCE_SCATTER: return

// REDUCTION: fusion.mesh
// REDUCTION-LABEL: func.func @reduction
// REDUCTION: fusion.sum
// REDUCTION: return

// RESHARD_NO_STREAM: fusion.mesh
// RESHARD_NO_STREAM-LABEL: func.func @reshard_no_stream
// RESHARD_NO_STREAM: fusion.set
// RESHARD_NO_STREAM: return

// SET: fusion.mesh
// SET-LABEL: func.func @set
// SET: fusion.set
// SET: return

// THREE_SETS: fusion.mesh
// THREE_SETS-LABEL: func.func @three_sets
// THREE_SETS: fusion.set
// THREE_SETS: fusion.set
// THREE_SETS: fusion.set
// THREE_SETS: return

// TWO_SETS: fusion.mesh
// TWO_SETS-LABEL: func.func @two_sets
// TWO_SETS: fusion.set
// TWO_SETS: fusion.set
// TWO_SETS: return

// ALLGATHER_P2P: fusion.mesh
// ALLGATHER_P2P-LABEL: func.func @allgather_p2p
// ALLGATHER_P2P: fusion.set
// ALLGATHER_P2P: return

// AG_MATMUL_P2P: fusion.mesh
// AG_MATMUL_P2P-LABEL: func.func @ag_matmul_p2p
// AG_MATMUL_P2P: fusion.matmul
// AG_MATMUL_P2P: return

// ROW_PARALLEL_ALLREDUCE: fusion.mesh
// ROW_PARALLEL_ALLREDUCE-LABEL: func.func @row_parallel_allreduce
// ROW_PARALLEL_ALLREDUCE: fusion.linear
// ROW_PARALLEL_ALLREDUCE: return

// TP_MLP: fusion.mesh
// TP_MLP-LABEL: func.func @tp_mlp
// TP_MLP: fusion.set
// TP_MLP: fusion.linear
// TP_MLP: fusion.gelu
// TP_MLP: fusion.linear
// TP_MLP: return

// SHARD_MLP: fusion.mesh @tp = [0, 1, 2, 3]
// SHARD_MLP-LABEL: func.func @shard_mlp
// SHARD_MLP: fusion.set
// SHARD_MLP: fusion.linear
// SHARD_MLP: fusion.tanh
// SHARD_MLP: fusion.linear
// SHARD_MLP: return

// SHARD_TP_DP_MLP: fusion.mesh @tp_dp = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// SHARD_TP_DP_MLP-LABEL: func.func @shard_tp_dp_mlp
// SHARD_TP_DP_MLP: fusion.matmul
// SHARD_TP_DP_MLP: fusion.tanh
// SHARD_TP_DP_MLP: fusion.matmul
// SHARD_TP_DP_MLP: return

// TP_DP_MLP: fusion.mesh @tp_dp = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// TP_DP_MLP-LABEL: func.func @tp_dp_mlp
// TP_DP_MLP: fusion.gelu
// TP_DP_MLP: return
