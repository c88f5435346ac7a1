// hir-bench's ar-ring (tools/src/programs.rs), GEMM+AR as rings: lowered with
// hir-lower{p2p=nccl|cuda allreduce=ring} (host-p2p-pipeline's allreduce
// rings: the reduce-scatter ring of the partial products, the chain of
// accumulating GEMMs in parts, then an allgather ring of the blocks) and run
// with hir-run --check on the cpu backend for D = 1, 2, 3, 4, 8, whole steps
// and two parts (the default chooses two parts for the chain where D >= 2):
// every rank's output is compared with the reference evaluation of the fusion
// program. With p2p=none (hir-bench's nooverlap at S = D) the allreduce stays.
// M=16 K=8 N=4 fit D = 1, 2, 4, 8; D = 3 needs M=24 K=12.
// RUN: hir-bench emit ar-ring -D 1 --m 16 --k 8 --n 4 > %t.1.mlir && hir-run -n 1 --check %t.1.mlir | FileCheck %s
// RUN: hir-run -n 1 --p2p nccl --allreduce ring --ring-chunks 0 --check %t.1.mlir | FileCheck %s
// RUN: hir-run -n 1 --p2p nccl --allreduce ring --ring-chunks 1 --check %t.1.mlir | FileCheck %s
// RUN: hir-run -n 1 --p2p cuda --allreduce ring --ring-chunks 0 --check %t.1.mlir | FileCheck %s
// RUN: hir-run -n 1 --p2p cuda --allreduce ring --ring-chunks 1 --check %t.1.mlir | FileCheck %s
// RUN: hir-bench emit ar-ring -D 2 --m 16 --k 8 --n 4 > %t.2.mlir && hir-run -n 2 --check %t.2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p nccl --allreduce ring --ring-chunks 0 --check %t.2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p nccl --allreduce ring --ring-chunks 1 --check %t.2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p nccl --allreduce ring --ring-chunks 2 --check %t.2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p cuda --allreduce ring --ring-chunks 0 --check %t.2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p cuda --allreduce ring --ring-chunks 1 --check %t.2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p cuda --allreduce ring --ring-chunks 2 --check %t.2.mlir | FileCheck %s
// RUN: hir-bench emit ar-ring -D 3 --m 24 --k 12 --n 4 > %t.3.mlir && hir-run -n 3 --check %t.3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p nccl --allreduce ring --ring-chunks 0 --check %t.3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p nccl --allreduce ring --ring-chunks 1 --check %t.3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p nccl --allreduce ring --ring-chunks 2 --check %t.3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p cuda --allreduce ring --ring-chunks 0 --check %t.3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p cuda --allreduce ring --ring-chunks 1 --check %t.3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p cuda --allreduce ring --ring-chunks 2 --check %t.3.mlir | FileCheck %s
// RUN: hir-bench emit ar-ring -D 4 --m 16 --k 8 --n 4 > %t.4.mlir && hir-run -n 4 --check %t.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p nccl --allreduce ring --ring-chunks 0 --check %t.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p nccl --allreduce ring --ring-chunks 1 --check %t.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p nccl --allreduce ring --ring-chunks 2 --check %t.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p cuda --allreduce ring --ring-chunks 0 --check %t.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p cuda --allreduce ring --ring-chunks 1 --check %t.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p cuda --allreduce ring --ring-chunks 2 --check %t.4.mlir | FileCheck %s
// RUN: hir-bench emit ar-ring -D 8 --m 16 --k 8 --n 4 > %t.8.mlir && hir-run -n 8 --check %t.8.mlir | FileCheck %s
// RUN: hir-run -n 8 --p2p nccl --allreduce ring --ring-chunks 0 --check %t.8.mlir | FileCheck %s
// RUN: hir-run -n 8 --p2p nccl --allreduce ring --ring-chunks 1 --check %t.8.mlir | FileCheck %s
// RUN: hir-run -n 8 --p2p nccl --allreduce ring --ring-chunks 2 --check %t.8.mlir | FileCheck %s
// RUN: hir-run -n 8 --p2p cuda --allreduce ring --ring-chunks 0 --check %t.8.mlir | FileCheck %s
// RUN: hir-run -n 8 --p2p cuda --allreduce ring --ring-chunks 1 --check %t.8.mlir | FileCheck %s
// RUN: hir-run -n 8 --p2p cuda --allreduce ring --ring-chunks 2 --check %t.8.mlir | FileCheck %s

// The lowered program: no allreduce is left, the transfers are point to point.
// RUN: hir-opt %t.4.mlir --pass-pipeline='builtin.module(hir-lower{p2p=cuda allreduce=ring})' | FileCheck %s --check-prefix=RINGS --implicit-check-not=comm.allreduce --implicit-check-not=comm.reduce_scatter --implicit-check-not=comm.allgather
// RINGS: host.matmul {{.*}} {accumulate}
// RINGS: comm.send {{.*}} on cuda
// RINGS: scf.for
// RINGS: comm.recv {{.*}} on cuda
// RINGS: comm.send {{.*}} on cuda
// RUN: hir-opt %t.4.mlir --pass-pipeline='builtin.module(hir-lower{p2p=cuda})' | FileCheck %s --check-prefix=WHOLE
// WHOLE: comm.allreduce

// CHECK: ran @ar_ring on {{[0-9]}} rank
// CHECK-NEXT: result0: relative error {{.*}}: ok
