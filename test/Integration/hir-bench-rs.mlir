// hir-bench's GEMM+RS programs (tools/src/programs.rs), emitted small and
// run with hir-run --check on the cpu backend for D = 1, 2, 4 (and 3 for
// rs-ring): each output is compared with the reference evaluation of the
// fusion program.
// M=16 K=8 N=4 and S=2 chunks fit every program for these D.
// RUN: hir-bench emit rs-gemm -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-gemm.1.mlir && hir-run -n 1 --check %t.rs-gemm.1.mlir | FileCheck %s
// RUN: hir-bench emit rs-reduce-scatter -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-reduce-scatter.1.mlir && hir-run -n 1 --check %t.rs-reduce-scatter.1.mlir | FileCheck %s
// RUN: hir-bench emit rs-pipeline -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-pipeline.1.mlir && hir-run -n 1 --check %t.rs-pipeline.1.mlir | FileCheck %s
// RUN: hir-bench emit rs-ring -D 1 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-ring.1.mlir && hir-run -n 1 --check %t.rs-ring.1.mlir | FileCheck %s
// RUN: hir-run -n 1 --p2p nccl --check %t.rs-ring.1.mlir | FileCheck %s
// RUN: hir-run -n 1 --p2p cuda --check %t.rs-ring.1.mlir | FileCheck %s
// RUN: hir-bench emit rs-gemm -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-gemm.2.mlir && hir-run -n 2 --check %t.rs-gemm.2.mlir | FileCheck %s
// RUN: hir-bench emit rs-reduce-scatter -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-reduce-scatter.2.mlir && hir-run -n 2 --check %t.rs-reduce-scatter.2.mlir | FileCheck %s
// RUN: hir-bench emit rs-pipeline -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-pipeline.2.mlir && hir-run -n 2 --check %t.rs-pipeline.2.mlir | FileCheck %s
// RUN: hir-bench emit rs-ring -D 2 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-ring.2.mlir && hir-run -n 2 --check %t.rs-ring.2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p nccl --check %t.rs-ring.2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p cuda --check %t.rs-ring.2.mlir | FileCheck %s
// D = 3 needs M and K divisible by 3: M=24 K=12.
// RUN: hir-bench emit rs-ring -D 3 --chunks 2 --m 24 --k 12 --n 4 > %t.rs-ring.3.mlir && hir-run -n 3 --check %t.rs-ring.3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p nccl --check %t.rs-ring.3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p cuda --check %t.rs-ring.3.mlir | FileCheck %s
// RUN: hir-bench emit rs-gemm -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-gemm.4.mlir && hir-run -n 4 --check %t.rs-gemm.4.mlir | FileCheck %s
// RUN: hir-bench emit rs-reduce-scatter -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-reduce-scatter.4.mlir && hir-run -n 4 --check %t.rs-reduce-scatter.4.mlir | FileCheck %s
// RUN: hir-bench emit rs-pipeline -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-pipeline.4.mlir && hir-run -n 4 --check %t.rs-pipeline.4.mlir | FileCheck %s
// RUN: hir-bench emit rs-ring -D 4 --chunks 2 --m 16 --k 8 --n 4 > %t.rs-ring.4.mlir && hir-run -n 4 --check %t.rs-ring.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p nccl --check %t.rs-ring.4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p cuda --check %t.rs-ring.4.mlir | FileCheck %s

// With p2p, hir-lower makes a chain of rs-ring's reduce-scatter (of the
// whole view that drops the partial products' unit didx axis): each step's
// GEMM accumulates onto the sum the next rank sent, and sends it on; no
// collective and no combine after the loop.
// RUN: hir-opt %t.rs-ring.2.mlir --pass-pipeline='builtin.module(hir-lower{p2p=nccl})' | FileCheck %s --check-prefix=RING --implicit-check-not=comm.reduce_scatter
// RUN: hir-opt %t.rs-ring.3.mlir --pass-pipeline='builtin.module(hir-lower{p2p=nccl})' | FileCheck %s --check-prefix=RING --implicit-check-not=comm.reduce_scatter
// RUN: hir-opt %t.rs-ring.4.mlir --pass-pipeline='builtin.module(hir-lower{p2p=nccl})' | FileCheck %s --check-prefix=RING --implicit-check-not=comm.reduce_scatter
// RUN: hir-opt %t.rs-ring.4.mlir --pass-pipeline='builtin.module(hir-lower{p2p=cuda})' | FileCheck %s --check-prefix=RING --implicit-check-not=comm.reduce_scatter
// RING: scf.for
// RING: host.matmul
// RING: host.matmul {{.*}} {accumulate}
// RING: comm.recv
// RING: comm.send
// RING-NOT: host.sum
// RING: return

// CHECK: ran @{{[a-z_]+}} on {{[0-9]}} rank
// CHECK-NEXT: result0: relative error {{.*}}: ok
