// AG+linear+bias as a ring in parts: each ring step's transfer and linear are
// split along the rows of the step's slice, the weight and the bias shared
// by every part (the bias is added to every row). With --ring-chunks 2 the
// loop runs D * 2 iterations, each receiving and computing half a slice; by
// default host-p2p-pipeline chooses the parts. Checked against the f64
// reference at D = 1, 2, 3, 4 and 8, over NCCL and over CUDA IPC.
// RUN: hir-opt --hir-lower='p2p=nccl ring-chunks=2' %S/Inputs/ag_linear_bias_ring_2.mlir | FileCheck %s --check-prefix=PARTS
// RUN: hir-run --check -n 1 --p2p nccl --ring-chunks 2 %S/Inputs/ag_linear_bias_ring_1.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --p2p nccl --ring-chunks 2 %S/Inputs/ag_linear_bias_ring_2.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --p2p cuda --ring-chunks 4 %S/Inputs/ag_linear_bias_ring_2.mlir | FileCheck %s
// RUN: hir-run --check -n 3 --p2p cuda --ring-chunks 2 %S/Inputs/ag_linear_bias_ring_3.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --p2p nccl %S/Inputs/ag_linear_bias_ring_4.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --p2p cuda --ring-chunks 2 --num-streams 2 %S/Inputs/ag_linear_bias_ring_4.mlir | FileCheck %s
// RUN: hir-run --check -n 8 --p2p nccl --ring-chunks 2 %S/Inputs/ag_linear_bias_ring_8.mlir | FileCheck %s

// The ring loop runs 2 steps of 2 parts; each part receives and sends half
// a slice (4 of its 8 rows) and runs the linear, bias included, on it.
// PARTS: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// PARTS: memref.subview {{.*}} [4, 32] [1, 1] : memref<8x32xf32, strided<[32, 1], offset: ?>> to memref<4x32xf32
// PARTS: comm.recv
// PARTS: comm.send
// PARTS: host.linear ins(%{{.*}}, %arg1, %arg2 : memref<4x32xf32, strided<[32, 1], offset: ?>>, memref<16x32xf32>, memref<16xf32>) outs(%{{.*}} : memref<4x16xf32, strided<[16, 1], offset: ?>>)

// CHECK: ran @ag_linear_bias_ring_{{[0-9]}} on {{[12348]}} rank
// CHECK: result0: relative error {{.*}}: ok
