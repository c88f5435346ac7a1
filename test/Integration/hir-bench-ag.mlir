// hir-bench's AG+GEMM programs (tools/src/programs.rs), emitted small and
// run with hir-run --check on the cpu backend for D = 1, 2, 4: each output is
// compared with the reference evaluation of the fusion program.
// M=16 K=8 N=4 and S=2 chunks fit every program for these D.
// RUN: hir-bench emit ag-gemm -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-gemm.1.mlir && hir-run -n 1 --check %t.ag-gemm.1.mlir | FileCheck %s
// RUN: hir-bench emit ag-allgather -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-allgather.1.mlir && hir-run -n 1 --check %t.ag-allgather.1.mlir | FileCheck %s
// RUN: hir-bench emit ag-pipeline -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-pipeline.1.mlir && hir-run -n 1 --check %t.ag-pipeline.1.mlir | FileCheck %s
// RUN: hir-bench emit ag-ring -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-ring.1.mlir && hir-run -n 1 --check %t.ag-ring.1.mlir | FileCheck %s
// RUN: hir-run -n 1 --p2p nccl --check %t.ag-ring.1.mlir | FileCheck %s
// RUN: hir-run -n 1 --p2p cuda --check %t.ag-ring.1.mlir | FileCheck %s
// RUN: hir-bench emit ag-gemm -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-gemm.2.mlir && hir-run -n 2 --check %t.ag-gemm.2.mlir | FileCheck %s
// RUN: hir-bench emit ag-allgather -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-allgather.2.mlir && hir-run -n 2 --check %t.ag-allgather.2.mlir | FileCheck %s
// RUN: hir-bench emit ag-pipeline -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-pipeline.2.mlir && hir-run -n 2 --check %t.ag-pipeline.2.mlir | FileCheck %s
// RUN: hir-bench emit ag-ring -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-ring.2.mlir && hir-run -n 2 --check %t.ag-ring.2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p nccl --check %t.ag-ring.2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p cuda --check %t.ag-ring.2.mlir | FileCheck %s
// RUN: hir-bench emit ag-gemm -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-gemm.4.mlir && hir-run -n 4 --check %t.ag-gemm.4.mlir | FileCheck %s
// RUN: hir-bench emit ag-allgather -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-allgather.4.mlir && hir-run -n 4 --check %t.ag-allgather.4.mlir | FileCheck %s
// RUN: hir-bench emit ag-pipeline -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-pipeline.4.mlir && hir-run -n 4 --check %t.ag-pipeline.4.mlir | FileCheck %s
// RUN: hir-bench emit ag-ring -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.ag-ring.4.mlir && hir-run -n 4 --check %t.ag-ring.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p nccl --check %t.ag-ring.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p cuda --check %t.ag-ring.4.mlir | FileCheck %s

// CHECK: ran @{{[a-z_]+}} on {{[0-9]}} rank
// CHECK-NEXT: result0: relative error {{.*}}: ok
