// hir-bench's GEMM+AR programs (tools/src/programs.rs), emitted small and
// run with hir-run --check on the cpu backend for D = 1, 2, 4: each output is
// compared with the reference evaluation of the fusion program. Each device
// holds its own K-slice of B, [DIDx(D), 1.., K/D, N], broadcast by the matmul
// along A's batch axes.
// M=16 K=8 N=4 and S=2 chunks fit every program for these D.
// RUN: hir-bench emit ar-gemm -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-gemm.1.mlir && hir-run -n 1 --check %t.ar-gemm.1.mlir | FileCheck %s
// RUN: hir-bench emit ar-allreduce -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-allreduce.1.mlir && hir-run -n 1 --check %t.ar-allreduce.1.mlir | FileCheck %s
// RUN: hir-bench emit ar-pipeline -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-pipeline.1.mlir && hir-run -n 1 --check %t.ar-pipeline.1.mlir | FileCheck %s
// RUN: hir-bench emit ar-nooverlap -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-nooverlap.1.mlir && hir-run -n 1 --check %t.ar-nooverlap.1.mlir | FileCheck %s
// RUN: hir-bench emit ar-gemm -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-gemm.2.mlir && hir-run -n 2 --check %t.ar-gemm.2.mlir | FileCheck %s
// RUN: hir-bench emit ar-allreduce -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-allreduce.2.mlir && hir-run -n 2 --check %t.ar-allreduce.2.mlir | FileCheck %s
// RUN: hir-bench emit ar-pipeline -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-pipeline.2.mlir && hir-run -n 2 --check %t.ar-pipeline.2.mlir | FileCheck %s
// RUN: hir-bench emit ar-nooverlap -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-nooverlap.2.mlir && hir-run -n 2 --check %t.ar-nooverlap.2.mlir | FileCheck %s
// RUN: hir-bench emit ar-gemm -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-gemm.4.mlir && hir-run -n 4 --check %t.ar-gemm.4.mlir | FileCheck %s
// RUN: hir-bench emit ar-allreduce -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-allreduce.4.mlir && hir-run -n 4 --check %t.ar-allreduce.4.mlir | FileCheck %s
// RUN: hir-bench emit ar-pipeline -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-pipeline.4.mlir && hir-run -n 4 --check %t.ar-pipeline.4.mlir | FileCheck %s
// RUN: hir-bench emit ar-nooverlap -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.ar-nooverlap.4.mlir && hir-run -n 4 --check %t.ar-nooverlap.4.mlir | FileCheck %s

// RUN: FileCheck %s --input-file=%t.ar-pipeline.2.mlir --check-prefix=EMIT
// EMIT: %b: tensor<2x1x4x4xbf16, #fusion.dist<@tp, [didx, serial, serial, serial]>>
// EMIT-NOT: fusion.broadcast

// The dry run at the benchmark shapes (the defaults, D = 4, ranks in
// processes, no GPU), the P2P variants' rings (ar-ring) included: a P2P
// variant that made no ring would be skipped. hir-bench-ar-ring.mlir checks
// ar-ring's outputs.
// RUN: hir-bench run -n 4 --dry-run --families ar --timeout 60 | FileCheck %s --check-prefix=DRY
// DRY: [rank 0] dry run: 4 ranks built, lowered and JIT-compiled the same 18 programs (0 skipped); nothing was timed

// The partial products are freed after the allreduce's wait, not between the
// allreduce and its wait.
// RUN: hir-opt %t.ar-nooverlap.4.mlir --pass-pipeline='builtin.module(hir-lower)' | FileCheck %s --check-prefix=DEALLOC
// DEALLOC: %[[R:.*]] = comm.allreduce
// DEALLOC-NEXT: comm.wait %[[R]]
// DEALLOC-NEXT: host.dealloc

// CHECK: ran @{{[a-z_]+}} on {{[0-9]}} rank
// CHECK-NEXT: result0: relative error {{.*}}: ok
