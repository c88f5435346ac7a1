// Every example that lowers, run on the cpu backend with --check against the
// reference evaluation of the fusion program (single-device meshes on 1 rank,
// the 4-device ones on 4).
// RUN: hir-run --check -n 1 %examples/binary.mlir | FileCheck %s
// RUN: hir-run --check -n 1 %examples/inputs_not_stream.mlir | FileCheck %s
// RUN: hir-run --check -n 1 %examples/linear.mlir | FileCheck %s
// RUN: hir-run --check -n 1 %examples/matmul.mlir | FileCheck %s
// RUN: hir-run --check -n 1 %examples/matmul_columns.mlir | FileCheck %s
// RUN: hir-run --check -n 1 %examples/reduction.mlir | FileCheck %s
// RUN: hir-run --check -n 1 %examples/set.mlir | FileCheck %s
// RUN: hir-run --check -n 1 %examples/three_sets.mlir | FileCheck %s
// RUN: hir-run --check -n 1 --num-streams 2 %examples/two_sets.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/ag_linear.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --num-streams 3 %examples/ag_matmul.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/ag_matmul_rows.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/allgather.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/allreduce.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/reduce_scatter.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/matmul_allreduce.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/matmul_reduce_scatter.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/matmul_reduce_scatter_rowwise.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --seed 5 %examples/reshard_no_stream.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/fill_iota.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/transpose.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/reshape.mlir | FileCheck %s

// Natural shapes: didx axes split into one contiguous slice per device
// (Megatron's tensor- and sequence-parallel MLP, a row-parallel linear).
// RUN: hir-run --check -n 4 %examples/tp_mlp.mlir | FileCheck %s
// Written with upstream shard, imported by hir-run:
// RUN: hir-run --check -n 4 %examples/shard_mlp.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --seed 3 %examples/row_parallel_allreduce.mlir | FileCheck %s

// The P2P examples: the allgather along the stream axis whole before the
// loop, then as a ring of coalesced send/recv (nccl) or of CUDA-IPC copies.
// RUN: hir-run --check -n 4 %examples/allgather_p2p.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --p2p nccl %examples/allgather_p2p.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --p2p cuda --num-streams 2 %examples/allgather_p2p.mlir | FileCheck %s
// RUN: hir-run --check -n 4 %examples/ag_matmul_p2p.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --p2p nccl --num-streams 3 %examples/ag_matmul_p2p.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --p2p cuda %examples/ag_matmul_p2p.mlir | FileCheck %s

// CHECK: ran @{{.*}} on {{[14]}} rank
// CHECK: result0: relative error {{.*}}: ok
