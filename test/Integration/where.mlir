// fusion.where / host.where with a float mask (nonzero selects lhs): it
// lowers through every stage to hir_rt_where_T and runs checked against the
// f64 reference on 2 ranks, on whole buffers and stream-parallel slices.
// RUN: hir-opt %S/Inputs/where.mlir --hir-lower="fuse=none" | FileCheck %s --check-prefix=HOST
// RUN: hir-opt %S/Inputs/where.mlir --hir-lower="fuse=none" --convert-host-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: hir-run --check --fuse none -n 2 %S/Inputs/where.mlir | FileCheck %s

// HOST: host.relu ins(%[[A:.*]] : memref<1x4x8xf32>) outs(%[[M:.*]] : memref<1x4x8xf32>)
// HOST: host.where ins(%[[M]], %{{.*}}, %{{.*}} : memref<1x4x8xf32>, memref<1x4x8xf32>, memref<1x4x8xf32>) outs(%{{.*}} : memref<1x4x8xf32>)
// HOST: host.set_current_stream
// HOST: host.where ins({{.*}} : memref<1x8xbf16, strided<[32, 1], offset: ?>>, memref<1x8xbf16, strided<[32, 1], offset: ?>>, memref<1x8xbf16, strided<[32, 1], offset: ?>>) outs({{.*}} : memref<1x8xbf16, strided<[32, 1], offset: ?>>)
// HOST: host.sync_stream

// LLVM-DAG: func.func private @hir_rt_where_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_where_bf16(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
// LLVM: call @hir_rt_where_f32(
// LLVM: call @hir_rt_where_bf16(

// CHECK: ran @where on 2 ranks
// CHECK: result0: relative error {{.*}}: ok
// CHECK: result1: relative error {{.*}}: ok
