// fusion.fill, fusion.iota and fusion.transpose through every stage: the
// host ops, their runtime calls (hir_rt_fill_T(out, f64), hir_rt_iota_T(out,
// axis, offset), hir_rt_transpose_T(in, out, permutation)), and runs on the
// cpu backend checked against the f64 reference (the examples in
// Integration/examples.mlir): iotas along both split axes of a 2-D mesh.
// RUN: hir-opt %examples/fill_iota.mlir --hir-lower | FileCheck %s --check-prefix=HOST
// RUN: hir-opt %examples/fill_iota.mlir --hir-lower=fuse=none --convert-host-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: hir-opt %examples/transpose.mlir --hir-lower | FileCheck %s --check-prefix=TRANSPOSE
// RUN: hir-opt %examples/transpose.mlir --hir-lower --convert-host-to-llvm | FileCheck %s --check-prefix=TRANSPOSE-LLVM
// RUN: hir-run --check -n 4 %S/Inputs/fill_iota_2d.mlir | FileCheck %s --check-prefix=GRID

// The fill of the stream-parallel output is written whole, before any loop.
// (By default the fill of 0.5 is a constant of the fused kernel of the mul
// and adds, host-fuse-elementwise; the runtime calls are checked with
// fuse=none, where each op is one call.)
// HOST-LABEL: func.func @fill_iota
// HOST: host.iota 0, %{{.+}} outs(%{{.+}} : memref<2x16xf32>)
// HOST: host.iota 1, %{{.+}} outs(%{{.+}} : memref<2x16xf32>)
// HOST: host.fill 5.000000e-01 outs(%{{.+}} : memref<2x16xf32>)
// HOST: host.fill 0.000000e+00 outs(%{{.+}} : memref<4x2x16xbf16>)
// HOST-NOT: scf.for

// LLVM-DAG: func.func private @hir_rt_iota_f32(memref<*xf32>, i64, i64) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_fill_f32(memref<*xf32>, f64) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_fill_bf16(memref<*xbf16>, f64) attributes {llvm.emit_c_interface}
// LLVM: call @hir_rt_iota_f32(
// LLVM: call @hir_rt_fill_bf16(

// x^T is split along K: a local transpose, which the matmul reads as a
// transposed view (host-fold-transpose), a partial matmul and an allreduce;
// the permute runs one slice per stream.
// TRANSPOSE-LABEL: func.func @transpose
// TRANSPOSE: %[[XT:.+]] = memref.transpose %arg0 (d0, d1) -> (d1, d0) : memref<2x16xf32> to memref<16x2xf32, strided<[1, 16]>>
// TRANSPOSE: host.matmul ins(%[[XT]],
// TRANSPOSE: comm.allreduce
// TRANSPOSE: scf.for
// TRANSPOSE: host.transpose [1, 0] ins(%{{.+}} : memref<1x8xbf16, strided<[32, 1], offset: ?>>) outs(%{{.+}} : memref<8x1xbf16, strided<[4, 4], offset: ?>>)

// TRANSPOSE-LLVM-NOT: hir_rt_transpose_f32
// TRANSPOSE-LLVM: func.func private @hir_rt_transpose_bf16(memref<*xbf16>, memref<*xbf16>, memref<*xi64>) attributes {llvm.emit_c_interface}
// TRANSPOSE-LLVM: call @hir_rt_transpose_bf16(

// GRID: ran @fill_iota_2d on 4 ranks
// GRID: result0: relative error 0.000e0 {{.*}}: ok
// GRID: result1: relative error 0.000e0 {{.*}}: ok
// GRID: result2: relative error 0.000e0 {{.*}}: ok
