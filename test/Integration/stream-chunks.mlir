// stream<k> programs run on the cpu backend and match the f64 reference on
// every rank's output: on one device a matmul and a linear streamed along
// their output columns, an elementwise chain in the matmul's loop, a
// reduction over chunks of rows; the natural-shape AG+GEMM (rows split over
// D devices, the output's rows in D, 2 and 8 chunks) at D = 1, 2, 4.
// RUN: hir-run --check -n 1 %S/Inputs/stream_chunks_1.mlir | FileCheck %s --check-prefix=ONE
// RUN: hir-run --check -n 1 %S/Inputs/stream_chunks_ag_1.mlir | FileCheck %s --check-prefix=AG
// RUN: hir-run --check -n 2 %S/Inputs/stream_chunks_ag_2.mlir | FileCheck %s --check-prefix=AG
// RUN: hir-run --check -n 4 --num-streams 3 %S/Inputs/stream_chunks_ag_4.mlir | FileCheck %s --check-prefix=AG

// ONE: result0: relative error {{.*}}: ok
// ONE-NEXT: result1: relative error {{.*}}: ok
// ONE-NEXT: result2: relative error {{.*}}: ok
// AG: result0: relative error {{.*}}: ok
// AG-NEXT: result1: relative error {{.*}}: ok
// AG-NEXT: result2: relative error {{.*}}: ok
