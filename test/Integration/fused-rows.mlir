// host-fuse-elementwise's row programs through hir-run on the cpu backend:
// a LayerNorm and a softmax (reductions along the last axis, the row
// statistics broadcast back) lower to one host.fused op and run
// checked against the f64 reference at D = 1, 2, 4; with fuse=none the same
// program runs one kernel per op, within rounding of the fused run.
// RUN: hir-opt %S/Inputs/rows_2.mlir --hir-lower | FileCheck %s --check-prefix=HOST
// RUN: hir-run --check %S/Inputs/rows_1.mlir | FileCheck %s --check-prefix=CHECKED
// RUN: hir-run --check -n 2 %S/Inputs/rows_2.mlir | FileCheck %s --check-prefix=CHECKED
// RUN: hir-run --check -n 4 %S/Inputs/rows_4.mlir | FileCheck %s --check-prefix=CHECKED
// RUN: hir-run --check --fuse none -n 2 %S/Inputs/rows_2.mlir | FileCheck %s --check-prefix=CHECKED

// Both in one kernel over [8, 48] (rows split over 2 devices): they read
// the same cast of x. The row statistics [8] are temporaries.
// HOST: host.fused ins({{.*}}) outs(%{{.*}}, %{{.*}} : memref<8x48xbf16>, memref<8x48xf32>) {
// HOST: host.sum [1] ins(%{{.*}} : memref<8x48xf32>) outs(%{{.*}} : memref<8xf32>)
// HOST: host.sum [1]
// HOST: host.rsqrt {{.*}} memref<8xf32>
// HOST: host.cast {{.*}} memref<8x48xbf16>
// HOST: host.amax [1]
// HOST: host.exp
// HOST: host.sum [1]
// HOST: host.div
// HOST-NEXT: }
// HOST-NOT: host.sum
// HOST-NOT: host.amax

// CHECKED: result0: relative error {{.*}}: ok
// CHECKED: result1: relative error {{.*}}: ok
