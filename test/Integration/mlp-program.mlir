// hir-bench program mlp: Megatron's TP/SP MLP alone (examples/tp_mlp.mlir
// at any size) runs checked against the f64 reference at D = 1, 2, 4, with
// the default lowering and with CUDA-IPC rings; lowered by default, FC1
// takes its gelu as the GEMM's epilogue and the allgather and the
// reduce-scatter are overlapped (no whole collective left).
// RUN: hir-bench program mlp --t 32 --h 16 --f 64 -n 1 > %t.1.mlir && hir-run -n 1 --check %t.1.mlir | FileCheck %s
// RUN: hir-bench program mlp --t 32 --h 16 --f 64 -n 2 > %t.2.mlir && hir-run -n 2 --check %t.2.mlir | FileCheck %s
// RUN: hir-bench program mlp --t 32 --h 16 --f 64 -n 4 > %t.4.mlir && hir-run -n 4 --check %t.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --check --p2p cuda %t.4.mlir | FileCheck %s
// RUN: hir-opt --hir-lower %t.2.mlir | FileCheck %s --check-prefix=HOST
// RUN: not hir-bench program mlp --f 30 -n 4 2>&1 | FileCheck %s --check-prefix=UNEVEN

// CHECK: result0: relative error {{.*}}: ok

// HOST-NOT: comm.allgather
// HOST: host.linear activation gelu
// HOST-NOT: host.gelu
// HOST-NOT: comm.reduce_scatter
// HOST: return

// UNEVEN: hir-bench: error: mlp: F=30 is not a multiple of D=4 (split over the devices)
