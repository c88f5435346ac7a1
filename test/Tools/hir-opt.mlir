// hir-opt's command line: dialects, passes, stdin, -o, and bad input that
// ends with a located error and a non-zero exit, never a crash.
// RUN: hir-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
// RUN: hir-opt --help | FileCheck %s --check-prefix=HELP
// RUN: hir-opt < %s | FileCheck %s
// RUN: hir-opt %s -o %t && FileCheck %s < %t
// RUN: not hir-opt %S/Inputs/truncated.mlir 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: not hir-opt %S/Inputs/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not hir-opt %S/Inputs/empty-mesh.mlir 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not hir-opt %s --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=NOPASS

// DIALECTS-DAG: arith
// DIALECTS-DAG: cf
// DIALECTS-DAG: comm
// DIALECTS-DAG: func
// DIALECTS-DAG: fusion
// DIALECTS-DAG: host
// DIALECTS-DAG: index
// DIALECTS-DAG: linalg
// DIALECTS-DAG: llvm
// DIALECTS-DAG: memref
// DIALECTS-DAG: scf
// DIALECTS-DAG: shard
// DIALECTS-DAG: tensor

// HELP: --canonicalize
// HELP: --convert-shard-to-fusion
// HELP: --fusion-verify-sharding
// HELP: --shard-partition
// HELP: --sharding-propagation

// TRUNCATED: truncated.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// UNKNOWN: unknown-op.mlir:3:8: error: custom op 'fusion.frobnicate' is unknown
// EMPTY: empty-mesh.mlir:2:1: error: 'fusion.mesh' op mesh has no device
// NOPASS: no-such-pass

// CHECK: fusion.mesh @tp = [0, 1]
fusion.mesh @tp = [0, 1]
