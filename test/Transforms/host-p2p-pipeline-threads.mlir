// The passes run on a module's functions in parallel (hir-opt's default
// threading): the TP-MLP's forward and backward rings are built at once
// on three functions. A pass that probed an op with melior's operand() or
// result() out of range printed the whole module, verifying functions
// other threads were rewriting, and crashed or hung in some runs (5 of 30
// of host-p2p-pipeline alone on these functions, 1 of 20 of hir-lower);
// the passes probe with ir::operand and ir::result. Several runs, each of
// which could crash.
// RUN: hir-opt %S/fusion-differentiate-mlp.mlir --fusion-differentiate > %t.mlir
// RUN: hir-opt %t.mlir --pass-pipeline='builtin.module(hir-lower{p2p=nccl})' | FileCheck %s
// RUN: hir-opt %t.mlir --pass-pipeline='builtin.module(hir-lower{p2p=nccl})' | FileCheck %s
// RUN: hir-opt %t.mlir --pass-pipeline='builtin.module(hir-lower{p2p=nccl})' | FileCheck %s
// RUN: hir-opt %t.mlir --pass-pipeline='builtin.module(hir-lower{p2p=cuda})' | FileCheck %s
// RUN: hir-opt %t.mlir --pass-pipeline='builtin.module(hir-lower{p2p=cuda})' | FileCheck %s
// RUN: hir-opt %t.mlir --pass-pipeline='builtin.module(hir-lower{p2p=cuda})' | FileCheck %s
// RUN: hir-opt %t.mlir --pass-pipeline='builtin.module(hir-lower{p2p=nccl ring-chunks=2})' | FileCheck %s
// RUN: hir-opt %t.mlir --pass-pipeline='builtin.module(hir-lower{p2p=cuda ring-chunks=2})' | FileCheck %s

// CHECK-LABEL: func.func @tp_mlp(
// CHECK: comm.recv
// CHECK-LABEL: func.func @tp_mlp_forward(
// CHECK: comm.recv
// CHECK-LABEL: func.func @tp_mlp_backward(
// CHECK: comm.recv
// CHECK: host.linear {{.*}} {accumulate}
