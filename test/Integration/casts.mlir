// Casts between every element type through every stage: fusion.cast of
// integer tensors lowers to host.cast of integer buffers, that to the
// runtime's `hir_rt_cast_<from>_<to>` entries, and runs on the cpu backend
// checked against the reference (integers exactly: truncation toward zero,
// saturation, wrapping sums). host-fuse-elementwise leaves casts to or from
// an integer type unfused (their buffers are integers); a cast between float
// types still fuses.
// RUN: hir-opt %examples/int_casts.mlir --hir-lower | FileCheck %s --check-prefix=HOST
// RUN: hir-opt %examples/int_casts.mlir --hir-lower --host-fuse-elementwise | FileCheck %s --check-prefix=FUSED
// RUN: hir-opt %examples/int_casts.mlir --hir-lower --convert-host-to-llvm --convert-comm-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: hir-run --check -n 4 %examples/int_casts.mlir | FileCheck %s --check-prefix=EXEC
// RUN: hir-run --check -n 4 --seed 7 --fuse elementwise %examples/int_casts.mlir | FileCheck %s --check-prefix=EXEC
// RUN: hir-run --check -n 4 --seed 3 --num-streams 1 %examples/int_casts.mlir | FileCheck %s --check-prefix=EXEC

// HOST-LABEL: func.func @int_casts
// HOST: host.cast ins(%{{.+}} : memref<4x8xi32>) outs(%{{.+}} : memref<4x8xf32>)
// HOST: host.mul ins
// HOST: host.cast ins(%{{.+}} : memref<4x8xf32>) outs(%{{.+}} : memref<4x8xbf16>)
// HOST: host.cast ins(%{{.+}} : memref<4x8xf32>) outs(%{{.+}} : memref<4x8xi32>)
// HOST: host.sum [0] ins(%{{.+}} : memref<4x8xi32>) outs(%{{.+}} : memref<8xi32>)
// HOST: comm.allreduce %{{.+}} into %{{.+}} sum team [0, 1, 2, 3] : memref<8xi32> into memref<8xi32>
// HOST: host.cast ins(%{{.+}} : memref<4x8xi32>) outs(%{{.+}} : memref<4x8xi64>)
// HOST: host.cast ins(%{{.+}} : memref<4x8xbf16>) outs(%{{.+}} : memref<4x8xi64>)
// HOST: host.sub ins(%{{.+}}, %{{.+}} : memref<4x8xi64>, memref<4x8xi64>)
// HOST: host.cast ins(%{{.+}} : memref<4x8xi64>) outs(%{{.+}} : memref<4x8xi32>)
// HOST: host.cast ins(%{{.+}} : memref<4x8xi32>) outs(%{{.+}} : memref<4x8xf16>)

// Only the float chain (w's cast to f16 and the f16 mul) is fused.
// FUSED-LABEL: func.func @int_casts
// FUSED: host.cast ins(%{{.+}} : memref<4x8xi32>) outs(%{{.+}} : memref<4x8xf32>)
// FUSED: host.cast ins(%{{.+}} : memref<4x8xf32>) outs(%{{.+}} : memref<4x8xi32>)
// FUSED: host.cast ins(%{{.+}} : memref<4x8xbf16>) outs(%{{.+}} : memref<4x8xi64>)
// FUSED: host.cast ins(%{{.+}} : memref<4x8xi64>) outs(%{{.+}} : memref<4x8xi32>)
// FUSED: host.cast ins(%{{.+}} : memref<4x8xi32>) outs(%{{.+}} : memref<4x8xf16>)
// FUSED: host.fused ins(%{{.+}}, %{{.+}} : memref<4x8xf32>, memref<4x8xf16>)
// FUSED-NEXT: ^bb0
// FUSED-NEXT: host.cast ins(%{{.+}} : memref<4x8xf32>) outs(%{{.+}} : memref<4x8xf16>)
// FUSED-NEXT: host.mul

// LLVM-DAG: func.func private @hir_rt_cast_i32_f32(memref<*xi32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_cast_f32_i32(memref<*xf32>, memref<*xi32>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_cast_bf16_i64(memref<*xbf16>, memref<*xi64>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_cast_i64_i32(memref<*xi64>, memref<*xi32>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_cast_i32_i64(memref<*xi32>, memref<*xi64>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_cast_i32_f16(memref<*xi32>, memref<*xf16>) attributes {llvm.emit_c_interface}
// LLVM-DAG: call @hir_rt_cast_i64_i32(%{{.+}}, %{{.+}}) : (memref<*xi64>, memref<*xi32>) -> ()

// EXEC: ran @int_casts on 4 ranks
// EXEC-NEXT: result0: relative error {{.*}} (tolerance 3e-2 for bf16): ok
// EXEC-NEXT: result1: 0 of 8 elements differ (exact for i32): ok
// EXEC-NEXT: result2: 0 of 128 elements differ (exact for i32): ok
// EXEC-NEXT: result3: relative error {{.*}} (tolerance 4e-3 for f16): ok
