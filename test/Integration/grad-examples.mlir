// hir-run --grad on the examples: stream axes (the backward drops them),
// reshards, reductions across devices, TP+DP and FSDP+TP on 2-D and 3-D
// meshes of 8 ranks, and upstream shard programs imported first; every
// argument's gradient agrees with central differences of the reference.
// RUN: hir-run --grad %examples/binary.mlir | FileCheck %s
// RUN: hir-run --grad %examples/matmul.mlir | FileCheck %s
// RUN: hir-run --grad %examples/three_sets.mlir | FileCheck %s
// RUN: hir-run -n 4 --grad %examples/transpose.mlir | FileCheck %s
// RUN: hir-run -n 4 --grad %examples/reshape.mlir | FileCheck %s
// RUN: hir-run -n 4 --grad %examples/reduce_scatter.mlir | FileCheck %s
// RUN: hir-run -n 4 --grad %examples/matmul_reduce_scatter_rowwise.mlir | FileCheck %s
// RUN: hir-run -n 4 --grad %examples/shard_mlp.mlir | FileCheck %s
// RUN: hir-run -n 8 --grad %examples/tp_dp_mlp.mlir | FileCheck %s
// RUN: hir-run -n 8 --grad %examples/fsdp_tp_mlp.mlir | FileCheck %s

// CHECK: ran @{{.*}}'s forward and backward on
// CHECK: d arg{{[0-9]+}}, direction 0: {{.*}}: ok
// CHECK-NOT: MISMATCH
