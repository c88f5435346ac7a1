// hir-bench's GEMM+RS programs (tools/src/programs.rs), emitted small and
// run with hir-run --check on the cpu backend for D = 1, 2, 4 (and 3 for
// rs-ring): each output is compared with the reference evaluation of the
// fusion program. They are the real TP-rowwise program: each device holds its
// own K-slice of B, [DIDx(D), 1.., K/D, N], whose unit axes the matmul
// broadcasts along A's batch axes (no fusion.broadcast, no copy of B).
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

// Each device's own slice of B, read in place: in rs-pipeline's stream loop
// one view of B at index 0 serves every chunk, and nothing copies B.
// RUN: FileCheck %s --input-file=%t.rs-pipeline.4.mlir --check-prefix=EMIT
// EMIT: %b: tensor<4x1x1x2x4xbf16, #fusion.dist<@tp, [didx, serial, serial, serial, serial]>>
// EMIT-NOT: fusion.broadcast
// RUN: hir-opt %t.rs-pipeline.4.mlir --hir-lower | FileCheck %s --check-prefix=PIPELINE --implicit-check-not=host.broadcast --implicit-check-not=host.copy
// PIPELINE: func.func @rs_pipeline({{.*}}, [[B:%[a-zA-Z0-9_]+]]: memref<1x1x1x2x4xbf16>
// PIPELINE: [[B0:%[a-zA-Z0-9_]+]] = host.select [[B]][1]
// PIPELINE: scf.for
// PIPELINE: host.matmul ins({{%[a-zA-Z0-9_]+}}, [[B0]] :

// The dry run at the benchmark shapes (the defaults, D = 4, ranks in
// processes, no GPU): every rs program builds, lowers and JIT-compiles, the
// rings included (a P2P variant that made no ring would be skipped).
// RUN: hir-bench run -n 4 --dry-run --families rs --timeout 60 | FileCheck %s --check-prefix=DRY
// DRY: [rank 0] rs 32768x16384x8192 p2p-nccl (rs-ring, p2p=nccl): lowered hash
// DRY: [rank 0] dry run: 4 ranks built, lowered and JIT-compiled the same 18 programs (0 skipped); nothing was timed

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
