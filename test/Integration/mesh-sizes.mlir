// AG+matmul with the allgather along the stream axis, on meshes of 2, 3 and 8
// devices: the collective form, the NCCL ring and the CUDA-IPC ring, each
// checked against the reference.
// RUN: hir-run --check -n 2 %S/Inputs/ag_matmul_p2p_2.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --p2p nccl %S/Inputs/ag_matmul_p2p_2.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --p2p cuda %S/Inputs/ag_matmul_p2p_2.mlir | FileCheck %s
// RUN: hir-run --check -n 3 --p2p nccl %S/Inputs/ag_matmul_p2p_3.mlir | FileCheck %s
// RUN: hir-run --check -n 3 --p2p cuda --num-streams 2 %S/Inputs/ag_matmul_p2p_3.mlir | FileCheck %s
// RUN: hir-run --check -n 8 %S/Inputs/ag_matmul_p2p_8.mlir | FileCheck %s
// RUN: hir-run --check -n 8 --p2p nccl %S/Inputs/ag_matmul_p2p_8.mlir | FileCheck %s
// RUN: hir-run --check -n 8 --p2p cuda --num-streams 3 %S/Inputs/ag_matmul_p2p_8.mlir | FileCheck %s

// CHECK: ran @ag_matmul_p2p_{{[0-9]}} on {{[238]}} ranks
// CHECK: result0: relative error {{.*}}: ok
