// host-fuse-epilogue through hir-run on the cpu backend: a gelu after a
// linear (with bias, in a stream loop) and after a matmul is the GEMM's
// epilogue, lowered to one hir_rt_linear_bias_gelu_<T> or
// hir_rt_matmul_gelu_<T> call, and runs checked against the f64 reference
// with and without it. The reference rounds each op's result to its type,
// as the unfused ops do; the epilogue rounds once, after the activation, so
// a bf16 output differs from it by about one bf16 rounding (4e-3 here,
// within the 3e-2 of --check) and an f32 one by at most an f32 rounding.
// RUN: hir-opt %S/Inputs/epilogue_2.mlir --hir-lower | FileCheck %s --check-prefix=HOST
// RUN: hir-opt %S/Inputs/epilogue_2.mlir --hir-lower --convert-host-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: hir-opt %S/Inputs/epilogue_2.mlir --hir-lower=fuse=none | FileCheck %s --check-prefix=UNFUSED
// RUN: hir-run --check -n 2 %S/Inputs/epilogue_2.mlir | FileCheck %s --check-prefix=CHECKED
// RUN: hir-run --check -n 2 --fuse none %S/Inputs/epilogue_2.mlir | FileCheck %s --check-prefix=CHECKED
// A stream<2> AG+linear: its chunks in the pre-split layout, and as rings.
// RUN: hir-opt %S/Inputs/epilogue_chunks_2.mlir --hir-lower | FileCheck %s --check-prefix=CHUNKS
// RUN: hir-opt %S/Inputs/epilogue_chunks_2.mlir --hir-lower=p2p=nccl | FileCheck %s --check-prefix=CHUNKS
// RUN: hir-opt %S/Inputs/epilogue_chunks_2.mlir --hir-lower=p2p=cuda | FileCheck %s --check-prefix=CHUNKS
// RUN: hir-run --check -n 2 %S/Inputs/epilogue_chunks_2.mlir | FileCheck %s --check-prefix=ONE
// RUN: hir-run --check -n 2 --p2p nccl %S/Inputs/epilogue_chunks_2.mlir | FileCheck %s --check-prefix=ONE
// RUN: hir-run --check -n 2 --p2p cuda %S/Inputs/epilogue_chunks_2.mlir | FileCheck %s --check-prefix=ONE
// RUN: hir-run -n 2 --fuse none --output-dir %t/unfused %S/Inputs/epilogue_2.mlir
// RUN: hir-run -n 2 --expect %t/unfused %S/Inputs/epilogue_2.mlir | FileCheck %s --check-prefix=SAME

// HOST: scf.for
// HOST: host.linear activation gelu ins(%{{.*}}, %arg1, %arg2 : memref<8x16xf32, strided<[16, 1], offset: ?>>, memref<16x16xf32>, memref<16xf32>) outs(%{{.*}} : memref<8x16xf32, strided<[16, 1], offset: ?>>)
// HOST: host.matmul activation gelu ins(%arg3, %arg4 : memref<8x16xbf16>, memref<16x16xbf16>) outs(%arg6 : memref<8x16xbf16>)
// HOST-NOT: host.gelu

// LLVM-DAG: func.func private @hir_rt_linear_bias_gelu_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_matmul_gelu_bf16(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}

// UNFUSED-NOT: activation
// UNFUSED-COUNT-2: host.gelu
// UNFUSED-NOT: activation

// CHECKED: ran @epilogues on 2 ranks
// CHECKED-NEXT: result0: relative error {{.*}} (tolerance 1e-4 for f32): ok
// CHECKED-NEXT: result1: relative error {{.*}} (tolerance 3e-2 for bf16): ok

// CHUNKS: scf.for
// CHUNKS: host.linear activation gelu ins(
// CHUNKS-NOT: host.gelu

// ONE: ran @ag_linear_gelu on 2 ranks
// ONE-NEXT: result0: relative error {{.*}} (tolerance 1e-4 for f32): ok

// SAME: result0 against {{.*}}: ok
// SAME: result1 against {{.*}}: ok
