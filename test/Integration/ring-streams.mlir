// The rings of host-p2p-pipeline with their steps rotated over fewer pool
// streams than steps (hir-lower num-streams=N), for both transfer backends,
// run end to end on the cpu backend by hir-bench: every variant's output is
// checked against f64 references and the GEMM alone's.
// RUN: hir-bench run -n 4 --shapes 64x16x8 --families ag,rs --variants gemm,p2p-nccl,p2p-cuda --lower-streams 1 --iters 1 --warmup 0 2>&1 | FileCheck %s
// RUN: hir-bench run -n 4 --shapes 64x16x8 --families ag,rs --variants gemm,p2p-nccl,p2p-cuda --lower-streams 3 --iters 1 --warmup 0 2>&1 | FileCheck %s
// RUN: hir-bench run -n 3 --shapes 48x12x8 --chunks 3 --families ag,rs --variants gemm,p2p-nccl,p2p-cuda --lower-streams 2 --iters 1 --warmup 0 2>&1 | FileCheck %s

// CHECK: family MxKxN
// CHECK-NEXT: ag {{.*}} gemm {{.*}} ok
// CHECK-NEXT: ag {{.*}} p2p-nccl ag-ring {{.*}} ok
// CHECK-NEXT: ag {{.*}} p2p-cuda ag-ring {{.*}} ok
// CHECK-NEXT: rs {{.*}} gemm {{.*}} ok
// CHECK-NEXT: rs {{.*}} p2p-nccl rs-ring {{.*}} ok
// CHECK-NEXT: rs {{.*}} p2p-cuda rs-ring {{.*}} ok
