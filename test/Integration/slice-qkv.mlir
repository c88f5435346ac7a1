// fusion.slice (issue 38): one fused QKV projection feeds q, k and v as
// slices of its serial last axis after an outer split of the heads, each a
// local box of every device's part. Checked against the f64 reference on 2
// and 4 cpu ranks, and a strided slice in a stream loop.
// RUN: hir-run -n 2 --check %S/Inputs/slice_qkv_2.mlir | FileCheck %s
// RUN: hir-run -n 4 --check %S/Inputs/slice_qkv_4.mlir | FileCheck %s
// RUN: hir-run -n 2 --check %S/Inputs/slice_stream.mlir | FileCheck %s --check-prefix=STREAM
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{overlap=none})' %S/Inputs/slice_qkv_2.mlir | FileCheck %s --check-prefix=HOST
// RUN: hir-opt --hir-lower %S/Inputs/slice_stream.mlir | FileCheck %s --check-prefix=HOST-STREAM

// CHECK: ran @qkv on {{[24]}} ranks
// CHECK-NEXT: result0: relative error {{.*}}: ok
// STREAM: ran @stream on 2 ranks
// STREAM-NEXT: result0: relative error {{.*}}: ok

// One allgather and one GEMM for q, k and v (24 local rows of the 48), the
// three slices boxes of the local [S, heads/D, 3 dh] copied out, no
// collective but the out-projection's reduce-scatter.
// HOST: comm.allgather
// HOST: host.linear ins(%{{.+}}, %{{.+}} : memref<8x16xf32>, memref<24x16xf32>) outs(%{{.+}} : memref<8x24xf32>)
// HOST-NOT: host.linear
// HOST: memref.subview %{{.+}}[0, 0, 0] [8, 2, 4] [1, 1, 1] : memref<8x2x12xf32> to memref<8x2x4xf32, strided<[24, 12, 1]>>
// HOST: memref.subview %{{.+}}[0, 0, 4] [8, 2, 4] [1, 1, 1] : memref<8x2x12xf32> to memref<8x2x4xf32, strided<[24, 12, 1], offset: 4>>
// HOST: memref.subview %{{.+}}[0, 0, 8] [8, 2, 4] [1, 1, 1] : memref<8x2x12xf32> to memref<8x2x4xf32, strided<[24, 12, 1], offset: 8>>
// HOST-NOT: comm.allgather
// HOST: host.attention
// HOST: host.linear
// HOST: comm.reduce_scatter
// HOST-NOT: comm.allgather

// The box is taken once, whole; the stream loop copies one row of it per
// iteration.
// HOST-STREAM: [[BOX:%.+]] = memref.subview %{{.+}}[0, 1] [8, 5] [1, 3] : memref<8x16xf32> to memref<8x5xf32, strided<[16, 3], offset: 1>>
// HOST-STREAM: host.select [[BOX]][0][%{{.+}}] : memref<8x5xf32, strided<[16, 3], offset: 1>> to memref<5xf32, strided<[3], offset: ?>>
// HOST-STREAM-NEXT: host.select
// HOST-STREAM-NEXT: host.copy
