// Integer element types (i32, i64) through every stage: fusion ops on
// integer tensors lower to host and comm ops on integer buffers, those to
// the runtime's `_i32` and `_i64` entries, and run on the cpu backend
// checked exactly against the reference (--check compares every element).
// Ops on integers are never fused: host-fuse-elementwise leaves them alone.
// RUN: hir-opt %examples/int_allreduce.mlir --hir-lower | FileCheck %s --check-prefix=HOST
// RUN: hir-opt %examples/int_allreduce.mlir --hir-lower --host-fuse-elementwise | FileCheck %s --check-prefix=HOST --implicit-check-not=host.fused
// RUN: hir-opt %examples/iota_i64.mlir --hir-lower --convert-host-to-llvm --convert-comm-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: hir-run --check -n 4 %examples/int_allreduce.mlir | FileCheck %s --check-prefix=I32
// RUN: hir-run --check -n 4 --seed 7 --fuse elementwise %examples/int_allreduce.mlir | FileCheck %s --check-prefix=I32
// RUN: hir-run --check -n 4 %examples/iota_i64.mlir | FileCheck %s --check-prefix=I64
// RUN: hir-run --check -n 4 --num-streams 2 --p2p nccl %examples/iota_i64.mlir | FileCheck %s --check-prefix=I64

// HOST-LABEL: func.func @int_allreduce
// HOST: host.abs ins(%{{.+}} : memref<4x8xi32>) outs(%{{.+}} : memref<4x8xi32>)
// HOST: host.mul ins
// HOST: host.max ins
// HOST: host.sum [0] ins(%{{.+}} : memref<4x8xi32>) outs(%{{.+}} : memref<8xi32>)
// HOST: comm.allreduce %{{.+}} into %{{.+}} sum team [0, 1, 2, 3] : memref<8xi32> into memref<8xi32>
// HOST: host.amax [0] ins
// HOST: comm.allreduce %{{.+}} into %{{.+}} max team [0, 1, 2, 3] : memref<8xi32> into memref<8xi32>

// LLVM-DAG: func.func private @hir_rt_iota_i64(memref<*xi64>, i64, i64) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_fill_i64(memref<*xi64>, f64) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_mul_i64(memref<*xi64>, memref<*xi64>, memref<*xi64>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_allgather_i64(memref<*xi64>, memref<*xi64>, i64, i64, i64, memref<*xi64>, i64) -> i64 attributes {llvm.emit_c_interface}
// LLVM-DAG: call @hir_rt_fill_i64(%{{.+}}, %{{.+}}) : (memref<*xi64>, f64) -> ()

// I32: ran @int_allreduce on 4 ranks
// I32-NEXT: result0: 0 of 8 elements differ (exact for i32): ok
// I32-NEXT: result1: 0 of 8 elements differ (exact for i32): ok

// I64: ran @iota_i64 on 4 ranks
// I64-NEXT: result0: 0 of 128 elements differ (exact for i64): ok
// I64-NEXT: result1: 0 of 128 elements differ (exact for i64): ok
// I64-NEXT: result2: 0 of 512 elements differ (exact for i64): ok
