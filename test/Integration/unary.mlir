// tanh, abs, relu, gelu (tanh form) and rsqrt, each added like exp (.td
// def lines, the C ABI's Unary, the backends' kernels): they lower through
// every stage and run checked against the f64 reference on 2 ranks.
// RUN: hir-opt %S/Inputs/unary.mlir --hir-lower="fuse=none" | FileCheck %s --check-prefix=HOST
// RUN: hir-opt %S/Inputs/unary.mlir --hir-lower="fuse=none" --convert-host-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: hir-run --check --fuse none -n 2 %S/Inputs/unary.mlir | FileCheck %s

// HOST: host.tanh ins({{.*}} : memref<1x8xf32, strided<[32, 1], offset: ?>>)
// HOST: host.gelu ins({{.*}} : memref<1x4x8xf32>)
// HOST: host.gelu ins({{.*}} : memref<1x8xbf16, strided<[32, 1], offset: ?>>)
// HOST: host.relu ins({{.*}} : memref<1x4x8xf32>)
// HOST: host.abs ins({{.*}} : memref<1x4x8xbf16>)
// HOST: host.rsqrt ins({{.*}} : memref<1x4x8xbf16>)

// LLVM-DAG: func.func private @hir_rt_tanh_f32(memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_gelu_f32(memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_gelu_bf16(memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_relu_f32(memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_abs_bf16(memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_rsqrt_bf16(memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
// LLVM: call @hir_rt_tanh_f32(
// LLVM: call @hir_rt_gelu_f32(
// LLVM: call @hir_rt_gelu_bf16(
// LLVM: call @hir_rt_relu_f32(
// LLVM: call @hir_rt_abs_bf16(
// LLVM: call @hir_rt_rsqrt_bf16(

// CHECK: ran @unary on 2 ranks
// CHECK: result0: relative error {{.*}}: ok
// CHECK: result1: relative error {{.*}}: ok
// CHECK: result2: relative error {{.*}}: ok
// CHECK: result3: relative error {{.*}}: ok
// CHECK: result4: relative error {{.*}}: ok
