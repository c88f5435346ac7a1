// `exp`, the elementwise op added by its .td lines, the C ABI's Unary::Exp
// and the backends' kernels alone: it lowers through every stage and runs
// checked against the f64 reference on 2 ranks.
// RUN: hir-opt %S/Inputs/exp.mlir --hir-lower="fuse=none" | FileCheck %s --check-prefix=HOST
// RUN: hir-opt %S/Inputs/exp.mlir --hir-lower="fuse=none" --convert-host-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: hir-run --check --fuse none -n 2 %S/Inputs/exp.mlir | FileCheck %s

// HOST: host.set_current_stream
// HOST: host.exp ins({{.*}} : memref<1x8xbf16, strided<[32, 1], offset: ?>>)
// HOST: host.sync_stream
// HOST: host.exp ins({{.*}} : memref<1x4x8xf32>)

// LLVM-DAG: func.func private @hir_rt_exp_bf16(memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_exp_f32(memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// LLVM: call @hir_rt_exp_bf16(
// LLVM: call @hir_rt_exp_f32(

// CHECK: ran @exp on 2 ranks
// CHECK: result0: relative error {{.*}}: ok
// CHECK: result1: relative error {{.*}}: ok
