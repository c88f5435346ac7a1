// Overlap by default (hir-lower{overlap=auto}, host-auto-stream) on a
// natural program (Inputs/natural_overlap_D.mlir: AG + matmul, then a
// matmul + RS and a linear + RS whose outputs another op reads), written
// without stream axes: every collective is a pipeline over one chunk of
// rows per device, checked against the f64 reference on D = 1, 2, 3, 4 and
// 8 cpu ranks, without rings (rooted broadcasts and reduces) and with NCCL
// and CUDA-IPC rings; overlap=none runs them whole.
// RUN: hir-run -n 1 --check %S/Inputs/natural_overlap_1.mlir | FileCheck %s
// RUN: hir-run -n 1 --p2p nccl --check %S/Inputs/natural_overlap_1.mlir | FileCheck %s
// RUN: hir-run -n 2 --check %S/Inputs/natural_overlap_2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p nccl --check %S/Inputs/natural_overlap_2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p cuda --check %S/Inputs/natural_overlap_2.mlir | FileCheck %s
// RUN: hir-run -n 3 --check %S/Inputs/natural_overlap_3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p nccl --check %S/Inputs/natural_overlap_3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p cuda --check %S/Inputs/natural_overlap_3.mlir | FileCheck %s
// RUN: hir-run -n 4 --check %S/Inputs/natural_overlap_4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p nccl --check %S/Inputs/natural_overlap_4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p cuda --check %S/Inputs/natural_overlap_4.mlir | FileCheck %s
// RUN: hir-run -n 4 --overlap none --check %S/Inputs/natural_overlap_4.mlir | FileCheck %s
// RUN: hir-run -n 8 --check %S/Inputs/natural_overlap_8.mlir | FileCheck %s
// RUN: hir-run -n 8 --p2p nccl --check %S/Inputs/natural_overlap_8.mlir | FileCheck %s
// RUN: hir-run -n 8 --p2p cuda --check %S/Inputs/natural_overlap_8.mlir | FileCheck %s
// CHECK: ran @natural on {{[0-9]}} rank
// CHECK-NEXT: result0: relative error {{.*}}: ok
// CHECK-NEXT: result1: relative error {{.*}}: ok

// Without rings: a rooted broadcast per chunk before the first matmul, a
// rooted reduce per chunk after each row-parallel GEMM (into the outputs,
// allocated before their loops though the add after them reads them).
// RUN: hir-opt --hir-lower %S/Inputs/natural_overlap_4.mlir | FileCheck %s --check-prefix=ROOTED --implicit-check-not=comm.allgather --implicit-check-not=comm.reduce_scatter
// ROOTED:      comm.broadcast {{.*}} root
// ROOTED:      host.matmul
// ROOTED:      host.matmul
// ROOTED:      comm.reduce {{.*}} sum root
// ROOTED:      host.linear
// ROOTED:      comm.reduce {{.*}} sum root

// With rings, the natural GEMM+RS of the matmul and of the (bias-free)
// linear reach the pre-split form's chain of accumulating GEMMs: each step
// adds its partial to the sum the next rank sent, and nothing combines the
// partials after the loop.
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=nccl})' %S/Inputs/natural_overlap_4.mlir | FileCheck %s --check-prefix=RINGS --implicit-check-not=comm.allgather --implicit-check-not=comm.reduce_scatter --implicit-check-not=comm.broadcast --implicit-check-not=host.sum
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=cuda})' %S/Inputs/natural_overlap_4.mlir | FileCheck %s --check-prefix=RINGS --implicit-check-not=comm.allgather --implicit-check-not=comm.reduce_scatter --implicit-check-not=comm.broadcast --implicit-check-not=host.sum
// RINGS:      comm.recv
// RINGS:      host.matmul
// RINGS:      host.matmul {{.*}} {accumulate}
// RINGS:      comm.recv
// RINGS:      comm.send
// RINGS:      host.linear
// RINGS:      host.linear {{.*}} {accumulate}
// RINGS:      comm.recv
// RINGS:      comm.send

// overlap=none: the collectives whole.
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{overlap=none p2p=nccl})' %S/Inputs/natural_overlap_4.mlir | FileCheck %s --check-prefix=WHOLE --implicit-check-not=comm.recv
// WHOLE: comm.allgather
// WHOLE: comm.reduce_scatter
// WHOLE: comm.reduce_scatter
