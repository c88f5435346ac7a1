// stream<k> programs run on the cpu backend and match the f64 reference on
// every rank's output: on one device a matmul and a linear streamed along
// their output columns, an elementwise chain in the matmul's loop, a
// reduction over chunks of rows; the natural-shape AG+GEMM (rows split over
// D devices, the output's rows in D, 2 and 8 chunks) at D = 1, 2, 4.
// RUN: hir-run --check -n 1 %S/Inputs/stream_chunks_1.mlir | FileCheck %s --check-prefix=ONE
// RUN: hir-run --check -n 1 %S/Inputs/stream_chunks_ag_1.mlir | FileCheck %s --check-prefix=AG
// RUN: hir-run --check -n 2 %S/Inputs/stream_chunks_ag_2.mlir | FileCheck %s --check-prefix=AG
// RUN: hir-run --check -n 4 --num-streams 3 %S/Inputs/stream_chunks_ag_4.mlir | FileCheck %s --check-prefix=AG
// With k = D the gathered rows of chunk i are rank i's (host-presplit-chunks
// writes the pre-split form), so the pipelines apply: rings over NCCL and
// CUDA IPC (whole steps and steps in 2 parts), and one broadcast per
// iteration; the other chunk counts keep their whole allgather.
// RUN: hir-run --check -n 2 --p2p nccl %S/Inputs/stream_chunks_ag_2.mlir | FileCheck %s --check-prefix=AG
// RUN: hir-run --check -n 4 --p2p nccl %S/Inputs/stream_chunks_ag_4.mlir | FileCheck %s --check-prefix=AG
// RUN: hir-run --check -n 4 --p2p cuda --ring-chunks 1 %S/Inputs/stream_chunks_ag_4.mlir | FileCheck %s --check-prefix=AG
// RUN: hir-run --check -n 4 --p2p cuda --ring-chunks 2 %S/Inputs/stream_chunks_ag_4.mlir | FileCheck %s --check-prefix=AG
// RUN: hir-run --check -n 4 --allgather broadcast %S/Inputs/stream_chunks_ag_4.mlir | FileCheck %s --check-prefix=AG
// RUN: hir-opt --hir-lower='p2p=nccl' %S/Inputs/stream_chunks_ag_4.mlir | FileCheck %s --check-prefix=RING
// RUN: hir-opt --hir-lower='allgather=broadcast' %S/Inputs/stream_chunks_ag_4.mlir | FileCheck %s --check-prefix=BROADCAST

// ONE: result0: relative error {{.*}}: ok
// ONE-NEXT: result1: relative error {{.*}}: ok
// ONE-NEXT: result2: relative error {{.*}}: ok
// AG: result0: relative error {{.*}}: ok
// AG-NEXT: result1: relative error {{.*}}: ok
// AG-NEXT: result2: relative error {{.*}}: ok

// One ring (stream<4>'s allgather), then two whole allgathers (stream<2>,
// stream<8>).
// RING-LABEL: func.func @ag_matmul_rows(
// RING-NOT: comm.allgather
// RING: comm.recv
// RING: comm.send
// RING-COUNT-2: comm.allgather
// RING-NOT: comm.allgather
// BROADCAST-LABEL: func.func @ag_matmul_rows(
// BROADCAST: comm.broadcast {{.*}} root
