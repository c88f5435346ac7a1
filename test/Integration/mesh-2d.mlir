// 2-D meshes on 8 cpu ranks, checked against the reference: Megatron's MLP
// with TP = 4 (didx, within each row) x DP = 2 (didy, across rows), and a
// data-parallel allreduce within each column followed by a gather within
// each row and a re-split over the rows.
// RUN: hir-run --check -n 8 %examples/tp_dp_mlp.mlir | FileCheck %s
// RUN: hir-run --check -n 8 --seed 9 %S/Inputs/mesh_2d_didy.mlir | FileCheck %s
// The collectives run within teams: one NCCL communicator per row or column.
// RUN: hir-opt --hir-lower %examples/tp_dp_mlp.mlir | FileCheck %s --check-prefix=HOST
// RUN: hir-opt --hir-lower --convert-host-to-llvm --convert-comm-to-llvm %examples/tp_dp_mlp.mlir | FileCheck %s --check-prefix=LLVM

// CHECK: ran @{{.*}} on 8 ranks
// CHECK: result0: relative error {{.*}}: ok

// HOST: comm.allgather %{{.*}} axis 1 team {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// HOST: host.linear activation gelu
// HOST: host.linear ins
// HOST: comm.reduce_scatter %{{.*}} sum axis 1 team {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]

// LLVM: memref.global "private" constant @__hir_team_2x4_0_1_2_3_4_5_6_7 : memref<2x4xi64> = dense<{{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]>
