// 3-D meshes: examples/fsdp_tp_mlp.mlir (TP within rows, FSDP across rows,
// two data-parallel planes; 8 ranks) runs checked against the f64 reference,
// with each collective on the teams of one mesh axis; a program on a 2x2x2
// upstream shard grid imports onto a 3-D mesh and runs checked.
// RUN: hir-run -n 8 --check %examples/fsdp_tp_mlp.mlir | FileCheck %s
// RUN: hir-run -n 8 --check --num-streams 2 --seed 5 %examples/fsdp_tp_mlp.mlir | FileCheck %s
// RUN: hir-opt --hir-lower %examples/fsdp_tp_mlp.mlir | FileCheck %s --check-prefix=HOST
// RUN: hir-run -n 8 --check %S/Inputs/shard_grid_3d.mlir | FileCheck %s --check-prefix=GRID
// RUN: hir-opt --convert-shard-to-fusion %S/Inputs/shard_grid_3d.mlir | FileCheck %s --check-prefix=IMPORT

// CHECK: ran @fsdp_tp_mlp on 8 ranks
// CHECK: result0: relative error {{.*}}: ok

// didx teams are the rows, didy teams the columns of each plane.
// HOST:     comm.allgather %arg0 into %{{.*}} axis 2 team {{\[}}[0, 1], [2, 3], [4, 5], [6, 7]]
// HOST:     comm.allgather %arg1 into %{{.*}} axis 1 team {{\[}}[0, 2], [1, 3], [4, 6], [5, 7]]
// HOST:     comm.allgather %arg3 into %{{.*}} team {{\[}}[0, 2], [1, 3], [4, 6], [5, 7]]
// HOST:     host.linear activation gelu
// HOST:     host.linear ins
// HOST:     comm.reduce_scatter %{{.*}} sum axis 2 team {{\[}}[0, 1], [2, 3], [4, 5], [6, 7]]

// GRID: ran @grid3d on 8 ranks
// GRID: result0: relative error {{.*}}: ok
// IMPORT: fusion.mesh @g = {{\[}}{{\[}}[0, 1], [2, 3]], {{\[}}[4, 5], [6, 7]]]
// IMPORT: tensor<8x4x6xf32, #fusion.dist<@g, [didz, didy, didx]>>
