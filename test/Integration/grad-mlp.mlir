// hir-run --grad on Megatron's TP/SP MLP (hir-bench program mlp, f32): the
// backward fusion-differentiate builds, lowered and run on D = 1, 2, 4
// ranks, gives each argument's gradient as central differences of the f64
// reference do, along random directions; with NCCL and CUDA-IPC rings (the
// backward's AG ring and GEMM+RS chain), with the gathered input recomputed
// instead of saved, and from another seed. A gradient a rank gets wrong
// (the test hook zeroes rank 1's) is reported and fails the run.
// RUN: hir-bench program mlp --t 32 --h 16 --f 64 -n 1 --dtype f32 > %t.1.mlir && hir-run -n 1 --grad %t.1.mlir | FileCheck %s
// RUN: hir-bench program mlp --t 32 --h 16 --f 64 -n 2 --dtype f32 > %t.2.mlir && hir-run -n 2 --grad %t.2.mlir | FileCheck %s
// RUN: hir-bench program mlp --t 32 --h 16 --f 64 -n 4 --dtype f32 > %t.4.mlir && hir-run -n 4 --grad %t.4.mlir | FileCheck %s
// RUN: hir-run -n 2 --grad --p2p nccl %t.2.mlir | FileCheck %s
// RUN: hir-run -n 4 --grad --p2p cuda %t.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --grad --saved recompute --seed 3 %t.4.mlir | FileCheck %s
// RUN: HIR_TEST_HOOK=1:corrupt-gradients not hir-run -n 2 --grad %t.2.mlir 2>&1 | FileCheck %s --check-prefix=WRONG
// RUN: not hir-run -n 2 --grad --check %t.2.mlir 2>&1 | FileCheck %s --check-prefix=CONFLICT
// hir-bench program mlp --grad prints the training step, which lowers.
// RUN: hir-bench program mlp --grad --t 32 --h 16 --f 64 -n 2 --dtype f32 > %t.step.mlir && FileCheck %s --check-prefix=STEP < %t.step.mlir
// RUN: hir-opt --hir-lower %t.step.mlir | FileCheck %s --check-prefix=STEP-HOST

// CHECK: ran @tp_mlp's forward and backward on
// CHECK-COUNT-8: d arg{{[0-3]}}, direction {{[01]}}: <g, v> = {{.*}}, finite difference {{.*}}: relative error {{.*}} (tolerance 1e-4): ok
// CHECK-NOT: MISMATCH

// WRONG: MISMATCH
// WRONG: hir-run: error: the gradients differ from the finite differences

// CONFLICT: error: the argument '--grad' cannot be used with '--check'

// STEP: // hir-bench program mlp: Megatron's TP/SP MLP
// STEP: // with --grad: fusion-differentiate's @tp_mlp_forward and @tp_mlp_backward added
// STEP: func.func @tp_mlp(
// STEP: func.func @tp_mlp_forward(
// STEP: func.func @tp_mlp_backward(
// STEP-SAME: -> (tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<64x16xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<64xf32, #fusion.dist<@tp, [didx]>>, tensor<16x64xf32, #fusion.dist<@tp, [serial, didx]>>)

// STEP-HOST: func.func @tp_mlp_backward(
// STEP-HOST: return
