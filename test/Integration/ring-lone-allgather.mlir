// A lone DIDx -> Stream set (an allgather no loop reads slice by slice) is a
// ring with p2p: convert-fusion-to-host gives the allgather a loop over its
// output's slices, host-p2p-pipeline fills it with the ring's receives, and
// without p2p the loop does nothing and host-lower-stream-for erases it.
// Checked against the f64 reference at D = 1, 2, 3, 4 and 8, over NCCL and
// CUDA IPC, in whole steps and in parts.
// RUN: hir-opt --hir-lower %S/Inputs/lone_allgather_2.mlir | FileCheck %s --check-prefix=WHOLE
// RUN: hir-opt --hir-lower='p2p=nccl ring-chunks=1' %S/Inputs/lone_allgather_2.mlir | FileCheck %s --check-prefix=RING
// RUN: hir-run --check -n 1 --p2p nccl %S/Inputs/lone_allgather_1.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --p2p nccl %S/Inputs/lone_allgather_2.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --p2p cuda --ring-chunks 1 %S/Inputs/lone_allgather_2.mlir | FileCheck %s
// RUN: hir-run --check -n 3 --p2p cuda %S/Inputs/lone_allgather_3.mlir | FileCheck %s
// RUN: hir-run --check -n 3 --p2p nccl --ring-chunks 3 %S/Inputs/lone_allgather_3.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --p2p nccl %examples/allgather_p2p.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --p2p cuda --num-streams 2 %examples/allgather_p2p.mlir | FileCheck %s
// RUN: hir-run --check -n 8 --p2p nccl --num-streams 3 %S/Inputs/lone_allgather_8.mlir | FileCheck %s
// RUN: hir-run --check -n 8 --p2p cuda %S/Inputs/lone_allgather_8.mlir | FileCheck %s

// Without p2p: the allgather, whole, and nothing else.
// WHOLE-LABEL: func.func @lone_allgather_2
// WHOLE-NEXT: comm.allgather
// WHOLE-NEXT: comm.wait
// WHOLE-NEXT: return

// With p2p: no allgather; each step receives its slice into the output.
// RING-LABEL: func.func @lone_allgather_2(
// RING-SAME: [[IN:%[a-zA-Z0-9_]+]]: memref<1x24xf32>, [[OUT:%[a-zA-Z0-9_]+]]: memref<2x24xf32>
// RING-NOT: comm.allgather
// RING: [[SLICE:%[a-zA-Z0-9_]+]] = host.select [[OUT]][0]{{\[}}
// RING: comm.recv [[SLICE]] from
// RING-NOT: comm.allgather

// CHECK: ran @{{.*}} on {{[12348]}} rank
// CHECK: result0: relative error {{.*}}: ok
