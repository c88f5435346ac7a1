// Matmuls whose batch axes broadcast (torch.matmul), beside stream axes, on 2
// cpu ranks checked against the f64 reference: the TP-rowwise GEMM+RS with
// each device's own K-slice of B, and one activation against streamed weights
// (Inputs/matmul_broadcast.mlir). No fusion.broadcast, and no copy of the
// broadcast operand: it is one view at index 0, taken before the loop.
// RUN: hir-opt %S/Inputs/matmul_broadcast.mlir --hir-lower | FileCheck %s --check-prefix=HOST --implicit-check-not=host.broadcast --implicit-check-not=host.copy
// RUN: hir-run --check -n 2 %S/Inputs/matmul_broadcast.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --p2p nccl --num-streams 1 %S/Inputs/matmul_broadcast.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --p2p cuda %S/Inputs/matmul_broadcast.mlir | FileCheck %s
// The example, at D = 4 (run checked by examples.mlir).
// RUN: hir-opt %examples/matmul_reduce_scatter_rowwise.mlir --hir-lower | FileCheck %s --check-prefix=EXAMPLE-HOST --implicit-check-not=host.broadcast

// HOST-LABEL: func.func @matmul_broadcast(
// HOST-SAME: [[A:%[a-zA-Z0-9_]+]]: memref<1x2x2x4x8xf32>, [[B:%[a-zA-Z0-9_]+]]: memref<1x1x1x8x6xf32>, [[X:%[a-zA-Z0-9_]+]]: memref<1x4x8xbf16>, [[W:%[a-zA-Z0-9_]+]]: memref<3x8x6xbf16>
// HOST: [[B0:%[a-zA-Z0-9_]+]] = host.select [[B]][1]{{.*}} : memref<1x1x1x8x6xf32> to memref<1x1x8x6xf32, strided<[48, 48, 6, 1], offset: ?>>
// HOST: scf.for [[I:%[a-zA-Z0-9_]+]] =
// HOST: [[AI:%[a-zA-Z0-9_]+]] = host.select [[A]][1]{{\[}}[[I]]{{\]}}
// HOST: host.matmul ins([[AI]], [[B0]] :
// HOST: comm.reduce_scatter
// HOST: [[X0:%[a-zA-Z0-9_]+]] = host.select [[X]][0]{{.*}} : memref<1x4x8xbf16> to memref<4x8xbf16, strided<[8, 1], offset: ?>>
// HOST: scf.for [[J:%[a-zA-Z0-9_]+]] =
// HOST: [[WJ:%[a-zA-Z0-9_]+]] = host.select [[W]][0]{{\[}}[[J]]{{\]}}
// HOST: host.matmul ins([[X0]], [[WJ]] :

// CHECK: ran @matmul_broadcast on 2 ranks
// CHECK-NEXT: result0: relative error {{.*}}: ok
// CHECK-NEXT: result1: relative error {{.*}}: ok

// EXAMPLE-HOST: host.matmul ins({{.*}}, %arg1 : memref<1x4x4x8xf32, strided<[128, 32, 8, 1], offset: ?>>, memref<1x1x8x16xf32>)
// EXAMPLE-HOST: comm.reduce_scatter
